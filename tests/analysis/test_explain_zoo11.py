"""``explain`` on zoo 11 (fixtures/zoo/nets/11_lazy_inline_8.py): two feed-forward blocks whose
cell is ``@lazy_inline`` (the body compiled once, called with each block's weights), semi-auto on
8 ranks, dp 2 x mp 4, full batch, x (16, 64), one Momentum step (issue 39: every zoo network with
a backward pass). Derived by hand from the script and MindSpore's rules before explain ran on it:

- ``up`` MatMul ((2, 1), (1, 4)) has device matrix (2, 1, 4), the last axis fastest: rank =
  4 dp + mp. Rank 0 is (0, 0): its mp group (the axis of size 4) is ranks 0-3, its dp pair (the
  axis of size 2) ranks 0, 4; rank 5 is (1, 1): mp group 4-7, dp pair 1, 5.
- up (16, 64) @ w1 (64, 256) gives (16, 256) cut (2, 4); ``act`` ReLU ((2, 4),) reads it as it is;
  ``down`` ((2, 4), (4, 1)) reads (2, 4) too and contracts the cut 256 in 4: partial sums, an
  AllReduce(sum) over the mp group (the operator's own forward communication, kind ``forward``),
  4 parts; its (16, 64) output cut (2, 1) is what the next block's up reads: no redistribution.
- x: full batch, every rank reads all 16 rows; up wants the rows in 2: a StridedSlice (kind
  ``local``, action ``split`` on dimension 0, 2 parts), rank 0 (dp 0) keeps rows 0:8.
- ``loss`` ReduceMean ((2, 1),) with no axis reduces every axis of rows cut 2 (the other 4 devices
  repeat): each rank sums its 8 rows, an AllReduce(sum) over the dp pair adds the 2 halves.
- Every strategy is the user's (``shard()`` on up, act, down, loss).
- Weights: w1_i cut (1, 4) by up and w2_i cut (4, 1) by down: the mp axis cuts them, the dp axis
  does not, so ranks 0 and 4 hold the same slice (replicas): each weight's gradient is summed by
  its mirror over the dp pair, action ``replicas``. No optimizer shard (not enabled).
- The gradient graph (validate): the bprop of down's AllReduce(sum) is an AllReduce(sum) over the
  same mp group; what it adds are the input gradients of the column-parallel up that reads down's
  output (the next block's): dX = dY . w1^T over the rank's 64 of 256 columns, a partial sum over
  the 4 mp ranks. The bprop of loss's AllReduce(sum) is an AllReduce(sum) over the dp pair.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain

from tests.analysis.explain_helpers import ZOO, backward, read

ZOO11 = ZOO / "11_lazy_inline_8"
STAGES = ("validate", "step_parallel_end")


@pytest.fixture(scope="module", params=STAGES)
def zoo11(request):
    return request.param, read(ZOO11, request.param)


@pytest.mark.parametrize("name, strategy", [("up", ((2, 1), (1, 4))), ("act", ((2, 4),)),
                                            ("down", ((2, 4), (4, 1))), ("loss", ((2, 1),))])
def test_every_strategy_is_the_users(zoo11, name, strategy):
    # Each is shard()ed in the script (Block.__init__, Net.__init__).
    _, analysis = zoo11
    found = explain(analysis, name, rank=0)
    assert {(e.verdict, e.in_strategy) for e in found} == {("user", strategy)}


def test_row_parallel_down_sums_over_the_mp_group(zoo11):
    # down ((2, 4), (4, 1)): partial sums over the 4 mp ranks, AllReduce(sum) over 0-3.
    _, analysis = zoo11
    found = [e for e in explain(analysis, "type:AllReduce", rank=0) if e.kind == "forward" and e.producer == "down"]
    assert found
    for e in found:
        assert (e.action, e.parts) == ("sum", 4)
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 1, 2, 3)
        assert not e.cannot_tell


def test_mean_loss_sums_over_the_dp_pair(zoo11):
    # loss ReduceMean ((2, 1),), every axis reduced, rows cut 2: AllReduce(sum) over 0, 4, 2 parts.
    _, analysis = zoo11
    found = [e for e in explain(analysis, "type:AllReduce", rank=0) if e.kind == "forward" and e.producer == "loss"]
    assert len(found) == 1
    e = found[0]
    assert (e.action, e.parts) == ("sum", 2)
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 4)
    assert not e.cannot_tell


def test_full_batch_rows_are_sliced_for_up(zoo11):
    # x (16, 64) whole on every rank, up wants (2, 1): rank 0 keeps rows 0:8, nothing on the wire.
    _, analysis = zoo11
    found = [e for e in explain(analysis, "type:StridedSlice", rank=0) if e.consumer == "up"]
    assert len(found) == 1
    e = found[0]
    assert (e.kind, e.action, e.dims, e.parts) == ("local", "split", (0,), 2)
    assert e.kept == ((0, 8), (0, 64))


@pytest.mark.parametrize("rank, pair", [(0, (0, 4)), (5, (1, 5))])
def test_each_weight_is_mirrored_over_its_dp_pair(rank, pair):
    # The 4 weights: cut by mp only, replicas over the dp pair of the rank. At validate each
    # mirror is the gradient's AllReduce, named after its weight. Written first as the names the
    # script gives (w1_0 ...); MindSpore names a Cell's Parameter by its attribute path instead,
    # the name= argument aside: validate's head reads `%para2_blocks.0.w1: <Ref[Tensor[Float32]],
    # (64, 64), ref_key=blocks.0.w1, ...` and the mirrors' `mirror_user_id: "blocks.1.w2"`.
    analysis = read(ZOO11, "validate", rank)
    found = [e for e in explain(analysis, "type:AllReduce", rank=rank) if e.kind == "gradient"]
    named = sorted(e.headline.split("same slice of ")[1].split(" ")[0] for e in found for _ in e.lines)
    assert named == ["blocks.0.w1", "blocks.0.w2", "blocks.1.w1", "blocks.1.w2"]
    for e in found:
        assert e.action == "replicas"
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == pair
        assert not e.cannot_tell


def test_gradient_of_downs_sum_adds_ups_input_gradients():
    # The bprop of down's AllReduce(sum) over 0-3: an AllReduce(sum) over 0-3, 4 parts; it adds
    # the partial input gradients of the column-parallel up that reads down's output.
    analysis = read(ZOO11, "validate")
    found = [e for e in backward(explain(analysis, "type:AllReduce", rank=0))
             if e.forward.startswith("the AllReduce after down ")]
    assert found
    for e in found:
        assert (e.action, e.parts) == ("sum", 4)
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 1, 2, 3)
        assert not e.cannot_tell
    assert any(e.readers == ("up",) for e in found)


def test_the_loss_sum_has_no_gradient_collective():
    # Derived first as: the bprop of loss's AllReduce(sum) over 0, 4 is an AllReduce(sum) over the
    # same pair. MindSpore does not keep one: the loss is the step's output, its sens a constant,
    # and the gradient graph starts from ReduceMean's bprop on a constant tensor, validate line
    # 294: `PrimFunc_RealDiv(Tensor(shape=[8, 64], dtype=Float32, value=[...]), Tensor(shape=[],
    # dtype=Float32, value=512)) cnode_primal_attrs: {forward_node_name: "ReduceMean_4608", ...`.
    # The file's backward AllReduces are the two bprops of down's sums alone (one per block's
    # body); block 1's sum reaches loss, no column-parallel MatMul, so it names no readers.
    analysis = read(ZOO11, "validate")
    found = backward(explain(analysis, "type:AllReduce", rank=0))
    assert sorted(e.forward.split(" (")[0] for e in found) == ["the AllReduce after down"] * 2
    assert sorted(e.readers for e in found) == [(), ("up",)]


def test_downs_sums_reach_the_next_up_and_the_loss(zoo11):
    # Block 0's down output is block 1's up input; block 1's is the loss's: one forward
    # AllReduce per block's body, consumers up and loss.
    _, analysis = zoo11
    found = [e for e in explain(analysis, "type:AllReduce", rank=0) if e.kind == "forward" and e.producer == "down"]
    assert sorted(e.consumer for e in found for _ in e.lines) == ["loss", "up"]


def test_mirrors_before_the_gradient_graph():
    # step_parallel_end: each weight's mirror is still a _MirrorOperator in front of its reader,
    # up for w1, down for w2 (blocks 0 and 1), replicas over the dp pair 0, 4.
    analysis = read(ZOO11, "step_parallel_end")
    found = explain(analysis, "type:_MirrorOperator", rank=0)
    assert sorted(e.consumer for e in found for _ in e.lines) == ["down", "down", "up", "up"]
    for e in found:
        assert (e.kind, e.action) == ("gradient", "replicas")
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 4)
        assert not e.cannot_tell


def test_default_read_adds_the_backward_from_validate():
    # explain on the dump itself reads step_parallel_end and takes the gradient graph's
    # collectives from validate: the forward sums of down (2) and loss (1), and the 2 bprops of
    # down's sums; the mirrors are the gradient's AllReduces (4).
    found = explain(ZOO11, "type:AllReduce", rank=0)
    kinds = sorted(e.kind for e in found for _ in e.lines)
    assert kinds == ["backward"] * 2 + ["forward"] * 3 + ["gradient"] * 4


def test_rank_5_sums_over_its_own_mp_group():
    # Rank 5 = (dp 1, mp 1): its mp group is 4-7, so down's forward sums (2) and their bprops (2)
    # run over 4-7, the loss sum over its dp pair 1, 5.
    found = explain(read(ZOO11, "validate", 5), "type:AllReduce", rank=5)
    got = sorted((e.kind, tuple(e.group_ranks)) for e in found if e.kind != "gradient" for _ in e.lines)
    assert got == [("backward", (4, 5, 6, 7))] * 2 + [("forward", (1, 5))] + [("forward", (4, 5, 6, 7))] * 2
    for e in found:
        assert tuple(e.predicted_group) == tuple(e.group_ranks)
