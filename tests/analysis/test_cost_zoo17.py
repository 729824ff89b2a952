"""Cost per step of zoo 17, a network compiled with a dynamic input under semi_auto_parallel
(``fixtures/zoo/nets/17_dynamic_shape_8.py``), derived by hand before msinspect read it.

From the script, its docstring (strategies and layouts) and MindSpore's definitions; 8 ranks,
ranks kept 0 and 3; float32 (4 bytes); wire bytes as docs/comm.md: ring AllReduce 2(n-1)/n S,
AllGather (n-1) S_in, ReduceScatter (n-1)/n S_in. x is (b, 64) with b unknown until the run
(``set_inputs`` with ``None``: -1 in the IR), ``full_batch``: every rank reads the whole x.

- Device matrix: ``mm`` ((1, 1), (1, 4)) uses 4 of 8 devices, [1, 1, 4] plus a repeated axis of 2:
  rank r at (r // 2, r % 2). w (64, 128) is cut by columns in 4: rank r holds columns
  32 (r // 2) .. + 32, a (64, 32) slice of 8,192 bytes; the pairs {2k, 2k + 1} hold the same slice.
- mm: x whole times w's columns: no collective; its output (b, 32) at the rank. relu ((1, 4),)
  takes the same layout: no collective.
- mean (``ReduceMean()``, no shard, every axis reduced to a scalar): semi_auto gives an operator
  without a strategy the batch-parallel one, the first dimension cut by the stage's 8 devices,
  where the shape allows it; b is -1, which 8 does not divide (the script's docstring quotes
  MindSpore refusing to cut it), so the first derivation takes the stand-alone strategy (1, 1):
  the whole (b, 128) at every rank. relu's output is cut by columns over the ranks of one r % 2:
  rank 0 {0, 2, 4, 6}, rank 3 {1, 3, 5, 7}: an AllGather of the rank's (b, 32) over 4, (n-1) x
  b x 32 x 4 bytes: b unknown, so its bytes are "cannot tell" (the tensor at the rank has a
  dynamic dimension), never 0. Axis: the group runs along the device dimension of 4 that cuts w:
  tensor. The mean then reduces locally: no collective (and its scalar is whole everywhere).
  The IR agrees (rank 0 validate line 126: ``PrimFunc_ReduceMean(%10, (), Bool(0)) {instance name:
  mean} primitive_attrs: {gen_strategy: ((1, 1))}``). What the first derivation did not foresee:
  MindSpore's dynamic-shape redistribution gathers along the first dimension and rearranges
  locally (line 82 ``AllGather`` (b, 32) -> (4b, 32) over (0, 2, 4, 6), then ``Split`` in 4 along
  it and ``Concat`` along the columns: (b, 128)); the bytes on the wire are the same, (n-1) x the
  rank's (b, 32), and as unknown.
- Backward: the AllGather's bprop (MindSpore's ``get_bprop_all_gather``) is a ReduceScatter of the
  gathered (b, 128) over the same 4: (n-1)/n x b x 128 x 4, "cannot tell" for the same reason;
  tensor, backward. (The IR, line 309: ``ReduceScatter`` of (4b, 32), the same elements, over
  (0, 2, 4, 6), ``Gradients/.../Grad_AllGather``.) mm's bprop for w, x^T dY = (64, b) x (b, 32), is local (x is whole; x's own
  gradient is pruned: not a weight). The mirror: w's gradient summed over the pair holding the
  same slice, rank 0 {0, 1}, rank 3 {2, 3}: 2 x 1/2 x 8,192 = 8,192 bytes, data, backward.
- Optimizer: Momentum, no optimizer parallel: no collective.

So, per step, at either rank (validate, the whole step): tensor forward "cannot tell" (1
operator, unknown 1), tensor backward "cannot tell" (1, unknown 1), data backward 8,192 (1).
The rank matrix: rank 0 -> 1 the mirror, 8,192 (a pair's ring: the next rank), rank 0 -> 2 the
gather and its bprop (ring to the next of {0, 2, 4, 6}) "cannot tell"; rank 3 -> 2 the mirror
(next of {2, 3} after 3 wraps to 2), rank 3 -> 5 "cannot tell".

At step_parallel_end (a dump without validate): the forward AllGather as above ("cannot tell",
dynamic), the mirror as backward data (it stands in the forward graph there), and the rest of the
backward "cannot tell" because the file holds no gradient graph.

Memory per rank (docs/cost.md "Static memory"): w's slice 8,192 bytes, 1 weight; Momentum clones
``moments.w`` (the strategy checkpoint's layout list holds it, (64, 32)): states 8,192,
states_expected 8,192 (one clone a weight); gradients one per weight, no optimizer shard: 8,192.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD, link_time
from msinspect.analysis.job.cost_tables import comm_costs, rank_matrix
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import (allreduce, assert_backward_untold, cells, operators, said_without_validate,
                                         split, told_by_command)
from tests.conftest import FIXTURES, invoke

ZOO17 = FIXTURES / "zoo" / "17_dynamic_shape_8"
RANKS = (0, 3)
W_SLICE = 64 * 32 * 4
MIRROR = allreduce(2, W_SLICE)
#: (rank, group) of the gather over the ranks of one r % 2, and of the mirror's pair.
TENSOR_GROUP = {0: (0, 2, 4, 6), 3: (1, 3, 5, 7)}
PAIR = {0: (0, 1), 3: (2, 3)}
RANK = {("tensor", "forward"): None, ("tensor", "backward"): None, ("data", "backward"): MIRROR}
DYNAMIC = "has a dynamic dimension (-1), whose extent is known at run time only"


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO17), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO17), "step_parallel_end")


def _untold(analysis, rank: int) -> dict:
    """op -> (group, why) of one rank's operators whose bytes cannot be told."""
    costs = comm_costs(analysis)
    mine = costs[(costs["rank"] == rank) & costs["step_bytes"].isna()]
    return {r["op"]: (r["group_ranks"], r["bytes_why"]) for r in mine.to_dict("records")}


