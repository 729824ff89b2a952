"""The whole step of zoo 14, MindFormers 2.0.0's ``LlamaForCausalLM`` with tensor and sequence
parallel at mp 4 on 4 ranks (``fixtures/zoo/nets/14_mf_llama_seq_parallel.py``, ``mf_llama.py``):
bytes by axis and phase, the rank matrix, static memory and explain, with validate and without
it (step_parallel_end), derived by hand from the scripts, their docstrings, zoo 12's and 16's
rules (tests/analysis/test_cost_zoo16.py: the loss's own bprops, the embedding's Gather) and
MindSpore's definitions; where the IR showed the first derivation short, the line is named.

``TransformerOpParallelConfig(data_parallel=1, model_parallel=4, use_seq_parallel=True)``,
global batch 2 x sequence 64 = 128 rows, all at every rank (dp 1). One group of 4, 0-3, is the
whole device matrix (axis "tensor"). Ranks kept: 0 and 3, alike. Weights float32, the Linears
compute in float16. Wire bytes as docs/comm.md: ring AllReduce 2(n-1)/n S (rounded down),
AllGather (n-1) S_in, ReduceScatter (n-1)/n S_in.

Forward, a layer (2 layers):
- the RMSNorms run on the sequence cut 4, (2, 16, 512); the column-parallel wq / wk / wv and w1 /
  w3 ((1, 1), (4, 1)) need whole rows: the float16 (2, 16, 512) = 32,768 bytes gathered over 0-3,
  3 x 32,768 = 98,304, once for the attention, once for the FFN (at validate, after CSE: one
  gather feeds the three, and the two, Linears).
- wo and w2 ((1, 4), (1, 4)), out_strategy ((4, 1),): their (128, 512) float16 partial sums =
  131,072 bytes reduce-scattered over 0-3, 3/4 x 131,072 = 98,304 each.
- first derivation stopped there. The IR (rank 0 validate lines 2263-2275) has two more gathers
  after each ReduceScatter: its (32, 512) slice is 32 consecutive rows of the flattened (2 x 64)
  = one half of one sequence (rank r: batch r // 2, half r % 2), while the residual Add wants
  (1, 4, 1), a quarter of both sequences; MindSpore's redistribution gathers the whole tensor and
  slices it: an AllGather of (1, 32, 512) float16 = 32,768 bytes over the two ranks of the same
  batch ({0, 1}, {2, 3}: 32,768 on the wire), then of (1, 2, 32, 512) = 65,536 bytes over the two
  of the same half ({0, 2}, {1, 3}: 65,536). 98,304 a row-parallel Linear.
  A layer: 2 x 98,304 + 2 x 98,304 + 2 x 98,304 = 589,824, 8 operators.
Forward, outside the layers: the embedding Gather ((4, 1), (1, 1)) sums its (2, 64, 512) float32
lookups = 262,144 bytes over 0-3: 393,216; norm_out's output, float32 (2, 16, 512) = 65,536
bytes, gathered whole for lm_head: 196,608 (float32: the residual stream is float32, the
embedding's dtype, and the RMSNorm casts back to its input's type; lm_head casts after the
gather, line 5815); the loss's ReduceMax, exponentials' sum and NLL sum over the vocabulary cut
4, (128, 1), (128, 1), (128,) float32 = 512 bytes: 768 each. No data-parallel gather of the loss
(dp 1). Tensor forward: 2 x 589,824 + 393,216 + 196,608 + 3 x 768 = 1,771,776, 21 operators.

Backward (validate): the bprop of an AllGather is a ReduceScatter of the same group and the same
wire bytes ((n-1)/n x the gathered = (n-1) x the slice), of a ReduceScatter an AllGather, of the
embedding's AllReduce an AllReduce; the loss's sums have none (MindFormers' own bprops): tensor
backward = 1,771,776 - 3 x 768 = 1,769,472, 18 operators. The mirrors: the 5 RMSNorm weights
(512,), whole on 0-3, 2 x 3/4 x 2,048 = 3,072 each: 15,360, 5 operators (a mirror's axis is
data: the gradient of a weight summed over the ranks holding it, here the sequence's quarters).
Optimizer: the global norm and the overflow flag, a float32 scalar each over 0-3: 6 bytes each.

Without validate (step_parallel_end, before CSE): each Linear's own gather, 3 in the attention
and 2 in the FFN where validate has 1 and 1, and norm_out's output gathered for each of its two
readers (lines 9027 and 9051): 3 x 2 + 1 = 7 more operators, 6 x 98,304 + 196,608 = 786,432 more
bytes, that the file writes and the step does not run: CSE keeps the first of each (comm's
``merged_into``, test_cse_merges.py), so the cost counts validate's tensor forward, 1,771,776, 21
operators (msinspect first counted all 28: 2,558,208). The mirrors as data backward, the
optimizer's two, the rest of the backward "cannot tell" with its reason.

The rank matrix (ring, the next rank of the group's sorted list): 0-3 sends to r + 1 mod 4; the
same-batch pair to the other of it ({0, 1}: 0 -> 1; {2, 3}: 3 -> 2), the same-half pair likewise
({0, 2}: 0 -> 2; {1, 3}: 3 -> 1). The pairs carry, forward and backward, 4 x 2 x 32,768 =
262,144 (same batch) and 4 x 2 x 65,536 = 524,288 (same half); rank 0 sends the rest and its
same-batch pair's bytes to 1.

Memory per rank: the weights are cut as zoo 12's (mp 4, dp plays no part in a weight's slice):
7,874,560 bytes, 21 weights, at both stages; gradients one per weight, AdamW two states each.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.answers import explain
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import allreduce, assert_backward_untold, cells, operators, split
from tests.conftest import FIXTURES

ZOO14 = FIXTURES / "zoo" / "14_mf_llama_seq_parallel"
KEPT = (0, 3)
F16, F32 = 2, 4
TP = 4
GATHER = (TP - 1) * 2 * 16 * 512 * F16           # a norm's (2, 16, 512) float16 gathered over 0-3
SCATTER = (TP - 1) * 128 * 512 * F16 // TP       # wo's, w2's partial sums reduce-scattered
SAME_BATCH = 1 * 32 * 512 * F16                  # (1, 32, 512) over a pair
SAME_HALF = 1 * 2 * 32 * 512 * F16               # (1, 2, 32, 512) over a pair
LAYER = 2 * GATHER + 2 * SCATTER + 2 * (SAME_BATCH + SAME_HALF)
EMBEDDING = allreduce(TP, 2 * 64 * 512 * F32)
NORM_OUT = (TP - 1) * 2 * 16 * 512 * F32
LOSS_SUM = allreduce(TP, 128 * F32)
TENSOR_FORWARD = 2 * LAYER + EMBEDDING + NORM_OUT + 3 * LOSS_SUM
TENSOR_BACKWARD = TENSOR_FORWARD - 3 * LOSS_SUM
MIRRORS = 5 * allreduce(TP, 512 * F32)
SCALAR = allreduce(TP, F32)
BEFORE_CSE = 2 * 3 * GATHER + NORM_OUT
WEIGHTS = 7_874_560                              # zoo 12's: test_whole_step_zoo12.py

RANK = {("tensor", "forward"): TENSOR_FORWARD, ("tensor", "backward"): TENSOR_BACKWARD,
        ("data", "backward"): MIRRORS, ("tensor", "optimizer"): 2 * SCALAR}
RUNS = {("tensor", "forward"): 2 * 8 + 1 + 1 + 3, ("tensor", "backward"): 2 * 8 + 1 + 1, ("data", "backward"): 5,
        ("tensor", "optimizer"): 2}
AT_END = {("tensor", "forward"): TENSOR_FORWARD, ("data", "backward"): MIRRORS,
          ("tensor", "optimizer"): 2 * SCALAR, ("cannot tell", "backward"): None}
PAIRS = 4 * 2 * SAME_BATCH, 4 * 2 * SAME_HALF    # forward and backward, over the two pairs


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO14), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO14), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert GATHER == SCATTER == SAME_BATCH + SAME_HALF == 98_304 and LAYER == 589_824
    assert (EMBEDDING, NORM_OUT, LOSS_SUM) == (393_216, 196_608, 768)
    assert (TENSOR_FORWARD, TENSOR_BACKWARD) == (1_771_776, 1_769_472)
    assert MIRRORS == 15_360 and SCALAR == 6 and BEFORE_CSE == 786_432


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in KEPT:
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == RUNS


def test_without_validate_the_forward_is_the_file_s_and_the_backward_cannot_tell(at_end):
    for rank in KEPT:
        assert split(at_end, rank) == AT_END
        assert operators(at_end, rank)[("tensor", "forward")] == 21  # the 7 copies CSE merges run 0 times
    assert_backward_untold(at_end, KEPT)


def test_the_rank_matrix(whole, at_end):
    batch, half = PAIRS
    everything = TENSOR_FORWARD + TENSOR_BACKWARD + MIRRORS + 2 * SCALAR
    assert cells(whole) == {(0, 1): everything - half, (0, 2): half,
                            (3, 0): everything - batch - half, (3, 2): batch, (3, 1): half}
    assert everything - half == 3_032_332
    ahead = AT_END[("tensor", "forward")] + MIRRORS + 2 * SCALAR
    assert cells(at_end) == {(0, 1): ahead - half // 2, (0, 2): half // 2,
                             (3, 0): ahead - batch // 2 - half // 2, (3, 2): batch // 2, (3, 1): half // 2}


@pytest.mark.parametrize("read", ["whole", "at_end"])
def test_memory_per_rank(read, request):
    rows = memory_per_rank(request.getfixturevalue(read))
    assert sorted(rows["rank"]) == list(KEPT)
    for row in rows.to_dict("records"):
        assert (row["weights"], row["weight_count"]) == (WEIGHTS, 21)
        assert (row["gradients"], row["gradients_from"], row["states"]) == (WEIGHTS, "one per weight", 2 * WEIGHTS)


def test_what_explain_says_of_rank_3_s_reduce_scatters(whole):
    """4 forward (wo, w2 of 2 layers: sums of partial products, dimension 0 in 4 over 0-3); the
    backward of each gather: of the 5 norm gathers over 0-3 (dimension 1 of (2, 64, 512), the
    sequence, at validate 2 a layer and norm_out's), of the pairs' ({2, 3}, {1, 3}) 4 each."""
    world = (0, 1, 2, 3)
    found = [(e.kind, e.action, e.dims, e.parts, tuple(e.group_ranks))
             for e in explain(whole, "type:ReduceScatter", rank=3) for _ in e.lines]
    assert sorted(found) == sorted([("forward", "sum", (0,), 4, world)] * 4 + [("backward", "sum", (1,), 4, world)] * 5
                                   + [("backward", "sum", (0,), 2, (2, 3))] * 4
                                   + [("backward", "sum", (0,), 2, (1, 3))] * 4)
