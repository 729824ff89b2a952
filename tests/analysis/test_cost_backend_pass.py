"""Bytes per axis and phase read at the backend pass of a parallel net without validate (issue 39,
item 3: "read at the backend pass, tensor and data bytes come out swapped", never reproduced until
this fixture).

``fixtures/pipeline_backend_pass/``: zoo 04 (``fixtures/zoo/nets/04_pipeline_hsdp_recompute.py``)
dry-run on ranks 0 and 4 of 8 with every pass kept, then only what a user copying from a cluster
with a pass filter would have: step_parallel_begin, step_parallel_end and ``22_backend_pass``
(2.10's last frontend pass, after validate), scrubbed and gzipped. No validate, no run record.

By hand, from the script and ``gpt.py`` (float32, 4 bytes an element), before the command was run:

- global batch 16, sequence 64, hidden 512, 4 micro-batches: a micro-batch is 4 sequences, 256
  rows; 2 stages of 4 ranks (stage 0: ranks 0-3, embedding and blocks 0-1; stage 1: ranks 4-7,
  blocks 2-3 and the head); dp 2 x tp 2 in a stage, rank = stage * 4 + d * 2 + t: tp pairs
  {0, 1}, {4, 5}; rank 4's dp pair {4, 6}. Rows at a rank: 256 / dp 2 = 128.
- ring formulas (docs/comm.md): AllReduce 2 (n - 1) / n * S, AllGather (n - 1) * S (S its input),
  ReduceScatter (n - 1) / n * S (S its whole input); n = 2 here.
- tensor, forward: out_matmul ((2, 2), (2, 1)) and ffn_out_matmul ((2, 2), (2, 1)) contract the
  dimension cut by tp: their (128, 512) partial sums (262,144 bytes) are AllReduced over the tp
  pair, 2 * 1 / 2 * 262,144 = 262,144 bytes each, 2 a block, a micro-batch: 2 blocks x 2 x 4 =
  16. Recompute (``block.recompute()``) runs a block's forward again in the backward, but only
  what its bprop reads: ln2 reads attn_add's output, which needs out_matmul's AllReduce again;
  ffn_out's AllReduce feeds ffn_add, the block's output, which no bprop of the block reads (an
  Add's bprop needs no input, an AllReduce's bprop no output) and the next block keeps as its
  input: 1 recomputed AllReduce a block, a micro-batch: 2 x 4 = 8 more. Rank 0: 24 x 262,144 =
  6,291,456. Rank 4 as well, plus the head: lm_matmul ((2, 1), (1, 2)) gives logits cut
  (2, 2), (128, 512) at the rank, and loss_ce ((2, 1), (2, 1)) needs the whole vocabulary: an
  AllGather over the tp pair, (2 - 1) * 262,144 bytes, 4 micro-batches: 28 x 262,144 =
  7,340,032.
- tensor, backward: each forward AllReduce's bprop is an AllReduce of its gradient, the same
  (128, 512): 2 a block, a micro-batch: 16 x 262,144 = 4,194,304 on rank 0 (recomputed copies
  have no bprop of their own). Rank 4: those 16, plus the logits AllGather's bprop, a
  ReduceScatter of the (128, 1024) gradient (524,288 bytes): 1 / 2 of it, 262,144, 4 micro-
  batches: 20 x 262,144 = 5,242,880.
- data, forward: loss_mean ((2,),) sums the batch cut by dp: a scalar over the dp pair, 2 * 1 /
  2 * 4 = 4 bytes a micro-batch: 16 on rank 4; stage 0 has no loss: no data-axis forward on rank 0.
- data, backward: loss_mean's bprop AllReduce, 4 bytes a micro-batch: 16 on rank 4. Then the
  mirrors: a weight whole on its stage's 4 ranks has its gradient summed over them, once a step
  (micro-step mirrors accumulate). Optimizer parallel (``hsdp``) shards every weight whose size
  passes MindSpore's ``parallel_optimizer_threshold`` (64 KB by default): the matrices and the
  embedding tables (2 MB, 128 KB) are sharded (optimizer-shard axis); the LayerNorm gammas and
  betas (512 floats, 2 KB) are not: mirrored, 2 * 3 / 4 * 2,048 = 3,072 bytes each. Rank 0:
  ln1 and ln2 of blocks 0-1, 8 vectors: 24,576. Rank 4: blocks 2-3's 8 and ln_f's 2, 10
  vectors: 30,720, plus the loss's 16: 30,736.

Tensor and data are not swapped: the rows below are what validate gives on the full zoo 04 dump.
"""
from __future__ import annotations

import json

import pytest

import msinspect
from msinspect.ranks_read import most_held
from msinspect.stages import WHOLE_STEP_STAGES

from tests.conftest import FIXTURES, invoke

DUMP = FIXTURES / "pipeline_backend_pass"
BLOCK_SUM = 128 * 512 * 4  # one (128, 512) float32 tensor: 262,144 bytes, and the wire bytes over a pair

BY_HAND = {
    (0, "tensor", "forward"): (24, 24 * BLOCK_SUM),
    (0, "tensor", "backward"): (16, 16 * BLOCK_SUM),
    (0, "data", "backward"): (8, 8 * 3072),
    (4, "tensor", "forward"): (28, 28 * BLOCK_SUM),
    (4, "tensor", "backward"): (20, 20 * BLOCK_SUM),
    (4, "data", "forward"): (4, 4 * 4),
    (4, "data", "backward"): (14, 10 * 3072 + 4 * 4),
}


@pytest.fixture(scope="module")
def rows():
    done = invoke("cost", DUMP, "--by", "axis,phase", "--json")
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


def test_the_backend_pass_is_read_by_default():
    # it holds the whole step (the gradient graph expanded), as validate would
    assert most_held(msinspect.load_dump(DUMP), WHOLE_STEP_STAGES) == "backend_pass"


def test_tensor_and_data_bytes_per_rank_and_phase(rows):
    got = {(r["rank"], r["axis"], r["phase"]): (r["operators"], r["step_bytes"]) for r in rows["bytes"]
           if r["axis"] in ("tensor", "data")}
    assert got == BY_HAND  # rank 0 has no data-axis forward row: nothing is summed there
    assert not any(r["axis"] == "cannot tell" for r in rows["bytes"])
    assert all(r["note"] is None for r in rows["bytes"])  # the backward is in the file read


def test_the_groups_are_the_tensor_and_data_pairs(rows):
    groups = {(r["rank"], r["axis"], r["kind"]): tuple(r["group_ranks"]) for r in rows["operators"]
              if r["axis"] in ("tensor", "data") and r["kind"] != "gradient"}
    assert {g for (rank, axis, _), g in groups.items() if axis == "tensor"} == {(0, 1), (4, 5)}
    assert {g for (rank, axis, _), g in groups.items() if axis == "data"} == {(4, 6)}
