"""Cost per step of zoo 18, MindSpore's pipeline-parallel documentation sample
(``fixtures/zoo/nets/18_doc_pipeline_parallel.py``), derived by hand before msinspect read it.

From the script, its docstring (strategies and layouts) and MindSpore's definitions; ranks kept:
0 (stage 0) and 5 (stage 1); float32 everywhere (4 bytes); wire bytes as docs/comm.md: ring
AllReduce 2(n-1)/n S, Send / Receive S.

- 8 ranks, ``pipeline_stages=2``: stage 0 = ranks 0-3 (flatten, layer1, relu1, layer2), stage 1 =
  ranks 4-7 (relu2, layer3, the loss). Pipeline peers r <-> r + 4 (rank 1 <-> rank 5).
- No ``shard()``: every operator takes the batch strategy over its stage's 4 ranks; no weight is
  cut (tensor axis: nothing). No ``full_batch``: a rank's 32 rows are its share of a global 128,
  cut by ``PipelineCell`` into 4 micro-batches of 32 global rows, 8 at a rank.
- pipeline, forward: layer2's output crosses to stage 1 once a micro-batch, (8, 512) at the rank =
  16,384 bytes: rank 0 Sends 4 to rank 4, rank 5 Receives 4 from rank 1: 65,536 each.
- pipeline, backward: the gradient of that activation goes back the same way: rank 5 Sends 4 x
  16,384 to rank 1, rank 0 Receives 4 x 16,384 from rank 4: 65,536 each. (Built by the autodiff
  after the parallel pass: at step_parallel_end it is in no line of the file.)
- data, backward (the mirrors: each weight's gradient, accumulated over the 4 micro-batches,
  summed once a step over the stage's 4 ranks, all of which hold it whole): rank 0 layer1.param
  (784, 512) 1,605,632 + layer2.weight (512, 512) 1,048,576 + layer2.bias (512,) 2,048 =
  2,656,256 bytes, 2 * 3/4 of it = 3,984,384 (3 operators); rank 5 layer3.weight (10, 512)
  20,480 + layer3.bias (10,) 40 = 20,520, 2 * 3/4 = 30,780 (2 operators).
- data, forward (stage 1 only): nn.CrossEntropyLoss of class indices is ``nll_loss(log_softmax)``
  (MindSpore's ``ops/function/nn_func.py`` ``_nll_loss``, reduction mean, ignore_index -100,
  label_smoothing 0): ``loss.sum()``, ``smooth_loss.sum()`` and ``loss_weights.sum()`` (written
  twice, the same node after CSE) reduce the rows, cut in 4: three partial scalars a micro-batch,
  each an AllReduce of 4 bytes over {4, 5, 6, 7}: 2 * 3/4 * 4 = 6 bytes; 12 a step: 72 bytes.
  First derivation: their bprop adds no AllReduce (as zoo 01's loss_mean in test_cost.py). The IR
  has two a micro-batch (rank 5 validate line 1036 ``%45(dx) = AllReduce(%44) {instance name:
  gradforward_op_...}`` under ``Gradients/Default/Grad_AllReduce``, from nn_func.py:4546 ``loss =
  loss.sum() / loss_weights.sum()``, and line 1235 from 4547, ``smooth_loss``): MindSpore's bprop
  of AllReduce(sum) is an AllReduce of dout (grad_comm_ops.py:87), and here dout is
  1 / loss_weights.sum(), not zoo 01's constant sens; ``loss_weights.sum()`` has none, as nothing
  differentiable reaches it (``ones_like``). The IR is right: backward data + 8 x 6 = 48 bytes.
- data, forward, the inputs (missed by the first derivation, found at rank 0 validate line 74):
  the dataset hands each rank its 32 rows of the stage's 128, but a micro-batch is 32 consecutive
  global rows cut in 4, so MindSpore gathers the whole input once a step, ``AllGather`` of the
  image (32, 28, 28) -> (128, 28, 28) over {0, 1, 2, 3}: 3 x 100,352 = 301,056 bytes at rank 0;
  at rank 5 the label (32,) int32 -> (128,) over {4, 5, 6, 7} (line 473): 3 x 128 = 384 bytes. The
  IR is right: the micro-batch split redistributes the batch dimension.
- optimizer: SGD, no optimizer parallel: no collective.

The rank matrix (ring to the next rank of the group; a Receive counts from its sender only where
that sender was not read: ranks 1 and 4 were not): 0 -> 1 the mirrors and the image's gather
3,984,384 + 301,056; 0 -> 4 the forward Sends 65,536; 4 -> 0 (rank 0's Receives) 65,536; 5 -> 6
mirrors, loss sums, their bprops and the label's gather 30,780 + 72 + 48 + 384; 5 -> 1 the backward Sends 65,536; 1 -> 5 (rank 5's Receives) 65,536.

At step_parallel_end (a dump without validate): the forward Sends / Receives as above, the
mirrors as backward data (they stand in the forward graph there), and the rest of the backward,
the pipeline's Sends / Receives back and the loss sums' bprops, "cannot tell" with the reason, never
0. The file is read before MindSpore merges equal nodes (CSE, after the parallel pass): each
micro-batch still has its own gather of the input (4 a rank: rank 0 lines 56, 148, 267, 384, each
``Reshape(%1, (I64(32), I64(28), I64(28)))`` then ``AllGather``; validate keeps one, marked
``comm_reuse``) and ``loss_weights.sum()`` twice (4 sums a micro-batch, 16). The copies have the
same primitive, attributes and inputs, so CSE keeps the first of each: the step runs what
validate holds, and the cost counts that (comm's ``merged_into``, 0 runs for the copies; msinspect
first counted every copy). So there: rank 0 data forward 1 x 301,056; rank 5 384 + 12 x 6. The gather prints ``(<null>)`` there; its input at the
rank is the redistribution Reshape's literal shape, (32, 28, 28) float32 (msinspect read it as
"cannot tell" until comm.py's ``_stated_at_rank``).

Memory per rank (docs/cost.md "Static memory", the weights as the file holds them): rank 0 holds
its stage's layer1.param, layer2.weight and layer2.bias whole: 2,656,256 bytes, 3 weights; rank 5
layer3.weight and layer3.bias: 20,520 bytes, 2. nn.SGD clones ``accum`` and ``stat`` of each
(test_cost.py: states twice the weights, states_expected 0); nn.PipelineGradReducer clones
``accu_grads`` of each: the gradients are those buffers, the weights' size again.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import (allreduce, assert_backward_untold, cells, operators, said_without_validate,
                                         split, told_by_command)
from tests.conftest import FIXTURES

ZOO18 = FIXTURES / "zoo" / "18_doc_pipeline_parallel"
ACTIVATION = 8 * 512 * 4          # layer2's output a micro-batch at the rank
MICRO = 4
STAGE0_MIRRORS = allreduce(4, (784 * 512 + 512 * 512 + 512) * 4)
STAGE1_MIRRORS = allreduce(4, (10 * 512 + 10) * 4)
LOSS_SUMS = 3 * MICRO * allreduce(4, 4)
LOSS_BPROPS = 2 * MICRO * allreduce(4, 4)
IMAGE_GATHER = 3 * 32 * 28 * 28 * 4
LABEL_GATHER = 3 * 32 * 4

RANK0 = {("pipeline", "forward"): MICRO * ACTIVATION, ("pipeline", "backward"): MICRO * ACTIVATION,
         ("data", "forward"): IMAGE_GATHER, ("data", "backward"): STAGE0_MIRRORS}
RANK5 = {("pipeline", "forward"): MICRO * ACTIVATION, ("pipeline", "backward"): MICRO * ACTIVATION,
         ("data", "forward"): LABEL_GATHER + LOSS_SUMS, ("data", "backward"): STAGE1_MIRRORS + LOSS_BPROPS}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO18), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO18), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert STAGE0_MIRRORS == 3_984_384 and STAGE1_MIRRORS == 30_780 and LOSS_SUMS == 72 and LOSS_BPROPS == 48
    assert IMAGE_GATHER == 301_056 and LABEL_GATHER == 384
    assert MICRO * ACTIVATION == 65_536


def test_the_whole_step_by_axis_and_phase(whole):
    assert split(whole, 0) == RANK0
    assert split(whole, 5) == RANK5
    assert operators(whole, 0)[("data", "backward")] == 3
    assert operators(whole, 5)[("data", "backward")] == 2 + 8
    assert operators(whole, 5)[("data", "forward")] == 1 + 12
    assert operators(whole, 0)[("data", "forward")] == 1
    assert operators(whole, 0)[("pipeline", "forward")] == operators(whole, 0)[("pipeline", "backward")] == MICRO


def test_the_rank_matrix(whole):
    assert cells(whole) == {(0, 1): STAGE0_MIRRORS + IMAGE_GATHER, (0, 4): MICRO * ACTIVATION, (4, 0): MICRO * ACTIVATION,
                            (5, 6): STAGE1_MIRRORS + LOSS_SUMS + LOSS_BPROPS + LABEL_GATHER, (5, 1): MICRO * ACTIVATION,
                            (1, 5): MICRO * ACTIVATION}


def test_at_step_parallel_end_the_backward_cannot_tell(at_end):
    assert split(at_end, 0) == {("pipeline", "forward"): MICRO * ACTIVATION, ("data", "forward"): IMAGE_GATHER,
                                ("data", "backward"): STAGE0_MIRRORS, ("cannot tell", "backward"): None}
    assert split(at_end, 5) == {("pipeline", "forward"): MICRO * ACTIVATION,
                                ("data", "forward"): LABEL_GATHER + 3 * MICRO * allreduce(4, 4),
                                ("data", "backward"): STAGE1_MIRRORS, ("cannot tell", "backward"): None}
    assert_backward_untold(at_end, (0, 5))


def test_memory_per_rank(whole):
    rows = memory_per_rank(whole).set_index("rank")
    for rank, weights, count in ((0, 2_656_256, 3), (5, 20_520, 2)):
        row = rows.loc[rank]
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("SGD", weights, count)
        assert (row["states"], row["states_expected"], row["gradients"]) == (2 * weights, 0, weights)
        assert row["gradients_from"].startswith("accumulation")


def test_the_command_reads_the_whole_step_by_default():
    assert told_by_command(ZOO18) == {0: RANK0, 5: RANK5}


def test_the_command_without_validate_says_why(tmp_path):
    said = said_without_validate(ZOO18, tmp_path)
    assert "backward cannot tell" in said and NO_BACKWARD.format(stage="step_parallel_end") in said
