"""Activation memory per rank (:mod:`msinspect.analysis.rank.activations`) on zoo 15
(``fixtures/zoo/nets/15_mf_llama_moe_ep8.py``: MindFormers 2.0.0's LLaMA of ``mf_llama.py``, 2
layers, hidden 512, 8 heads of 64, sequence 64, vocabulary 1024, float16 compute, float32 weights,
whose FFN is ``MoEV3``: 4 experts, top 2, GroupedMatmul experts of intermediate size 1536; dp 4 x
mp 2, expert parallel 4, on 8 ranks, global batch 4, full batch), worked out by hand before the
estimate was run on the dump. The rules of what each bprop reads are those of
``test_activations_mindformers.py``; the ones this network adds are stated where used.

Sizes at the rank. Attention, dp 4 x mp 2: b = 1 sequence, R = 64 rows, 8 / 2 = 4 heads; wq /
wk / wv (256, 512), wo (512, 256). ``vocab_emb_dp`` is left at ``TransformerOpParallelConfig``'s
default, True: the embedding and lm_head keep the whole vocabulary ((4, 1), (1, 1): the weight
(1024, 512)); the loss is cut (dp, mp): (64, 512) logits at the rank. MoEV3 treats all 8 ranks as
data parallel for the tokens (``self.dp = data_parallel * model_parallel``): 256 tokens / 8 = N
= 32 tokens a rank, k = 2: kN = 64 (token, expert) rows; one expert a rank: w1 (1, 512, 3072),
w2 (1, 1536, 512). float32 and int32 4 bytes, int64 8, float16 2.

Sized by hand, one layer:
- attention (as zoo 16, at h = 4): attention_norm x float32 (1, 64, 512) 131,072 + rstd (1, 64,
  1) 256 + the normalised float16 65,536 + the weight's Cast (512,) 1,024 = 197,888; wq / wk /
  wv: their x (64, 512) float16 65,536 + 3 Casts (256, 512) float16 3 x 262,144: 851,968; q and
  k after rotary float16 (1, 4, 64, 64) 2 x 32,768 + softmax float32 65,536 + the probabilities'
  Cast and v 2 x 32,768: 196,608; wo: x (64, 256) float16 32,768 + its Cast (512, 256) 262,144:
  294,912; ffn_norm 197,888. 19 tensors, 1,739,264 bytes.
- MoEV3's router and combine (``moev3.py``): the router Dense's x, the rank's 32 tokens in float32
  (32, 512) 65,536 (its weight is a float32 parameter, no activation); the gating Softmax's
  output (1, 32, 4) float32 512; TopK's indices (1, 32, 2) int64 512 (its bprop scatters by
  them); ``_normalize``'s Div reads its divisor (1, 32, 1) float32 128 and its quotient (1, 32, 2)
  256 (the divisor, a sum of the gates, needs a gradient); the scaling Mul by a constant: nothing;
  ``_tensor_sort``'s Gather: its indices, ``inter_map`` (1, 64) int32 256; ``_tensor_unsort``'s
  Gather: ``unsort_map`` (1, 32, 2) int32 256; its Mul: the gathered (1, 32, 2, 512) float16
  65,536 and the coefficients' Cast (1, 32, 2, 1) float16 128. The load-balancing loss is not
  returned, so nothing of it is read.
- the experts (``ffn_forward_func``): the GroupedMatmuls' weights, float16 Casts of w1 (1, 512,
  3072) 3,145,728 and w2 (1, 1536, 512) 1,572,864, and ``group_list`` (1,) int64 8 (both read by
  GroupedMatmul's bprop); the AlltoAllVs' bprops send back with the lists swapped: ``send_list``
  and ``receive_list`` (4,) int64 2 x 32.
  MoE sized: 14 tensors, 4,851,784 bytes. A layer: 33 tensors, 6,591,048; two: 66, 13,182,096.
Head: norm_out 197,888 (4); lm_head x (64, 512) float16 65,536 + its Cast (1024, 512) float16
1,048,576 (2); the loss: log_softmax and one-hot float32 (64, 512) 2 x 131,072, the input mask
gathered whole (4 x 64 = 256,) float32 1,024, the denominator (1,) 4 (4): 1,575,172, 10 tensors.
Embedding (whole vocabulary: no mask Mul): the indices (1, 64) int32 256 (1). cos, sin (1, 1, 64,
64) float32 2 x 16,384 = 32,768 (2). Sized: 13,182,096 + 1,575,172 + 256 + 32,768 = 14,790,292
bytes in 66 + 10 + 1 + 2 = 79 tensors.

Not sizeable from any file: the rows r the first AlltoAllV of each layer delivers to the rank's
expert are the (token, expert) pairs the router sends it from the 4 ranks of its expert-parallel
group, counted at run time (``send_list`` / ``receive_list`` are computed from the TopK indices;
the IR prints ``AlltoAllV ... -> (<Tensor[Float16], (-1)>)`` and the symbol ``s8<[1,inf]>``).
With a dimension not static, MindSpore's Reshape and Gather bprops read their input for its shape
(``Shape(x)`` at run time), so each layer's backward reads: the AlltoAllV's output (r x 512,) and
its Reshape (1, r, 512); ``_ffn_resort``'s ``sort_map`` (1, r) int32 and the Gather's output
(1, r, 512) and its Reshape (r, 512) (GroupedMatmul's x); the first GroupedMatmul's output (r,
3072) (Swiglu's input) and Swiglu's output (r, 1536) (the second GroupedMatmul's x); the second's
output (r, 512) and its Reshape (1, r, 512); ``_ffn_unresort``'s ``unsort_map`` (1, r) and the
Gather's output (1, r, 512); the AlltoAllV back (its output, of the rank's own 64 rows, is read by
the Reshape after it, whose input is printed -1): 12 a layer, 24 in all, 103 saved tensors.

So the estimate cannot give the activations of either rank (rank 5's shapes are rank 0's): it
says 24 of 103 saved tensors have a dimension known at run time only, downstream of AlltoAllV,
with a line of the file, and that the other 79 hold 14,790,292 bytes. Inputs: the tokens (4, 65)
int32, full batch: 1,040.
"""
from __future__ import annotations

