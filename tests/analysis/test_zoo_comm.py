"""The communication vocabulary on real 2.10 dumps of the model zoo (fixtures/zoo/), with the
facts worked out by hand from the network scripts (fixtures/zoo/nets/) and the device count:
kinds, groups, the tensor at the rank and the bytes each rank sends by the ring formulas."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.mindspore.vocabulary import kind_of, wire_bytes
from msinspect.model import Node
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
F32 = 4


@pytest.fixture(scope="module")
def tp4dp2():
    return msinspect.load_dump(ZOO / "01_semi_auto_tp4dp2")


@pytest.fixture(scope="module")
def pipeline_hsdp():
    return msinspect.load_dump(ZOO / "04_pipeline_hsdp_recompute")


def test_head_gather_is_a_redistribution_and_its_gradient_scatter_is_backward(tp4dp2):
    """01: lm_matmul cuts the logits (dp 2, tp 4) but the loss wants them (dp 2, 1): the vocabulary
    axis is gathered over the tp group of rank 0 (ranks 0-3). Rank 0 holds 8 x 64 x 1024 / 8
    logits; the gradient of the gather is a ReduceScatter of the rank's dp half of the gradient."""
    comm = analyse(tp4dp2, "validate").comm()
    rank0 = comm[comm["rank"] == 0]
    gather = rank0[rank0["op"] == "AllGather"]
    assert len(gather) == 1
    gather = gather.iloc[0]
    assert gather["kind"] == "redistribution"
    assert gather["group_ranks"] == (0, 1, 2, 3)
    held = 8 * 64 * 1024 // 8 * F32
    assert gather["tensor_bytes"] == held
    assert gather["wire_bytes"] == 3 * held  # (n - 1) * S_in
    scatter = rank0[rank0["op"] == "ReduceScatter"]
    assert len(scatter) == 1
    scatter = scatter.iloc[0]
    assert scatter["kind"] == "backward"  # not optimizer: it is the gradient of a redistribution
    assert scatter["group_ranks"] == (0, 1, 2, 3)
    half = 8 * 64 * 1024 // 2 * F32
    assert scatter["tensor_bytes"] == half
    assert scatter["wire_bytes"] == 3 * half // 4  # (n - 1) / n * S_in


def test_virtual_div_moves_nothing(tp4dp2):
    comm = analyse(tp4dp2, "step_parallel_end").comm()
    div = comm[comm["op"] == "_VirtualDiv"]
    assert len(div) == 8  # one per rank
    assert set(div["kind"]) == {"virtual"}
    assert set(div["wire_bytes"]) == {0}
    assert not div["moves_data"].any()


def test_optimizer_parallel_gathers_are_listed_as_optimizer(pipeline_hsdp):
    """04: hsdp on a pipeline: each weight repeated over the dp group of its stage is cut there by
    optimizer parallel and gathered back (_MicroStepAllGather). The embedding table (1024, 512),
    cut (1, 1), repeats over all of stage 0 (ranks 0-3): rank 0 holds 1024 / 4 rows of it; q's
    weight, cut (1, 2), repeats over the dp group 0-2."""
    comm = analyse(pipeline_hsdp, "step_parallel_end").comm()
    gathers = comm[(comm["rank"] == 0) & (comm["op"] == "_MicroStepAllGather")]
    assert len(gathers) > 0
    assert set(gathers["kind"]) == {"optimizer"}
    embed = gathers[gathers["consumers"].map(lambda c: "embed_gather" in c)]
    assert set(embed["group_ranks"]) == {(0, 1, 2, 3)}
    table = 1024 // 4 * 512 * F32
    assert set(embed["tensor_bytes"]) == {table}
    assert set(embed["wire_bytes"]) == {3 * table}
    q = gathers[gathers["consumers"].map(lambda c: "q_matmul" in c)]
    assert set(q["group_ranks"]) == {(0, 2)}
    kinds = comm.groupby("rank")["kind"].agg(set)
    assert all("optimizer" in k for k in kinds)


