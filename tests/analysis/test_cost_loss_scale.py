"""The loss-scale overflow AllReduce (issue 39): kind ``loss-scale``, phase optimizer.

By hand, from the sources. Zoo 12 (``fixtures/zoo/nets/12_mf_llama_tp8.py``, dp 2 x mp 4 on 8
ranks) trains with MindFormers' ``MFTrainOneStepCell(..., scale_sense=1.0)``
(``fixtures/zoo/nets/mf_llama.py``, ``train``); zoo 13 (2 pipeline stages of 4) with
``MFPipelineWithLossScaleCell``. Both call ``self.get_overflow_status(status, grads)``
(mindformers/wrapper/wrapper.py), inherited from MindSpore's ``TrainOneStepWithLossScaleCell``
(``mindspore/nn/wrap/loss_scale.py``): on GPU (the dry run's target) ``_get_gpu_overflow_status``
-> ``_get_distributed_overflow_status_on_infnan_mode``, which sums each gradient's overflow flag
(``hyper_map(_grad_overflow)``, ``AddN``, ``Reshape`` to ``()``: one float32 scalar) and, since
the job is distributed, ``flag_reduce = self.allreduce(flag_sum)`` with ``self.allreduce =
ops.AllReduce()``: op sum over the world group (no group given), here all 8 ranks, across both
pipeline stages in zoo 13. Its result feeds ``less_equal(self.base, flag_reduce)``: whether the
step overflowed on any device, so that every device skips or takes the optimizer's update
together. It runs after the backward, for the update: phase ``optimizer``, never forward.

Bytes per rank: a float32 scalar is 4 bytes; ring AllReduce over n = 8: 2 (n - 1) / n * 4 =
2 * 7 / 8 * 4 = 7 bytes on the wire, once a step.

At validate the comm-op reuse pass (``comm_reuse``) lets other AllReduces print the same
primitive's instance name ``allreduce``: zoo 14's embedding AllReduce over its tensor group
(its embedding output, global batch 2 x sequence 64 = 128 rows by hidden 512, float32: 262,144
bytes a rank, not a scalar) is one, and is no loss-scale check.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.rank.comm import comm_rows
from msinspect.analysis.rank.context import RankContext
from msinspect.analysis.job.cost import phase_of
from msinspect.parser import parse_file
from msinspect.stages import files_of_stage

from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"


def rows(net: str, stage: str, rank: int = 0, world: int = 8):
    (path,) = files_of_stage(ZOO / net / f"rank_{rank}", stage)
    return comm_rows(parse_file(path), RankContext(rank, world=tuple(range(world))))


def loss_scale(rows_):
    return [r for r in rows_ if r["kind"] == "loss-scale"]


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_zoo12_overflow_allreduce_is_loss_scale_in_the_optimizer_phase(stage):
    found = loss_scale(rows("12_mf_llama_tp8", stage))
    assert len(found) == 1  # one overflow check a step
    (row,) = found
    assert row["op"] == "AllReduce" and row["name"] == "allreduce"
    assert tuple(row["group_ranks"]) == tuple(range(8))  # the world group
    assert row["shape"] == () and row["dtype"] == "Float32" and row["tensor_bytes"] == 4
    assert row["wire_bytes"] == 7
    assert phase_of(row["kind"], row["scope"], row["name"]) == "optimizer"


def test_zoo13_pipeline_overflow_allreduce_spans_both_stages():
    (row,) = loss_scale(rows("13_mf_llama_pp_interleave", "validate"))
    assert tuple(row["group_ranks"]) == tuple(range(8))  # stages 0-3 and 4-7 together
    assert row["wire_bytes"] == 7
    assert phase_of(row["kind"], row["scope"], row["name"]) == "optimizer"


def test_zoo14_reused_name_is_not_a_loss_scale_check():
    # zoo 14: tp 4 on 4 ranks (fixtures/zoo/nets/14_*.py): world group 0-3
    found = rows("14_mf_llama_seq_parallel", "validate", world=4)
    named = [r for r in found if r["op"] == "AllReduce" and r["name"] == "allreduce"]
    checks = loss_scale(found)
    assert len(checks) == 1 and checks[0]["tensor_bytes"] == 4  # the scalar flag only
    others = [r for r in named if r["kind"] != "loss-scale"]
    assert others and all(r["tensor_bytes"] == 262_144 for r in others)
    assert all(phase_of(r["kind"], r["scope"], r["name"]) != "optimizer" for r in others)
