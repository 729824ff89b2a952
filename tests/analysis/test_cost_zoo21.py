"""Cost per step of zoo 21, MindSpore's advanced operator-parallel documentation sample, a
``Layout`` with a dimension cut by two device axes (``fixtures/zoo/nets/21_doc_layout_two_axes.py``),
derived by hand before msinspect read it; where the IR showed the first derivation wrong, the
correction is written beside it with the line.

From the script, its docstring (strategies and layouts) and MindSpore's definitions; ranks kept 0,
2 and 5; float32 (4 bytes); wire bytes as docs/comm.md: ring AllReduce 2(n-1)/n S (whole bytes,
rounded down), AllGather (n-1) S_in, ReduceScatter (n-1)/n S_in, AlltoAll (n-1)/n S. Device matrix
[2, 2, 2] = (dp, sp, mp), rank = 4 dp + 2 sp + mp: every rank sees groups of the same sizes, so
every rank's totals are alike. Global batch 256 (data_parallel dataset: each rank's 32 rows).

Forward, in the order the script runs:
- x, flattened (256, 784), comes from the dataset with its rows cut in 8 (dp, sp, mp; (32, 784) at
  the rank); matmul1 wants rows cut by mp and columns by (sp, dp) ((128, 196)). On the expanded
  tensor rows (2, 2, 2, 32) x columns (2, 2, 196), columns by sp needs sp off the rows, columns by
  dp needs dp off them, rows by mp needs mp off the inner row axis: one exchange over each pair.
  First derivation: MindSpore without AlltoAll, a gather then a split each, AllGather of 100,352
  bytes over the sp pair, the dp pair, the mp pair: 3 x 100,352. The IR (rank 0 validate lines
  79, 82, 85) has ``AlltoAll`` over (0, 4), (0, 2), (0, 1), each of the rank's 100,352 bytes:
  AutoParallel redistributes by AlltoAll; each sends half: 3 x 50,176 = 150,528.
- matmul1 contracts the dimension cut by (sp, dp): its (128, 512) = 262,144-byte partial sums are
  AllReduced over the ranks of one mp, {0, 2, 4, 6}: 2 x 3/4 x 262,144 = 393,216.
- relu1 ((4, 1),) wants rows cut 4 by (dp, sp) (repeated over mp); matmul1's output has them by
  mp. First derivation: split by sp, then gather (64, 512) over the mp pair: 131,072. The IR (line
  113) gathers first: AllGather of the whole (128, 512) over (0, 1), 262,144 bytes, then splits.
- matmul2 wants x's columns cut in 8 (tp = dp, sp, mp) and its rows whole. First derivation: split
  the columns by mp, then a gather and a split for dp and for sp, 2 x 65,536. The IR (line 141):
  one ``AlltoAll`` over (0, 2, 4, 6) of (64, 256) = 65,536 bytes (rows gathered, columns cut by
  (dp, sp) in one exchange): 3/4 x 65,536 = 49,152.
- matmul2 contracts the dimension cut in 8: (256, 512) = 524,288 bytes AllReduced over all 8:
  2 x 7/8 x 524,288 = 917,504.
- relu2 ((8, 1),) and matmul3 ((8, 1), (1, 1)): a split of rows, no communication.
- the loss (nll_loss(log_softmax), as zoo 18 / 19): three AllReduces of a scalar over the batch cut
  in 8 (the world): 2 x 7/8 x 4 = 7 bytes each, 21 bytes.
The axis, by docs/cost.md's rule (a group against the weights' device matrices: "tensor" along a
dimension some weight is cut along): fc1 is cut along dp and sp of [2, 2, 2], fc2 along all 8
of [8], which runs over the same ranks as dp, sp and mp together, so every group of a stage's
ranks here is "tensor", the loss sums' world too (as zoo 05's in test_cost.py). First derivation
named the loss sums "data" (they reduce the batch); under the rule they are tensor. msinspect first
named everything "data" (it skipped fc1's two-axis entry ``(1, 2)``) and then the mp pair "data"
(it compared each matrix with its own weights only): both fixed in cost.py ``stage_axes``.
Tensor forward: 150,528 + 393,216 + 262,144 + 49,152 + 917,504 + 21 = 1,772,565, 10 operators.

Backward (value_and_grad of the weights only: the input's exchanges have no bprop, the gradient of
x is pruned, as the IR shows):
- tensor: the AllReduces' bprops, an AllReduce of dout each: 393,216 + 917,504; the AlltoAll's,
  an AlltoAll back, 49,152; the gather's, a ReduceScatter of the gathered (256, 512) over the
  pair, 1/2 x 524,288 = 262,144; the loss sums' (zoo 18: two of three), 2 x 7. 6 operators,
  1,622,030 bytes.
- data: the mirrors, each weight's gradient summed over the ranks holding the same slice:
  fc1_weight (196, 512) = 401,408 bytes over the mp pair: 2 x 1/2 x 401,408 = 401,408; fc2_weight
  is cut in 8, no two ranks hold the same slice: none; fc3_weight (512, 10) = 20,480 whole on all 8:
  2 x 7/8 x 20,480 = 35,840. 2 operators, 437,248.
- optimizer: SGD, local: nothing.

The rank matrix (ring collectives to the next rank of the group, AlltoAll to every other): rank 0
to 1, 2, 4 (pairs), 2, 4, 6 ({0, 2, 4, 6}), 1 (world): {1, 2, 4, 6}; rank 2 = (0, 1, 0) to 6, 0, 3
(pairs), 0, 4, 6, 3: {0, 3, 4, 6}; rank 5 = (1, 0, 1) to 1, 7, 4 (pairs), 1, 3, 7, 6:
{1, 3, 4, 6, 7}.

At step_parallel_end: the forward as above (the loss's ``loss_weights.sum()`` is still written
twice there, and CSE merges them later, zoo 18: the cost counts the one that runs, 3 sums, 21
bytes; msinspect first counted 4), the mirrors as backward data, and the rest of the backward
"cannot tell" with the reason.

Memory per rank (docs/cost.md "Static memory"): fc1_weight (196, 512) 401,408 + fc2_weight (64, 512)
131,072 + fc3_weight (512, 10) 20,480 = 552,960 bytes, 3 weights; SGD's ``accum`` and ``stat``
clones: 1,105,920; gradients one per weight, no optimizer shard: 552,960.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import (allreduce, assert_backward_untold, cells, operators, said_without_validate,
                                         split, told_by_command)
from tests.conftest import FIXTURES

ZOO21 = FIXTURES / "zoo" / "21_doc_layout_two_axes"
RANKS = (0, 2, 5)
INPUT_EXCHANGES = 3 * (32 * 784 * 4) // 2
MATMUL1_SUMS = allreduce(4, 128 * 512 * 4)
RELU1_GATHER = 128 * 512 * 4
MATMUL2_EXCHANGE = 3 * (64 * 256 * 4) // 4
MATMUL2_SUMS = allreduce(8, 256 * 512 * 4)
SCALAR = allreduce(8, 4)
MIRRORS = allreduce(2, 196 * 512 * 4) + allreduce(8, 512 * 10 * 4)
LAYOUTS = INPUT_EXCHANGES + MATMUL1_SUMS + RELU1_GATHER + MATMUL2_EXCHANGE + MATMUL2_SUMS
TENSOR_BACKWARD = MATMUL1_SUMS + RELU1_GATHER + MATMUL2_EXCHANGE + MATMUL2_SUMS + 2 * SCALAR
RANK = {("tensor", "forward"): LAYOUTS + 3 * SCALAR, ("tensor", "backward"): TENSOR_BACKWARD,
        ("data", "backward"): MIRRORS}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO21), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO21), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert LAYOUTS + 3 * SCALAR == 1_772_565 and TENSOR_BACKWARD == 1_622_030
    assert MIRRORS == 437_248 and SCALAR == 7


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in RANKS:
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == {("tensor", "forward"): 10, ("tensor", "backward"): 6,
                                          ("data", "backward"): 2}


def test_the_rank_matrix(whole):
    found = {}
    for (src, dst) in cells(whole):
        found.setdefault(src, set()).add(dst)
    assert found == {0: {1, 2, 4, 6}, 2: {0, 3, 4, 6}, 5: {1, 3, 4, 6, 7}}


def test_at_step_parallel_end_the_backward_cannot_tell(at_end):
    for rank in RANKS:
        assert split(at_end, rank) == {("tensor", "forward"): LAYOUTS + 3 * SCALAR, ("data", "backward"): MIRRORS,
                                       ("cannot tell", "backward"): None}
    assert_backward_untold(at_end, RANKS)


def test_memory_per_rank(whole):
    for row in memory_per_rank(whole).to_dict("records"):
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("SGD", 552_960, 3)
        assert (row["states"], row["states_expected"], row["gradients"]) == (1_105_920, 0, 552_960)


def test_the_command_reads_the_whole_step_by_default():
    assert told_by_command(ZOO21) == {rank: RANK for rank in RANKS}


def test_the_command_without_validate_says_why(tmp_path):
    said = said_without_validate(ZOO21, tmp_path)
    assert "backward cannot tell" in said and NO_BACKWARD.format(stage="step_parallel_end") in said
