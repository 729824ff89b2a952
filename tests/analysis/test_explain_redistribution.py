"""``explain`` of the steps of a redistribution that had been left "cannot tell" (issue 39,
item 5), on the zoo's real dumps. Each expectation is worked out by hand from the network script
named in its fixture's docstring and MindSpore's rules, in the comment above it.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain

from tests.analysis.explain_helpers import UT, ZOO, read


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_flatten_to_matmul1_is_an_exchange_through_three_alltoalls(stage):
    # Zoo 21 (fixtures/zoo/nets/21_doc_layout_two_axes.py), rank 0 of 8: flatten ((8, 1, 1, 1),),
    # batch parallel (batch_parallel_info.cc), gives x (256, 784) with its rows cut 8 ways: rank r
    # holds rows 32r .. 32r + 31, every column. matmul1 ((2, 4), (4, 1)) has device matrix
    # (2, 4, 1): rank r reads rows block r // 4 of 2 and columns block r % 4 of 4, so rank 0 needs
    # rows 0:128 (held by ranks 0-3) and columns 0:196: dimension 0 gathered from 8 parts to 2,
    # dimension 1 cut from whole to 4, an exchange, 4 parts. MindSpore does it with three
    # AlltoAlls, over ranks 0, 4 then 0, 2 then 0-1, which reach ranks 0-7 together: more than
    # the ranks 0-3 holding the rows, never "the reconstruction is off" nor "cannot tell".
    found = [e for e in explain(read(ZOO / "21_doc_layout_two_axes", stage), "type:AlltoAll", rank=0)
             if e.producer == "flatten"]
    assert sorted(tuple(e.group_ranks) for e in found) == [(0, 1), (0, 2), (0, 4)]
    for e in found:
        assert e.consumer == "matmul1"
        assert (e.producer_layout, e.consumer_layout) == ((8, 1), (2, 4))
        assert (e.action, e.dims, e.parts) == ("exchange", (0, 1), 4)
        assert e.predicted_group == (0, 1, 2, 3)
        said = " ".join(e.reconstruction)
        assert "reach ranks 0-7 together, more than those" in said and "is off here" not in said
        assert not e.cannot_tell


def test_a_redistribution_of_per_rank_reshapes_alone_moves_nothing():
    # Zoo 01 (fixtures/zoo/nets/01_semi_auto_tp4dp2.py, gpt.py plan "all"): batch 8, sequence 64,
    # hidden 512, 8 heads of 64; TP 4 x DP 2, rank 0 = (dp 0, tp 0). q_matmul ((2, 1), (1, 4))
    # gives (512, 512) cut (2, 4): rank 0 holds rows 0:256 (batches 0-3) and columns 0:128 (heads
    # 0-1). The network reshapes it to (8, 64, 8, 64) for q_transpose ((2, 1, 4, 1),): rank 0
    # reads batches 0-3, all 64 positions, heads 0-1, all 64 of each: the same 256 x 128 numbers.
    # So the parallel pass's per-rank Reshape alone, no collective, takes the rank's (256, 128) to
    # (4, 64, 2, 64): nothing moves (action "none"), once per block for q, k and v. Back the other
    # way before out_matmul ((2, 4), (4, 1)): merge_transpose's (8, 64, 8, 64) cut (2, 1, 4, 1) to
    # rows 0:256, columns 0:128, the last Reshape giving each rank (256, 128). And pos_add
    # ((2, 1, 1), (1, 1)) of (8, 64, 512) to ln1 ((2, 1), ...) of (512, 512): batches 0-3 are rows
    # 0:256, whole hidden on both sides.
    found = [e for e in explain(read(ZOO / "01_semi_auto_tp4dp2", "step_parallel_end"), "type:Reshape", rank=0)
             if e.kind == "local"]
    pairs = {(e.producer, e.consumer): e for e in found}
    expected = {(f"{w}_matmul", f"{w}_transpose"): ((2, 4), (2, 1, 4, 1)) for w in "qkv"}
    expected |= {("merge_transpose", "out_matmul"): ((2, 1, 4, 1), (2, 4)), ("pos_add", "ln1"): ((2, 1, 1), (2, 1))}
    for pair, layouts in expected.items():
        e = pairs[pair]
        assert (e.producer_layout, e.consumer_layout) == layouts
        assert (e.action, e.dims, e.chain) == ("none", (), ("Reshape",))
        assert not e.cannot_tell
        assert len(e.lines) == (1 if pair[0] == "pos_add" else 4)
    said = " ".join(pairs[("merge_transpose", "out_matmul")].reconstruction)
    assert "the last Reshape gives each rank (256, 128), out_matmul's input cut (2, 4)" in said


def test_a_step_through_a_reshape_is_told_in_the_consumers_shape():
    # Zoo 14 (fixtures/zoo/nets/14_mf_llama_seq_parallel.py) at step_parallel_end, rank 0: wo and
    # w2 (matmul, out_strategy ((4, 1),)) leave their (128, 512) output with the rows cut 4 ways;
    # the residual add ((1, 4, 1), (1, 4, 1)) reads it as (2, 64, 512). Row-major, the 4 parts of
    # the 128 rows (batch x sequence) are 2 batches, then 2 halves of the 64 positions: in add's
    # shape the cut is (2, 2, 1). add needs (1, 4, 1): dimension 0 gathered (2 parts -> whole),
    # dimension 1 cut further (2 -> 4 parts), an exchange of 2 parts. The redistribution's local
    # operators say so: its 3 Reshapes (one answer, folded) and the two StridedSlices after the
    # AllGathers, once per residual add: 2 layers x 2 = 4 times.
    found = [e for e in explain(read(ZOO / "14_mf_llama_seq_parallel", "step_parallel_end"), "re:.*", rank=0)
             if e.subject == "communication" and e.kind == "local" and e.producer == "matmul" and e.consumer == "add"]
    assert sorted(e.op for e in found) == ["Reshape", "StridedSlice", "StridedSlice"]
    for e in found:
        assert (e.producer_layout, e.reshaped, e.consumer_layout) == ((4, 1), (2, 2, 1), (1, 4, 1))
        assert (e.action, e.dims, e.parts) == ("exchange", (0, 1), 2)
        assert not e.cannot_tell
    assert sorted(len(e.lines) for e in found) == [4, 4, 3 * 4]


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_a_squeeze_between_masked_fill_and_sum_moves_nothing(stage):
    # Zoo 19 (fixtures/zoo/nets/19_doc_optimizer_parallel.py): 8 ranks, the default batch strategy,
    # a global batch of 256. The loss masks its (256, 1) per-row values with MaskedFill ((8, 1),
    # (8, 1)) (element-wise: rank r holds rows 32r .. 32r + 31) and sums them squeezed to (256,) by
    # SumExt ((8,),): the same 32 rows. The redistribution between is a Squeeze of axis 1 alone:
    # in (256,) the cut (8, 1) is (8,), the cut SumExt takes; nothing moves. Twice (the loss and
    # its smoothing term).
    found = [e for e in explain(read(ZOO / "19_doc_optimizer_parallel", stage), "type:Squeeze", rank=0)
             if e.kind == "local"]
    assert len(found) == 2
    for e in found:
        assert (e.producer_layout, e.consumer_layout, e.action, e.chain) == ((8, 1), (8,), "none", ("Squeeze",))
        assert "in " in e.reconstruction[-1] and "shape (256,)" in e.reconstruction[-1]
        assert not e.cannot_tell


def test_a_local_step_of_a_reductions_gradient_moves_nothing():
    # Zoo 04 (fixtures/zoo/nets/04_pipeline_hsdp_recompute.py): the head and its loss_mean
    # (ReduceMean) sit on stage 1 (ranks 4-7), once per each of 4 micro-batches. MindSpore's bprop
    # of a ReduceMean (grad_math_ops.py) reshapes the output's gradient to the kept dimensions and
    # tiles it over the reduced ones: at validate each Grad_ReduceMean holds such a Reshape, which
    # MindSpore records as part of the gradient of ReduceMean (forward_node_name), no collective's.
    # On the rank's own data: action "none", one per micro-batch, 4 on rank 4, named after
    # loss_mean; the operators around it (RealDiv, Tile of the gradient graph) carry no strategy,
    # and that is no gap: nothing moves.
    found = [e for e in explain(read(ZOO / "04_pipeline_hsdp_recompute", rank=4), "type:Reshape", rank=4)
             if e.kind == "local" and (e.forward or "").startswith("loss_mean (ReduceMean, line ")]
    assert sum(len(e.lines) for e in found) == 4
    for e in found:
        assert (e.action, e.dims) == ("none", ())
        assert not e.cannot_tell


def test_the_graph_outputs_cut_is_its_virtual_outputs():
    # fixtures/ut/b_test_pipeline_split__test_pipeline_split_shared_parameter_stage1_predict
    # (.toml): rank 16 of 32, stage 1 = ranks 16-31, an inference graph. matmul1 ((8, 1), (1, 1))
    # gives its (32, 64) output with the rows cut 8 ways over device matrix [8, 1, 1] plus a repeat
    # of 2 on the right; the parallel pass marks the graph's output with _VirtualOutput ((1, 1),):
    # whole. So dimension 0 is gathered (8 parts -> whole) over the ranks of rank 16's column of
    # the matrix, 16, 18, ..., 30, as MindSpore wrote; the Return after it is no gap.
    analysis = read(UT / "b_test_pipeline_split__test_pipeline_split_shared_parameter_stage1_predict",
                    "step_parallel_end", rank=16)
    found = [e for e in explain(analysis, "type:AllGather", rank=16) if e.producer == "matmul1"]
    assert len(found) == 1
    e = found[0]
    assert (e.consumer, e.producer_layout, e.consumer_layout) == ("_VirtualOutput", (8, 1), (1, 1))
    assert (e.action, e.dims, e.parts) == ("gather", (0,), 8)
    assert tuple(e.predicted_group) == tuple(e.group_ranks) == tuple(range(16, 32, 2))
    assert not e.cannot_tell


def test_the_loss_scale_overflow_allreduce_sums_the_flags():
    # Zoo 12 (fixtures/zoo/nets/12_mf_llama_tp8.py): MindFormers' MFTrainOneStepCell with
    # scale_sense is a TrainOneStepWithLossScaleCell, whose overflow check sums every rank's
    # overflow flag over the world (loss_scale.py: flag_reduce = self.allreduce(flag_sum)): at
    # validate one AllReduce over ranks 0-7, a sum of 8 flags; a flag has no layout, so the Reshape
    # before it and the LessEqual after it, with no strategy, are no gap.
    found = [e for e in explain(read(ZOO / "12_mf_llama_tp8"), "type:AllReduce", rank=0) if e.kind == "loss-scale"]
    assert len(found) == 1
    e = found[0]
    assert (e.action, e.dims, e.parts, e.group_ranks) == ("sum", (), 8, tuple(range(8)))
    assert "loss_scale.py:" in e.facts[-1] and "<~~" not in e.facts[-1]
    assert not e.cannot_tell


def test_a_renamed_masked_lookup_sum_and_the_slice_after_it():
    # Zoo 14 (fixtures/zoo/nets/14_mf_llama_seq_parallel.py) at validate, rank 0: the embedding
    # Gather ((4, 1), (1, 1)) cuts the (1024, 512) table's rows 4 ways over ranks 0-3 (GatherInfo's
    # shard-axis mode): each rank looks up the ids its rows hold, the others masked to zero, and an
    # AllReduce over 0-3 adds the 4 partial lookups (comm reuse prints it "allreduce", which says
    # nothing of who inserted it). After it every rank holds the whole (2, 64, 512) lookup: a
    # Gather's output cut as its indices (1, 1) then the table's other dimension (1): (1, 1, 1).
    # Through the Cast (no strategy) the first residual add ((1, 4, 1), ...) takes the sequence cut
    # 4 ways: a StridedSlice keeps the rank's 16 positions, dimension 1 split, 4 parts.
    analysis = read(ZOO / "14_mf_llama_seq_parallel")
    found = [e for e in explain(analysis, "type:AllReduce", rank=0) if e.name == "allreduce" and e.kind == "unknown"]
    assert len(found) == 1
    e = found[0]
    assert (e.action, e.parts, e.predicted_group) == ("sum", 4, (0, 1, 2, 3))
    assert not e.cannot_tell
    sliced = [e for e in explain(analysis, "type:StridedSlice", rank=0) if e.consumer == "add" and e.producer == "cast"]
    assert len(sliced) == 1
    e = sliced[0]
    assert (e.producer, e.producer_layout, e.consumer_layout) == ("cast", (1, 1, 1), (1, 4, 1))
    assert (e.action, e.dims, e.parts) == ("split", (1,), 4)
    assert not e.cannot_tell


def test_two_dimensional_tensor_parallel_at_step_parallel_end():
    # Zoo 20 (fixtures/zoo/nets/20_doc_high_dimension_tp.py), rank 0 = (x 0, y 0) of Layout
    # (2, 4): with enable_nd_tp MindSpore puts new operators without strategies (hash-named after
    # the MatMul they replace) in place of matmul1 ((1, 8), (2, 4)) and matmul2 ((1, 8), (4, 2)); the
    # rank's step_parallel_begin file still holds both with their strategies.
    # - The input (8192, 256), the dataset's rows cut 8 ways, goes into matmul1's graph, which takes
    #   matmul1's input 0 cut (1, 8): dimension 0 gathered (8 parts -> whole), dimension 1 cut
    #   (whole -> 8 parts), an exchange of 8 parts (MindSpore: two AlltoAlls and Reshapes).
    # - In matmul1's graph the activation is gathered over "y" (0-3): dimension 1, 4 parts (the
    #   AllGather works on dimension 0; the Split and Concat after it move the parts to dimension 1);
    #   the partial sums, transposed, are reduce-scattered over "x" ({0, 4}): dimension 0, 2 parts.
    #   matmul2's the other way round: gathered over "x" (dimension 1, 2 parts), reduce-scattered over
    #   "y" (dimension 0, 4 parts). step_parallel_end prints no shapes for these: MindSpore's
    #   definitions of its AllGather and ReduceScatter tell the dimension.
    analysis = read(ZOO / "20_doc_high_dimension_tp", "step_parallel_end")
    found = explain(analysis, "re:.*", rank=0)
    into = [e for e in found if e.subject == "communication" and e.producer == "args0" and e.kind != "forward"]
    assert sorted(e.op for e in into) == ["AlltoAll", "AlltoAll", "Reshape"]
    for e in into:
        assert (e.producer_layout, e.consumer_layout, e.action, e.dims, e.parts) == ((8, 1), (1, 8), "exchange",
                                                                                    (0, 1), 8)
        assert any("in place of matmul1 (MatMul) ((1, 8), (2, 4))" in t for t in e.facts)
        assert not e.cannot_tell
    own = {(e.op, tuple(e.group_ranks)): (e.action, e.dims, e.parts) for e in found if e.kind == "forward"}
    assert own == {("AllGather", (0, 1, 2, 3)): ("gather", (1,), 4), ("ReduceScatter", (0, 4)): ("sum", (0,), 2),
                   ("AllGather", (0, 4)): ("gather", (1,), 2), ("ReduceScatter", (0, 1, 2, 3)): ("sum", (0,), 4)}
    # What each replaced MatMul's graph gives, no rule here says (its inputs' contracted dimensions
    # are cut differently): said so, naming the MatMul it stands for.
    out = [e for e in found if e.subject == "communication" and e.consumer == "_VirtualOutput"]
    assert out and all(any("in place of matmul2 (MatMul) ((1, 8), (4, 2))" in t for t in e.cannot_tell) for e in out)


def test_a_plain_reshape_and_a_depend_before_the_consumer():
    # Zoo 12 (fixtures/zoo/nets/12_mf_llama_tp8.py) at validate, rank 0 = (dp 0, mp 0) of dp 2 x mp
    # 4: global batch 4, sequence 64. The loss's input mask, not_equal ((2, 1), ()) of the (4, 64)
    # labels, has its rows cut by dp; cast, with no strategy, passes that on. MindFormers'
    # CrossEntropyLoss reshapes it to (256,) and multiplies it in mul2 ((1,), (1,)): whole. At
    # validate a plain Reshape (no strategy) and a Depend stand between; through them mul2's input 1
    # is the mask: dimension 0 gathered from 2 parts to whole, over the dp group of rank 0, ranks 0
    # and 4 (rank = 4 dp + mp).
    found = [e for e in explain(read(ZOO / "12_mf_llama_tp8"), "type:AllGather", rank=0)
             if e.consumer == "mul2" and e.producer == "cast"]
    assert len(found) == 1
    e = found[0]
    assert (e.producer, e.producer_layout, e.consumer_layout) == ("cast", (2, 1), (1,))
    assert (e.action, e.dims, e.parts, e.group_ranks) == ("gather", (0,), 2, (0, 4))
    assert not e.cannot_tell


def test_sorts_output_reshaped_in_place():
    # Zoo 15 (fixtures/zoo/nets/15_mf_llama_moe_ep8.py) at step_parallel_end, rank 0: MoE routing's
    # sort ((8, 1),) keeps its input's cut (SortInfo): rows in 8; transpose_unsort_map ((8, 1, 1),)
    # reads it with a unit dimension added: rows in 8 again. The Reshape between is the whole
    # redistribution: each rank's rows, reshaped in place, nothing moves.
    found = [e for e in explain(read(ZOO / "15_mf_llama_moe_ep8", "step_parallel_end"), "type:Reshape", rank=0)
             if e.producer == "sort"]
    assert found and all((e.producer_layout, e.consumer_layout, e.action) == ((8, 1), (8, 1, 1), "none")
                         for e in found)
    assert not any(e.cannot_tell for e in found)


def test_labels_through_a_renamed_reshape_at_validate():
    # Zoo 01 (fixtures/zoo/nets/01_semi_auto_tp4dp2.py) at validate, rank 0: full batch, so every
    # rank reads all of the (8, 64, 1024) labels; the network reshapes them to (512, 1024) for
    # loss_ce ((2, 1), (2, 1)), whose rows are cut by dp: rank 0 keeps rows 0:256, dimension 0 cut
    # (whole -> 2 parts), a StridedSlice, nothing on the wire. At validate the Reshape between is
    # renamed Reshape-op0 and carries no strategy; the chain goes through it to the graph input.
    found = [e for e in explain(read(ZOO / "01_semi_auto_tp4dp2"), "type:StridedSlice", rank=0)
             if e.consumer == "loss_ce"]
    assert len(found) == 1
    e = found[0]
    assert (e.producer, e.consumer_layout, e.action, e.dims, e.parts) == ("inputs1", (2, 1), "split", (0,), 2)
    assert not e.cannot_tell


def test_a_step_told_in_the_producers_shape_when_the_reshape_interleaves():
    # Zoo 05 (fixtures/zoo/nets/05_expert_alltoall_16.py) at step_parallel_end, rank 0 of 16:
    # combine_transpose ((16, 1, 1),) turns (16, 64, 512) cut by expert into (64, 16, 512) cut
    # (1, 16, 1): rank r holds expert r's column of every capacity slot. square ((16, 1),) reads it
    # reshaped to (1024, 512), rows cut 16 ways: rank r needs rows 64r .. 64r + 63, that is slots
    # 4r .. 4r + 3 of all 16 experts. In square's shape the producer's parts are interleaved rows
    # (no cut of whole blocks), but in combine_transpose's shape square's cut is (16, 1, 1): so
    # dimension 1 is gathered (16 parts -> whole) and dimension 0 cut (whole -> 16): an exchange,
    # one AlltoAll over ranks 0-15, which the producer's device matrix (16, 1, 1) predicts.
    found = [e for e in explain(read(ZOO / "05_expert_alltoall_16", "step_parallel_end"), "type:AlltoAll", rank=0)
             if e.consumer == "square"]
    assert len(found) == 1
    e = found[0]
    assert (e.producer, e.producer_layout, e.consumer_layout) == ("combine_transpose", (1, 16, 1), (16, 1))
    assert (e.action, e.dims, e.parts) == ("exchange", (1, 0), 16)
    assert tuple(e.predicted_group) == tuple(e.group_ranks) == tuple(range(16))
    assert not e.cannot_tell
