"""Cost per step of zoo 06, control flow in a semi-auto parallel network on 8 ranks
(``fixtures/zoo/nets/06_control_flow_8.py``), derived by hand before msinspect read it.

From the script, its docstring (strategies) and MindSpore's definitions; all 8 ranks kept; float32
(4 bytes); wire bytes as docs/comm.md: ring AllReduce 2(n-1)/n S.

- dp 2 x tp 4. ``ffn_in`` ((2, 1), (1, 4)) gives the device matrix [2, 1, 4] (MindSpore's, the
  last dimension fastest): rank = 4 d + t. Tensor groups {0, 1, 2, 3}, {4, 5, 6, 7}; a strategy
  that cuts the rows only, (2, 1) on 8 ranks, repeats over the other 4 (MindSpore puts the repeat
  on the right of its device matrix, [2, 1, 4]): its rows run over {t, t + 4}, the data pairs.
- The network is forward only (no grad, no optimizer: the script's docstring says why), so
  MindSpore inserts no mirror (``BackwardCommunication`` runs only where the graph has a backward)
  and there is no backward and no optimizer phase: no ``J`` node at step_parallel_end, no
  ``Gradients/`` at validate. Nothing is missing: the backward is not "cannot tell", it is not
  there, and no row may claim it.
- Full batch: x (256, 512) is whole at every rank; ``ffn_in`` wants its rows cut by 2, a slice of
  what the rank holds (128, 512): no communication.
- Each of the 3 unrolled blocks: ``ffn_in`` (no contraction cut) gives (128, 512) of the 2048
  columns; ``gelu`` (2, 4) keeps it; ``ffn_out`` ((2, 4), (4, 1)) contracts the dimension cut by 4:
  its (128, 512) = 262,144 bytes of partial sums are AllReduced over the tensor group: 2 x 3/4 x
  262,144 = 393,216; ``residual_add`` ((2, 1), (2, 1)) matches. 3 x 393,216 = 1,179,648.
- ``cond_mean`` ((2, 1),) with no axis reduces every dimension to a scalar; the rows are cut by 2:
  the partial mean is AllReduced over the data pair, 4 bytes: 2 x 1/2 x 4 = 4 bytes.
- The branch (``pos_relu`` ((2, 1),) or ``neg_scale`` ((2, 1), ())) keeps the rows' cut: nothing.
- ``head_in`` ((2, 1), (1, 4)) gives (128, 128); ``head_out`` ((2, 4), (4, 1)) contracts the cut
  dimension: (128, 512) AllReduced over the tensor group, 393,216 bytes. It runs after the
  branch (a graph the ``if`` calls once): it counts once.
- ``square`` ((2, 1),) and ``loss_mean`` ((2, 1),) (every dimension reduced): a scalar AllReduced
  over the data pair, 4 bytes.

Per rank, every rank alike: tensor forward 4 x 393,216 = 1,572,864 bytes (4 operators); data
forward 4 + 4 = 8 bytes (2 operators), by docs/cost.md's axis rule (the pair {t, t + 4} is the
device matrix's first dimension, along which no weight is cut: data; the quadruples are the
dimension w_in, w_out, w_head_in and w_head_out are cut along: tensor). No backward, no optimizer.
The same at step_parallel_end (the forward is whole there and there is no gradient graph to miss).
At step_parallel_begin, written before the parallel pass inserts any collective, the forward's
bytes are in no line of the file: "cannot tell", with the reason (the parallel pass runs after it,
step_parallel_end holds them), never "no communication"; no backward row (no ``J`` node there either).

The rank matrix (ring to the next rank of the sorted group): r -> 4 (r // 4) + (r + 1) % 4 the
tensor AllReduces, 1,572,864; r -> (r + 4) % 8 the two scalar means, 8.

Memory per rank (docs/cost.md "Static memory"): no optimizer update, no optimizer state, no
gradient graph and no ``J``: the step computes no gradient, so every parameter is a weight, as held
at the rank, with no gradient and no state (msinspect first said "cannot tell" for all but
``other``; test_memory_forward_only.py holds it at step_parallel_end too): w_in (512, 2048)
cut (1, 4) -> (512, 512) 1,048,576; w_out (2048, 512) cut (4, 1) -> (512, 512) 1,048,576;
w_head_in (512, 512) cut (1, 4) -> (512, 128) 262,144; w_head_out cut (4, 1) -> (128, 512) 262,144:
2,621,440 bytes.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_COMMUNICATION, NO_PARALLEL_PASS, SHORT_FORWARD, backward_missing, forward_missing
from msinspect.analysis.job.cost_tables import bytes_by
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import allreduce, cells, said_without_validate, splits, told_by_command
from tests.conftest import FIXTURES, invoke

ZOO06 = FIXTURES / "zoo" / "06_control_flow_8"
RANKS = range(8)
TENSOR = 4 * allreduce(4, 128 * 512 * 4)       # three ffn_out, one head_out
DATA = 2 * allreduce(2, 4)                     # cond_mean, loss_mean
PER_RANK = {("tensor", "forward"): TENSOR, ("data", "forward"): DATA}
PARAMETERS = (512 * 512 + 512 * 512 + 512 * 128 + 128 * 512) * 4


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO06), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO06), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert TENSOR == 1_572_864 and DATA == 8 and PARAMETERS == 2_621_440


def test_the_whole_step_by_axis_and_phase(whole):
    assert splits(whole) == {rank: PER_RANK for rank in RANKS}
    assert splits(whole, "operators") == {rank: {("tensor", "forward"): 4, ("data", "forward"): 2} for rank in RANKS}
    assert backward_missing(whole) == {}


def test_the_rank_matrix(whole):
    expected = {}
    for rank in RANKS:
        expected[(rank, 4 * (rank // 4) + (rank + 1) % 4)] = TENSOR
        expected[(rank, (rank + 4) % 8)] = DATA
    assert cells(whole) == expected


def test_at_step_parallel_end_nothing_is_missing(at_end):
    """No grad in the network: no J node, so no "cannot tell" backward row, and the same forward."""
    assert splits(at_end) == {rank: PER_RANK for rank in RANKS}
    assert backward_missing(at_end) == {}
    assert "cannot tell" not in set(bytes_by(at_end, ("axis", "phase"))["axis"])


def test_before_the_parallel_pass_the_forward_cannot_tell():
    begin = analyse(msinspect.load_dump(ZOO06), "step_parallel_begin")
    why = NO_PARALLEL_PASS.format(stage="step_parallel_begin")
    assert forward_missing(begin) == {rank: why for rank in RANKS} and backward_missing(begin) == {}
    assert splits(begin) == {rank: {("cannot tell", "forward"): None} for rank in RANKS}
    assert set(bytes_by(begin, ("axis", "phase"))["note"]) == {SHORT_FORWARD}
    done = invoke("cost", ZOO06, "--stage", "step_parallel_begin", "--matrix")
    assert done.exit_code == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert f"forward cannot tell on ranks 0-7: {why}" in said and NO_COMMUNICATION not in said
    assert "backward" not in said


def test_memory_per_rank(whole):
    rows = memory_per_rank(whole).set_index("rank")
    for rank in RANKS:
        row = rows.loc[rank]
        assert row["optimizer"] == "none: forward only" and row["gradients_from"].startswith("none: the step")
        assert (row["weights"], row["gradients"], row["states"], row["total"]) == (PARAMETERS, 0, 0, PARAMETERS)
        assert (row["weight_count"], row["other"]) == (4, 0)


def test_the_command_reads_the_whole_step_by_default():
    assert told_by_command(ZOO06) == {rank: PER_RANK for rank in RANKS}


def test_the_command_without_validate_says_the_same(tmp_path):
    said = said_without_validate(ZOO06, tmp_path)
    assert "cannot tell" not in said and "1,572,864" in said and "backward" not in said
