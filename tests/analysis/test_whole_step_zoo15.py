"""The whole step of zoo 15, MindFormers 2.0.0's ``LlamaForCausalLM`` with MoEV3 experts (4
experts, top 2), dp 4 x mp 2, expert parallel 4, on 8 ranks (``fixtures/zoo/nets/
15_mf_llama_moe_ep8.py``, ``mf_llama.py``): bytes by axis and phase, the rank matrix and static
memory, with validate and without it (step_parallel_end), derived by hand from the scripts, their
docstrings, zoo 12's and 16's rules (tests/analysis/test_cost_zoo16.py: the loss's own bprops,
the loss gathered whole for ``sum2`` / ``mul2``) and MindSpore's definitions.

Attention: device matrix (4, 2), rank = 2 dp_index + mp_index: tensor pairs {0, 1}, {4, 5}; data
groups {0, 2, 4, 6}, {1, 3, 5, 7}. ``vocab_emb_dp`` is left at MindFormers' default, True: the
embedding table and lm_head (1024, 512) are whole on every rank (MindFormers' ``llama.py`` shards
lm_head ((dp, 1), (1, 1)) then), while the loss keeps its (dp, mp) strategy: its ReduceMax and
sums still reduce a vocabulary cut 2 (the logits sliced at the rank). The experts: device matrix
(outer_dp 2, inner_dp 4, 1, 1, 1), rank = 4 outer + inner: one expert a rank, whole across the
outer pair {r, r + 4}; tokens dispatched over the expert group 0-3 / 4-7. Global batch 4 x 64 =
256 rows, 64 at a rank. Ranks kept 0 and 5, alike. Float32 weights, float16 Linears. Wire bytes
as docs/comm.md: ring AllReduce 2(n-1)/n S, AllGather (n-1) S_in, ReduceScatter (n-1)/n S_in,
AlltoAll (n-1)/n S.

Forward:
- tensor: wo ((4, 2), (1, 2)): (64, 512) float16 partial sums = 65,536 bytes over the pair:
  65,536 a layer. The MoE FFN's router runs its tokens cut 8 ways (MoEV3's ``dp = dp x mp``):
  MindSpore's redistribution gathers the float32 (1, 32, 512) = 65,536 bytes over the pair before
  ``router_dense`` and the float16 (1, 32, 512) = 32,768 after the MoE (rank 0 validate lines 2731,
  4039): 98,304 a layer. The loss's three sums over the vocabulary cut 2: (64, 1), (64, 1), (64,)
  float32 = 256 bytes, 256 each. 2 x (65,536 + 98,304) + 768 = 328,448, 9 operators.
- data: the per-token loss (256,) and the mask, (64,) float32 slices = 256 bytes gathered over
  the data group of 4: 3 x 256 = 768 each, 1,536.
- expert: per layer one AlltoAll of the counts (1, 4) float32 = 16 bytes, 3/4 x 16 = 12, and
  three AlltoAllV whose sizes the router decides at run time (-1 in the IR): 8 operators, 6 of
  them unknown, so the total "cannot tell".
Backward (validate):
- tensor: the bprops of wo's AllReduces (2 x 65,536) and of the gathers (ReduceScatters, the
  same wire bytes, 2 x 98,304); the loss's sums none: 327,680, 6 operators.
- data: the loss gather's ReduceScatter, (256,) float32 = 1,024 x 3/4 = 768. The mirrors: wq, wk,
  wv (256, 512) and wo (512, 256), 524,288 bytes each, over the data group of 4: 1.5 x 524,288 =
  786,432 each, 8 for 2 layers: 6,291,456. Whole on all 8 (2 x 7/8 S): the 5 RMSNorm weights
  (512,) 3,584 each, 17,920; the embedding and lm_head (1024, 512) 2,097,152 bytes: 3,670,016
  each; the routers (4, 512) 8,192 bytes: 14,336 each, 28,672. The experts, over the outer pair
  (2 x 1/2 S = S): w1 (1, 512, 3072) 6,291,456 and w2 (1, 1536, 512) 3,145,728 a layer:
  18,874,368. 21 mirrors, 32,552,448 bytes; with the scatter 32,553,216, 22 operators.
- expert: the AlltoAllV of the tokens and of the results carry their gradients back: 2 a layer,
  4 operators, sizes decided at run time: "cannot tell".
Optimizer: global norm and overflow flag over the world, 7 bytes each (axis data+tensor).

Without validate (step_parallel_end): the experts' AlltoAll / AlltoAllV are inside one Morph a
layer (``hook_ffn_forward``, ``self_define_shard``, rank 0 line 6523) whose Python function
MindSpore expands after the parallel passes: the file read cannot hold them, so the expert
forward is "cannot tell" with that reason; the rest of the forward as at validate, the mirrors,
the optimizer, the rest of the backward "cannot tell".

The rank matrix (ring: the next rank of the group's sorted list; AlltoAll: an equal share to
each other rank of the group): rank 0 -> 1 (pair and world), 0 -> 2 (data group), 0 -> 4 (outer
pair), and the counts' AlltoAll, 2 x 12 / 3 = 8 bytes to each of 1, 2, 3 (the AlltoAllV unsized:
in no cell). Rank 5 -> 4 (pair), 5 -> 6 (world), 5 -> 7 (data group), 5 -> 1 (outer pair), 8
bytes to each of 4, 6, 7.

Memory per rank (float32): a layer's wq, wk, wv, wo 4 x 524,288, 2 RMSNorms 2 x 2,048, the
router 8,192, the expert's w1 and w2 9,437,184: 11,546,624, two layers 23,093,248; embedding and
lm_head 2 x 2,097,152, norm_out 2,048: 27,289,600 bytes, 21 weights, at both stages; gradients
one per weight; AdamW two states a weight.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import forward_missing, untold_axis
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import allreduce, assert_backward_untold, cells, operators, split
from tests.conftest import FIXTURES

ZOO15 = FIXTURES / "zoo" / "15_mf_llama_moe_ep8"
KEPT = (0, 5)
F16, F32 = 2, 4
WO = allreduce(2, 64 * 512 * F16)
ROUTER_GATHERS = 32 * 512 * F32 + 32 * 512 * F16
LOSS_SUM = allreduce(2, 64 * F32)
TENSOR_FORWARD = 2 * (WO + ROUTER_GATHERS) + 3 * LOSS_SUM
TENSOR_BACKWARD = 2 * (WO + ROUTER_GATHERS)
LOSS_GATHER = 3 * 64 * F32
LOSS_SCATTER = 3 * 256 * F32 // 4
ATTENTION = 8 * allreduce(4, 256 * 512 * F32)
WHOLE = 5 * allreduce(8, 512 * F32) + 2 * allreduce(8, 1024 * 512 * F32) + 2 * allreduce(8, 4 * 512 * F32)
EXPERTS = 2 * (allreduce(2, 512 * 3072 * F32) + allreduce(2, 1536 * 512 * F32))
MIRRORS = ATTENTION + WHOLE + EXPERTS
SCALAR = allreduce(8, F32)
COUNTS = 3 * 4 * F32 // 4                        # an AlltoAll of (1, 4) float32 over 4
WEIGHTS = 2 * (4 * 256 * 512 + 2 * 512 + 4 * 512 + 512 * 3072 + 1536 * 512) * F32 + (2 * 1024 * 512 + 512) * F32

TOLD = {("tensor", "forward"): TENSOR_FORWARD, ("data", "forward"): 2 * LOSS_GATHER,
        ("data+tensor", "optimizer"): 2 * SCALAR}
RANK = {**TOLD, ("tensor", "backward"): TENSOR_BACKWARD, ("data", "backward"): MIRRORS + LOSS_SCATTER,
        ("expert", "forward"): None, ("expert", "backward"): None}
RUNS = {("tensor", "forward"): 9, ("tensor", "backward"): 6, ("data", "forward"): 2, ("data", "backward"): 22,
        ("data+tensor", "optimizer"): 2, ("expert", "forward"): 8, ("expert", "backward"): 4}
AT_END = {**TOLD, ("data", "backward"): MIRRORS, ("cannot tell", "backward"): None}
# neighbours: (pair, world, data group, outer pair, the expert group's others)
NEXT = {0: (1, 1, 2, 4, (1, 2, 3)), 5: (4, 6, 7, 1, (4, 6, 7))}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO15), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO15), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert (WO, ROUTER_GATHERS, LOSS_SUM) == (65_536, 98_304, 256)
    assert (TENSOR_FORWARD, TENSOR_BACKWARD) == (328_448, 327_680)
    assert LOSS_GATHER == LOSS_SCATTER == 768
    assert (ATTENTION, WHOLE, EXPERTS) == (6_291_456, 7_386_624, 18_874_368) and MIRRORS == 32_552_448
    assert (SCALAR, COUNTS) == (7, 12) and WEIGHTS == 27_289_600


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in KEPT:
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == RUNS


def _matrix(tensor_bytes: int, with_counts: bool) -> dict:
    expected: dict = {}
    for rank, (pair, world, data, outer, experts) in NEXT.items():
        for to, b in ((pair, tensor_bytes), (world, WHOLE + 2 * SCALAR), (data, ATTENTION + 2 * LOSS_GATHER),
                      (outer, EXPERTS)):
            expected[(rank, to)] = expected.get((rank, to), 0) + b
        if with_counts:
            expected[(rank, data)] += LOSS_SCATTER
            for to in experts:
                expected[(rank, to)] = expected.get((rank, to), 0) + 2 * COUNTS // 3
    return expected


def test_the_rank_matrix(whole, at_end):
    assert cells(whole) == _matrix(TENSOR_FORWARD + TENSOR_BACKWARD, with_counts=True)
    assert cells(whole)[(0, 1)] == 8_042_774 and cells(whole)[(0, 3)] == 8
    assert cells(at_end) == _matrix(TENSOR_FORWARD, with_counts=False)


def test_without_validate_the_told_part_and_the_backward_cannot_tell(at_end):
    for rank in KEPT:
        told = split(at_end, rank)
        assert {k: v for k, v in told.items() if k[0] != "expert"} == AT_END
    assert_backward_untold(at_end, KEPT)


def test_without_validate_the_expert_forward_cannot_tell(at_end):
    # the two layers' Morphs at lines 6523 and 9850 of both ranks' step_parallel_end; each reads
    # its layer's w1 / w2 (4, ..., ...) cut 4 along the experts: the expert axis, told "cannot tell"
    # with the reason, not left out (issue 39)
    missing = forward_missing(at_end)
    assert sorted(missing) == list(KEPT)
    for rank in KEPT:
        assert ("expert", "forward") in split(at_end, rank) and split(at_end, rank)[("expert", "forward")] is None
        assert untold_axis(missing[rank]) == "expert"
        assert "Morph hook_ffn_forward (lines 6523, 9850) unexpanded" in missing[rank]


@pytest.mark.parametrize("read", ["whole", "at_end"])
def test_memory_per_rank(read, request):
    rows = memory_per_rank(request.getfixturevalue(read))
    assert sorted(rows["rank"]) == list(KEPT)
    for row in rows.to_dict("records"):
        assert (row["weights"], row["weight_count"]) == (WEIGHTS, 21)
        assert (row["gradients"], row["gradients_from"], row["states"]) == (WEIGHTS, "one per weight", 2 * WEIGHTS)
