"""Cost per step of zoo 09, the parser benchmark's GPT of 124 blocks (``fixtures/zoo/nets/09_large_gpt.py``
on ``gpt.py``), derived by hand before msinspect read it.

The dump keeps rank 0 only and step_parallel_end only (its file is over 10 MB): no validate, no
later pass. MindSpore's parallel pass runs before it expands the backward, so the file holds the
forward, the mirrors (which stand in the forward graph there) and the optimizer's graph, not the
gradient graph: the tensor group's bprops are in no line of it. The backward beyond the mirrors is
"cannot tell" with docs/cost.md's reason, never 0, and no total that needs it is given.

From the scripts (gpt.py's table of strategies, plan "all") and MindSpore's definitions, as zoo 01
(test_cost.py, test_cost_whole_step.py), whose layout this is with 124 blocks instead of 4:
gpt.Config(layers=124): V 1024, H 512, 8 heads, S 64, batch 8, full batch; dp 2 x tp 4 on 8 ranks;
float32. MatMul ((dp, 1), (1, tp)) gives the device matrix (2, 4), rank = 4 d + t: rank 0's tensor
group {0, 1, 2, 3}, its data pair {0, 4}. Rows at the rank: 8 x 64 / 2 = 256; an activation
(256, 512) = A = 524,288 bytes. Wire bytes as docs/comm.md: ring AllReduce 2(n-1)/n S,
AllGather (n-1) S_in.

- tensor, forward: out_matmul and ffn_out_matmul ((2, 4), (4, 1)) contract the dimension cut 4:
  A of partial sums AllReduced over the tensor group, 2 x 3/4 x A = 786,432 each, 2 a block x 124
  = 248; the head's logits (256, 1024 / 4) gathered over the tensor group for the loss, which wants
  the whole vocabulary per row: 3 x 262,144 = 786,432. 249 operators, 249 x 786,432 = 195,821,568.
- data, forward: loss_mean ((2,),) reduces the batch cut 2: a scalar AllReduced over {0, 4}, 4 bytes.
- data, backward (the mirrors, one per weight: its gradient summed over the ranks holding the same
  slice; counted as backward at step_parallel_end too): a block's wq, wk, wv (512, 128), wo
  (128, 512) 262,144 bytes each and w_in (512, 512), w_out (512, 512) 1,048,576 each over {0, 4}:
  2 x 1/2 x S = S, 3,145,728 a block, x 124 = 390,070,272; lm_head (512, 256) 524,288 over {0, 4};
  held whole by all 8: the LayerNorms' gammas and betas (512,) 2,048 bytes, 4 a block + ln_f's 2 =
  498, 2 x 7/8 x 2,048 = 3,584 each: 1,784,832; the embedding table (1024, 512) (Gather
  ((1, 1), (2, 1)): table whole) 2 x 7/8 x 2,097,152 = 3,670,016; position (64, 512) 229,376.
  1,245 operators: 390,070,272 + 524,288 + 1,784,832 + 3,670,016 + 229,376 = 396,278,784.
- the rest of the backward (the AllReduces' bprops, the gather's ReduceScatter): cannot tell.
- optimizer: AdamWeightDecay without optimizer parallel, no gradient clipping, no loss scale: no
  collective, no row.

The rank matrix (ring to the next rank of the sorted group; rank 0 is the only rank read, its row
noted that its backward is missing): 0 -> 1 the tensor AllReduces and gather and the world
mirrors, 195,821,568 + 5,684,224; 0 -> 4 the pair's mirrors and the loss's sum, 390,594,560 + 4.

Memory at rank 0 (docs/cost.md "Static memory", the parameters as the file holds them, cut in
place by the parallel pass): a block's 4 LayerNorm vectors 8,192, wq .. wo 4 x 262,144, w_in and
w_out 2 x 1,048,576: 3,153,920, x 124 = 391,086,080; embedding 2,097,152, position 131,072, ln_f
4,096, lm_head 524,288: 393,842,688 bytes of 124 x 10 + 5 = 1,245 weights; AdamWeightDecay keeps
2 states each (adam_m, adam_v): 787,685,376; gradients one per weight, none sharded: 393,842,688.
"""
from __future__ import annotations

