"""The whole step of zoo 13, MindFormers 2.0.0's ``LlamaForCausalLM`` (4 layers) in an interleaved
pipeline, dp 2 x mp 2 x pp 2, 4 micro-batches, optimizer parallel and full recompute, on 8 ranks
(``fixtures/zoo/nets/13_mf_llama_pp_interleave.py``, ``mf_llama.py``): bytes by axis and phase,
the rank matrix and static memory, with validate and without it (step_parallel_end), derived by
hand from the scripts, their docstrings, zoo 12's and 16's rules (tests/analysis/
test_cost_zoo16.py) and MindSpore's definitions; where the IR told what the script cannot (a
dtype), the line is named.

Stage s is ranks 4s .. 4s + 3: stage 0 the embedding and layers 0 and 2, stage 1 layers 1 and 3,
norm_out and lm_head. Within a stage rank = 4s + 2 dp_index + mp_index: tensor pairs {0, 1},
{6, 7}; data pairs {0, 2}, {5, 7}. A micro-batch: 2 sequences, 1 a data-parallel rank: 64 rows.
Kept: ranks 0 (stage 0) and 7 (stage 1). Float32 weights, float16 Linears. Wire bytes as
docs/comm.md: ring AllReduce 2(n-1)/n S (rounded down), AllGather (n-1) S_in, ReduceScatter
(n-1)/n S_in, Send / Receive S.

Rank 0, validate:
- optimizer shard, forward: each Linear weight's slice (over 64 KB) is cut again over the data
  pair and gathered back once a step, after its Cast to float16 (the AllGather reads the Cast:
  rank 0 validate line 139): wq, wk, wv, wo (128, 512) float16 = 131,072 bytes, w1, w2, w3 (384,
  512) 393,216: (2 - 1) x S_in, 1,703,936 a layer, 3,407,872 for layers 0 and 2, 14 operators.
- optimizer shard, backward: each accumulated float32 gradient reduce-scattered over the pair,
  1/2 x S_in: wq .. wo (256, 512) 524,288 -> 262,144, w1 .. w3 (768, 512) 1,572,864 -> 786,432:
  3,407,872 a layer, 6,815,744, 14 operators.
- pipeline: per micro-batch the forward sends layer 0's and layer 2's outputs to rank 4 and
  receives layer 1's: (1, 64, 512) float16 (the Send's ``dtype: F16``, line 278) = 65,536 bytes,
  3 x 4 = 12 operators, 786,432; the backward the same three gradients the other way: 786,432.
- tensor, forward: the embedding Gather ((2, 1), (2, 1)): (1, 64, 512) float32 = 131,072 summed
  over the pair, 131,072 a micro-batch: 524,288; wo and w2 (64, 512) float16 = 65,536 over the
  pair, 2 a layer, 2 layers, 4 micro-batches: 16 x 65,536 = 1,048,576; recompute runs each
  layer's forward again in its backward, and with it wo's AllReduce (ffn_norm's bprop reads
  its sum; w2's feeds the layer's output, which no bprop of the layer reads: zoo 04's rule),
  once a layer and micro-batch: 8 x 65,536 = 524,288. 2,097,152.
- tensor, backward: the bprops of wo's and w2's AllReduces, 16 x 65,536, and of the
  embedding's, 4 x 131,072: 1,572,864.
- data, backward: the mirrors, once a step after accumulation: the embedding table (512, 512)
  float32 (not optimizer-sharded: ``parallel_optimizer`` False) over the data pair, 1,048,576; the
  4 RMSNorm weights (512,) whole on the stage 0-3, 2 x 3/4 x 2,048 = 3,072 each: 1,060,864.
- optimizer: the global norm within the stage (0-3, 6 bytes: data+tensor), between the stages
  ({0, 4}, 4 bytes: pipeline), the overflow flag over the world (7 bytes).
Rank 7, validate: the same pipeline bytes (receives layers 0 and 2, sends layer 1, and back);
optimizer shard as rank 0 plus lm_head's (512, 512) slice cut over the pair, gathered as
(256, 512) float16 = 262,144 and its gradient scattered 1,048,576 / 2 = 524,288: 3,670,016 and
7,340,032, 15 operators; tensor forward wo / w2 1,048,576, recompute 524,288, the loss's three
sums over the vocabulary cut 2, (64, 1), (64, 1), (64,) float32 = 256 bytes: 256 each, 4
micro-batches, 3,072: 1,575,936; tensor backward 1,048,576; data forward the loss and mask gathers
over {5, 7}, (64,) float32 256 bytes each a micro-batch: 2,048; data backward the 5 RMSNorm
mirrors 15,360 and the loss gather's bprop, (128,) float32 512 x 1/2 a micro-batch, 1,024:
16,384.

How often each collective runs at validate: ``micro_batch_num=4`` and ``pp_interleave_num=2``
(the script) give each stage 2 chunks (rank 0: layer 0, layer 2), and the top graph runs each
chunk's forward once a micro-batch and its backward once a micro-batch: 4 runs a step of each
chunk's forward graph (``▸``, named in the line: ``call @..▸1128..``) and of each chunk's backward
graph (``◂``), which the top graph calls as a closure the forward returns (rank 0 validate lines
474, 513, 594, 612: ``%34[@Partial(@..◂1128..)](%92, U)``, ``order`` 0-3). Each collective of a
``▸`` or ``◂`` graph: 4 runs a step; those of the top graph (the unrolled Sends and Receives,
each micro-batch's copy in the file, the once-a-step mirrors, gathers and scatters) once (the
overflow check's branches, ``✓`` / ``✗``, called as ``[@FuncUnion(..)]``, hold none). The
recompute AllReduces and the bprops of wo's, w2's, the embedding's and the loss gather's are in
the ``◂`` graphs: counted once a step, rank 0's tensor backward would be 393,216, not 1,572,864.

Without validate (step_parallel_end): the forward graph only, no recompute copy, the backward's
collectives "cannot tell"; the optimizer-shard gathers and the mirrors as above (the
``_MicroStepAllGather`` of each unsharded weight, over a group of one rank, moves nothing), the
pipeline's forward Sends and Receives: rank 0 tensor forward 524,288 + 1,048,576 = 1,572,864;
rank 7 1,048,576 + 3,072 = 1,051,648.

The rank matrix at step_parallel_end (ring to the next rank of the group's sorted list; a Send
to its peer, a Receive read as its peer's send): rank 0 -> 1 (tensor pair, stage, world), -> 2
(data pair), -> 4 (its Sends and the norm between stages), 4 -> 0 (the Receives); rank 7 -> 6,
-> 5, -> 4 (stage), -> 3 (Sends, norm), -> 0 (world), 3 -> 7 (the Receives).

Memory per rank (float32; an optimizer-sharded weight as its shard, its accumulated gradient
whole): rank 0: a layer's wq .. wo 4 x 262,144, w1 .. w3 3 x 786,432, 2 RMSNorms 2 x 2,048:
3,411,968, two 6,823,936; the embedding 1,048,576: 7,872,512, 19 weights; gradients, the
``accu_grads`` buffers of the whole slices: 2 x (4 x 524,288 + 3 x 1,572,864 + 2 x 2,048) +
1,048,576 = 14,688,256; AdamW's two states a weight as stored: 15,745,024. Rank 7: 6,823,936 +
lm_head's shard (256, 512) 524,288 + norm_out 2,048 = 7,350,272, 20 weights; gradients 13,639,680
+ 1,048,576 + 2,048 = 14,690,304; states 14,700,544. The same at both stages.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost_tables import comm_costs
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import allreduce, assert_backward_untold, cells, split
from tests.conftest import FIXTURES

ZOO13 = FIXTURES / "zoo" / "13_mf_llama_pp_interleave"
KEPT = (0, 7)
F16, F32 = 2, 4
MICRO = 4
LAYER_GATHERS = 4 * 128 * 512 * F16 + 3 * 384 * 512 * F16
LAYER_SCATTERS = (4 * 256 * 512 * F32 + 3 * 768 * 512 * F32) // 2
HEAD_GATHER, HEAD_SCATTER = 256 * 512 * F16, 512 * 512 * F32 // 2
HOP = 64 * 512 * F16                                       # one Send / Receive: (1, 64, 512) float16
PIPELINE = 3 * MICRO * HOP
EMBEDDING = MICRO * allreduce(2, 64 * 512 * F32)
ROW_PARALLEL = 2 * 2 * MICRO * allreduce(2, 64 * 512 * F16)
RECOMPUTE = 2 * MICRO * allreduce(2, 64 * 512 * F16)
LOSS_SUMS = 3 * MICRO * allreduce(2, 64 * F32)
NORM = allreduce(4, 512 * F32)
LOSS_GATHERS = 2 * MICRO * 64 * F32
LOSS_SCATTER = MICRO * 128 * F32 // 2
OPTIMIZER = {("data+tensor", "optimizer"): allreduce(4, F32), ("pipeline", "optimizer"): allreduce(2, F32),
             ("pipeline+data+tensor", "optimizer"): allreduce(8, F32)}

WHOLE = {
    0: {("optimizer shard", "forward"): 2 * LAYER_GATHERS, ("optimizer shard", "backward"): 2 * LAYER_SCATTERS,
        ("pipeline", "forward"): PIPELINE, ("pipeline", "backward"): PIPELINE,
        ("tensor", "forward"): EMBEDDING + ROW_PARALLEL + RECOMPUTE, ("tensor", "backward"): EMBEDDING + ROW_PARALLEL,
        ("data", "backward"): 512 * 512 * F32 + 4 * NORM, **OPTIMIZER},
    7: {("optimizer shard", "forward"): 2 * LAYER_GATHERS + HEAD_GATHER,
        ("optimizer shard", "backward"): 2 * LAYER_SCATTERS + HEAD_SCATTER,
        ("pipeline", "forward"): PIPELINE, ("pipeline", "backward"): PIPELINE,
        ("tensor", "forward"): ROW_PARALLEL + RECOMPUTE + LOSS_SUMS, ("tensor", "backward"): ROW_PARALLEL,
        ("data", "forward"): LOSS_GATHERS, ("data", "backward"): 5 * NORM + LOSS_SCATTER, **OPTIMIZER},
}
AT_END = {rank: {**{k: v for k, v in told.items() if k[1] != "backward"}, ("data", "backward"): told[("data", "backward")],
                 ("cannot tell", "backward"): None} for rank, told in WHOLE.items()}
AT_END[0][("tensor", "forward")] = EMBEDDING + ROW_PARALLEL
AT_END[7][("tensor", "forward")] = ROW_PARALLEL + LOSS_SUMS
AT_END[7][("data", "backward")] = 5 * NORM
MEMORY = {0: (7_872_512, 19, 14_688_256, 15_745_024), 7: (7_350_272, 20, 14_690_304, 14_700_544)}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO13), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO13), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert (LAYER_GATHERS, LAYER_SCATTERS, HEAD_GATHER, HEAD_SCATTER) == (1_703_936, 3_407_872, 262_144, 524_288)
    assert (PIPELINE, EMBEDDING, ROW_PARALLEL, RECOMPUTE, LOSS_SUMS) == (786_432, 524_288, 1_048_576, 524_288, 3_072)
    assert WHOLE[0][("tensor", "forward")] == 2_097_152 and WHOLE[7][("tensor", "forward")] == 1_575_936
    assert (NORM, LOSS_GATHERS, LOSS_SCATTER) == (3_072, 2_048, 1_024)
    assert WHOLE[0][("data", "backward")] == 1_060_864 and WHOLE[7][("data", "backward")] == 16_384


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in KEPT:
        assert split(whole, rank) == WHOLE[rank]


def test_each_chunk_runs_once_a_micro_batch(whole):
    costs = comm_costs(whole)
    chunk = costs["graph"].str.contains("▸|◂")
    assert set(costs.loc[chunk, "graph"].str.extract("([▸◂])")[0]) == {"▸", "◂"}
    assert (costs.loc[chunk, "runs"] == MICRO).all() and (costs.loc[chunk, "count_basis"] == "called").all()
    assert (costs.loc[~chunk, "runs"] == 1).all()
    # the backward closures hold the backward's tensor-parallel bprops, 4 runs each
    assert ((costs["phase"] == "backward") & costs["graph"].str.contains("◂") & (costs["axis"] == "tensor")).any()


def test_without_validate_the_forward_and_the_backward_cannot_tell(at_end):
    for rank in KEPT:
        assert split(at_end, rank) == AT_END[rank]
    assert_backward_untold(at_end, KEPT)


def test_the_rank_matrix_without_validate(at_end):
    sends = 2 * MICRO * HOP                                # rank 0's two Sends a micro-batch; rank 7's receives
    ahead = 1 * MICRO * HOP                                # rank 0's one Receive a micro-batch; rank 7's Send
    end0, end7 = AT_END[0], AT_END[7]
    assert cells(at_end) == {
        (0, 1): end0[("tensor", "forward")] + 4 * NORM + allreduce(4, F32) + allreduce(8, F32),
        (0, 2): end0[("optimizer shard", "forward")] + 512 * 512 * F32,
        (0, 4): sends + allreduce(2, F32), (4, 0): ahead,
        (7, 6): end7[("tensor", "forward")], (7, 5): end7[("optimizer shard", "forward")] + LOSS_GATHERS,
        (7, 4): 5 * NORM + allreduce(4, F32), (7, 3): ahead + allreduce(2, F32), (7, 0): allreduce(8, F32),
        (3, 7): sends}
    assert cells(at_end)[(0, 1)] == 1_585_165



def test_the_rank_matrix_at_validate(whole):
    """Derived before it was run, from the groups the module docstring names and the ring rule of
    ``cost`` (a ring collective sends all its wire bytes to the next rank of its group's sorted
    list; a Send to its peer; a Receive is its sender's send where the sender was not read: ranks
    3 and 4 are not in the dump). The runs a step are those of the by-(axis, phase) totals (WHOLE:
    4 for each collective of a ``▸`` / ``◂`` chunk graph, once for the top graph's).

    Rank 0 (stage 0-3):
    - tensor pair {0, 1}, successor 1: every tensor byte, forward (embedding, wo / w2, the
      recompute copies of wo's) and backward (their bprops): WHOLE's tensor rows.
    - the stage {0, 1, 2, 3}, successor 1: the 4 RMSNorm mirrors (data, backward, 4 x NORM) and
      the global norm within the stage (data+tensor, optimizer); the world {0 .. 7}, successor 1:
      the overflow flag (pipeline+data+tensor).
    - data pair {0, 2}, successor 2: the optimizer shard's gathers (forward) and scatters
      (backward), and the embedding table's mirror, allreduce(2, (512, 512) float32) = 1,048,576.
    - its pipeline peer 4 (group (0, 4)): the forward's 2 Sends a micro-batch (layers 0's and 2's
      outputs, ``{instance name: Send}``, validate lines 278 .. 537: 8) and the backward's 1 (the
      gradient of layer 1's output, ``send_out``, ``dtype: Tensor(F16)``, lines 408, 456, 558,
      579: 4): 12 x HOP = PIPELINE; and the global norm between the stages, {0, 4}, successor 4.
    - 4 -> 0, rank 0's Receives: 1 a micro-batch forward (lines 299, 317, 447, 498) and 2 backward
      (``dx``, lines 361 .. 606: 8): 12 x HOP = PIPELINE.
    Rank 7 (stage 4-7):
    - tensor pair {6, 7}, successor 6 (the list wraps): WHOLE's tensor rows (wo / w2, recompute,
      the loss's three sums; the bprops).
    - data pair {5, 7}, successor 5: optimizer shard both phases (lm_head's slice with them), the
      loss's and mask's gathers (data, forward) and the loss gather's bprop, a ReduceScatter over
      the same pair (LOSS_SCATTER).
    - the stage {4, 5, 6, 7}, successor 4: the 5 RMSNorm mirrors (norm_out's with them) and the
      norm within the stage; the world, successor 0 (wraps): the overflow flag.
    - its peer 3 (group (3, 7)): 1 Send a micro-batch forward (lines 323, 347, 492, 571) and 2
      backward (``send_out``, lines 412 .. 774: 8): 12 x HOP = PIPELINE, and the norm between the
      stages ({3, 7}, successor 3); 3 -> 7, rank 7's Receives: 2 forward + 1 backward a
      micro-batch (8 + 4 lines): PIPELINE.
    """
    w0, w7 = WHOLE[0], WHOLE[7]
    stage, between, world = (OPTIMIZER[("data+tensor", "optimizer")], OPTIMIZER[("pipeline", "optimizer")],
                             OPTIMIZER[("pipeline+data+tensor", "optimizer")])
    assert (2 + 1) * MICRO * HOP == PIPELINE
    assert cells(whole) == {
        (0, 1): w0[("tensor", "forward")] + w0[("tensor", "backward")] + 4 * NORM + stage + world,
        (0, 2): (w0[("optimizer shard", "forward")] + w0[("optimizer shard", "backward")]
                 + allreduce(2, 512 * 512 * F32)),
        (0, 4): PIPELINE + between, (4, 0): PIPELINE,
        (7, 6): w7[("tensor", "forward")] + w7[("tensor", "backward")],
        (7, 5): (w7[("optimizer shard", "forward")] + w7[("optimizer shard", "backward")] + w7[("data", "forward")]
                 + LOSS_SCATTER),
        (7, 4): 5 * NORM + stage, (7, 3): PIPELINE + between, (3, 7): PIPELINE, (7, 0): world}
    # by hand: 2,097,152 + 1,572,864 + 12,288 + 6 + 7; 3,670,016 + 7,340,032 + 2,048 + 1,024
    assert cells(whole)[(0, 1)] == 3_682_317 and cells(whole)[(7, 5)] == 11_013_120

@pytest.mark.parametrize("read", ["whole", "at_end"])
def test_memory_per_rank(read, request):
    rows = memory_per_rank(request.getfixturevalue(read))
    assert sorted(rows["rank"]) == list(KEPT)
    for row in rows.to_dict("records"):
        weights, count, gradients, states = MEMORY[row["rank"]]
        assert (row["weights"], row["weight_count"], row["gradients"], row["states"]) == (
            weights, count, gradients, states)
        assert row["gradients_from"] == "accumulation buffers (accu_grads)"
