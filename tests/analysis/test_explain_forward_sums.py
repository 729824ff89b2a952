"""``explain`` of forward sums whose producer or consumer carries no strategy (issue 39, item 5):
the masked lookup of a Gather whose table is cut along the axis it gathers (``gather_info.cc``),
gradient clipping's global norm (the ``PARALLEL_GLOBALNORM_*`` AllReduces MindSpore's parallel pass
adds), and a ReduceMean's sum whose consumer is its own RealDiv. Each expectation is worked out by
hand from the network script, in the comment above it.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.answers import explain

from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
STAGES = ("validate", "step_parallel_end")


def _forward(found):
    return [e for e in found if e.kind == "forward"]


@pytest.mark.parametrize("stage", STAGES)
def test_vocabulary_parallel_lookup_is_summed_over_the_table_rows(stage):
    # Zoo 12 (fixtures/zoo/nets/12_mf_llama_tp8.py): dp 2 x mp 4 on 8 ranks, rank = 4 dp + mp. The
    # embedding Gather ((4, 1), (2, 1)) cuts the table's rows by mp and the ids by dp (GatherInfo
    # "SHARD_BATCH_AND_AXIS", matrix (2, 4)): each rank looks up only the ids in its quarter of the
    # rows, the others masked to zero, and the quarters are summed over the ranks of one dp, the
    # tensor group {0, 1, 2, 3} for rank 0: one AllReduce(sum), 4 parts.
    analysis = analyse(msinspect.load_dump(ZOO / "12_mf_llama_tp8"), stage, only=[0])
    found = [e for e in _forward(explain(analysis, "type:AllReduce", rank=0)) if "cuts its table" in e.headline]
    assert len(found) == 1
    e = found[0]
    assert (e.action, e.parts) == ("sum", 4)
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 1, 2, 3)
    assert any("in_strategy ((4, 1), (2, 1))" in t for t in e.facts)
    assert not e.cannot_tell


@pytest.mark.parametrize("stage", STAGES)
def test_vocabulary_parallel_lookup_reduce_scattered(stage):
    # Zoo 05 (fixtures/zoo/nets/05_expert_alltoall_16.py): vocab_gather ((16, 1), (1,)) cuts the
    # (4096, 512) table's rows in 16 over all 16 ranks; the 1024 masked lookups of each rank,
    # (1024, 512), are reduce-scattered: summed over ranks 0-15, each keeping 1024 / 16 = 64 rows,
    # dimension 0, 16 parts. (step_parallel_end prints no shapes: dimension 0 by the ReduceScatter's
    # definition alone.)
    analysis = analyse(msinspect.load_dump(ZOO / "05_expert_alltoall_16"), stage, only=[0])
    found = _forward(explain(analysis, "type:ReduceScatter", rank=0))
    assert len(found) == 1
    e = found[0]
    assert (e.action, e.dims, e.parts) == ("sum", (0,), 16)
    assert e.own_shapes == (((1024, 512), (64, 512)) if stage == "validate" else None)
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == tuple(range(16))
    assert not e.cannot_tell


@pytest.mark.parametrize("stage", STAGES)
def test_global_norm_sums_of_squares(stage):
    # Zoo 13 (fixtures/zoo/nets/13_mf_llama_pp_interleave.py; tests/analysis/test_cost_axis_rest.py):
    # dp 2 x mp 2 x pp 2 on 8 ranks, stage s = ranks 4s .. 4s + 3. MindFormers' ClipGradNorm sums
    # the squares of the gradient slices each rank holds (a scalar); the parallel pass adds them
    # over the stage (PARALLEL_GLOBALNORM_IN_STAGES: ranks 0-3 for rank 0) and then between the
    # stages over the ranks at the same place (PARALLEL_GLOBALNORM_BETWEEN_STAGES: 0 and 4). A sum
    # of scalars: no dimension; 4 and 2 parts.
    analysis = analyse(msinspect.load_dump(ZOO / "13_mf_llama_pp_interleave"), stage, only=[0])
    found = [e for e in _forward(explain(analysis, "type:AllReduce", rank=0)) if "global norm" in e.headline]
    assert sorted((tuple(e.group_ranks), e.parts) for e in found) == [((0, 1, 2, 3), 4), ((0, 4), 2)]
    for e in found:
        assert (e.action, e.dims) == ("sum", ())
        assert not e.cannot_tell
    assert "over the pipeline stages" in next(e for e in found if e.parts == 2).headline


@pytest.mark.parametrize("stage", STAGES)
def test_mean_loss_sum_whatever_its_realdiv_takes(stage):
    # Zoo 01 (fixtures/zoo/nets/01_semi_auto_tp4dp2.py): loss_mean, a ReduceMean over every axis
    # of the per-sample loss cut (2,) by dp: each rank sums its half, the AllReduce adds the halves
    # over the dp pair {0, 4}, and MindSpore's own RealDiv (ReduceMeanInfo) divides. An AllReduce
    # gives every rank the whole sum, so the RealDiv having no strategy leaves nothing untold.
    analysis = analyse(msinspect.load_dump(ZOO / "01_semi_auto_tp4dp2"), stage, only=[0])
    found = [e for e in _forward(explain(analysis, "type:AllReduce", rank=0)) if e.producer == "loss_mean"]
    assert len(found) == 1
    e = found[0]
    assert (e.action, e.parts) == ("sum", 2)
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 4)
    assert not e.cannot_tell
