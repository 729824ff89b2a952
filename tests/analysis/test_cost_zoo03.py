"""Cost per step of zoo 03, the GPT stack under ``auto_parallel`` with ``recursive_programming``
on 32 ranks (``fixtures/zoo/nets/03_recursive_programming_32.py``, ``nets/gpt.py``), derived by
hand before msinspect read it.

The planner chooses every strategy. The starting facts are MindSpore's own record of them, the
strategy checkpoint ``rank_0/strategy_0.ckpt`` (MindSpore's protobuf, decoded with
``msinspect.mindspore.records.read_strategy_checkpoint``: its operator strategies as written) and the
layout dictionary ``parameter_layout_0.json`` beside each kept rank (0, 15, 31):

- every operator that takes a weight cuts its first input's rows by 32 and takes the weight whole:
  the MatMuls of wq, wk, wv, wo, w_in, w_out and lm_head ((32, 1), (1, 1)), the LayerNorms
  ((32, 1), (1,), (1,)), ``pos_add`` ((32, 1, 1), (1, 1)), the embedding Gather ((1, 1), (32, 1));
- every weight's layout is device matrix [32], tensor map all -1: whole on every rank, no
  optimizer-shard group. So: pure data parallel over the world, 32 ranks, one device axis.

From the script (gpt.Config(batch=32): V 1024, H 512, 8 heads, S 64, 4 layers, full batch),
float32 (4 bytes), wire bytes as docs/comm.md: ring AllReduce 2(n-1)/n S.

- Rows N = 32 x 64 = 2,048, 64 at a rank: one sequence each. The heads' Reshape (N, H) ->
  (B, S, 8, 64) keeps a rank's rows as its one b; the transposes, the BatchMatMuls, the softmax
  and the residual Adds follow the batch cut: no collective in the blocks (nothing is cut but the
  batch). The inputs (ids (32, 64), one-hot labels (32, 64, 1024)) are whole on every rank (full
  batch): cutting them to the rank's rows is a local slice.
- data, forward: ``loss_ce`` ((32, 1), (32, 1)) keeps the vocabulary whole: local; ``loss_mean``
  reduces the rows cut by 32: an AllReduce of a scalar over the world: 2 x 31/32 x 4 = 7 bytes
  (7.75, whole bytes rounded down). Its bprop: none (the dout is the constant sens, as zoo 01's
  loss_mean in test_cost.py).
- data, backward (the mirrors: each weight's gradient summed over the 32 ranks that hold it
  whole): embedding (1024, 512) 2,097,152; position (64, 512) 131,072; per block ln1 / ln2 gamma
  and beta 4 x 2,048, wq, wk, wv, wo 4 x 1,048,576, w_in (512, 2048) and w_out (2048, 512)
  2 x 4,194,304: 12,591,104, x 4 blocks 50,364,416; head ln_f gamma, beta 4,096 and lm_head
  (512, 1024) 2,097,152. Weights: 54,693,888 bytes, 2 + 4 x 10 + 3 = 45. Each size is a multiple
  of 16, so the 45 AllReduces' 2 x 31/32 x S sum exactly: 31/16 x 54,693,888 = 105,969,408.
- tensor, pipeline, optimizer shard: none (no weight is cut, one stage, no optimizer parallel:
  AdamWeightDecay updates each whole weight where it lies, no collective).
- Axis: the world is the one axis of [32]; no weight is cut along it: data (docs/cost.md).

Every kept rank alike: data forward 7 (1 operator), data backward 105,969,408 (45). The IR agrees
(rank 0 validate: line 2098 ``AllReduce(%156) {instance name: forward_op_...}`` over
``nccl_world_group``, the loss's, and 45 ``grad_mirror_MirrorOperator`` AllReduces, no other
collective; 45 ``_MirrorOperator`` at step_parallel_end).

The rank matrix (ring to the next rank of the world, sorted, wrapping round): 0 -> 1, 15 -> 16,
31 -> 0, each 105,969,408 + 7 = 105,969,415 bytes.

At step_parallel_end (a dump without validate): the loss's AllReduce as above, the 45 mirrors as
backward data (they stand in the forward graph there), and the rest of the backward "cannot tell"
with the reason, never 0 (here the gradient graph holds no collective but the mirrors, which the
file cannot show).

Explanations (``msinspect explain DUMP type:AllReduce`` at validate): 46 AllReduces a rank, the
loss's naming ``loss_mean`` as the operator whose cut reduced dimension leaves partial sums, and
one mirror per weight, each named after its weight (the script's parameter names: ``embed.``
embedding / position, ``blocks.i.`` ln1 / ln2 gamma / beta, ``attention.`` wq / wk / wv / wo,
``ffn.`` w_in / w_out, ``head.`` ln_f gamma / beta, lm_head), never after a gradient MatMul.

Memory per rank (docs/cost.md "Static memory"): the 45 weights whole, 54,693,888 bytes;
AdamWeightDecay clones ``adam_m`` and ``adam_v`` of each: states 109,387,776, the same expected;
gradients one per weight, no optimizer shard: 54,693,888.
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

ZOO03 = FIXTURES / "zoo" / "03_recursive_programming_32"
RANKS = (0, 15, 31)
WORLD = tuple(range(32))
H, V, S, LAYERS = 512, 1024, 64, 4
BLOCK = [4 * H] * 4 + [H * H * 4] * 4 + [H * 4 * H * 4] * 2     # ln1 / ln2 gamma, beta; wq wk wv wo; w_in, w_out
WEIGHTS = [V * H * 4, S * H * 4] + BLOCK * LAYERS + [4 * H] * 2 + [H * V * 4]
LOSS_SUM = allreduce(32, 4)
MIRRORS = sum(allreduce(32, size) for size in WEIGHTS)
RANK = {("data", "forward"): LOSS_SUM, ("data", "backward"): MIRRORS}
NAMES = (["embed.embedding", "embed.position"]
         + [f"blocks.{i}.{name}" for i in range(LAYERS)
            for name in ("ln1_gamma", "ln1_beta", "attention.wq", "attention.wk", "attention.wv", "attention.wo",
                         "ln2_gamma", "ln2_beta", "ffn.w_in", "ffn.w_out")]
         + ["head.ln_f_gamma", "head.ln_f_beta", "head.lm_head"])


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO03), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO03), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert len(WEIGHTS) == 45 and sum(WEIGHTS) == 54_693_888
    assert LOSS_SUM == 7 and MIRRORS == 105_969_408 == 31 * sum(WEIGHTS) // 16


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in RANKS:
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == {("data", "forward"): 1, ("data", "backward"): 45}


def test_every_collective_is_over_the_world(whole):
    costs = comm_costs(whole)
    assert set(costs["group_ranks"]) == {WORLD} and set(costs["op"]) == {"AllReduce"}
    assert costs["bytes_why"].isna().all()


def test_the_rank_matrix(whole):
    assert cells(whole) == {(0, 1): MIRRORS + LOSS_SUM, (15, 16): MIRRORS + LOSS_SUM, (31, 0): MIRRORS + LOSS_SUM}


def test_at_step_parallel_end_the_backward_cannot_tell(at_end):
    for rank in RANKS:
        assert split(at_end, rank) == {**RANK, ("cannot tell", "backward"): None}
        assert operators(at_end, rank)[("data", "backward")] == 45
    assert_backward_untold(at_end, RANKS)


def test_explain_names_the_loss_and_each_mirror_s_weight(whole):
    found = explain(whole, "type:AllReduce", rank=0)
    assert len(found) == 1 + len(NAMES) == 46
    forward = [e for e in found if e.kind == "forward"]
    assert len(forward) == 1 and "loss_mean" in forward[0].headline
    named = sorted(e.headline.split("the same slice of ", 1)[1].split(" ", 1)[0].rstrip(";")
                   for e in found if e.kind != "forward")
    assert named == sorted(NAMES)


def test_memory_per_rank(whole):
    rows = memory_per_rank(whole)
    assert sorted(rows["rank"]) == list(RANKS)
    for row in rows.to_dict("records"):
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("AdamWeightDecay", sum(WEIGHTS), 45)
        assert (row["states"], row["states_expected"], row["gradients"]) == (2 * sum(WEIGHTS),) * 2 + (sum(WEIGHTS),)


def test_the_command_reads_the_whole_step_by_default():
    assert told_by_command(ZOO03) == {rank: RANK for rank in RANKS}


def test_the_command_without_validate_says_why(tmp_path):
    said = said_without_validate(ZOO03, tmp_path)
    assert "backward cannot tell" in said and NO_BACKWARD.format(stage="step_parallel_end") in said
