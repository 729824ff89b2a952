"""``explain`` of a redistribution whose producer is no operator with a strategy: a weight, a
subgraph's parameter bound at one call per micro-batch, a pipeline Receive; and a consumer whose
strategy has no entry for a scalar operand before the one it reads (issue 39, item 5).
Each expectation is worked out by hand from the network script named in its fixture's comment
and MindSpore's rules, in the comment above it.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain

from tests.analysis.explain_helpers import UT, ZOO, read, step

FIRST_DIM = UT / ("a_test_reshape_parameter_scalar_or_other_shape__"
                  "test_reshape_parameter_first_dim_can_div_by_dev_num")


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
@pytest.mark.parametrize("rank", [0, 5])
def test_a_weight_cut_behind_a_reshape_is_gathered_whole(stage, rank):
    # fixtures/ut/<FIRST_DIM>.toml (the UT's net, semi-auto on 8 devices): w1 (2048,) is read only
    # by the reshape, which has no strategy; MindSpore gives it its input's batch-parallel cut,
    # (8,) (the UT's slice 4 * 64 = 256 = 2048 / 8): device matrix (8,), map (0,), rank r holds
    # w1[256 r : 256 r + 256]. The reshape makes it (32, 64), each rank (4, 64); add ((1, 1),
    # (1, 1)) wants it whole. In w1's own terms: dimension 0 gathered from 8 parts to whole, over
    # all 8 ranks (the device matrix's one axis), by the Reshape then the AllGather of one step.
    found = explain(read(FIRST_DIM, stage, rank), "re:redistribution_op_.*", rank=rank)
    assert sorted(e.op for e in found) == ["AllGather", "Reshape"]
    for e in found:
        assert (e.producer, e.consumer) == ("w1", "add")
        assert (e.producer_layout, e.consumer_layout) == ((8,), (1, 1))
        assert step(e) == ("gather", (0,), 8)
        assert not e.cannot_tell
    gather = next(e for e in found if e.op == "AllGather")
    assert gather.predicted_group == tuple(range(8)) == gather.group_ranks


def test_a_weight_reshaped_into_its_readers_cut_moves_nothing():
    # fixtures/ut/a_test_auto_parallel_reshape__test_reshape_auto_7.toml: mul ((1, 2, 4), (2, 4))
    # reads the weight (128, 96) itself as input 1, so its layout is (2, 4): rank 0 holds rows
    # 0:64, columns 0:24. Reshaped to (1, 128, 96) for input 0, cut (1, 2, 4): rank 0 reads rows
    # 0:64, columns 0:24 of the one batch, the same 64 x 24 numbers. The parallel pass's per-rank
    # Reshape (to (1, 64, 24)) alone: nothing moves.
    found = explain(read(UT / "a_test_auto_parallel_reshape__test_reshape_auto_7", "step_parallel_end"),
                    "type:Reshape", rank=0)
    assert len(found) == 1
    e = found[0]
    assert (e.producer, e.consumer) == ("network.network.mul_weight", "mul")
    assert (e.producer_layout, e.consumer_layout) == ((2, 4), (1, 2, 4))
    assert (e.action, e.dims, e.chain) == ("none", (), ("Reshape",))
    assert not e.cannot_tell


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_a_micro_batch_parameter_is_cut_as_each_call_passes_it(stage):
    # fixtures/ut/b_test_pipeline_inference__test_pipeline_inference_first_stage.toml: x (8, 32) in
    # 2 micro-batches of 4 rows, each a StridedSlice ((1, 1),) of x: whole. The lazy-inlined body
    # takes it as its parameter x, once per call; fc0's matmul ((2, 1), (1, 1)) over the stage's 2
    # ranks wants rows in 2: rank 0 keeps rows 0:2 of the 4, a StridedSlice, nothing on the wire.
    dump = UT / "b_test_pipeline_inference__test_pipeline_inference_first_stage"
    found = [e for e in explain(read(dump, stage), "type:StridedSlice", rank=0) if e.subject == "communication"]
    assert len(found) == 1
    e = found[0]
    assert (e.producer, e.consumer) == ("x", "matmul")
    assert (e.producer_layout, e.consumer_layout) == ((1, 1), (2, 1))
    assert step(e) == ("split", (0,), 2)
    assert e.kept == ((0, 2), (0, 32))
    assert "each of its 2 calls passes" in " ".join(e.facts)
    assert not e.cannot_tell


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_the_tokens_of_each_micro_batch_are_split_over_the_data_parallel_pair(stage):
    # Zoo 13 (fixtures/zoo/nets/13_mf_llama_pp_interleave.py): full batch, 4 micro-batches of 2
    # sequences, each the _VirtualDatasetCell's strided_slice ((1, 1),) of the inputs: whole, (2,
    # 65). LlamaForCausalLM's body is one subgraph, its tokens parameter bound at the 4 calls;
    # its slice (input_ids[:, :64]) is cut ((dp 2, 1),): rank 0 (dp 0) keeps sequence 0, rows 0:1
    # of 2, all 65 positions: dimension 0 split in 2, on the rank's own data.
    found = [e for e in explain(read(ZOO / "13_mf_llama_pp_interleave", stage), "type:StridedSlice", rank=0)
             if e.subject == "communication" and e.consumer == "slice"]
    assert found
    for e in found:
        assert e.producer.endswith("tokens")
        assert (e.producer_layout, e.consumer_layout) == ((1, 1), (2, 1))
        assert step(e) == ("split", (0,), 2)
        assert e.kept == ((0, 1), (0, 65))
        assert not e.cannot_tell


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_a_receive_from_a_rank_not_read_names_that_rank(stage):
    # fixtures/ut/b_test_pipeline_split__test_pipeline_split_stage1.toml: rank 16 (stage 1)
    # receives stage 0's output from rank 0, cut as stage 0's matmul1 ((8, 1), (1, 1)) leaves it;
    # the Receive carries that strategy but not which operator's it is, and rank 0's file is not
    # in the dump: "cannot tell", naming rank 0 and saying the dump does not hold its file.
    found = [e for e in explain(read(UT / "b_test_pipeline_split__test_pipeline_split_stage1", stage, 16),
                                "type:StridedSlice", rank=16) if e.producer == "Receive"]
    assert found
    for e in found:
        assert e.producer_layout is None and e.action is None
        said = " ".join(e.cannot_tell)
        assert "rank 0's Send" in said and "((8, 1), (1, 1))" in said and "rank 0's file, which the dump does not hold" in said


def _both_stages_of_the_pipeline(tmp_path):
    """One dump of the 32-rank pipeline job holding rank 0 (stage 0) and rank 16 (stage 1).

    MindSpore's UT compiles the same PipelineSplit net, context and shard() settings once per
    rank; the two ports differ only in ``global_rank`` and in giving the optimizer that rank's
    stage's weights, as each rank of a pipeline job does. Their rank folders side by side are the
    two ranks of one job, as a dry run of ranks 0 and 16 would write them."""
    import shutil

    root = tmp_path / "pipeline_split_0_16"
    for port, rank in (("stage0", 0), ("stage1", 16)):
        shutil.copytree(UT / f"b_test_pipeline_split__test_pipeline_split_{port}" / f"rank_{rank}",
                        root / f"rank_{rank}")
    return root


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_a_receive_from_a_rank_in_the_dump_reads_that_ranks_send(tmp_path, stage):
    # The same job with rank 0's file beside rank 16's. Rank 0's Send to rank 16 sends block 0's
    # output, matmul1's: ((8, 1), (1, 1)) on stage 0's 16 devices, its output (rows, columns) cut
    # (8, 1), rows in 8 parts (2 ranks each). Rank 16's matmul wants ((16, 1), (1, 1)): rows in 16
    # parts. So the StridedSlice after the Receive splits dimension 0 from 8 parts to 16 on the
    # rank's own data (nothing on the wire), and rank 16, first of its pair, keeps the first half.
    # Explaining rank 16 alone, as the CLI does, reads rank 0's file because the Receive needs it.
    import msinspect
    from msinspect.analysis import analyse

    dump = msinspect.load_dump(_both_stages_of_the_pipeline(tmp_path))
    found = [e for e in explain(analyse(dump, stage, only=[16], world=32), "type:StridedSlice", rank=16)
             if e.producer == "Receive"]
    assert found
    for e in found:
        assert (e.producer_layout, e.consumer_layout) == ((8, 1), (16, 1))
        assert step(e) == ("split", (0,), 2)
        assert not e.cannot_tell
        said = " ".join(e.facts + e.reconstruction)
        assert "rank 0's Send" in said and "matmul1" in said


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_a_reshape_before_an_operator_with_no_layout_makes_its_output_whole(stage):
    # fixtures/ut/a_test_reshape__test_reshape_net1_2.toml (16 devices, rank 0): matmul ((1, 8),
    # (8, 2)) of x (256, 25088) by w (25088, 256) gives (256, 256) as partial sums over its 8-way
    # contracted axis, columns cut 2; device matrix (1, 8, 2), rank r at contracted index r // 2,
    # column index r % 2. Then the user's Reshape to (65536,) feeds the UT's VirtualLoss, a
    # primitive of its own with no parallel operator: MindSpore's FindNextLayout (step_parallel.cc)
    # finds no layout after the Reshape, so ReshapeInfo takes its default output layout,
    # InferDefaultLayout: every dimension unmapped, whole on every device, (1,). Its redistribution
    # sums the partials over ranks 0, 2, ..., 14 (same column index), then gathers dimension 1 from
    # 2 parts over ranks 0-1 (same contracted index) and reshapes the whole (256, 256).
    found = explain(read(UT / "a_test_reshape__test_reshape_net1_2", stage, 0), "type:AllGather", rank=0)
    gathers = [e for e in found if e.consumer == "loss"]
    assert len(gathers) == 1
    (e,) = gathers
    assert (e.producer, e.producer_layout, e.consumer_layout) == ("matmul", (1, 2), (1,))
    assert step(e) == ("gather", (1,), 2)
    assert tuple(e.group_ranks) == (0, 1)
    assert not e.cannot_tell
    assert "default output layout" in " ".join(e.facts)


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_a_consumer_strategy_counts_its_tensor_inputs_only(stage):
    # fixtures/ut/a_test_gatherd__test_gathernd_dim2.toml: gatherd(w1, 2, x) with ((2, 8, 1),
    # (2, 8, 1)): MindSpore's strategy has one entry per tensor input, so the index x (operand 2,
    # after the scalar dim) is cut as the second entry, (2, 8, 1). x is the graph input (16, 32,
    # 64), whole on every rank (full batch); rank 0 keeps [0:8, 0:4, 0:64] of it: dimensions 0
    # and 1 split, 2 x 8 = 16 parts, by two StridedSlices on the rank's own data.
    found = [e for e in explain(read(UT / "a_test_gatherd__test_gathernd_dim2", stage), "type:StridedSlice", rank=0)
             if e.consumer == "gatherd"]
    assert found
    for e in found:
        assert (e.producer, e.producer_layout, e.consumer_layout) == ("inputs0", (1, 1, 1), (2, 8, 1))
        assert step(e) == ("split", (0, 1), 16)
        assert not e.cannot_tell


def test_a_reshape_read_through_a_cast_is_what_the_cast_s_reader_needs():
    # Zoo 15 (fixtures/zoo/nets/15_mf_llama_moe_ep8.py): MoEV3 treats the 8 ranks as data
    # parallel for the tokens: its router's div_3d ((8, 1, 1), (8, 1, 1)) gives the coefficients
    # of the 256 tokens' 2 experts as (8, 32, 2), cut 8 ways along dimension 0. It is reshaped to
    # (8, 32, 2, 1) and cast to float16 (a Cast with no strategy, which passes its input's layout
    # on) for mul_router_coeff ((8, 1, 1, 1), (8, 1, 1, 1)): input 1 cut (8, 1, 1, 1), the same
    # part of each rank, (1, 32, 2), in another shape, (1, 32, 2, 1): the per-rank Reshape alone,
    # nothing moves, once per layer (2).
    found = [e for e in explain(read(ZOO / "15_mf_llama_moe_ep8", "step_parallel_end"), "type:Reshape", rank=0)
             if e.producer == "div_3d"]
    assert len(found) == 1 and len(found[0].lines) == 2
    e = found[0]
    assert e.consumer == "mul_router_coeff"
    assert (e.producer_layout, e.consumer_layout) == ((8, 1, 1), (8, 1, 1, 1))
    assert (e.action, e.dims, e.chain) == ("none", (), ("Reshape",))
    assert "the last Reshape gives each rank (1, 32, 2, 1)" in " ".join(e.reconstruction)
    assert not e.cannot_tell


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_a_concat_strategy_counts_the_elements_of_its_tuple(stage):
    # fixtures/ut/b_test_pipeline_inference__test_pipeline_inference_last_stage.toml: rank 3 (stage
    # 1: ranks 2-3) gives each micro-batch's (4, 32) result cut (2, 1) by fc2's matmul ((2, 1), (1,
    # 1)); the wrapper's concat takes the two results as one tuple, its strategy one entry per
    # element, ((1, 1), (1, 1)): each whole. So dimension 0 is gathered, 2 parts, over ranks 2-3,
    # once per micro-batch: the tuple's element is the strategy's entry, not the Concat's operand.
    dump = UT / "b_test_pipeline_inference__test_pipeline_inference_last_stage"
    found = [e for e in explain(read(dump, stage, 3), "type:AllGather", rank=3) if e.consumer == "concat"]
    assert len(found) == 1 and len(found[0].lines) == 2
    e = found[0]
    assert (e.producer, e.producer_layout, e.consumer_layout) == ("matmul", (2, 1), (1, 1))
    assert step(e) == ("gather", (0,), 2)
    assert tuple(e.group_ranks) == (2, 3)
    assert not e.cannot_tell
