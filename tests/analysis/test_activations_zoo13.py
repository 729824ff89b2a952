"""Activation memory under MindSpore's interleaved pipeline (:mod:`msinspect.analysis.rank.activations`)
on zoo 13 (``fixtures/zoo/nets/13_mf_llama_pp_interleave.py``: MindFormers 2.0.0's LLaMA, 4 layers,
dp 2 x mp 2 x pp 2 on 8 ranks, ``micro_batch_num=4``, ``pp_interleave_num=2``, optimizer parallel,
full recompute; the model of ``mf_llama.py``: hidden 512, 8 heads of 64, sequence 64, vocabulary
1024, FFN 1536, float16 compute, float32 weights), worked out by hand before the estimate was run.

The schedule (MindSpore's source, ``frontend/parallel/pipeline_transformer/``):

- p = 2 stages, v = 2 chunks, m = 4 micro-batches. Each chunk of a stage is a lazy-inlined forward
  graph (``▸``) called once a (chunk, micro-batch); the calls carry ``cnode_attrs: {micro: I64(i),
  chunk: I64(c)}`` and ``cnode_primal_attrs: {order: I64(...)}``. ``order`` is the Send/Receive tag
  ``CalSrTag`` (``pipeline_interleave.cc``): cut x MAX_MICRO_BATCH_NUM x MAX_INTERLEAVE_NUM +
  interleave index x MAX_INTERLEAVE_NUM + micro, with 4096 and 128 (``ops_info/ops_utils.h``):
  ``order: I64(1048579)`` is cut 2, micro 3. It names the micro-batch, not the chunk.
- ``InterleavedScheduler::Reorder`` (``pipeline_scheduler.cc``, MindSpore 2.10; not the
  ``ENABLE_LESS_MEM_VPP`` variant): offset = m mod p = 0, bias = (p + offset)(v - 1) + 2(p - s - 1)
  forward passes of warm-up; then forward i before backward i - bias, and backward i - bias before
  forward i + 1. Forward passes sorted by (micro // p, chunk, micro), backward passes by (micro //
  p, chunk descending, micro) (``SortFuncBetweenMicro``):
    F: c0m0 c0m1 c1m0 c1m1 c0m2 c0m3 c1m2 c1m3;  B: c1m0 c1m1 c0m0 c0m1 c1m2 c1m3 c0m2 c0m3.
  A pass's closure lives from its forward to the end of its backward. Alive after forward i and
  before backward i - bias ends: F[0..i] less B[0..i - bias - 1].
- stage 0 (rank 0): bias = 2 + 2 = 4: 5 passes in flight. i = 4: {c0m0 c0m1 c1m0 c1m1 c0m2} =
  3 a + 2 b; i = 5: less c1m0, with c0m3: 4 a + b; i = 6: less c1m1, with c1m2: 4 a + b; i = 7:
  less c0m0, with c1m3: 3 a + 2 b (a, b: the bytes of one chunk-0, one chunk-1 closure).
- stage 1 (rank 7): bias = 2 + 0 = 2: 3 passes. i = 2, 3: 2 a + b; i = 4, 5: 3 a; i = 6, 7: 2 a + b.

What each closure holds (``Partial(@◂, ...)`` at the end of each forward graph; the rank's shapes,
as the IR prints them at validate, follow from the script: a micro-batch is 8 / 4 = 2 sequences,
1 a data-parallel rank: R = 64 rows; mp 2: wq / wk / wv (256, 512), wo (512, 256), w1 / w3 (768,
512), w2 (512, 768), vocabulary 512 at the rank). Full recompute: a layer's inner outputs are
recomputed, so a layer's closure keeps its input and what its recomputed copy reads. float16 2
bytes, float32 and int32 4:

- the gathered weights: optimizer parallel cuts each Linear weight over the data-parallel pair and
  the main graph gathers it once a step (``AllGather``, ``parallel_optimizer_allgather_not_recompute``)
  before the 4 calls, which all bind the same value: one tensor for every micro-batch (shared).
  A layer: w1, w3, w2 3 x 786,432 + wq, wk, wv, wo 4 x 262,144 + the float16 Casts of its two
  RMSNorm weights 2 x 1,024 = 3,409,920.
- rank 0, chunk 0 (embedding + layer 0), a call's own: the Gather's indices int32 (1, 64) 256
  and the mask float32 (1, 64, 1) 256 (the embedding's bprop), the layer's input h float16 (1, 64,
  512) 65,536, the attention mask float16 (1, 1, 64, 64) 8,192, cos and sin float32 (1, 1, 64, 64)
  2 x 16,384: a = 107,008.
- rank 0, chunk 1 (layer 2): the received hidden state float16 (1, 64, 512) 65,536 (the Receive
  of that micro-batch, bound at that call alone), mask 8,192, cos, sin 32,768: b = 106,496.
- rank 7, chunk 0 (layer 1): as rank 0's chunk 1: a = 106,496.
- rank 7, chunk 1 (layer 3 + final norm + lm_head + loss): received 65,536, mask 8,192, cos, sin
  32,768; norm_out (not recomputed, rules of ``test_activations_mindformers.py``): x float32
  (1, 64, 512) 131,072, rstd (1, 64, 1) 256, the normalised float16 65,536 (the weight's Cast
  (512,) float16 1,024 is the main graph's, shared); lm_head's x (64, 512) float16 65,536 (its
  gathered weight (512, 512) float16 524,288 shared); log_softmax and one-hot float32 (64, 512)
  2 x 131,072; the input mask float32 (128,) 512; the denominator (1,) 4: b = 631,556.
- outside the closures: rank 7's sensitivity divided by the micro-batches (``Divs``, float32
  (1,), a forward-side node the backward's seed reads): 4 bytes, shared. The bprop calls' outputs
  (the gradients the backward Sends return) are the backward's, not saved.
- inputs: the batch, (8, 65) int32 = 2,080 on every rank (full batch).

So:
- rank 0: in flight 5; peak max(3 a + 2 b, 4 a + b) = max(534,016, 534,528) = 534,528; shared
  2 x 3,409,920 = 6,819,840; activations 534,528 + 6,819,840 + 2,080 = 7,356,448. One micro-batch,
  both chunks: a + b = 213,504. Saved tensors: chunk 0: 6 x 4 calls + 9 weights; chunk 1: 3 x 4 + 4
  Receives + 9: 58.
- rank 7: in flight 3; peak max(2 a + b, 3 a) = 212,992 + 631,556 = 844,548; shared 3,409,920 +
  3,409,920 + 1,024 + 524,288 + 4 = 7,345,156; activations 844,548 + 7,345,156 + 2,080 =
  8,191,784. One micro-batch: 738,052. Saved: chunk 0: 3 x 4 + 4 + 9; chunk 1: 11 x 4 + 4 + 9 +
  2; Divs 1: 85.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.activations import activations_per_rank, interleaved_peak, micro_of_order

from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def rows():
    analysis = analyse(msinspect.load_dump(FIXTURES / "zoo" / "13_mf_llama_pp_interleave"))
    return {row["rank"]: row for row in activations_per_rank(analysis).to_dict("records")}


COLUMNS = ("stage", "micro_batches", "in_flight", "per_micro", "shared", "inputs", "saved", "activations", "why")


def test_zoo13_stage0_interleaved(rows):
    got = {k: rows[0][k] for k in COLUMNS}
    assert got == dict(stage="0 of 2", micro_batches=4, in_flight=5, per_micro=213_504, shared=6_819_840,
                       inputs=2_080, saved=58, activations=7_356_448, why="")


def test_zoo13_stage1_interleaved(rows):
    got = {k: rows[7][k] for k in COLUMNS}
    assert got == dict(stage="1 of 2", micro_batches=4, in_flight=3, per_micro=738_052, shared=7_345_156,
                       inputs=2_080, saved=85, activations=8_191_784, why="")


def test_order_names_the_micro_batch():
    # CalSrTag: cut 2, interleave index 0, micro 3 -> 2 x 4096 x 128 + 3 = 1,048,579
    assert micro_of_order(1_048_579) == 3
    assert micro_of_order(524_288) == 0
    assert micro_of_order(2 * 4096 * 128 + 1 * 128 + 2) == 2  # a second interleave index, micro 2


def test_interleaved_peak_by_hand():
    # stage 0 of 2, 4 micro-batches, chunk 0 closures 10 bytes, chunk 1 closures 1: 4 a + b = 41
    slots = {(c, m): (10 if c == 0 else 1) for c in (0, 1) for m in range(4)}
    assert interleaved_peak(slots, stage=0, stages=2) == (41, 5)
    # stage 1: 3 a = 30 > 2 a + b = 21
    assert interleaved_peak(slots, stage=1, stages=2) == (30, 3)
    # chunk 1 heavier (a = 1, b = 10): stage 0 3 a + 2 b = 23, stage 1 2 a + b = 12
    slots = {(c, m): (1 if c == 0 else 10) for c in (0, 1) for m in range(4)}
    assert interleaved_peak(slots, stage=0, stages=2) == (23, 5)
    assert interleaved_peak(slots, stage=1, stages=2) == (12, 3)


def test_calls_without_a_micro_batch_cannot_tell(tmp_path):
    """Rank 0's file with the forward calls' ``micro``, ``chunk`` and ``order`` taken out (as a dump
    whose calls tell no micro-batch would be): the 4 closures of each chunk graph cannot be put to
    micro-batches, and the estimate says so instead of a sum."""
    import gzip
    import re

    from msinspect.analysis.rank.activations import saved_of_file
    from msinspect.parser import parse_file

    source = FIXTURES / "zoo" / "13_mf_llama_pp_interleave" / "rank_0" / "21_validate_0093.ir.gz"
    text = gzip.open(source, "rt", encoding="utf-8").read()
    calls = re.compile(r"(= call @\S+\u25b8.*?) cnode_attrs: \{micro: I64\(\d+\), chunk: I64\(\d+\)\} "
                       r"cnode_primal_attrs: \{order: I64\(\d+\)\}")
    stripped, count = calls.subn(r"\1", text)
    assert count == 8  # 2 chunk graphs x 4 micro-batches
    path = tmp_path / "21_validate_0093.ir"
    path.write_text(stripped, encoding="utf-8")
    saved = saved_of_file(parse_file(path))
    assert saved["why"].startswith("cannot tell: the forward graph ") and "called 4 times" in saved["why"]
