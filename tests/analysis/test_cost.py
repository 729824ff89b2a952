"""Cost per step (:mod:`msinspect.analysis.job.cost`) and static memory (:mod:`msinspect.analysis.rank.memory`)
on three zoo networks, against numbers worked out by hand from the network scripts
(``fixtures/zoo/nets/``), ``fixtures/zoo/zoo.toml`` and MindSpore's definitions, written down
before the code ran on the dumps. Every tensor is float32 (4 bytes); wire bytes follow
``docs/comm.md``: AllReduce 2(n-1)/n S, AllGather (n-1) S_in, ReduceScatter (n-1)/n S_in,
AlltoAll (n-1)/n S, Send / Receive S.

Where the IR disagreed with the first derivation, the comment says which line and who is right.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import link_time, matrix_table, parse_link
from msinspect.analysis.job.cost_tables import bytes_by, bytes_by_axis, comm_costs, rank_matrix
from msinspect.analysis.rank.memory import memory_per_rank

from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
MB = 2 ** 20


@pytest.fixture(scope="module")
def zoo01():
    analysis = analyse(msinspect.load_dump(ZOO / "01_semi_auto_tp4dp2"))
    return analysis, comm_costs(analysis)


@pytest.fixture(scope="module")
def zoo04():
    analysis = analyse(msinspect.load_dump(ZOO / "04_pipeline_hsdp_recompute"))
    return analysis, comm_costs(analysis)


@pytest.fixture(scope="module")
def zoo05():
    analysis = analyse(msinspect.load_dump(ZOO / "05_expert_alltoall_16"))
    return analysis, comm_costs(analysis)


def _by(analysis, costs, rank, *keys) -> dict:
    frame = bytes_by(analysis, keys, costs)
    frame = frame[frame["rank"] == rank]
    return {tuple(row[k] for k in keys) if len(keys) > 1 else row[keys[0]]: row["step_bytes"]
            for row in frame.to_dict("records")}


def _nonzero(analysis, costs) -> dict[int, set[int]]:
    matrix = rank_matrix(analysis)
    return {src: set(cells["dst"].astype(int)) for src, cells in matrix[matrix["bytes"] > 0].groupby("src")}


# ---------------------------------------------------------------- zoo 01: tp 4 x dp 2, 8 ranks
# gpt.Config(): V 1024, H 512, 8 heads, S 64, 4 layers, batch B 8, full batch; dp 2, tp 4.
# MatMul ((dp, 1), (1, tp)) gives device matrix (2, 4), rank = d * 4 + t (last dimension fastest):
# tensor groups {0-3}, {4-7} (stride 1, 4 ranks), data groups {0, 4}, {1, 5} ... (stride 4).
# Rows at a rank: N / dp = B * S / 2 = 256; an activation (256, 512) = A = 524,288 bytes.
#
# tensor, forward: out_matmul and ffn_out_matmul are row parallel ((dp, tp), (tp, 1)): an
#   AllReduce of the partial sums over 4: 2 * 3/4 * A = 786,432 each, 2 per layer x 4 = 8;
#   the loss wants the whole vocabulary per row, logits (256, 1024 / 4) gathered over tp:
#   AllGather (n-1) S_in = 3 * 256 * 256 * 4 = 786,432.  8 * 786,432 + 786,432 = 7,077,888.
# tensor, backward: MindSpore's bprop of AllReduce(sum) is an AllReduce of dout: 8 more; the
#   AllGather's bprop is a ReduceScatter of (1024, 256): 3/4 * 1,048,576 = 786,432.  7,077,888.
# data, forward: loss_mean ((dp,),) reduces the rows cut by dp: AllReduce of a scalar over
#   {0, 4}: 2 * 1/2 * 4 = 4 bytes.  First derivation also had its bprop AllReduce (4 bytes,
#   backward); the IR has none (validate line 2156 forward_op_7582... only, no grad of it):
#   the IR is right, the constant sens needs no sum; the expectation follows the IR.
# data, backward (mirrors: a weight's gradient summed over the ranks holding the same slice):
#   per layer wq, wk, wv (512, 512 / 4) and wo (512 / 4, 512): 262,144 bytes over 2 ranks:
#   2 * 1/2 * S = 262,144 each; w_in (512, 2048 / 4), w_out (2048 / 4, 512): 1,048,576 each;
#   4 * 262,144 + 2 * 1,048,576 = 3,145,728 x 4 layers = 12,582,912; lm_head (512, 256):
#   524,288; over {0, 4}: 13,107,200.  Weights repeated on all 8 (LayerNorm gamma / beta
#   (512,): 2 * 7/8 * 2,048 = 3,584, 4 a layer + ln_f 2 = 18 -> 64,512; embedding (1024, 512):
#   2 * 7/8 * 2,097,152 = 3,670,016; position (64, 512): 229,376): 3,963,904.
#   Backward data: 13,107,200 + 3,963,904 = 17,071,104.
ZOO01_RANK0 = {("data", "forward"): 4, ("data", "backward"): 17_071_104,
               ("tensor", "forward"): 7_077_888, ("tensor", "backward"): 7_077_888}
# The matrix (ring: each rank sends to its successor in each group): tensor 0->1->2->3->0 and
# 4->5->6->7->4, data 0<->4, 1<->5 ..., the world ring 0->1->...->7->0 (the 8-rank mirrors).
# Rank 0: {1 (tensor and world), 4}; rank 3: {0 (tensor), 7 (data), 4 (world)}; rank 7: {4, 3, 0}.
ZOO01_NONZERO = {0: {1, 4}, 1: {2, 5}, 2: {3, 6}, 3: {0, 7, 4}, 4: {5, 0}, 5: {6, 1}, 6: {7, 2}, 7: {4, 3, 0}}
# Memory per rank (every rank alike): per layer 4 LayerNorm vectors 4 * 2,048 = 8,192, wq..wo
# 4 * 262,144, w_in / w_out 2 * 1,048,576: 3,153,920 x 4 = 12,615,680; embedding 2,097,152
# (Gather's table whole), position 131,072, ln_f 4,096, lm_head 524,288: 15,372,288 bytes of
# 45 trained weights. AdamWeightDecay: 2 states each (adam_m, adam_v): 30,744,576; gradients
# one per weight, no shard: 15,372,288.
ZOO01_MEMORY = {"weights": 15_372_288, "weight_count": 45, "gradients": 15_372_288, "states": 30_744_576}


def test_zoo01_bytes_per_axis_and_phase(zoo01):
    analysis, costs = zoo01
    for rank in range(8):
        assert _by(analysis, costs, rank, "axis", "phase") == ZOO01_RANK0
    assert set(costs["count_basis"]) == {"once"}  # no pipeline, no called body: each operator once


def test_zoo01_matrix_pattern(zoo01):
    analysis, costs = zoo01
    assert _nonzero(analysis, costs) == ZOO01_NONZERO
    table = matrix_table(rank_matrix(analysis))
    # rank 0 -> 1: the tensor ring 14,155,776 plus the world ring 3,963,904
    assert table.loc[0, 1] == 14_155_776 + 3_963_904 and table.loc[0, 4] == 13_107_200 + 4


def test_zoo01_memory(zoo01):
    analysis, _ = zoo01
    memory = memory_per_rank(analysis)
    assert len(memory) == 8 and set(memory["optimizer"]) == {"AdamWeightDecay"}
    for row in memory.to_dict("records"):
        assert {k: row[k] for k in ZOO01_MEMORY} == ZOO01_MEMORY
        assert row["states_expected"] == row["states"]


# ---------------------------------------------------------------- zoo 04: 2 stages x dp 2 x tp 2
# Batch 16 in 4 micro-batches of 4: 256 rows a micro-batch, 128 at a rank (dp 2); stage 0 ranks
# 0-3 (embedding, blocks 0-1), stage 1 ranks 4-7 (blocks 2-3, head); in a stage rank = 4s + 2d + t:
# tensor pairs {0, 1}, {2, 3}; data / optimizer pairs {0, 2}, {1, 3}; pipeline peers r <-> r + 4.
# An activation at the rank (128, 512) = 262,144 bytes; AllReduce over 2: 2 * 1/2 * S = 262,144.
# MindSpore unrolls the micro-batches (cnode_primal_attrs micro: 0..3): each copy once.
#
# Rank 0. tensor, forward: 2 AllReduces a block (out, ffn_out) x 2 blocks x 4 micro = 16, and
#   recompute replays the forward in the backward (mp_comm_recompute is on by default). First
#   derivation: all 4 a micro-batch replayed -> 32 x 262,144. The IR has 6 a micro-batch, not 8
#   (validate: forward_op_146398... lines 723 ... per micro): only out_matmul's AllReduce is
#   replayed; ffn_out's feeds only the residual Add, the block's saved output, whose bprop
#   needs no input. The IR is right; 6 x 4 = 24 x 262,144 = 6,291,456.
# tensor, backward: the bprop AllReduces, 4 a micro-batch: 16 x 262,144 = 4,194,304.
# pipeline: the block-1 output (128, 512) sent to rank 4 once a micro-batch (forward):
#   4 x 262,144 = 1,048,576; its gradient received back (backward): 1,048,576.
# optimizer shard (hsdp; weights under 64 KB, MindSpore's parallel_optimizer_threshold, stay
#   whole): each weight's slice gathered once a step over its replicas (forward), the gradient
#   reduce-scattered (backward). Embedding (1024, 512) over stage 0's 4 ranks: (256, 512)
#   gathered: 3 * 524,288 = 1,572,864; position (64, 512) -> (16, 512): 3 * 32,768 = 98,304;
#   per block over {0, 2}: wq, wk, wv (512, 256) -> (256, 256) and wo (256, 512) -> (128, 512):
#   4 * 262,144; w_in (512, 1024) -> (256, 1024), w_out (1024, 512) -> (512, 512):
#   2 * 1,048,576; 3,145,728 a block x 2 = 6,291,456. Forward 7,962,624; the ReduceScatters
#   of the whole gradients (n-1)/n S_in give the same: 7,962,624.
# data: LayerNorm vectors (512,) of blocks 0-1, 8, repeated on the stage's 4 ranks (under the
#   threshold): mirrors 2 * 3/4 * 2,048 = 3,072 x 8 = 24,576.
ZOO04_RANK0 = {("tensor", "forward"): 6_291_456, ("tensor", "backward"): 4_194_304,
               ("pipeline", "forward"): 1_048_576, ("pipeline", "backward"): 1_048_576,
               ("optimizer shard", "forward"): 7_962_624, ("optimizer shard", "backward"): 7_962_624,
               ("data", "backward"): 24_576}
# Matrix: tensor pairs 0<->1, optimizer pairs 0<->2, the stage's ring 0->1->2->3->0 (embedding,
# position, mirrors), pipeline 0<->4 (0 sends forward, 4 sends the gradient back).
ZOO04_NONZERO_STAGE0 = {0: {1, 2, 4}, 1: {0, 3, 2, 5}, 2: {3, 0, 6}, 3: {2, 1, 0, 7}}
# Memory, rank 0: weights stored as optimizer shards: embedding (256, 512) 524,288, position
# (16, 512) 32,768, per block 8,192 (LayerNorm, whole) + 4 * 262,144 + 2 * 1,048,576 = 3,153,920
# x 2: 6,864,896 bytes, 22 weights; Adam states 2 x: 13,729,792; gradients: the pipeline's
# accumulation buffers hold each whole rank slice (not sharded): embedding 2,097,152, position
# 131,072, per block 8,192 + 4 * 524,288 + 2 * 2,097,152 = 6,299,648 x 2: 14,827,520.
ZOO04_MEMORY0 = {"weights": 6_864_896, "weight_count": 22, "gradients": 14_827_520, "states": 13_729_792}


def test_zoo04_bytes_per_axis_and_phase(zoo04):
    analysis, costs = zoo04
    assert _by(analysis, costs, 0, "axis", "phase") == ZOO04_RANK0
    pipeline = costs[(costs["rank"] == 0) & (costs["axis"] == "pipeline")]
    assert sorted(pipeline["micro"]) == [0, 0, 1, 1, 2, 2, 3, 3]  # micro-batches counted as they run
    assert set(pipeline["count_basis"]) == {"unrolled"}


def test_zoo04_matrix_pattern(zoo04):
    analysis, costs = zoo04
    found = _nonzero(analysis, costs)
    assert {r: found[r] for r in range(4)} == ZOO04_NONZERO_STAGE0
    table = matrix_table(rank_matrix(analysis))
    assert table.loc[0, 4] == 1_048_576 and table.loc[4, 0] == 1_048_576


def test_zoo04_memory(zoo04):
    analysis, _ = zoo04
    row = memory_per_rank(analysis).set_index("rank").loc[0]
    assert {k: row[k] for k in ZOO04_MEMORY0} == ZOO04_MEMORY0
    assert row["gradients_from"].startswith("accumulation")


# ---------------------------------------------------------------- zoo 05: experts, 16 ranks
# One device dimension of 16 (every strategy cuts by 16): it cuts weights, so "tensor"; the
# expert weights (16, 512, 1024) are cut along their first axis: AlltoAll of 3-D tensors there
# is "expert". 1,024 tokens x 512; a 2-D activation (1024, 512) = 2,097,152 bytes.
#
# tensor, forward: vocab_gather's table cut (16, 1): masked lookup, partial rows
#   reduce-scattered: 15/16 * 2,097,152 = 1,966,080; proj_a (16, 1) -> proj_b (1, 16): AlltoAll
#   of (64, 512): 15/16 * 131,072 = 122,880; proj_b's partial sums AllReduce:
#   2 * 15/16 * 2,097,152 = 3,932,160; loss_mean over the 16 row blocks: AllReduce of a scalar,
#   2 * 15/16 * 4 = 7.5, 7 (wire bytes are whole bytes, rounded down by comm's formula).
#   6,021,127.
# tensor, backward: AllReduce 3,932,160, the AlltoAll back 122,880, the ReduceScatter's bprop an
#   AllGather of (64, 512): 15 * 131,072 = 1,966,080; the loss AllReduce has no bprop (as zoo 01).
#   6,021,120.
# expert: dispatch (into expert_bmm, (16, 4, 512)) and combine ((64, 1, 512)) AlltoAlls,
#   131,072 each: 122,880 x 2 forward, x 2 backward: 245,760 each.
# data: wa (512, 512) whole on all 16 (proj_a (1, 1)): mirror 2 * 15/16 * 1,048,576 = 1,966,080.
ZOO05_RANK = {("tensor", "forward"): 6_021_127, ("tensor", "backward"): 6_021_120,
              ("expert", "forward"): 245_760, ("expert", "backward"): 245_760, ("data", "backward"): 1_966_080}
# Matrix: ring collectives to r + 1 (mod 16), every AlltoAll to all 15 others: every cell of a
# rank read is non-zero but its own; the ring neighbour gets the most.
# Memory: table (4096 / 16, 512) 524,288, wa 1,048,576, wb (512 / 16, 512) 65,536, w_expert_in
# and w_expert_out (1, 512, 1024) 2,097,152 each: 5,832,704 bytes of 5 weights; Adam 2 x:
# 11,665,408; gradients 5,832,704.
ZOO05_MEMORY = {"weights": 5_832_704, "weight_count": 5, "gradients": 5_832_704, "states": 11_665_408}


def test_zoo05_bytes_per_axis_and_phase(zoo05):
    analysis, costs = zoo05
    for rank in (0, 5, 15):
        assert _by(analysis, costs, rank, "axis", "phase") == ZOO05_RANK


def test_zoo05_matrix_and_memory(zoo05):
    analysis, costs = zoo05
    found = _nonzero(analysis, costs)
    for rank in (0, 5, 15):
        assert found[rank] == set(range(16)) - {rank}
    table = matrix_table(rank_matrix(analysis))
    assert table.loc[5].idxmax() == 6
    for row in memory_per_rank(analysis).to_dict("records"):
        assert {k: row[k] for k in ZOO05_MEMORY} == ZOO05_MEMORY


# ---------------------------------------------------------------- the rest
def test_sgd_keeps_two_clones(manual):
    """The brief's table says SGD keeps no state; MindSpore's nn.SGD clones ``accum`` and ``stat``
    from every weight (mindspore/nn/optim/sgd.py), and the manual-parallel dump holds them
    (``accum.layer1.weight`` ...): the IR is right; ``states`` counts them, ``states_expected``
    the textbook 0."""
    row = memory_per_rank(analyse(manual)).iloc[0]
    assert row["optimizer"] == "SGD" and row["states_expected"] == 0
    assert row["states"] == 2 * row["weights"]


def test_no_axis_without_group_is_cannot_tell(manual):
    costs = comm_costs(analyse(manual))
    # no parallel pass: no layout gives a device matrix; the loss AllReduce's axis cannot be told
    assert set(costs["axis"]) == {"cannot tell"} and costs["axis_from"].str.len().min() > 0
    assert bytes_by_axis(analyse(manual), costs)["step_bytes"].notna().all()


def test_link_time_is_an_estimate(zoo04):
    analysis, costs = zoo04
    speeds = parse_link("intra=100,inter=10")
    times = link_time(rank_matrix(analysis), speeds, ranks_per_node=4).set_index("rank")
    # rank 0: 1,048,576 bytes to rank 4 on the other node, the rest within its node
    assert times.loc[0, "inter_bytes"] == 1_048_576
    assert times.loc[0, "seconds"] == pytest.approx(times.loc[0, "intra_bytes"] / 100e9 + 1_048_576 / 10e9)
    assert times["estimate"].str.contains("estimate").all()
    with pytest.raises(ValueError):
        parse_link("fast=1")


def test_a_matrix_of_many_ranks_is_shown_in_blocks():
    """A ring over 8 ranks, each sending 10 bytes to the next, in blocks of 2 ranks: by hand, an
    even rank sends inside its block (0 -> 1), an odd one to the next block (1 -> 2, 7 -> 0), so 10
    bytes on the diagonal and 10 on the one after it, wrapping; nothing else."""
    import pandas as pd

    from msinspect.analysis.job.cost import matrix_blocks

    ring = pd.DataFrame({"src": list(range(8)), "dst": [(r + 1) % 8 for r in range(8)], "bytes": [10] * 8,
                         "unknown": [0] * 8})
    table = matrix_blocks(ring, most=4)
    assert list(table.index) == list(table.columns) == ["0-1", "2-3", "4-5", "6-7"]
    assert table.to_numpy().tolist() == [[10, 10, 0, 0], [0, 10, 10, 0], [0, 0, 10, 10], [10, 0, 0, 10]]
    assert matrix_blocks(ring, most=8).shape == (8, 8)  # few enough ranks: one a row
