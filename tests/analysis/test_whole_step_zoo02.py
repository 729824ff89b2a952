"""The whole step of zoo 02, the GPT stack (``fixtures/zoo/nets/gpt.py``: 4 blocks, hidden 512,
8 heads, sequence 64, vocabulary 1024, global batch 16) under sharding propagation on 64 ranks
with dp 8 x tp 8 set on the MatMuls only (``fixtures/zoo/nets/02_sharding_propagation_64.py``):
bytes by phase and by axis and phase, the rank matrix and static memory, with validate and
without it (step_parallel_end), derived by hand from the scripts and MindSpore's definitions;
where the IR showed the first derivation wrong, the line is named.

Every MatMul is ((8, 1), (1, 8)) or ((8, 8), (8, 1)): device matrix (8, 8), rank = 8 d + t:
tensor group of r 8 (r // 8) .. + 7, data group r % 8 + 8k, the world 0-63. Rows: 16 x 64 =
1024, 128 at a rank. Float32. Ranks kept: 0, 31, 63, alike. Wire bytes as docs/comm.md: ring
AllReduce 2(n-1)/n S (rounded down), AllGather (n-1) S_in, ReduceScatter (n-1)/n S_in.

Forward:
- tensor: out_matmul and ffn_out_matmul ((8, 8), (8, 1)) contract the dimension cut 8: (128,
  512) partial sums = 262,144 bytes AllReduced over the tensor group, 2 x 7/8 x 262,144 = 458,752
  each, 2 a block, 4 blocks: 3,670,016, 8 operators. The logits (128, 1024 / 8 = 128) = 65,536
  bytes at a rank; the loss (softmax cross entropy) wants each row's whole vocabulary: gathered
  over the tensor group, 7 x 65,536 = 458,752. First derivation: one AllGather over 8. The IR
  (rank 31 validate lines 2080, 2104) gathers in two steps, because the planner propagated rows
  cut 32 to the loss (``loss_ce``, ``loss_mean`` ((32,),): test_cost_operator_axes.py): over the
  pair that differs in t's last bit ({30, 31}), (1, 128, 1, 128) = 65,536 bytes: 65,536; then over
  the four that differ in t's first two bits ({25, 27, 29, 31}), (1, 128, 1, 256) = 131,072 x 3
  = 393,216; each rank then keeps its quarter of the rows. 458,752 all the same, 2 operators; both
  gather the vocabulary lm_matmul's tensor-parallel cut split: tensor.
  Tensor forward 4,128,768, 10 operators.
- data: loss_mean ((32,),) sums a scalar over the 32 ranks of its parity: 2 x 31/32 x 4 = 7.
Backward (validate):
- tensor: the AllReduces' bprops (AllReduce of dout, 8 x 458,752) and the gathers' (ReduceScatter,
  the same wire bytes): 4,128,768, 10 operators. The constant sens needs no sum (zoo 01).
- data, the mirrors (a weight's gradient summed over the ranks holding the same slice), over the
  data group of 8 (2 x 7/8 S = 1.75 S): a block's wq, wk, wv (512, 64) and wo (64, 512), 131,072
  bytes each, w_in (512, 256) and w_out (256, 512), 524,288 each: 1.75 x 1,572,864 = 2,752,512 a
  block, 11,010,048 for 4; lm_head (512, 128) 262,144: 458,752. Over the world (whole on all 64,
  2 x 63/64 S): 18 LayerNorm gammas and betas (512,), 4,032 each: 72,576; the embedding (1024,
  512) 2,097,152 bytes: 4,128,768; the position table (64, 512) 131,072: 258,048.
  45 mirrors, 15,928,192 bytes.
Optimizer: AdamWeightDecay, no clipping, no shard: none.

Without validate (step_parallel_end): the forward as above, the mirrors as data backward, the
rest of the backward "cannot tell".

The rank matrix (ring: the next rank of the group's sorted list): rank 0 -> 1 (tensor group,
world, pair {0, 1}), -> 2 (four {0, 2, 4, 6}, parity group), -> 8 (data group); rank 31 -> 24,
32, 39, 30, 25, 33; rank 63 -> 56, 0, 7, 62, 57, 1.

Memory per rank: a block's wq, wk, wv, wo 4 x 131,072, w_in, w_out 2 x 524,288, 4 LayerNorm
vectors 4 x 2,048: 1,581,056, 4 blocks 6,324,224; lm_head 262,144, ln_f 2 x 2,048, embedding
2,097,152, position 131,072: 8,818,688 bytes, 45 weights, at both stages. Gradients one per
weight; AdamWeightDecay two states (m, v) a weight: 17,637,376, as expected of it.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost_tables import bytes_by
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import allreduce, assert_backward_untold, cells, operators, split
from tests.conftest import FIXTURES

ZOO02 = FIXTURES / "zoo" / "02_sharding_propagation_64"
KEPT = (0, 31, 63)
F32 = 4
ROW_PARALLEL = allreduce(8, 128 * 512 * F32)
PAIR = 1 * 128 * 128 * F32                      # the first step of the logits' gather
FOUR = 3 * 128 * 256 * F32                      # the second
LOSS_MEAN = allreduce(32, F32)
TENSOR = 8 * ROW_PARALLEL + PAIR + FOUR         # forward, and backward alike
DATA_MIRRORS = allreduce(8, 4 * (4 * 512 * 64 + 2 * 512 * 256) * F32 + 512 * 128 * F32)
WORLD_MIRRORS = 18 * allreduce(64, 512 * F32) + allreduce(64, 1024 * 512 * F32) + allreduce(64, 64 * 512 * F32)
MIRRORS = DATA_MIRRORS + WORLD_MIRRORS
WEIGHTS = (4 * (4 * 512 * 64 + 2 * 512 * 256 + 4 * 512) + 512 * 128 + 2 * 512 + 1024 * 512 + 64 * 512) * F32

RANK = {("tensor", "forward"): TENSOR, ("tensor", "backward"): TENSOR,
        ("data", "forward"): LOSS_MEAN, ("data", "backward"): MIRRORS}
RUNS = {("tensor", "forward"): 10, ("tensor", "backward"): 10, ("data", "forward"): 1, ("data", "backward"): 45}
# the ring's next rank: tensor group (and world, pair at rank 0), world, data group, pair, four, parity group
NEXT = {0: (1, 1, 8, 1, 2, 2), 31: (24, 32, 39, 30, 25, 33), 63: (56, 0, 7, 62, 57, 1)}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO02), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO02), "step_parallel_end")


def _by_phase(analysis, rank) -> dict:
    frame = bytes_by(analysis, ("phase",))
    return {r["phase"]: r["step_bytes"] for r in frame[frame["rank"] == rank].to_dict("records")}


def test_the_numbers_are_the_derivation():
    assert (ROW_PARALLEL, PAIR + FOUR, LOSS_MEAN) == (458_752, 458_752, 7) and TENSOR == 4_128_768
    assert (DATA_MIRRORS, WORLD_MIRRORS, MIRRORS) == (11_468_800, 4_459_392, 15_928_192)
    assert WEIGHTS == 8_818_688


def test_the_whole_step_by_phase(whole):
    for rank in KEPT:
        assert _by_phase(whole, rank) == {"forward": TENSOR + LOSS_MEAN, "backward": TENSOR + MIRRORS}


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in KEPT:
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == RUNS


def _matrix(tensor: int, pair: int, four: int, mirrors: bool = True) -> dict:
    expected: dict = {}
    for rank, (group, world, data, two, quad, parity) in NEXT.items():
        for to, b in ((group, tensor), (world, WORLD_MIRRORS), (data, DATA_MIRRORS), (two, pair), (quad, four),
                      (parity, LOSS_MEAN)):
            expected[(rank, to)] = expected.get((rank, to), 0) + b
    return expected


def test_the_rank_matrix(whole, at_end):
    assert cells(whole) == _matrix(2 * 8 * ROW_PARALLEL, 2 * PAIR, 2 * FOUR)
    assert cells(whole)[(0, 1)] == 11_930_496 and sum(cells(whole).values()) == 3 * 24_185_735
    assert cells(at_end) == _matrix(8 * ROW_PARALLEL, PAIR, FOUR)


def test_without_validate_the_forward_and_the_mirrors_and_the_backward_cannot_tell(at_end):
    for rank in KEPT:
        assert _by_phase(at_end, rank) == {"forward": TENSOR + LOSS_MEAN, "backward": None}
        told = split(at_end, rank)
        assert (told[("data", "backward")], told[("cannot tell", "backward")]) == (MIRRORS, None)
        assert operators(at_end, rank)[("data", "backward")] == 45
    assert_backward_untold(at_end, KEPT)


@pytest.mark.parametrize("read", ["whole", "at_end"])
def test_memory_per_rank(read, request):
    rows = memory_per_rank(request.getfixturevalue(read))
    assert sorted(rows["rank"]) == list(KEPT)
    for row in rows.to_dict("records"):
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("AdamWeightDecay", WEIGHTS, 45)
        assert (row["gradients"], row["gradients_from"]) == (WEIGHTS, "one per weight")
        assert row["states"] == row["states_expected"] == 2 * WEIGHTS