import gzip
import re

import pytest

from msinspect.analysis.rank.activations import activations_of_rank, saved_of_file
from msinspect.parser import parse_file

from tests.conftest import FIXTURES

SIZED_BYTES, SIZED, RUN_TIME, SAVED, INPUTS = 14_790_292, 79, 24, 103, 1_040
ZOO15 = FIXTURES / "zoo" / "15_mf_llama_moe_ep8"


@pytest.fixture(scope="module")
def rows():
    """Each rank's row from its own validate file (no pipeline: place None), without the whole
    dump's analysis (``cost --memory`` reads the same rows through ``activations_per_rank``)."""
    files = {rank: next((ZOO15 / f"rank_{rank}").glob("*_validate_*.ir.gz")) for rank in (0, 5)}
    return {rank: activations_of_rank(rank, saved_of_file(parse_file(path)), None) for rank, path in files.items()}


def test_zoo15_sums_nothing_it_cannot_size(rows):
    assert sorted(rows) == [0, 5]
    for rank, row in rows.items():
        got = {k: row[k] for k in ("stage", "micro_batches", "in_flight", "per_micro", "shared", "inputs", "saved",
                                   "activations")}
        # no pipeline, no gradient accumulation: one micro-batch, in flight 1 whatever its size
        assert got == dict(stage="-", micro_batches=1, in_flight=1, per_micro=0, shared=None, inputs=INPUTS,
                           saved=SAVED, activations=None), rank


def test_zoo15_says_which_tensors_and_why(rows):
    for rank, row in rows.items():
        why = row["why"]
        assert why.startswith(f"cannot tell: {RUN_TIME} of {SAVED} saved tensors have no known size; {RUN_TIME} "
                              "have a dimension known at run time only (-1), each downstream of an output of "
                              "AlltoAllV"), rank
        assert why.endswith(f"the other {SIZED} hold {SIZED_BYTES:,} bytes"), rank


def test_zoo15_example_is_an_alltoallv_of_the_file(rows):
    """The example names a line of the file read that is an AlltoAllV printing a -1 output."""
    found = re.search(r"e\.g\. (\S+\.ir\.gz):(\d+): %\d+ AlltoAllV ", rows[0]["why"])
    assert found, rows[0]["why"]
    path, line = found.group(1), int(found.group(2))
    lines = gzip.open(path, "rt", encoding="utf-8").read().splitlines()
    assert "= AlltoAllV(" in lines[line - 1]
    assert "-> (<Tensor[Float16], (-1)>)" in lines[line]