def test_send_carries_its_shape_attribute(pipeline_hsdp):
    """04: a micro-batch is 16 / 4 = 4 sequences x 64 = 256 rows of 512; inside a stage the data is
    cut dp 2, so each rank sends (128, 512) float32 per micro-batch, though step_parallel_end
    still shows the global (256, 512) on the Send's input."""
    comm = analyse(pipeline_hsdp, "step_parallel_end").comm()
    sends = comm[comm["op"] == "Send"]
    assert set(sends["rank"]) == {0, 1, 2, 3}
    assert set(sends["shape"]) == {(128, 512)}
    assert set(sends["tensor_bytes"]) == {128 * 512 * F32}
    assert set(sends["wire_bytes"]) == {128 * 512 * F32}
    receives = comm[comm["op"] == "Receive"]
    assert set(receives["rank"]) == {4, 5, 6, 7}
    assert set(receives["tensor_bytes"]) == {128 * 512 * F32}


def test_totals_over_the_job_per_kind(pipeline_hsdp):
    """Per-kind totals sum every rank read: the pipeline's 4 Sends on each of ranks 0-3 and 4
    Receives on each of 4-7, each (128, 512) float32."""
    from msinspect.analysis.rank.comm import comm_totals

    comm = analyse(pipeline_hsdp, "step_parallel_end").comm()
    totals = comm_totals(comm, "kind").set_index("kind")
    assert totals.loc["pipeline", "operators"] == 32
    assert totals.loc["pipeline", "rank_count"] == 8
    assert totals.loc["pipeline", "wire_bytes"] == 32 * 128 * 512 * F32
    by_group = comm_totals(comm[comm["kind"] == "optimizer"], "group")
    assert {(0, 2), (1, 3), (4, 6), (5, 7), (0, 1, 2, 3)} <= set(by_group["group_ranks"])


def _node(op: str, name: str | None) -> Node:
    return Node(graph="g", index=1, debug_name="x", op=op, kind="call_primitive", callee=op, inputs=(),
                line=1, instance_name=name)


@pytest.mark.parametrize(("op", "name", "backward", "kind"), [
    ("GetNext", "redistribution_op_123GetNext_", False, "local"),  # reads the rank's own batch
    ("StridedSlice", "redistribution_op_1StridedSlice_", False, "local"),
    ("Reshape", "redistribution_op", False, "local"),
    ("AllGather", "redistribution_op_1AllGather_", False, "redistribution"),
    ("ReduceScatter", "grad_redistribution_op_1AllGather_", True, "backward"),
    ("AlltoAll", "gradredistribution_op_1AlltoAll_", True, "backward"),
    ("ReduceScatter", "grad_parallel_optimizer_allgather_not_recompute", True, "optimizer"),
    ("_MicroStepAllGather", "parallel_optimizer_allgather_not_recompute", False, "optimizer"),
    ("_MiniStepAllGather", None, False, "optimizer"),
    ("AllReduce", "grad_mirror_MirrorOperator", True, "gradient"),
    ("_MirrorOperator", "_MirrorOperator", False, "gradient"),
    ("AllReduce", "forward_op_123", False, "forward"),
    ("AllReduce", "gradforward_op_123", True, "backward"),
    # enable_nd_tp's MatMul: "forward_op" + the replaced MatMul's hash + op + index (zoo 20)
    ("AllGather", "forward_op3815130986688897272AllGather1", False, "forward"),
    ("_VirtualDiv", "123", False, "virtual"),
    ("Send", "Send", False, "pipeline"),
    # a name of the user's own, and no file to tell whether the parallel pass inserted
    # communication: cannot tell (tests/analysis/test_comm_kinds.py: "user" where it did not)
    ("AllReduce", "all_reduce", False, "unknown"),
])
def test_kinds_from_mindspores_names(op, name, backward, kind):
    assert kind_of(_node(op, name), backward) == kind


