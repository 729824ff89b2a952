"""``explain`` of a collective that is one step of a longer redistribution, read at ``validate``
(issue 39, item 5): where the step between producer and consumer cannot be told in the
producer's terms (per-rank Reshapes with no strategy between, or several collectives in one
step), the collective's own per-rank shapes tell what it moves. MindSpore's AllGather
concatenates the group's parts on dimension 0 of its input, a ReduceScatter sums and leaves each
rank its part of dimension 0 (``mindspore/ops/operations/comm_ops.py``); tensor redistribution
reshapes the tensor per rank so the moved part is dimension 0. Each expectation is worked out by
hand from the network script, in the comment above it.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain

from tests.analysis.explain_helpers import UT, ZOO, backward, one_bprop, read, step


@pytest.fixture(scope="module")
def zoo14():
    """Zoo 14 (fixtures/zoo/nets/14_mf_llama_seq_parallel.py): mp 4 with sequence parallel on
    ranks 0-3, batch 2, sequence 64, hidden 512, 2 layers. wo and w2 ((1, 4), (1, 4)) with
    out_strategy ((4, 1),) leave the (128, 512) rows (batch x sequence) cut 4 ways: rank r holds
    rows 32r .. 32r + 31, that is batch r // 2, sequence half r % 2. The residual add ((1, 4, 1),
    (1, 4, 1)) needs (2, 64, 512) with the sequence cut 4 ways: rank r holds both batches,
    sequence 16r .. 16r + 15. The batch of 2 does not divide by 4, so the rows cannot be
    reshaped in place: MindSpore gathers the two sequence halves of the rank's batch over the
    ranks with the same batch (0-1), a (1, 32, 512) block per rank gathered on dimension 0 into
    (2, 32, 512), 2 parts; then the two batches over the ranks with the same sequence half
    (0, 2), a (1, 2, 32, 512) block gathered on dimension 0 into (2, 2, 32, 512), 2 parts; then
    StridedSlices keep the rank's 16 positions. Once after wo and once after w2 in each of 2
    layers: 4 AllGathers over 0-1 and 4 over 0, 2."""
    return read(ZOO / "14_mf_llama_seq_parallel")


def test_each_allgather_between_reshapes_gathers_dimension_0_of_its_block(zoo14):
    _gathers_of_blocks(zoo14)


def test_the_same_at_step_parallel_end_from_the_reshapes():
    # step_parallel_end prints no per-rank shapes for these collectives (and an operator's input
    # as the network had it): the per-rank Reshape before each states the block, (1, 32, 512)
    # and (1, 2, 32, 512), and the group's size (2) the gathered one; the same answers as at
    # validate.
    _gathers_of_blocks(read(ZOO / "14_mf_llama_seq_parallel", "step_parallel_end"))


def _gathers_of_blocks(analysis):
    found = [e for e in explain(analysis, "type:AllGather", rank=0)
             if e.kind != "backward" and tuple(e.group_ranks) in ((0, 1), (0, 2))]
    assert sorted((tuple(e.group_ranks), len(e.lines)) for e in found) == [((0, 1), 4), ((0, 2), 4)]
    shapes = {(0, 1): ((1, 32, 512), (2, 32, 512)), (0, 2): ((1, 2, 32, 512), (2, 2, 32, 512))}
    for e in found:
        assert step(e) == ("gather", (0,), 2)
        assert e.own_shapes == shapes[tuple(e.group_ranks)]
        # The step as a whole, between wo's matmul and the residual add (at validate through the
        # redistribution's per-rank Reshapes, renamed Reshape-op1 ... with no strategy), told in
        # add's shape: matmul's (128, 512) rows cut 4 ways are 2 batches x 2 sequence halves of
        # (2, 64, 512), cut (2, 2, 1); add needs (1, 4, 1): dimension 0 gathered from 2 parts,
        # dimension 1 cut further from 2 to 4.
        assert (e.producer, e.consumer, e.producer_layout, e.reshaped) == ("matmul", "add", (4, 1), (2, 2, 1))
        assert "dimension 0 is gathered (2 parts -> whole); dimension 1 is cut further (2 parts -> 4 parts)" \
            in e.headline
        assert not e.cannot_tell


def test_their_gradients_scatter_dimension_0_back(zoo14):
    # The bprop of each AllGather is a ReduceScatter(sum) over the same group: the gradient of
    # the gathered block summed, each rank keeping its part of dimension 0, 2 parts; 4 over 0-1
    # and 4 over 0, 2, none left "cannot tell".
    found = [e for e in backward(explain(zoo14, "type:ReduceScatter", rank=0))
             if tuple(e.group_ranks) in ((0, 1), (0, 2))]
    assert sorted(tuple(e.group_ranks) for e in found) == [(0, 1)] * 4 + [(0, 2)] * 4
    for e in found:
        assert step(e) == ("sum", (0,), 2)
        assert tuple(e.predicted_group) == tuple(e.group_ranks)
        assert not e.cannot_tell


def test_gradient_of_a_two_axis_layout_gather():
    # Zoo 21 (fixtures/zoo/nets/21_doc_layout_two_axes.py), rank 0: matmul1 cuts x's rows by "mp"
    # (rank = 4 dp + 2 sp + mp): after its AllReduce over 0, 2, 4, 6 rank 0 holds rows 0-127 of
    # 256 as (128, 512), rank 1 rows 128-255. relu1 ((4, 1),) on 8 devices repeats on the right:
    # ranks 0 and 1 both need rows 0-63. So the two mp halves are gathered over ranks 0-1: a
    # (1, 128, 512) block on dimension 0 into (2, 128, 512), 2 parts, then a StridedSlice keeps
    # 64 rows. The step as a whole (two collectives) does not tell it; the AllGather's own shapes
    # do. Its bprop, a ReduceScatter(sum) over 0-1: dimension 0, 2 parts.
    e = one_bprop(read(ZOO / "21_doc_layout_two_axes"), "ReduceScatter")
    assert tuple(e.group_ranks) == (0, 1)
    assert step(e) == ("sum", (0,), 2)
    assert e.own_shapes == ((1, 128, 512), (2, 128, 512))
    assert not e.cannot_tell


def test_gradient_of_the_vocabulary_reduce_scatter():
    # Zoo 05 (fixtures/zoo/nets/05_expert_alltoall_16.py), rank 0: vocab_gather ((16, 1), (1,))
    # cuts the (4096, 512) table in 16; the masked lookup of 1024 ids gives each rank (1024, 512)
    # partial rows, reduce-scattered over all 16 ranks: each keeps 1024 / 16 = 64 rows, dimension
    # 0, 16 parts. Its bprop, an AllGather over the same 16 ranks, gathers dimension 0 of the
    # gradient back: (64, 512) -> (1024, 512), 16 parts.
    e = one_bprop(read(ZOO / "05_expert_alltoall_16"), "AllGather", "the ReduceScatter")
    assert step(e) == ("gather", (0,), 16)
    assert e.own_shapes == ((1024, 512), (64, 512))
    assert tuple(e.group_ranks) == tuple(range(16))
    assert not e.cannot_tell


@pytest.mark.parametrize("op, group, step", [
    # Zoo 20 (fixtures/zoo/nets/20_doc_high_dimension_tp.py): 2-D tensor parallel, Layout (2, 4)
    # ("x", "y"), rank 0 = (x 0, y 0); global batch 8192 rows. At validate MindSpore has replaced
    # each MatMul by one without a strategy between its own collectives: no rule says what that
    # graph needs, the collectives' shapes say what each does.
    # matmul1 ((1, 8), (2, 4)): the activation's 256 columns cut 8 ways, (8192, 32) per rank,
    # gathered over the "y" group (0-3) to the weight's cut by "x" alone, 256 / 2 = 128:
    # dimension 1, 4 parts (an AllGather on dimension 0, then Split / Concat).
    ("AllGather", (0, 1, 2, 3), ("gather", (1,), 4, ((8192, 32), (8192, 128)))),
    # matmul2 ((1, 8), (4, 2)): relu's (8192, 512) cut 8 ways, (8192, 64), gathered over "x"
    # ({0, 4}) to 512 / 4 = 128: dimension 1, 2 parts.
    ("AllGather", (0, 4), ("gather", (1,), 2, ((8192, 64), (8192, 128)))),
    # matmul1's output (8192, 512 / 4 = 128) holds partial sums over "x"; transposed to
    # (128, 8192) and reduce-scattered over {0, 4}: 64 of the 128 columns each, dimension 0 of
    # the transposed tensor, 2 parts (relu's (1, 8): 512 / 8 = 64).
    ("ReduceScatter", (0, 4), ("sum", (0,), 2, ((128, 8192), (64, 8192)))),
    # matmul2's output (8192, 256 / 2 = 128), partial over "y", transposed and reduce-scattered
    # over 0-3: 32 each, dimension 0, 4 parts.
    ("ReduceScatter", (0, 1, 2, 3), ("sum", (0,), 4, ((128, 8192), (32, 8192)))),
])
def test_two_dimensional_tensor_parallel_collectives(op, group, step):
    analysis = read(ZOO / "20_doc_high_dimension_tp")
    found = [e for e in explain(analysis, f"type:{op}", rank=0)
             if e.kind == "forward" and tuple(e.group_ranks) == group]
    assert len(found) == 1
    e = found[0]
    assert (e.action, e.dims, e.parts, e.own_shapes) == step
    assert not any(t.startswith("which dimension") for t in e.cannot_tell)


def test_a_redistributions_split_and_concat_tell_the_gathered_dimension():
    """UT port test_batch_matmul_repeat_calc, rank 0 at validate: the redistribution after mul
    reshapes the rank's block to (64, 32, 1, 8) and gathers it four times, over ranks 0-1, 0, 2,
    0, 4 and 0, 8, each time 2 parts. After each of the first three MindSpore's redistribution
    splits the gathered tensor on dimension 0 into its 2 parts and concatenates them on dimension
    3, then 2, then 1 (its own Split and Concat, named redistribution_op_...; IR lines 84-156);
    the fourth is followed by no Split. MindSpore's AllGather joins the parts on dimension 0
    (comm_ops.py), so the four gather dimensions 3, 2, 1 and 0: the third takes
    (64, 32, 2, 16) to (64, 64, 2, 16). Each one's gradient, a ReduceScatter over the same ranks,
    hands each rank back its part of that same dimension. (msinspect once read past the Split, a
    redistribution step itself, and said dimension 0 for all four.)"""
    analysis = read(UT / "a_test_batch_matmul__test_batch_matmul_repeat_calc")
    scatters = {tuple(e.group_ranks): e for e in backward(explain(analysis, "type:ReduceScatter", rank=0))}
    assert {group: e.dims for group, e in scatters.items()} == {(0, 1): (3,), (0, 2): (2,), (0, 4): (1,), (0, 8): (0,)}
    assert scatters[(0, 4)].own_shapes == ((64, 32, 2, 16), (64, 64, 2, 16))


def test_a_dynamic_dimension_gathered_by_split_and_concat():
    """UT port test_shape_used_by_one_rank0, rank 0 at validate: the redistribution between add and
    relu gathers the rank's (4, -1, 1, 1) over ranks 0, 4, then splits the gathered (8, -1, 1, 1)
    on dimension 0 into its 2 parts and concatenates them on dimension 1 (IR lines 82-102: the
    Split named redistribution_allsplit, the Concat's axis I64(1)). So the gather is along the
    dynamic dimension 1, 2 parts, whose extent stays unknown: (4, -1, 1, 1) -> (4, -1, 1, 1)."""
    analysis = read(UT / "b_test_dynamic_shape_graph_utils__test_shape_used_by_one_rank0")
    (gather,) = explain(analysis, "type:AllGather", rank=0)
    assert (gather.action, gather.dims, gather.parts) == ("gather", (1,), 2)
    assert gather.own_shapes == ((4, -1, 1, 1), (4, -1, 1, 1))