def test_the_numbers_are_the_derivation():
    assert W_SLICE == 8_192 and MIRROR == 8_192


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in RANKS:
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == {("tensor", "forward"): 1, ("tensor", "backward"): 1, ("data", "backward"): 1}


def test_bytes_of_a_dynamic_tensor_cannot_be_told_and_say_why(whole):
    for rank in RANKS:
        untold = _untold(whole, rank)
        assert set(untold) == {"AllGather", "ReduceScatter"}
        for group, why in untold.values():
            assert group == TENSOR_GROUP[rank] and "(-1, 32)" in why and DYNAMIC in why
    costs = comm_costs(whole)
    told = costs[costs["step_bytes"].notna()]
    assert set(told["op"]) == {"AllReduce"} and told["bytes_why"].isna().all()
    assert {r: g for r, g in zip(told["rank"], told["group_ranks"])} == PAIR


def test_the_rank_matrix(whole):
    # the mirror to the next of the pair; the gather and its bprop in no cell, counted unknown
    assert cells(whole) == {(0, 1): MIRROR, (3, 2): MIRROR}
    matrix = rank_matrix(whole)
    assert dict(zip(matrix["src"], matrix["unknown"])) == {0: 2, 3: 2}
    # so the time on the wire of either sender cannot be told either
    times = link_time(matrix, {"intra": 100.0, "inter": 10.0}, 8)
    assert list(times["rank"]) == [0, 3] and times["seconds"].map(lambda s: s is None).all()


def test_at_step_parallel_end_the_backward_cannot_tell(at_end):
    for rank in RANKS:
        assert split(at_end, rank) == {("tensor", "forward"): None, ("data", "backward"): MIRROR,
                                       ("cannot tell", "backward"): None}
        untold = _untold(at_end, rank)
        assert set(untold) == {"AllGather"} and DYNAMIC in untold["AllGather"][1]
    assert_backward_untold(at_end, RANKS)


def test_memory_per_rank(whole):
    for row in memory_per_rank(whole).to_dict("records"):
        assert (row["weights"], row["weight_count"], row["gradients"]) == (W_SLICE, 1, W_SLICE)
        assert (row["states"], row["states_expected"]) == (W_SLICE, W_SLICE)
        assert "Momentum" in row["optimizer"]


def test_the_command_reads_the_whole_step_by_default():
    assert told_by_command(ZOO17) == {rank: RANK for rank in RANKS}
    done = invoke("cost", ZOO17)
    assert done.exit_code == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "bytes cannot tell for 4 operator(s): its tensor at the rank (-1, 32) " + DYNAMIC in said


def test_the_command_without_validate_says_why(tmp_path):
    said = said_without_validate(ZOO17, tmp_path)
    assert "backward cannot tell" in said and NO_BACKWARD.format(stage="step_parallel_end") in said
    assert "bytes cannot tell for 2 operator(s): its tensor at the rank (-1, 32) " + DYNAMIC in said