@pytest.mark.parametrize(("op", "n", "expected"), [
    ("AllReduce", 4, 2 * 3 * 1000 // 4), ("AllGather", 4, 3 * 1000), ("ReduceScatter", 4, 3 * 1000 // 4),
    ("AlltoAll", 8, 7 * 1000 // 8), ("Send", None, 1000), ("Receive", None, 1000),
    ("StridedSlice", 4, 0), ("_VirtualDiv", 8, 0), ("AllReduce", None, None),
])
def test_ring_formulas(op, n, expected):
    assert wire_bytes(_node(op, None), 1000, n) == expected


def test_the_alltoalls_a_self_defined_shard_function_calls_are_the_users():
    """zoo 15 by hand (its net's docstring): MindFormers' MoEV3 experts run in one Morph whose
    function (ffn_forward_func) calls ops.AlltoAll of the counts and three AlltoAllV (tokens,
    expert ids, results back) a layer over the expert-parallel group {0, 1, 2, 3} of rank 0;
    MindSpore expands it after the parallel passes, so at validate nothing names them but their
    source: the job's own code, kind user (2 layers: 2 AlltoAll and 6 AlltoAllV)."""
    rows = analyse(msinspect.load_dump(FIXTURES / "zoo" / "15_mf_llama_moe_ep8"), "validate").comm()
    mine = rows[(rows["rank"] == 0) & rows["op"].isin(["AlltoAll", "AlltoAllV"]) & (rows["kind"] == "user")]
    assert sorted(mine["op"]) == ["AlltoAll"] * 2 + ["AlltoAllV"] * 6
    assert {tuple(g) for g in mine["group_ranks"]} == {(0, 1, 2, 3)}


def test_every_whole_weights_gradient_sum_is_kind_gradient_whatever_its_name():
    """zoo 19 by hand (its net's docstring): the optimizer cuts layer1.weight and layer2.weight
    (ReduceScatter of their gradients); layer3.weight (10, 512) and the three biases (512,),
    (512,), (10,) are under the 64 KB threshold, whole on all 8 ranks: each gradient is summed by
    its mirror's bprop, an AllReduce over 0-7 in a ``Grad__MirrorOperator`` scope. MindSpore
    names one of them ``gradforward_op_*`` at validate; it is a gradient sum all the same."""
    rows = analyse(msinspect.load_dump(FIXTURES / "zoo" / "19_doc_optimizer_parallel"), "validate").comm()
    mine = rows[(rows["rank"] == 0) & (rows["op"] == "AllReduce")]
    gradient = mine[mine["kind"] == "gradient"]
    assert sorted(tuple(s) for s in gradient["shape"]) == [(10,), (10, 512), (512,), (512,)]
    assert {tuple(g) for g in gradient["group_ranks"]} == {tuple(range(8))}
    assert not any(tuple(s) == (512,) for s in mine[mine["kind"] == "backward"]["shape"])


def test_enable_nd_tps_collectives_are_the_matmuls_own():
    """zoo 20 by hand (its net's docstring: MindSpore's high-dimension tensor-parallel sample, a
    Layout((2, 4), ("x", "y")) on 8 ranks): matmul1's activation is gathered over "y" (rank 0:
    ranks 0-3) before it and its partial sums reduce-scattered over "x" ({0, 4}) after it;
    matmul2 the other way round. They are the MatMuls' own communication: kind forward."""
    rows = analyse(msinspect.load_dump(FIXTURES / "zoo" / "20_doc_high_dimension_tp"), "validate").comm()
    mine = rows[(rows["rank"] == 0) & rows["op"].isin(["AllGather", "ReduceScatter"])]
    assert set(mine["kind"]) == {"forward"}
    assert sorted((op, tuple(g)) for op, g in zip(mine["op"], mine["group_ranks"])) == [
        ("AllGather", (0, 1, 2, 3)), ("AllGather", (0, 4)), ("ReduceScatter", (0, 1, 2, 3)), ("ReduceScatter", (0, 4))]