import json

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD, SHORT, backward_missing
from msinspect.analysis.job.cost_tables import bytes_by, rank_matrix
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import allreduce, cells, splits, told_by_command
from tests.conftest import FIXTURES, invoke

ZOO09 = FIXTURES / "zoo" / "09_large_gpt"
BLOCKS = 124
A = 256 * 512 * 4
TENSOR_FORWARD = 2 * BLOCKS * allreduce(4, A) + 3 * 256 * 256 * 4
PAIR_MIRRORS = BLOCKS * (4 * allreduce(2, 512 * 128 * 4) + 2 * allreduce(2, 512 * 512 * 4)) + allreduce(2, 512 * 256 * 4)
WORLD_MIRRORS = ((4 * BLOCKS + 2) * allreduce(8, 512 * 4) + allreduce(8, 1024 * 512 * 4)
                 + allreduce(8, 64 * 512 * 4))
AT_END = {("tensor", "forward"): TENSOR_FORWARD, ("data", "forward"): allreduce(2, 4),
          ("data", "backward"): PAIR_MIRRORS + WORLD_MIRRORS, ("cannot tell", "backward"): None}
WEIGHTS = BLOCKS * (4 * 512 * 4 + 4 * 512 * 128 * 4 + 2 * 512 * 512 * 4) + (1024 * 512 + 64 * 512 + 2 * 512 + 512 * 256) * 4
WHY = NO_BACKWARD.format(stage="step_parallel_end")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO09))


def test_the_numbers_are_the_derivation():
    assert TENSOR_FORWARD == 195_821_568 and PAIR_MIRRORS == 390_594_560 and WORLD_MIRRORS == 5_684_224
    assert PAIR_MIRRORS + WORLD_MIRRORS == 396_278_784 and WEIGHTS == 393_842_688


def test_the_forward_and_the_mirrors_are_told_the_backward_cannot_tell(at_end):
    assert splits(at_end) == {0: AT_END}
    assert splits(at_end, "operators") == {0: {("tensor", "forward"): 2 * BLOCKS + 1, ("data", "forward"): 1,
                                               ("data", "backward"): 10 * BLOCKS + 5, ("cannot tell", "backward"): None}}
    assert backward_missing(at_end) == {0: WHY}
    frame = bytes_by(at_end, ("axis", "phase"))
    assert set(frame[frame["axis"] == "cannot tell"]["note"]) == {SHORT}


def test_no_total_leaves_the_backward_out(at_end):
    by_axis = bytes_by(at_end, ("axis",))
    assert by_axis["step_bytes"].map(lambda v: v is None).all()
    by_phase = bytes_by(at_end, ("phase",)).set_index("phase")
    assert by_phase.loc["forward", "step_bytes"] == TENSOR_FORWARD + 4
    assert by_phase.loc["backward", "step_bytes"] is None


def test_the_rank_matrix(at_end):
    assert cells(at_end) == {(0, 1): TENSOR_FORWARD + WORLD_MIRRORS, (0, 4): PAIR_MIRRORS + 4}
    matrix = rank_matrix(at_end)
    assert set(matrix["note"]) == {SHORT}


def test_memory_per_rank(at_end):
    row = memory_per_rank(at_end).set_index("rank").loc[0]
    assert (row["optimizer"], row["weights"], row["weight_count"]) == ("AdamWeightDecay", WEIGHTS, 10 * BLOCKS + 5)
    assert (row["states"], row["states_expected"], row["gradients"]) == (2 * WEIGHTS, 2 * WEIGHTS, WEIGHTS)


def test_the_command_reads_what_the_dump_has_and_says_why():
    assert told_by_command(ZOO09) == {0: AT_END}
    done = invoke("cost", ZOO09, "--by", "axis,phase")
    assert done.exit_code == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "backward cannot tell" in said and WHY in said
    done = invoke("cost", ZOO09, "--json")
    assert json.loads(done.stdout)["no_communication"] is None
