"""Cost per step of zoo 16, MindFormers 2.0.0's ``LlamaForCausalLM`` on 256 ranks
(``fixtures/zoo/nets/16_mf_llama_256.py`` and ``mf_llama.py``), derived by hand before msinspect
read it; where the IR showed the first derivation wrong, the correction is written beside it with
the line.

From the scripts, their docstrings, zoo 12's (the same model at dp 2 x mp 4: the strategies with
MindFormers' sources), MindSpore's records beside each rank (``parameter_layout_0.json``: every
weight's device matrix (32, 8) and slice) and MindSpore's definitions. Ranks kept: 0, 131, 255
(one stage: no pipeline). Wire bytes as docs/comm.md: ring AllReduce 2(n-1)/n S (whole bytes,
rounded down), AllGather (n-1) S_in, ReduceScatter (n-1)/n S_in.

The job: ``TransformerOpParallelConfig(data_parallel=32, model_parallel=8, vocab_emb_dp=False)``,
no pipeline (``pipeline_stages`` 1, micro_batch_num 1), no optimizer parallel (``mf_llama.start``
default), full batch, global batch 32 x sequence 64 = 2048 rows, 2048 / 32 = 64 at a rank.
Device matrix (32, 8), rank = 8 dp_index + mp_index: tensor group of r 8 (r // 8) .. + 7 (0-7,
128-135, 248-255), data group r % 8 + 8k (0, 8, .., 248; 3, 11, .., 251; 7, 15, .., 255), and the
world 0-255. Weights float32, compute float16 (each Linear casts x and its weight to float16), the
embedding and the loss float32.

Forward, a layer (2 layers; every rank alike):
- wq, wk, wv, w1, w3 ((32, 1), (8, 1)): column parallel, the input whole at the rank: nothing.
- wo ((32, 8), (1, 8)), out_strategy ((32, 1),), and w2 ((32, 8), (1, 8)) contract the dimension
  cut 8: their (2048, 512) output is a partial sum, rows cut 32: (64, 512) float16 = 65,536 bytes,
  AllReduced over the tensor group: 2 x 7/8 x 65,536 = 114,688 each, 2 a layer.
- attention (heads cut 8, batch 32: BatchMatMuls, softmax, rotary by slices, the causal mask by
  dp only) and the RMSNorms ((32, 1, 1)): local.
Forward, outside the layers:
- the embedding Gather ((8, 1), (32, 1)) (MindSpore's GatherInfo "SHARD_BATCH_AND_AXIS", zoo 12):
  each rank looks up its eighth of the table for its (1, 64) ids; the (1, 64, 512) float32 =
  131,072 bytes are summed over the tensor group: 2 x 7/8 x 131,072 = 229,376.
- lm_head ((32, 1), (8, 1)): logits (64, 128) at the rank, local.
- the loss (MindFormers' ``CrossEntropyLoss``, core/loss/loss.py): ``_LogSoftmax`` casts to
  float32, its ReduceMax ((32, 8),) and the ReduceSum of the exponentials ((32, 8),) reduce the
  vocabulary cut 8: AllReduce of (64, 1) float32 = 256 bytes over the tensor group, 448 each;
  ``_NLLLoss``'s ReduceSum ((32, 8),) over the vocabulary: (64,) float32, 448. 3 operators.
- the loss then sums the masked per-token losses with ``sum2`` / ``mul2`` of strategy ``(1,)``:
  whole on every rank. The per-token loss (2048,), cut 32, is gathered over the data group:
  AllGather of (64,) float32 = 256 bytes, 31 x 256 = 7,936; the input mask (2048,), cut 32 as
  the tokens are, likewise 7,936. First derivation: the mask has two readers (``mul2`` and
  ``sum2``), a gather for each edge at step_parallel_end, one after CSE at validate. The IR has
  one at both (rank 0 step_parallel_end line 9166): MindSpore gathers the (32, 64) mask once, at
  ``Cast(NotEqual(tokens))`` (NotEqual ((32, 1), ()), the Cast no strategy: (1, 64) at the
  rank), before LlamaForCausalLM's Reshape that both readers share. msinspect first could not
  size it there (a Cast with no strategy between the gather and the strategy): fixed in comm.py.
Tensor forward: 229,376 + 4 x 114,688 + 3 x 448 = 689,472, 8 operators. Data forward: 2 x 7,936
= 15,872, 2 operators.

Backward (the gradient graph, validate only):
- tensor: MindSpore's bprop of an AllReduce is an AllReduce of dout (grad_comm_ops.py; zoo 01, 18):
  one for each forward AllReduce whose input a weight's gradient needs: the embedding's (float32,
  229,376), wo's and w2's (float16, 4 x 114,688). First derivation also had the three loss sums'
  (3 x 448). The IR has none (rank 0 validate: the forward ones at lines 5900, 5964, 6250, no
  ``grad`` AllReduce of them): MindFormers' ``_NLLLoss`` has its own ``bprop`` (loss.py:140-146,
  IR line 6434: ``softmax_result = P.Exp()(log_softmax_result)``, ``logits = softmax_result -
  one_hot_label``, times dout and ``repeat_loss``), the logits' gradient computed at the rank
  from the forward's results, and the gradient graph holds no node of ``_LogSoftmax``. The IR is
  right. 688,128, 5 operators.
- data: the per-token loss's gather has a bprop, a ReduceScatter of (2048,) float32 over the data
  group, 31/32 x 8,192 = 7,936; the mask's has none (its gradient reaches no weight: pruned, as zoo
  18's ``loss_weights.sum()``).
- data, the mirrors (each weight's gradient, float32, summed over the ranks holding the same
  slice, parameter_layout_0.json): over the data group of 32, 2 x 31/32 x S: a layer's wq, wk, wv
  (64, 512) and wo (512, 64), 131,072 bytes each, w1, w3 (192, 512) and w2 (512, 192), 393,216
  each: 1,703,936 a layer, 3,407,872 for both; lm_head and the embedding table (128, 512), 262,144
  each: S = 3,932,160, wire 7,618,560, 16 operators. Over the world (the RMSNorm weights (512,),
  whole on all 256: 2 a layer and norm_out, 5): 2 x 255/256 x 2,048 = 4,080 each, 20,400.
  Backward data: 7,618,560 + 20,400 + 7,936 = 7,646,896, 22 operators.
Optimizer (MindFormers' AdamW, no optimizer parallel: no gather, no scatter):
- gradient clipping's global norm (``ClipGradNorm``; zoo 13's ``PARALLEL_GLOBALNORM_IN_STAGES``):
  the sum of squares, a float32 scalar, AllReduced over the stage, all 256: 2 x 255/256 x 4 = 7;
- the loss scale's overflow flag (zoo 12, test_cost_loss_scale.py): a float32 scalar over the
  world: 7. Both over every rank of the (32, 8) matrix: axis data+tensor, 14 bytes, 2 operators.

At step_parallel_end (no validate beside it): the forward as above, the mirrors as backward data
(7,638,960, 21 operators), the optimizer's two AllReduces, and the rest of the backward "cannot
tell" with the reason, never 0. One size the file does not print at the rank: the embedding's
AllReduce (rank 0 line 3248, ``(<null>) -> (<null>)``: the parallel pass's own replacement of the
Gather, whose shapes it has not inferred; its input is a Mul of the Gather's output and a mask,
none with a shape). msinspect first said "cannot tell" there; the chain tells it. MindSpore's
``gather_info.cc`` replaces a Gather whose table is cut along the gathered axis (here the rows,
8 ways over the tensor group; the ids' batch 32 ways over the data group: lines 3218-3245) by the
same steps on every rank's slices: its ids, the tokens (32, 64) int32 cut (32, 1) by ``slice``
(line 3205, ``in_strategy: ((32, 1))``): (1, 64); shifted by its slice's first row (``Sub``, 128 x
its tensor index: 0 at rank 0), clamped into the slice (``ReLU``, ``Minimum`` 127: (1, 64)),
looked up in its (128, 512) float32 slice of the (1024, 512) table (vocabulary 1024 / 8; the
columns whole: ``Gather`` axis 0 gives the ids' shape then the table's other dimensions): (1, 64, 512);
the ids that fell outside the slice zeroed by a mask (``Equal`` of the shifted and clamped ids,
``Cast`` to the table's type, ``ExpandDims`` -1: (1, 64, 1)); ``Mul``: (1, 64, 512) float32 =
131,072 bytes, summed over the tensor group, 2 x 7/8 x 131,072 = 229,376, the size validate
prints (rank 0 validate line 176). So every size is told at step_parallel_end, and the tensor forward total is
validate's 689,472, 8 operators. msinspect first left the global norm's "cannot tell" too (line 1689,
``(<Tensor[Float32], (1)>)``, a shape the same pass also prints for tensors it has not inferred:
zoo 13's Cast of a (384, 512) weight, step_parallel_end line 6720, ``-> (<Tensor[Float32],
(1)>)``); the global norm's sum is one element at every rank by MindSpore's construction (the sum
of the squares the rank holds: ``SumExt(..., ())`` then ``ExpandDims``, line 1662): fixed in
comm.py.

The rank matrix (ring: a rank sends its wire bytes to the next rank of the group's sorted list):
rank 0 -> 1 (tensor group and world), 0 -> 8 (data group); 131 -> 132, 131 -> 139; 255 -> 248
(tensor group), 255 -> 7 (data group), 255 -> 0 (world). Tensor: 689,472 + 688,128 = 1,377,600;
world: 20,400 + 14 = 20,414; data group: 7,618,560 + 15,872 + 7,936 = 7,642,368.

Memory per rank (docs/cost.md "Static memory"; every rank alike, parameter_layout_0.json's slices,
float32): the embedding and lm_head (128, 512), 262,144 each; a layer 2 RMSNorm weights 2 x 2,048,
wq, wk, wv, wo 4 x 131,072, w1, w2, w3 3 x 393,216: 1,708,032, 3,416,064 for 2; norm_out 2,048:
3,942,400 bytes, 21 weights. AdamW: two states a weight (``adam_m``, ``adam_v``, laid out as the
weight): 7,884,800; gradients one per weight (no accumulation, no shard): 3,942,400. msinspect
first said "cannot tell: no optimizer update found": MindFormers' AdamW is written in Python and
updates each weight with ``Assign`` (rank 0 validate line 15407, ``PrimFunc_Assign(
%para221_model.tok_embeddings.embedding_weight, ...)``, scope ``optimizer-AdamW``), no update
primitive, and names its states ``optimizer.adam_m.<weight>``. The Assign's scope names the
optimizer's cell, ``AdamW``, whose definition keeps two float32 states a weight
(``AdamW.clone_state``): ``states_expected`` 7,884,800 (``test_memory_adamw.py``).

What ``explain`` should say of rank 131 (dp_index 16, mp_index 3; tensor group 128-135, data group
3, 11, .., 251), at validate, from the same facts (written before explain read zoo 16):
- its AllReduces of kind gradient are the 21 mirrors, each named after its weight, each over the
  ranks holding the same slice: 16 over its data group, the 5 RMSNorm weights over the world;
  predicted and read groups alike, nothing "cannot tell";
- the forward AllReduces over its tensor group, 8 parts each: the embedding's (a sum: each rank
  looked up its eighth of the table's rows), wo's and w2's (sums of partial products, 4), the
  loss's ReduceMax (a max) and its two sums over the vocabulary: 8 operator runs, one max;
- the global norm: a sum of scalars over the world, 256 parts, no dimension;
- its two AllGathers (the per-token loss and the mask) gather dimension 0 from 32 parts over its
  data group; the ReduceScatter (the first's bprop) sums and scatters dimension 0 in 32.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD
from msinspect.analysis.job.cost_tables import comm_costs
from msinspect.analysis.explain.answers import explain
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import (allreduce, assert_backward_untold, cells, operators, said_without_validate,
                                         split, told_by_command)
from tests.conftest import FIXTURES

ZOO16 = FIXTURES / "zoo" / "16_mf_llama_256"
KEPT = (0, 131, 255)
F16, F32 = 2, 4
ROWS = 64                                       # 2048 rows / dp 32
TP, DP, WORLD = 8, 32, 256

ROW_PARALLEL = allreduce(TP, ROWS * 512 * F16)  # wo, w2: (64, 512) float16 partial sums
EMBEDDING = allreduce(TP, ROWS * 512 * F32)     # the Gather's (1, 64, 512) float32 over the table's rows
LOSS_SUM = allreduce(TP, ROWS * F32)            # ReduceMax, the exponentials' sum, the NLL sum
TENSOR_FORWARD = EMBEDDING + 2 * 2 * ROW_PARALLEL + 3 * LOSS_SUM
TENSOR_BACKWARD = EMBEDDING + 2 * 2 * ROW_PARALLEL  # _NLLLoss's own bprop: no loss sum's
LOSS_GATHER = (DP - 1) * ROWS * F32             # a (64,) float32 slice gathered over 32
LOSS_SCATTER = (DP - 1) * DP * ROWS * F32 // DP  # its bprop: (2048,) reduce-scattered over 32
LAYER_MIRRORED = 4 * 64 * 512 * F32 + 3 * 192 * 512 * F32
DATA_MIRRORS = allreduce(DP, 2 * LAYER_MIRRORED + 2 * 128 * 512 * F32)
WORLD_MIRRORS = 5 * allreduce(WORLD, 512 * F32)
SCALAR = allreduce(WORLD, F32)                  # the global norm, the overflow flag

LAYER = ("attention.wq", "attention.wk", "attention.wv", "attention.wo", "feed_forward.w1", "feed_forward.w2",
         "feed_forward.w3")
NORMS = ("attention_norm", "ffn_norm")
MIRRORED = {f"model.layers.{i}.{w}.weight" for i in (0, 1) for w in LAYER} | {
    "model.tok_embeddings.embedding_weight", "lm_head.weight"}
WHOLE = {f"model.layers.{i}.{n}.weight" for i in (0, 1) for n in NORMS} | {"model.norm_out.weight"}
WEIGHTS = 2 * 128 * 512 * F32 + 2 * (2 * 512 * F32 + LAYER_MIRRORED) + 512 * F32

RANK = {("tensor", "forward"): TENSOR_FORWARD, ("tensor", "backward"): TENSOR_BACKWARD,
        ("data", "forward"): 2 * LOSS_GATHER, ("data", "backward"): DATA_MIRRORS + WORLD_MIRRORS + LOSS_SCATTER,
        ("data+tensor", "optimizer"): 2 * SCALAR}
RUNS = {("tensor", "forward"): 1 + 4 + 3, ("tensor", "backward"): 1 + 4, ("data", "forward"): 2,
        ("data", "backward"): 16 + 5 + 1, ("data+tensor", "optimizer"): 2}
# the ring's next rank: of the tensor group, of the data group, of the world
NEXT = {0: (1, 8, 1), 131: (132, 139, 132), 255: (248, 7, 0)}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO16), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO16), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert (ROW_PARALLEL, EMBEDDING, LOSS_SUM) == (114_688, 229_376, 448)
    assert (TENSOR_FORWARD, TENSOR_BACKWARD) == (689_472, 688_128)
    assert LOSS_GATHER == LOSS_SCATTER == 7_936
    assert LAYER_MIRRORED == 1_703_936 and DATA_MIRRORS == 7_618_560 and WORLD_MIRRORS == 20_400
    assert DATA_MIRRORS + WORLD_MIRRORS + LOSS_SCATTER == 7_646_896
    assert SCALAR == 7
    assert WEIGHTS == 3_942_400


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in KEPT:
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == RUNS


def test_the_rank_matrix(whole):
    expected = {}
    for rank, (tensor, data, world) in NEXT.items():
        expected[(rank, tensor)] = expected.get((rank, tensor), 0) + TENSOR_FORWARD + TENSOR_BACKWARD
        expected[(rank, data)] = DATA_MIRRORS + 2 * LOSS_GATHER + LOSS_SCATTER
        expected[(rank, world)] = expected.get((rank, world), 0) + WORLD_MIRRORS + 2 * SCALAR
    assert expected[(0, 1)] == 1_377_600 + 20_414 and expected[(255, 0)] == 20_414
    assert cells(whole) == expected


def test_at_step_parallel_end_the_backward_cannot_tell(at_end):
    for rank in KEPT:
        assert split(at_end, rank) == {("tensor", "forward"): TENSOR_FORWARD, ("data", "forward"): 2 * LOSS_GATHER,
                                       ("data", "backward"): DATA_MIRRORS + WORLD_MIRRORS,
                                       ("data+tensor", "optimizer"): 2 * SCALAR, ("cannot tell", "backward"): None}
        assert operators(at_end, rank)[("data", "backward")] == 16 + 5
    assert_backward_untold(at_end, KEPT)


def test_at_step_parallel_end_every_size_is_told(at_end):
    """The embedding's AllReduce through the Gather's replacement chain, every other size as at
    validate (the global norm's and the overflow flag's 7 bytes; the 7 row-parallel and loss sums)."""
    costs, rows = comm_costs(at_end), at_end.comm()
    for rank in KEPT:
        mine = costs[costs["rank"] == rank]
        assert mine["step_bytes"].notna().all()
        named = rows[(rows["rank"] == rank) & (rows["name"] == "5323172883814874878AllReduce11")]
        (embedding,) = named.to_dict("records")
        assert (tuple(embedding["shape"]), embedding["dtype"]) == ((1, ROWS, 512), "Float32")
        assert (embedding["tensor_bytes"], embedding["wire_bytes"]) == (ROWS * 512 * F32, EMBEDDING)
        told = mine[mine["axis"] == "tensor"]
        assert sorted(told["step_bytes"]) == [LOSS_SUM] * 3 + [ROW_PARALLEL] * 4 + [EMBEDDING]
        assert list(mine[mine["phase"] == "optimizer"]["step_bytes"]) == [SCALAR, SCALAR]


def test_what_explain_says_of_rank_131(whole):
    tensor, data, world = tuple(range(128, 136)), tuple(range(3, 256, 8)), tuple(range(WORLD))
    found = explain(whole, "type:AllReduce", rank=131)
    mirrors = [e for e in found if e.kind == "gradient"]
    named = sorted(e.headline.split("same slice of ")[1].split(" ")[0] for e in mirrors for _ in e.lines)
    assert named == sorted(MIRRORED | WHOLE)
    for e in mirrors:
        held_whole = e.headline.split("same slice of ")[1].split(" ")[0] in WHOLE
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == (world if held_whole else data)
        assert not e.cannot_tell
    forward = [e for e in found if e.kind == "forward" and tuple(e.group_ranks) == tensor]
    assert sorted((e.action, e.parts) for e in forward for _ in e.lines) == [("max", 8)] + [("sum", 8)] * 7
    assert all(tuple(e.predicted_group) == tensor and not e.cannot_tell for e in forward)
    assert sum("cuts its table" in e.headline for e in forward) == 1
    (norm,) = [e for e in found if "global norm" in e.headline]
    assert (norm.action, norm.dims, norm.parts, tuple(norm.group_ranks)) == ("sum", (), WORLD, world)
    gathers = explain(whole, "type:AllGather", rank=131)
    assert [(e.action, e.dims, e.parts, tuple(e.group_ranks)) for e in gathers for _ in e.lines] == [
        ("gather", (0,), DP, data)] * 2
    (scatter,) = explain(whole, "type:ReduceScatter", rank=131)
    assert (scatter.action, scatter.dims, scatter.parts, tuple(scatter.group_ranks)) == ("sum", (0,), DP, data)


@pytest.mark.parametrize("read", ["whole", "at_end"])
def test_memory_per_rank(read, request):
    """The same at step_parallel_end: the parameters are cut in place there already."""
    rows = memory_per_rank(request.getfixturevalue(read))
    assert sorted(rows["rank"]) == list(KEPT)
    for row in rows.to_dict("records"):
        assert (row["weights"], row["weight_count"]) == (WEIGHTS, 21)
        assert (row["states"], row["gradients"], row["gradients_from"]) == (2 * WEIGHTS, WEIGHTS, "one per weight")
        # the Assigns' cell names the optimizer: AdamW keeps two float32 states a weight
        assert (row["optimizer"], row["states_expected"]) == ("AdamW", 2 * WEIGHTS)


def test_the_command_reads_the_whole_step_by_default():
    assert told_by_command(ZOO16) == {rank: RANK for rank in KEPT}


def test_the_command_without_validate_says_why(tmp_path):
    said = said_without_validate(ZOO16, tmp_path)
    assert "backward cannot tell" in said and NO_BACKWARD.format(stage="step_parallel_end") in said
