"""Activation memory per rank (:mod:`msinspect.analysis.rank.activations`) on MindFormers 2.0.0's LLaMA
(``fixtures/zoo/nets/mf_llama.py``: 2 layers, hidden 512, 8 heads of 64, sequence 64, vocabulary
1024, FFN 1536, float16 compute, float32 weights, RMSNorm / softmax / rotary in float32,
``use_flash_attention=False``, ``fused_rms_norm=False``, ``use_rope_slice=True``), worked out by
hand before the estimate was run on these dumps.

``@lazy_inline`` makes the model body a forward graph (``▸``) and a backward graph (``◂``): the
forward ends with ``Partial(@◂, v1, ..., vn)``, the closure of the forward values the backward
reads, and the training cell calls it with the loss's sensitivity. The values are the forward
outputs MindSpore's bprops read (rules of ``tests/analysis/test_activations.py``, and):
Cast, Reshape, Transpose, StridedSlice, Neg, Concat, ReduceMean, Add, AllReduce, AllGather: nothing
(shapes and dtypes are static); Square: its input; Rsqrt: its output; Mul: the other input of
each input that needs a gradient (a value made of constants or integers needs none); MatMul /
BatchMatMul: both inputs, here a weight's float16 Cast (a forward output, not the parameter);
SiLU: its input; Softmax: its output; Gather: its indices; RealDiv: the divisor (the quotient
only for the divisor's gradient, which none needs); MindFormers' ``_LogSoftmax`` and ``_NLLLoss``
have their own bprops (``core/loss/loss.py``): ``_NLLLoss.bprop(log_softmax_result,
one_hot_label, _, dout)`` reads both, ``_LogSoftmax``'s passes dout through (no value read).

One layer, non-fused RMSNorm (``LlamaRMSNorm._rms_norm``: Cast x to float32, Square, ReduceMean,
Add eps, Rsqrt ("norm_factor"), Mul x by it, Cast to float16, Mul by the float16 Cast of the
weight) at R rows of the rank, H = 512, heads h and FFN f at the rank:
  attention_norm: x float32 (R, 512) (Square's and Mul's) + rstd float32 (R, 1) + the normalised
    float16 (R, 512) and the weight's float16 Cast (512,) (the last Mul's two inputs);
  wq, wk, wv: their one x float16 (R, 512) + three weight Casts float16 (64 h, 512);
  rotary (``use_rope_slice``: q x cos + rotate_half(q) x sin): reads cos and sin only; they are
    the FreqsMgr's once a step (1, 1, 64, 64) float32, shared by every layer;
  score BatchMatMul: q and k after rotary, float16 (b, h, 64, 64) each; the scale Mul by the
    constant 1/sqrt(64): nothing; the mask Add: nothing;
  Softmax's output float32 (b, h, 64, 64); the context BatchMatMul: the probabilities' float16
    Cast and v, float16 (b, h, 64, 64) each;
  wo: x float16 (R, 64 h) + its Cast float16 (512, 64 h);
  ffn_norm: as attention_norm;
  w1, w3: their one x float16 (R, 512) + two Casts float16 (f, 512); SiLU's input, w1's
    output float16 (R, f); the gate Mul's two inputs, the Reshapes of SiLU's and w3's outputs
    float16 (b, 64, f) each; w2: x float16 (R, f) + its Cast float16 (512, f).
  27 tensors a layer.
Head: norm_out as an RMSNorm (4 tensors); lm_head: x float16 (R, 512) + its Cast float16 (V, 512)
(V the rank's vocabulary); the loss: log_softmax_result and one_hot_label float32 (R, V), the
input mask float32 gathered whole (global rows,) (the loss's Mul by it), the denominator
float32 (1,) (RealDiv's divisor): 10 tensors. Embedding (the sharded Gather,
SHARD_BATCH_AND_AXIS): the indices int32 (b, 64) (Gather's) and the mask float32 (b, 64, 1)
that zeroes the other ranks' rows (the Mul's): 2 tensors. Frequencies: 2. In all 2 x 27 + 10 +
2 + 2 = 68 tensors. No pipeline, no micro-batch: all ``shared``; no recompute.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.activations import activations_per_rank

from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"


def _rows(name: str) -> dict:
    analysis = analyse(msinspect.load_dump(ZOO / name))
    return {row["rank"]: row for row in activations_per_rank(analysis).to_dict("records")}


@pytest.fixture(scope="module")
def zoo12():
    return _rows("12_mf_llama_tp8")


@pytest.fixture(scope="module")
def zoo16():
    return _rows("16_mf_llama_256")


# ---------------------------------------------------------------- zoo 12: dp 2 x mp 4, ranks 0 and 5
# Global batch 4, dp 2: b = 2 sequences, R = 128 rows; mp 4: h = 2 heads, f = 1536 / 4 = 384,
# V = 1024 / 4 = 256. Bytes (float32 4, float16 2, int32 4):
#   attention_norm: 128 x 512 x 4 = 262,144 + 128 x 4 = 512 + 128 x 512 x 2 = 131,072 + 1,024
#     = 394,752;
#   wq/wk/wv: 131,072 + 3 x 128 x 512 x 2 = 3 x 131,072: 524,288;
#   q, k: 2 x (2 x 2 x 64 x 64 x 2 = 32,768) = 65,536; softmax: 16,384 x 4 = 65,536;
#   probabilities, v: 2 x 32,768 = 65,536; wo: 128 x 128 x 2 = 32,768 + 512 x 128 x 2 = 131,072:
#   163,840; ffn_norm 394,752; w1/w3: 131,072 + 2 x 384 x 512 x 2 = 2 x 393,216: 917,504;
#   SiLU: 128 x 384 x 2 = 98,304; gate Mul: 2 x 98,304 = 196,608; w2: 98,304 + 393,216 = 491,520.
#   A layer: 3,378,176; two: 6,756,352.
# Head: norm_out 394,752; lm_head 131,072 + 256 x 512 x 2 = 262,144: 393,216; log_softmax and
#   one-hot 2 x 128 x 256 x 4 = 262,144; mask (4 x 64 = 256,) float32 1,024; divisor 4:
#   1,051,140. Embedding: (2, 64) int32 512 + (2, 64, 1) float32 512 = 1,024. cos, sin:
#   2 x 64 x 64 x 4 = 32,768.
# Saved: 6,756,352 + 1,051,140 + 1,024 + 32,768 = 7,841,284 bytes, 68 tensors, all shared.
# Inputs: the tokens, (4, 65) int32 (full batch: every rank holds the global batch): 1,040.
# Activations: 7,841,284 + 1,040 = 7,842,324 at rank 0 and at rank 5 (the same shapes).
ZOO12_SAVED, ZOO12_INPUTS = 7_841_284, 1_040


def test_zoo12_activations_read_through_the_backward_closure(zoo12):
    assert sorted(zoo12) == [0, 5]
    for rank, row in zoo12.items():
        got = {k: row[k] for k in ("stage", "micro_batches", "in_flight", "per_micro", "shared", "inputs", "saved",
                                   "recomputed", "activations", "why")}
        assert got == dict(stage="-", micro_batches=1, in_flight=1, per_micro=0, shared=ZOO12_SAVED,
                           inputs=ZOO12_INPUTS, saved=68, recomputed=0, activations=ZOO12_SAVED + ZOO12_INPUTS,
                           why=""), rank


# ---------------------------------------------------------------- zoo 16: dp 32 x mp 8, 256 ranks
# Global batch 32, dp 32: b = 1, R = 64; mp 8: h = 1, f = 1536 / 8 = 192, V = 1024 / 8 = 128.
#   attention_norm: 64 x 512 x 4 = 131,072 + 256 + 65,536 + 1,024 = 197,888;
#   wq/wk/wv: 65,536 + 3 x 64 x 512 x 2 = 262,144; q, k 2 x 8,192; softmax 16,384;
#   probabilities, v 2 x 8,192: 49,152 for the three; wo: 64 x 64 x 2 = 8,192 + 512 x 64 x 2 =
#   65,536: 73,728; ffn_norm 197,888; w1/w3: 65,536 + 2 x 192 x 512 x 2 = 458,752; SiLU 64 x 192
#   x 2 = 24,576; gate Mul 49,152; w2: 24,576 + 196,608 = 221,184. A layer: 1,534,464; two:
#   3,068,928.
# Head: norm_out 197,888; lm_head 65,536 + 128 x 512 x 2 = 196,608; log_softmax, one-hot 2 x 64
#   x 128 x 4 = 65,536; mask (32 x 64 = 2048,) float32 8,192; divisor 4: 468,228. Embedding (1,
#   64) int32 256 + (1, 64, 1) float32 256 = 512; cos, sin 32,768.
# Saved: 3,068,928 + 468,228 + 512 + 32,768 = 3,570,436 (the "about 3.57 MB" of the closure a
#   helper saw), 68 tensors. Inputs: tokens (32, 65) int32 8,320. Activations 3,578,756 at each
#   of the ranks read (0, 131, 255: the same shapes). Before this was counted the estimate said
#   41,088 bytes with per_micro 0.
ZOO16_SAVED, ZOO16_INPUTS = 3_570_436, 8_320


def test_zoo16_activations_read_through_the_backward_closure(zoo16):
    assert sorted(zoo16) == [0, 131, 255]
    for rank, row in zoo16.items():
        got = {k: row[k] for k in ("micro_batches", "in_flight", "per_micro", "shared", "inputs", "saved",
                                   "activations", "why")}
        assert got == dict(micro_batches=1, in_flight=1, per_micro=0, shared=ZOO16_SAVED, inputs=ZOO16_INPUTS,
                           saved=68, activations=ZOO16_SAVED + ZOO16_INPUTS, why=""), rank


# ---------------------------------------------------------------- zoo 14: mp 4 + sequence parallel
# dp 1, global batch 2: b = 2, R = 128 (the column-parallel MatMuls gather whole rows); mp 4: h =
# 2, f = 384, V = 256; the layers' RMSNorms are cut (1, 4, 1): (2, 16, 512) at the rank.
#   attention_norm: 2 x 16 x 512 x 4 = 65,536 + (2, 16, 1) 128 + 32,768 + 1,024 = 99,456;
#   wq/wk/wv: the gathered x (128, 512) float16 131,072 + 3 x 131,072: 524,288; q, k, softmax,
#   probabilities, v: 196,608 (as zoo 12); wo 163,840; ffn_norm 99,456; w1/w3 917,504; SiLU
#   98,304; gate Mul 196,608; w2 491,520. A layer: 2,787,584; two: 5,575,168.
# Head, first derivation: norm_out cut as the layers' (99,456); lm_head 131,072 + 262,144; log_softmax,
#   one-hot 262,144; mask (2 x 64 = 128,) float32 512; divisor 4. Embedding 512 + 512; cos, sin
#   32,768. Saved 6,364,292.
# The dump: norm_out reads whole rows (its x a Concat (2, 64, 512), after the AllGather the script's
#   docstring puts "before the final norm"): x 262,144 + rstd (2, 64, 1) 512 + 131,072 + 1,024 =
#   394,752, not 99,456: the dump is right (the final norm's input is gathered), 295,296 more:
#   6,659,588. Inputs: tokens (2, 65) int32 520. Activations 6,660,108. (Derived after `cost
#   --memory` had shown this network's total; the 295,296 bytes were then found tensor by tensor.)
def test_zoo14_sequence_parallel_norms():
    for row in _rows("14_mf_llama_seq_parallel").values():
        assert (row["micro_batches"], row["per_micro"], row["shared"], row["saved"]) == (1, 0, 6_659_588, 68)
        assert (row["inputs"], row["activations"], row["why"]) == (520, 6_660_108, "")


# ---------------------------------------------------------------- where the closure cannot be told
# Zoo 13 (interleaved pipeline, 4 micro-batches, 2 chunks): its calls name their micro-batch and
# chunk (``cnode_attrs``); its estimate, derived by hand, is ``test_activations_zoo13.py``.
# Zoo 15 (MoE, expert parallel): the tokens each rank's expert gets are counted at run time
# (AlltoAllV, a dimension -1 at the rank); which saved tensors that leaves unsized, why, and what
# the others hold, derived by hand: ``test_activations_zoo15.py``.
