"""The whole step of zoo 04 (``fixtures/zoo/nets/04_pipeline_hsdp_recompute.py``: gpt.py in 2
pipeline stages x dp 2 x tp 2 on 8 ranks, 4 micro-batches, optimizer parallel, recompute), with
validate (stage 1, read at rank 4) and without it (step_parallel_end, every rank): bytes by axis
and phase, the rank matrix and static memory, derived by hand.

Rank 0's step at validate and its memory are derived in tests/analysis/test_cost.py
(``ZOO04_RANK0``, ``ZOO04_MEMORY0``: read from there, one home); stage 1's tensor and data bytes
in tests/analysis/test_cost_backend_pass.py. Here the rest, by the same rules: an activation at
the rank (128, 512) float32 = 262,144 bytes, an AllReduce over a pair 262,144; stage s is ranks
4s .. 4s + 3, rank = 4s + 2d + t; tensor pairs {r, r ^ 1}, data / optimizer pairs {r, r ^ 2}, the
stage ring, pipeline peers r <-> r + 4. Every rank of a stage alike.

Stage 1 (ranks 4-7), validate:
- tensor, forward: 2 block AllReduces x 2 blocks x 4 micro-batches = 16, recompute's replay of
  out_matmul's, 1 a block and micro-batch = 8, and the logits' AllGather over the pair ((128,
  512) of the (128, 1024) vocabulary: (2 - 1) x 262,144) 4: 28 x 262,144 = 7,340,032.
- tensor, backward: the 16 bprops and the gathers' ReduceScatters, 4: 20 x 262,144 = 5,242,880.
- data: loss_mean's scalar over the data pair, 4 bytes a micro-batch, 16 forward and its bprop 16
  backward; the mirrors of blocks 2-3's 8 LayerNorm vectors and ln_f's 2, whole on the stage,
  2 x 3/4 x 2,048 = 3,072 each: 30,720; backward 30,736.
- optimizer shard: blocks 2-3's weights, 3,145,728 a block (test_cost.py), and lm_head (512,
  1024) cut (1, 2): (512, 512) sharded over the pair, (256, 512) = 524,288 gathered: 6,815,744,
  and the gradients reduce-scattered, the same.
- pipeline: the activation received once a micro-batch and its gradient sent back: 1,048,576 each.
Stage 0 (ranks 1-3) as rank 0.

Without validate (step_parallel_end): the forward graph, no recompute replay: stage 0 tensor
forward 16 x 262,144 = 4,194,304, stage 1 20 x 262,144 = 5,242,880; pipeline, optimizer-shard
gathers and data forward as at validate; the mirrors as data backward (24,576 and 30,720); the
rest of the backward "cannot tell".

The rank matrix at step_parallel_end (ring to the next rank of the group's sorted list, a Send to
its peer): stage 0 rank r: its tensor pair gets the 4,194,304, the stage ring's next (r + 1 mod 4)
the embedding's and the position table's gathers (1,572,864 + 98,304, test_cost.py) and the
mirrors 24,576, its data pair the blocks' gathers 6,291,456, r + 4 the activations 1,048,576.
Stage 1 rank r: pair 5,242,880, ring 30,720, data pair 6,815,744 + 16.

Memory, stage 1: blocks 2-3 as stored shards 2 x 3,153,920 (test_cost.py's block), ln_f 2 x 2,048,
lm_head's shard 524,288: 6,836,224 bytes, 23 weights; Adam two states a weight: 13,672,448; the
accumulation buffers of the whole slices 2 x 6,299,648 + 4,096 + (512, 512) 1,048,576 =
13,651,968. The same at both stages.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import assert_backward_untold, cells, splits
from tests.analysis.test_cost import ZOO04_MEMORY0, ZOO04_RANK0
from tests.conftest import FIXTURES

ZOO04 = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"
ACT = 128 * 512 * 4
NORM = 2 * 3 * 512 * 4 // 4
EMBEDDINGS = 3 * 256 * 512 * 4 + 3 * 16 * 512 * 4          # gathered over stage 0's ring
BLOCKS = ZOO04_RANK0[("optimizer shard", "forward")] - EMBEDDINGS
HEAD = 256 * 512 * 4
STAGE1 = {("tensor", "forward"): 28 * ACT, ("tensor", "backward"): 20 * ACT,
          ("data", "forward"): 16, ("data", "backward"): 10 * NORM + 16,
          ("optimizer shard", "forward"): BLOCKS + HEAD, ("optimizer shard", "backward"): BLOCKS + HEAD,
          ("pipeline", "forward"): 4 * ACT, ("pipeline", "backward"): 4 * ACT}
AT_END = {0: {("tensor", "forward"): 16 * ACT, ("pipeline", "forward"): 4 * ACT,
              ("optimizer shard", "forward"): BLOCKS + EMBEDDINGS, ("data", "backward"): 8 * NORM,
              ("cannot tell", "backward"): None},
          4: {("tensor", "forward"): 20 * ACT, ("pipeline", "forward"): 4 * ACT, ("data", "forward"): 16,
              ("optimizer shard", "forward"): BLOCKS + HEAD, ("data", "backward"): 10 * NORM,
              ("cannot tell", "backward"): None}}
MEMORY1 = {"weights": 6_836_224, "weight_count": 23, "gradients": 13_651_968, "states": 13_672_448}


@pytest.fixture(scope="module")
def whole():
    """Rank 4 only (stage 1; rank 0's validate is test_cost.py's): the suite's time."""
    return analyse(msinspect.load_dump(ZOO04), "validate", only=(4,))


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO04), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert (ACT, NORM, EMBEDDINGS, BLOCKS, HEAD) == (262_144, 3_072, 1_671_168, 6_291_456, 524_288)
    assert STAGE1[("optimizer shard", "forward")] == 6_815_744 and STAGE1[("tensor", "forward")] == 7_340_032


def test_the_whole_step_of_stage_1(whole):
    assert splits(whole) == {4: STAGE1}


def test_without_validate_the_forward_and_the_backward_cannot_tell(at_end):
    assert splits(at_end) == {rank: AT_END[rank // 4 * 4] for rank in range(8)}
    assert_backward_untold(at_end, range(8))


def test_the_rank_matrix_without_validate(at_end):
    expected: dict = {}
    for rank in range(8):
        stage = rank // 4 * 4
        ring = stage + (rank - stage + 1) % 4
        told = AT_END[stage]
        for to, b in ((rank ^ 1, told[("tensor", "forward")]), (rank ^ 2, BLOCKS + (HEAD + 16 if stage else 0)),
                      (ring, (10 if stage else 8) * NORM + (0 if stage else EMBEDDINGS))):
            expected[(rank, to)] = expected.get((rank, to), 0) + b
        if not stage:
            expected[(rank, rank + 4)] = 4 * ACT
    assert cells(at_end) == expected
    assert sum(b for (src, _), b in expected.items() if src == 0) == 13_230_080


@pytest.mark.parametrize("read, ranks", [("whole", [4]), ("at_end", list(range(8)))])
def test_memory_per_rank(read, ranks, request):
    rows = memory_per_rank(request.getfixturevalue(read))
    assert sorted(rows["rank"]) == ranks
    for row in rows.to_dict("records"):
        expected = ZOO04_MEMORY0 if row["rank"] < 4 else MEMORY1
        assert {k: row[k] for k in expected} == expected, row["rank"]
        assert row["gradients_from"] == "accumulation buffers (accu_grads)"
        assert row["optimizer"] == "AdamWeightDecay" and row["states_expected"] == row["states"]
