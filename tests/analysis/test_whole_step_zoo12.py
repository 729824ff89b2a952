"""The whole step of zoo 12, MindFormers 2.0.0's ``LlamaForCausalLM`` at dp 2 x mp 4 on 8 ranks
(``fixtures/zoo/nets/12_mf_llama_tp8.py`` and ``mf_llama.py``): bytes by axis and phase, the rank
matrix, static memory and explain, with validate and without it (step_parallel_end), derived by
hand from the scripts, their docstrings and MindSpore's definitions.

The model and its strategies are zoo 16's (tests/analysis/test_cost_zoo16.py holds the IR lines
that settled each rule: MindFormers' ``_NLLLoss`` has its own bprop, so the loss's sums have no
backward AllReduce; the per-token loss and the input mask are gathered whole for ``sum2`` /
``mul2`` of strategy ``(1,)``; the embedding's Gather is SHARD_BATCH_AND_AXIS); here at
``TransformerOpParallelConfig(data_parallel=2, model_parallel=4, vocab_emb_dp=False)``, global
batch 4 x sequence 64 = 256 rows, 256 / dp 2 = 128 at a rank. Device matrix (2, 4), rank =
4 dp_index + mp_index: tensor groups 0-3 and 4-7, data groups {0, 4}, {1, 5}, {2, 6}, {3, 7}, the
world 0-7. Ranks kept: 0 and 5, alike. Weights float32, each Linear computes in float16.
Wire bytes as docs/comm.md: ring AllReduce 2(n-1)/n S (whole bytes, rounded down), AllGather
(n-1) S_in, ReduceScatter (n-1)/n S_in.

Forward:
- tensor: wo ((2, 4), (1, 4)) and w2 ((2, 4), (1, 4)) contract the dimension cut 4: (128, 512)
  float16 partial sums = 131,072 bytes, AllReduced over the tensor group: 2 x 3/4 x 131,072 =
  196,608 each, 2 a layer, 2 layers: 4 operators. The embedding Gather ((4, 1), (2, 1)) sums its
  (2, 64, 512) float32 lookups = 262,144 bytes over the tensor group: 393,216. The loss's
  ReduceMax, the exponentials' ReduceSum and _NLLLoss's ReduceSum over the vocabulary cut 4:
  (128, 1), (128, 1), (128,) float32 = 512 bytes each: 768 each. 786,432 + 393,216 + 2,304 =
  1,181,952, 8 operators.
- data: the per-token loss (256,) cut 2 and the input mask, each a (128,) float32 slice of 512
  bytes gathered over the data group of 2: (2 - 1) x 512 = 512 each: 1,024, 2 operators.
Backward (validate only):
- tensor: the bprop of each forward AllReduce a weight's gradient needs (an AllReduce of dout):
  wo's and w2's (4 x 196,608) and the embedding's (393,216): 1,179,648, 5 operators.
- data: the per-token loss gather's bprop, a ReduceScatter of (256,) float32 = 1,024 bytes over
  2: 512 (the mask's gradient reaches no weight: none). The mirrors (each weight's float32
  gradient summed over the ranks holding the same slice): over the data group of 2, 2 x 1/2 x S
  = S: a layer's wq, wk, wv (128, 512) and wo (512, 128), 262,144 each; w1, w3 (384, 512) and w2
  (512, 384), 786,432 each: 3,407,872 a layer, 6,815,744 for two; lm_head and the embedding
  table (1024 / 4 = 256, 512), 524,288 each: 7,864,320, 16 operators. The 5 RMSNorm weights
  (512,) whole on all 8, over the world: 2 x 7/8 x 2,048 = 3,584 each, 17,920. Data backward
  7,864,320 + 17,920 + 512 = 7,882,752, 22 operators.
Optimizer: the gradient clipping's global norm and the overflow flag, a float32 scalar each over
the world (every rank of the (2, 4) matrix: axis data+tensor): 2 x 7/8 x 4 = 7 each, 14 bytes.

Without validate (step_parallel_end): the forward as above, the mirrors as data backward
(7,882,240, 21 operators), the optimizer's two AllReduces, and the rest of the backward "cannot
tell" with its reason, never 0.

The rank matrix (a ring sends to the next rank of the group's sorted list): rank 0 -> 1 (tensor
group 0-3 and the world), 0 -> 4 (data group {0, 4}); rank 5 -> 6 (tensor group 4-7 and the
world), 5 -> 1 (data group {1, 5}). At validate: to the tensor / world neighbour 1,181,952 +
1,179,648 + 17,920 + 14 = 2,379,534; to the data neighbour 1,024 + 7,864,320 + 512 = 7,865,856.
At step_parallel_end: 1,181,952 + 17,934 = 1,199,886 and 1,024 + 7,864,320 = 7,865,344.

Memory per rank (docs/cost.md "Static memory", float32, the slices above): embedding and lm_head
524,288 each; a layer's wq, wk, wv, wo 4 x 262,144, w1, w2, w3 3 x 786,432, 2 RMSNorms 2 x 2,048:
3,411,968, two layers 6,823,936; norm_out 2,048: 7,874,560 bytes, 21 weights, at both stages (the
parameters are cut in place at step_parallel_end already). Gradients one per weight (no
accumulation, no shard): 7,874,560. AdamW keeps two states a weight, laid out as it: 15,749,120.
(The optimizer's kind and its expected states are not asserted here.)

explain at validate, rank 5 (dp_index 1, mp_index 1; tensor group 4-7, data group {1, 5}): its 21
gradient AllReduces are the mirrors, 16 over {1, 5}, the 5 RMSNorm weights' over the world;
its forward AllReduces over 4-7 in 4 parts are 1 max (ReduceMax) and 7 sums (embedding, 4 row
parallel, 2 loss sums); its 2 AllGathers gather dimension 0 from 2 parts over {1, 5}; its
ReduceScatter sums and scatters dimension 0 in 2.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.answers import explain
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import allreduce, assert_backward_untold, cells, operators, split
from tests.conftest import FIXTURES

ZOO12 = FIXTURES / "zoo" / "12_mf_llama_tp8"
KEPT = (0, 5)
F16, F32 = 2, 4
ROWS = 128                                       # 256 rows / dp 2
TP, DP, WORLD = 4, 2, 8

ROW_PARALLEL = allreduce(TP, ROWS * 512 * F16)   # wo, w2
EMBEDDING = allreduce(TP, 2 * 64 * 512 * F32)    # the Gather's (2, 64, 512) float32
LOSS_SUM = allreduce(TP, ROWS * F32)             # ReduceMax, the exponentials' sum, the NLL sum
TENSOR_FORWARD = EMBEDDING + 2 * 2 * ROW_PARALLEL + 3 * LOSS_SUM
TENSOR_BACKWARD = EMBEDDING + 2 * 2 * ROW_PARALLEL
LOSS_GATHER = (DP - 1) * ROWS * F32
LOSS_SCATTER = (DP - 1) * DP * ROWS * F32 // DP
LAYER_MIRRORED = 4 * 128 * 512 * F32 + 3 * 384 * 512 * F32
DATA_MIRRORS = allreduce(DP, 2 * LAYER_MIRRORED + 2 * 256 * 512 * F32)
WORLD_MIRRORS = 5 * allreduce(WORLD, 512 * F32)
SCALAR = allreduce(WORLD, F32)
WEIGHTS = 2 * 256 * 512 * F32 + 2 * (2 * 512 * F32 + LAYER_MIRRORED) + 512 * F32

RANK = {("tensor", "forward"): TENSOR_FORWARD, ("tensor", "backward"): TENSOR_BACKWARD,
        ("data", "forward"): 2 * LOSS_GATHER, ("data", "backward"): DATA_MIRRORS + WORLD_MIRRORS + LOSS_SCATTER,
        ("data+tensor", "optimizer"): 2 * SCALAR}
RUNS = {("tensor", "forward"): 1 + 4 + 3, ("tensor", "backward"): 1 + 4, ("data", "forward"): 2,
        ("data", "backward"): 16 + 5 + 1, ("data+tensor", "optimizer"): 2}
AT_END = {("tensor", "forward"): TENSOR_FORWARD, ("data", "forward"): 2 * LOSS_GATHER,
          ("data", "backward"): DATA_MIRRORS + WORLD_MIRRORS, ("data+tensor", "optimizer"): 2 * SCALAR,
          ("cannot tell", "backward"): None}
# the ring's next rank: of the tensor group (and the world), of the data group
NEXT = {0: (1, 4), 5: (6, 1)}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO12), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO12), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert (ROW_PARALLEL, EMBEDDING, LOSS_SUM) == (196_608, 393_216, 768)
    assert (TENSOR_FORWARD, TENSOR_BACKWARD) == (1_181_952, 1_179_648)
    assert LOSS_GATHER == LOSS_SCATTER == 512
    assert LAYER_MIRRORED == 3_407_872 and DATA_MIRRORS == 7_864_320 and WORLD_MIRRORS == 17_920
    assert SCALAR == 7 and WEIGHTS == 7_874_560


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in KEPT:
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == RUNS


def test_without_validate_the_backward_cannot_tell(at_end):
    for rank in KEPT:
        assert split(at_end, rank) == AT_END
        assert operators(at_end, rank)[("data", "backward")] == 16 + 5
    assert_backward_untold(at_end, KEPT)


def test_the_rank_matrix(whole, at_end):
    assert cells(whole) == {(r, n): b for r, (tensor, data) in NEXT.items()
                            for n, b in ((tensor, 2_379_534), (data, 7_865_856))}
    assert TENSOR_FORWARD + TENSOR_BACKWARD + WORLD_MIRRORS + 2 * SCALAR == 2_379_534
    assert 2 * LOSS_GATHER + DATA_MIRRORS + LOSS_SCATTER == 7_865_856
    assert cells(at_end) == {(r, n): b for r, (tensor, data) in NEXT.items()
                             for n, b in ((tensor, 1_199_886), (data, 7_865_344))}


@pytest.mark.parametrize("read", ["whole", "at_end"])
def test_memory_per_rank(read, request):
    rows = memory_per_rank(request.getfixturevalue(read))
    assert sorted(rows["rank"]) == list(KEPT)
    for row in rows.to_dict("records"):
        assert (row["weights"], row["weight_count"]) == (WEIGHTS, 21)
        assert (row["gradients"], row["gradients_from"], row["states"]) == (WEIGHTS, "one per weight", 2 * WEIGHTS)


def test_what_explain_says_of_rank_5(whole):
    tensor, data, world = (4, 5, 6, 7), (1, 5), tuple(range(WORLD))
    found = explain(whole, "type:AllReduce", rank=5)
    mirrors = [e for e in found if e.kind == "gradient"]
    assert sum(len(e.lines) for e in mirrors) == 21
    for e in mirrors:
        assert tuple(e.group_ranks) == tuple(e.predicted_group) and not e.cannot_tell
    assert sorted(tuple(e.group_ranks) for e in mirrors for _ in e.lines) == sorted([data] * 16 + [world] * 5)
    forward = [e for e in found if e.kind == "forward" and tuple(e.group_ranks) == tensor]
    assert sorted((e.action, e.parts) for e in forward for _ in e.lines) == [("max", TP)] + [("sum", TP)] * 7
    gathers = explain(whole, "type:AllGather", rank=5)
    assert [(e.action, e.dims, e.parts, tuple(e.group_ranks)) for e in gathers for _ in e.lines] == [
        ("gather", (0,), DP, data)] * 2
    (scatter,) = explain(whole, "type:ReduceScatter", rank=5)
    assert (scatter.action, scatter.dims, scatter.parts, tuple(scatter.group_ranks)) == ("sum", (0,), DP, data)
