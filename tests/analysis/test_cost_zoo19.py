"""Cost per step of zoo 19, MindSpore's optimizer-parallel documentation sample
(``fixtures/zoo/nets/19_doc_optimizer_parallel.py``), derived by hand before msinspect read it.

From the script, its docstring (strategies, layouts, optimizer shards) and MindSpore's
definitions; ranks kept 0 and 5, alike (every operator is cut the same way on all 8); float32
(4 bytes); wire bytes as docs/comm.md: ring AllReduce 2(n-1)/n S (whole bytes, rounded down),
AllGather (n-1) S_in, ReduceScatter (n-1)/n S_in. Every group is the world, 0-7 (n = 8).

- optimizer shard, forward: ``layer1.weight`` (512, 784) and ``layer2.weight`` (512, 512), whole
  on all 8 and over the 64 KB threshold, are stored as rows cut in 8 and gathered back before
  their MatMul once a step: AllGather of (64, 784) = 200,704 bytes: 7 x 200,704 = 1,404,928, and
  of (64, 512) = 131,072: 7 x 131,072 = 917,504. 2 operators, 2,322,432 bytes.
- optimizer shard, backward: the gathers' bprop, each whole gradient reduce-scattered over 0-7
  (in place of a mirror): (512, 784) 1,605,632 x 7/8 = 1,404,928 and (512, 512) 1,048,576 x 7/8 =
  917,504. 2 operators, 2,322,432 bytes.
- data, backward (the mirrors, the weights under the threshold, whole on all 8): layer3.weight
  (10, 512) 20,480 bytes: 2 x 7/8 = 35,840; layer3.bias (10,) 40: 70; layer1.bias and
  layer2.bias (512,) 2,048: 3,584 each. 4 operators, 43,078 bytes.
- data, forward: nn.CrossEntropyLoss is ``nll_loss(log_softmax)`` (as zoo 18, test_cost_zoo18.py):
  ``loss.sum()``, ``smooth_loss.sum()`` and ``loss_weights.sum()`` (one node after CSE) of rows
  cut in 8: three AllReduces of a scalar, 2 x 7/8 x 4 = 7 bytes each: 21 bytes. The inputs need no
  gather (no micro-batch split: each rank's 32 rows are its share of the batch, cut in 8).
- data, backward, the loss: the bprops of ``loss.sum()`` and ``smooth_loss.sum()`` (an AllReduce
  of dout, which is 1 / loss_weights.sum(), not a constant; zoo 18's validate lines 1036, 1235):
  2 x 7 = 14 bytes. Data backward: 43,078 + 14 = 43,092, 6 operators.
- optimizer: SGD's update is local (the shards are updated where they lie): no collective.

The rank matrix: every group is the world ring, so rank r sends all its bytes to r + 1:
2 x 2,322,432 + 21 + 43,092 = 4,687,977 bytes, 0 -> 1 and 5 -> 6, nothing else.

At step_parallel_end: the gathers, the mirrors (backward, data) and the loss sums (the file is
read before CSE, so ``loss_weights.sum()`` is still written twice there; CSE keeps one, and the
cost counts what runs: 3 sums, 21 bytes; msinspect first counted 4); the reduce-scatters and the
loss bprops are the gradient graph's: "cannot tell" with the reason.

Memory per rank (docs/cost.md "Static memory": an optimizer-sharded weight as its shard, its
gradient whole, one per weight times the shard group): weights (64, 784) 200,704 + (64, 512)
131,072 + layer3.weight 20,480 + biases 2,048 + 2,048 + 40 = 356,392 bytes, 6 weights; SGD's
``accum`` and ``stat`` clones of each as stored: 712,784; gradients 8 x 200,704 + 8 x 131,072 +
20,480 + 4,136 = 2,678,824.
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

ZOO19 = FIXTURES / "zoo" / "19_doc_optimizer_parallel"
GATHERS = 7 * 64 * 784 * 4 + 7 * 64 * 512 * 4
SCATTERS = 7 * (512 * 784 * 4) // 8 + 7 * (512 * 512 * 4) // 8
MIRRORS = allreduce(8, 10 * 512 * 4) + allreduce(8, 10 * 4) + 2 * allreduce(8, 512 * 4)
SCALAR = allreduce(8, 4)
RANK = {("optimizer shard", "forward"): GATHERS, ("optimizer shard", "backward"): SCATTERS,
        ("data", "forward"): 3 * SCALAR, ("data", "backward"): MIRRORS + 2 * SCALAR}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO19), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO19), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert GATHERS == SCATTERS == 2_322_432 and MIRRORS == 43_078 and SCALAR == 7


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in (0, 5):
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == {("optimizer shard", "forward"): 2, ("optimizer shard", "backward"): 2,
                                          ("data", "forward"): 3, ("data", "backward"): 6}


def test_the_rank_matrix(whole):
    assert cells(whole) == {(0, 1): 2 * GATHERS + 5 * SCALAR + MIRRORS, (5, 6): 2 * GATHERS + 5 * SCALAR + MIRRORS}
    assert 2 * GATHERS + 5 * SCALAR + MIRRORS == 4_687_977


def test_at_step_parallel_end_the_backward_cannot_tell(at_end):
    for rank in (0, 5):
        assert split(at_end, rank) == {("optimizer shard", "forward"): GATHERS, ("data", "forward"): 3 * SCALAR,
                                       ("data", "backward"): MIRRORS, ("cannot tell", "backward"): None}
    assert_backward_untold(at_end, (0, 5))


def test_memory_per_rank(whole):
    for row in memory_per_rank(whole).to_dict("records"):
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("SGD", 356_392, 6)
        assert (row["states"], row["states_expected"], row["gradients"]) == (712_784, 0, 2_678_824)


def test_the_command_reads_the_whole_step_by_default():
    assert told_by_command(ZOO19) == {0: RANK, 5: RANK}


def test_the_command_without_validate_says_why(tmp_path):
    said = said_without_validate(ZOO19, tmp_path)
    assert "backward cannot tell" in said and NO_BACKWARD.format(stage="step_parallel_end") in said
