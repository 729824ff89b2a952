"""``explain`` of the gradient graph's collectives, read at ``validate`` (issue 39, item 5): each is
MindSpore's bprop of a forward collective, which it names by ``forward_unique_id``. The bprops
are those of ``mindspore/ops/_grad_experimental/grad_comm_ops.py``: AllReduce(sum) -> AllReduce(sum)
of the output's gradient over the same group; AllGather -> ReduceScatter(sum); ReduceScatter ->
AllGather; AlltoAll -> AlltoAll with split_dim and concat_dim swapped. Each expectation is worked
out by hand from the network script named in the fixture's docstring, in the comment above it.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain

from tests.analysis.explain_helpers import UT, ZOO, backward, one_bprop, read, step


@pytest.fixture(scope="module")
def zoo01_validate():
    """Zoo 01 (fixtures/zoo/nets/01_semi_auto_tp4dp2.py, gpt.py plan "all"): 4 blocks, TP 4 x DP 2
    on 8 ranks, rank = dp * 4 + tp, so rank 0's tensor group is ranks 0-3. Per block:
    q/k/v_matmul and ffn_in_matmul ((2, 1), (1, 4)) (column parallel: the weight's output
    dimension cut 4 ways), out_matmul and ffn_out_matmul ((2, 4), (4, 1)) (row parallel: the
    contracted dimension cut, an AllReduce over the tensor group after each); then ln_f and
    lm_matmul ((2, 1), (1, 4)), an AllGather of the vocabulary for loss_ce ((2, 1), (2, 1))."""
    return read(ZOO / "01_semi_auto_tp4dp2")


def test_each_forward_allreduce_has_its_gradient_allreduce(zoo01_validate):
    # 4 blocks x (out_matmul, ffn_out_matmul) = 8 forward AllReduces(sum) over ranks 0-3; the
    # bprop of each is an AllReduce(sum) of its output's gradient over the same group: 8 backward
    # AllReduces, each summing (action "sum") over the 4 ranks of the tensor group, 4 parts.
    found = backward(explain(zoo01_validate, "type:AllReduce", rank=0))
    assert len(found) == 8
    for e in found:
        assert (e.action, e.parts) == ("sum", 4)
        assert tuple(e.group_ranks) == (0, 1, 2, 3)
        assert tuple(e.predicted_group) == (0, 1, 2, 3)
        assert not e.cannot_tell
    made = sorted(e.forward.split(" after ")[1].split(" (")[0] for e in found)
    assert made == ["ffn_out_matmul"] * 4 + ["out_matmul"] * 4


@pytest.mark.parametrize("after, readers, count", [
    # attention's sum (out_matmul's AllReduce) -> attn_add -> ln2 -> ffn_in_matmul, column
    # parallel: dX = dY . W^T over the rank's 512 of 2048 output columns is a partial sum over the
    # 4 tensor ranks; one per block.
    ("out_matmul", ("ffn_in_matmul",), 4),
    # blocks 0-2's ffn sum -> ffn_add -> the next block's ln1 -> q, k, v_matmul, each column
    # parallel; block 3's -> ln_f -> lm_matmul ((2, 1), (1, 4)), the vocabulary cut 4 ways.
    ("ffn_out_matmul", ("q_matmul", "k_matmul", "v_matmul"), 3),
    ("ffn_out_matmul", ("lm_matmul",), 1),
])
def test_gradient_allreduce_adds_column_parallel_input_gradients(zoo01_validate, after, readers, count):
    found = [e for e in backward(explain(zoo01_validate, "type:AllReduce", rank=0))
             if e.forward.startswith(f"the AllReduce after {after} ")]
    hits = [e for e in found if e.readers == readers]
    assert len(hits) == count
    for e in hits:
        assert "is a partial sum over the 4 ranks holding the others" in " ".join(e.reconstruction)


def test_gradient_of_vocabulary_allgather_is_a_reduce_scatter(zoo01_validate):
    # lm_matmul ((2, 1), (1, 4)) gives logits cut (2, 4); loss_ce ((2, 1), (2, 1)) needs the
    # vocabulary whole: the forward AllGather over ranks 0-3 gathers dimension 1 from 4 parts. Its
    # bprop, ReduceScatter(sum) over the same ranks: the gradient of the whole logits is summed and
    # each rank keeps its quarter of dimension 1 (action "sum", dims (1,), 4 parts).
    e = one_bprop(zoo01_validate, "ReduceScatter", "the AllGather after lm_matmul")
    assert step(e) == ("sum", (1,), 4)
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 1, 2, 3)
    assert not e.cannot_tell


def test_rank_of_the_other_data_replica(zoo01_validate):
    # rank 5 = dp 1, tp 1: its tensor group is ranks 4-7; its bprops run over the same.
    analysis = read(ZOO / "01_semi_auto_tp4dp2", rank=5)
    found = backward(explain(analysis, "type:AllReduce", rank=5))
    assert len(found) == 8
    assert {tuple(e.group_ranks) for e in found} == {tuple(e.predicted_group) for e in found} == {(4, 5, 6, 7)}


def test_gradient_alltoall_swaps_split_and_concat():
    # Zoo 05 (fixtures/zoo/nets/05_expert_alltoall_16.py): proj_a ((16, 1), (1, 1)) gives rows cut
    # 16 ways, proj_b ((1, 16), (16, 1)) needs columns cut 16 ways: the forward AlltoAll over the
    # 16 ranks splits dimension 1 and concatenates dimension 0 (dims (0, 1): 0 gathered, 1 cut).
    # Its bprop splits dimension 0 and concatenates dimension 1 over the same 16 ranks: "exchange"
    # of the same dimensions, 16 parts.
    e = one_bprop(read(ZOO / "05_expert_alltoall_16"), "AlltoAll", "the AlltoAll after proj_a")
    assert step(e) == ("exchange", (0, 1), 16)
    assert "forward split_dim 1, concat_dim 0; this one split_dim 0, concat_dim 1: swapped" in e.facts
    assert tuple(e.group_ranks) == tuple(range(16))


def test_gradient_alltoallv_sends_back_what_it_received():
    # Zoo 15 (fixtures/zoo/nets/15_mf_llama_moe_ep8.py): MoEV3 dispatches each layer's tokens to
    # their experts and combines them back with user-called AlltoAllV: 2 layers x 2 = 4 forward
    # AlltoAllV on rank 0. The bprop of each is an AlltoAllV over the same group with its send and
    # receive counts swapped: 4 backward AlltoAllV, each an "exchange" whose count operands are the
    # forward's, swapped (through the gradient graph's parameters bound to them).
    analysis = read(ZOO / "15_mf_llama_moe_ep8")
    found = backward(explain(analysis, "type:AlltoAllV", rank=0))
    assert len(found) == 4
    for e in found:
        assert e.action == "exchange"
        assert "its send and receive counts are the forward's, swapped" in e.facts
        assert tuple(e.predicted_group) == tuple(e.group_ranks)
        assert not e.cannot_tell


def test_mirror_gradient_renamed_by_comm_reuse_is_its_weights():
    # Zoo 19 (fixtures/zoo/nets/19_doc_optimizer_parallel.py): no shard(), every weight and bias
    # whole on the 8 ranks (batch strategy (8, 1)); layer1.bias (512,) is below the optimizer-shard
    # threshold, so its gradient is summed by its mirror's AllReduce over ranks 0-7. At validate
    # that AllReduce's instance name is gradforward_op_... (comm reuse), but MindSpore records
    # forward_node_name _MirrorOperator_... and mirror_user_id layer1.bias on it: the replicas of
    # layer1.bias, ranks 0-7, never "cannot tell".
    analysis = read(ZOO / "19_doc_optimizer_parallel")
    found = [e for e in explain(analysis, "type:AllReduce", rank=0) if "same slice of layer1.bias " in e.headline]
    assert len(found) == 1
    e = found[0]
    assert e.name.startswith("gradforward_op_")
    assert e.action == "replicas"
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == tuple(range(8))


def test_optimizer_shard_gradient_is_reduce_scattered_for_its_weight():
    # Zoo 19 (fixtures/zoo/nets/19_doc_optimizer_parallel.py): every weight whole on the 8 ranks;
    # optimizer parallel cuts layer1.weight (1568 KB) and layer2.weight (1024 KB) along dimension
    # 0 in 8 over ranks 0-7 (above the 64 KB threshold), not layer3.weight (20 KB) nor the biases.
    # The gradient of each cut weight is summed over ranks 0-7 and each rank keeps the 64 rows it
    # updates: a ReduceScatter(sum), dims (0,), 8 parts, named after the weight (MindSpore's
    # mirror_user_id), never after the gradient's MatMul that produces it.
    analysis = read(ZOO / "19_doc_optimizer_parallel")
    found = [e for e in explain(analysis, "type:ReduceScatter", rank=0) if e.kind == "optimizer"]
    assert sorted(e.headline.split("the weight ")[1].split(" ")[0] for e in found) == ["layer1.weight",
                                                                                      "layer2.weight"]
    for e in found:
        assert step(e) == ("sum", (0,), 8)
        assert tuple(e.group_ranks) == tuple(range(8))
        assert "MatMul" not in e.headline


@pytest.mark.parametrize("stage, selector", [("validate", "type:AllReduce"),
                                             ("step_parallel_end", "type:_MirrorOperator")])
def test_mirror_of_a_weight_read_through_a_cast(stage, selector):
    # Zoo 12 (fixtures/zoo/nets/12_mf_llama_tp8.py): dp 2 x mp 4 on 8 ranks, rank = dp * 4 + mp.
    # MindFormers computes in fp16: each fp32 weight is read through a Cast the parallel pass gives
    # no strategy, then by its operator. Rank 0's 21 mirrors: the 7 Linear weights of each of the
    # 2 layers (cut by mp 4 on one dimension), lm_head ((2, 1), (4, 1)) and the embedding table
    # ((4, 1), (2, 1)): cut by mp, whole across dp: replicas ranks 0 and 4 (16 weights); the 2 x 2
    # RMSNorm weights and norm_out ((1,)): whole on all 8, replicas 0-7 (5 weights). The same at
    # step_parallel_end, where each is still a _MirrorOperator in front of the Cast.
    analysis = read(ZOO / "12_mf_llama_tp8", stage)
    found = [e for e in explain(analysis, selector, rank=0) if e.kind == "gradient"]
    assert sum(len(e.lines) for e in found) == 21
    groups = sorted(tuple(e.predicted_group) for e in found for _ in e.lines)
    assert groups == sorted([(0, 4)] * 16 + [tuple(range(8))] * 5)
    for e in found:
        assert not e.cannot_tell
        assert tuple(e.predicted_group) == tuple(e.group_ranks)
    lm_head = [e for e in found if "same slice of lm_head.weight " in e.headline]
    assert len(lm_head) == 1 and "lm_head.weight is input 1 of matmul ((2, 1), (4, 1))" in lm_head[0].facts


def test_mirror_of_a_weight_read_through_a_tensor_move():
    # Zoo 18 (fixtures/zoo/nets/18_doc_pipeline_parallel.py): pipeline_stages 2, stage 0 = ranks
    # 0-3, no shard(): the default batch strategy ((4, 1), (1, 1)) over the stage's 4 devices, so
    # layer1.param, layer2.weight and layer2.bias are whole on every rank of stage 0 and each
    # gradient is summed over ranks 0-3. At validate layer2's weight and bias reach their MatMul /
    # BiasAdd through a TensorMove (a copy: the layout it is given), which carries no strategy.
    analysis = read(ZOO / "18_doc_pipeline_parallel")
    found = [e for e in explain(analysis, "type:AllReduce", rank=0) if e.kind == "gradient"]
    named = sorted(e.headline.split("same slice of ")[1].split(" ")[0] for e in found)
    assert named == ["layer1.param", "layer2.bias", "layer2.weight"]
    for e in found:
        assert not e.cannot_tell
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 1, 2, 3)


def test_gradient_of_sequence_parallel_reduce_scatter_is_an_allgather():
    # Zoo 14 (fixtures/zoo/nets/14_mf_llama_seq_parallel.py): mp 4 on ranks 0-3 with sequence
    # parallel: wo and w2 ((1, 4), (1, 4)) with out_strategy ((4, 1),) reduce their partial sums
    # with a ReduceScatter over 0-3 that leaves the rows cut 4 ways (dimension 0); 2 layers x (wo,
    # w2) = 4. The bprop of each is an AllGather over the same ranks: each rank's quarter of the
    # rows of the gradient gathered whole (action "gather", dims (0,), 4 parts).
    analysis = read(ZOO / "14_mf_llama_seq_parallel")
    found = backward(explain(analysis, "type:AllGather", rank=0))
    assert len(found) == 4
    for e in found:
        assert e.forward.startswith("the ReduceScatter after matmul ")
        assert step(e) == ("gather", (0,), 4)
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 1, 2, 3)
        assert not e.cannot_tell


def test_sequence_parallel_allgather_at_validate_and_its_gradient():
    # Zoo 14 at validate: mul2 (the RMSNorm's last Mul, (1, 4, 1)) gives (2, 64, 512) cut along the
    # sequence in 4; wq's and w1's MatMul ((1, 1), (4, 1)) read it reshaped to (128, 512), whole.
    # At validate the Reshape between is a plain Reshape with no strategy: the MatMul beyond it
    # says what is needed, so dimension 1 is gathered from 4 parts over ranks 0-3, before the
    # attention's and the FFN's column MatMuls of each of 2 layers: 4 AllGathers.
    analysis = read(ZOO / "14_mf_llama_seq_parallel")
    found = [e for e in explain(analysis, "type:AllGather", rank=0) if e.producer == "mul2"]
    assert sum(len(e.lines) for e in found) == 4
    for e in found:
        assert (e.consumer, e.action, e.dims, e.parts) == ("matmul", "gather", (1,), 4)
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 1, 2, 3)
    # Their bprops, ReduceScatter(sum) over 0-3: the gradient of the whole sequence summed, each
    # rank keeping its quarter of dimension 1 (4 parts).
    back = [e for e in backward(explain(analysis, "type:ReduceScatter", rank=0))
            if e.forward.startswith("the AllGather after mul2 ")]
    assert len(back) == 4
    for e in back:
        assert step(e) == ("sum", (1,), 4)
        assert not e.cannot_tell


def test_gradient_of_one_allgather_of_several_tells_its_dimension_in_its_own_terms():
    # fixtures/ut/b_test_layout_extend__test_layout_extend_reduce_axis_multi_shard_reduce_scatter
    # (.toml): 16 ranks, rank = 8 dp + 4 sp + 2 vp + mp. matmul1's out_strategy (("dp", "sp",
    # "mp"), "vp") gives its output rows cut by (dp, sp, mp), columns by vp; relu ((16, 1),) needs
    # row block 8 dp + 4 sp + 2 vp + mp, columns whole. One redistribution of 3 collectives (the
    # ReduceScatter of matmul1's partial sums, then two AllGathers): over vp
    # (ranks 0, 2 for rank 0) the columns, over mp (ranks 0-1) rows. The step as a whole (dimension
    # 1 gathered, dimension 0 cut) does not say which AllGather does which, so neither bprop may
    # claim the step's dimension 1. Each AllGather's own per-rank shapes do: the redistribution's
    # Reshape before each lays the tensor out with the part it moves first, and MindSpore's
    # AllGather concatenates on dimension 0: dimension 0 of the tensor as it reaches it, in the
    # group's 2 parts. Written first for both AllGathers ("no Split / Concat after these"); the
    # one over 0, 2 has them (validate, after line 86: `PrimFunc_Split(%9, I64(0), I64(2))` then
    # `PrimFunc_Concat(%13, I64(4))`, (1, 1, 1, 128, 512) -> (1, 1, 1, 128, 1024)): it gathers
    # dimension 4 of the 5-D tensor, the one over 0-1 (no Split after it) dimension 0. The bprop
    # ReduceScatter(sum) scatters that same dimension back, 2 parts, and says in whose terms
    # (own_shapes: the forward's input with 1 part on that dimension, its output with 2).
    analysis = read(UT / "b_test_layout_extend__test_layout_extend_reduce_axis_multi_shard_reduce_scatter")
    found = [e for e in backward(explain(analysis, "type:ReduceScatter", rank=0))
             if e.forward.startswith("the AllGather after matmul1 ")]
    assert sorted(tuple(e.group_ranks) for e in found) == [(0, 1), (0, 2)]
    for e in found:
        dim = {(0, 1): 0, (0, 2): 4}[tuple(e.group_ranks)]
        assert step(e) == ("sum", (dim,), 2)
        assert tuple(e.predicted_group) == tuple(e.group_ranks)
        before, after = e.own_shapes
        assert after[dim] == 2 * before[dim]
        assert before[:dim] + before[dim + 1:] == after[:dim] + after[dim + 1:]
        assert not e.cannot_tell


def test_gradient_whose_forward_collective_was_dropped():
    # fixtures/ut/a_test_auto_parallel_reshape__test_reshape_depend_reshape (.toml): 8 ranks; mul
    # ((2, 4), (2, 4)) gives out1 cut (2, 4), the Add without strategy needs (8, 1): out1's
    # columns gathered over {0, 1, 2, 3} by an AllGather. The gradients asked for are x's and y's,
    # so validate drops that forward AllGather (out1, the Add and the mean are not needed), but
    # the AllGather's bprop stays: a ReduceScatter(sum) over the same ranks 0-3, which names it
    # (forward_node_name AllGather_3308). Its action follows from the bprop rule; what the forward
    # gathered cannot be read from the file.
    e = one_bprop(read(UT / "a_test_auto_parallel_reshape__test_reshape_depend_reshape"), "ReduceScatter")
    assert e.forward == "the AllGather AllGather_3308"
    assert e.action == "sum"
    assert tuple(e.group_ranks) == (0, 1, 2, 3)
    assert any("it is not in this file" in t for t in e.cannot_tell)


def test_gradients_of_two_allgathers_of_one_dimension():
    # Zoo 02 (fixtures/zoo/nets/02_sharding_propagation_64.py; tests/analysis/test_explain.py's
    # test_vocabulary_allgather_64_ranks): lm_matmul gives the logits cut (8, 8), loss_ce
    # ((32, 1), ...) needs the vocabulary whole: dimension 1's 8 parts are gathered by two
    # AllGathers, over ranks 0-1 (2) then 0, 2, 4, 6 (4), 2 x 4 = 8: each gathers part of
    # dimension 1 (the rows are cut further by a StridedSlice, no collective). Their bprops,
    # ReduceScatter(sum) over the same groups, each give the ranks back their part of dimension 1:
    # 2 and 4 parts.
    analysis = read(ZOO / "02_sharding_propagation_64")
    found = [e for e in backward(explain(analysis, "type:ReduceScatter", rank=0))
             if e.forward.startswith("the AllGather after lm_matmul ")]
    assert sorted((tuple(e.group_ranks), e.parts) for e in found) == [((0, 1), 2), ((0, 2, 4, 6), 4)]
    for e in found:
        assert (e.action, e.dims) == ("sum", (1,))
        assert tuple(e.predicted_group) == tuple(e.group_ranks)
        assert not e.cannot_tell


def test_gradient_of_a_redistributions_split_is_a_local_concat():
    # Zoo 14 (fixtures/zoo/nets/14_mf_llama_seq_parallel.py): each sequence gather (before wq and
    # w1 in each of 2 layers, after mul2; before the final norm's square, after cast) is
    # AllGather -> Split (dimension 0, 4 parts) -> Concat (dimension 1). MindSpore's bprop of a
    # Split (get_bprop_split) concatenates the parts' gradients on the axis it cut: a Concat on the
    # rank's own data, nothing on the wire (action "none"): 4 + 1 = 5, none "cannot tell".
    analysis = read(ZOO / "14_mf_llama_seq_parallel")
    found = [e for e in explain(analysis, "type:Concat", rank=0) if e.forward]
    after = sorted(e.forward.split(" after ")[1].split(" (")[0] for e in found if " after " in e.forward)
    assert after == ["cast"] + ["mul2"] * 4
    # The other Concats of the gradient graph are bprops of Splits MindSpore no longer keeps in this
    # file (forward_node_name Split_<id>): the same local Concat, on the axis the Split cut.
    for e in found:
        assert e.forward.startswith(("the Split after ", "the Split Split_"))
        assert e.action == "none"
        assert not e.cannot_tell


def test_micro_step_mirror_through_a_cast_at_step_parallel_end():
    # fixtures/ut/b_test_pipeline_split__test_pipeline_with_micro_batch_no_parallel_optimizer
    # (.toml): 32 devices in 2 stages, rank 0 in stage 0 (ranks 0-15); the MatMulCells compute in
    # float16, so each weight reaches its MatMul through a Cast with no strategy. param and param1
    # are the MatMuls' second inputs, cut (1, 1): whole on the stage's 16 ranks, so their replicas
    # (the mirror's group) are ranks 0-15, each of the 2 _MirrorMicroStepOperators.
    analysis = read(UT / "b_test_pipeline_split__test_pipeline_with_micro_batch_no_parallel_optimizer",
                    "step_parallel_end")
    found = explain(analysis, "type:_MirrorMicroStepOperator", rank=0)
    assert sorted(e.consumer for e in found) == ["matmul", "matmul1"]
    for e in found:
        assert e.action == "replicas"
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == tuple(range(16))
        assert not e.cannot_tell
