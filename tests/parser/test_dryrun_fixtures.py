"""Facts of the 2.10 planner dry-run fixtures, derived from the configuration that produced them
(8 ranks; seed 002: matmul shard ((2, 4), (4, 1)); seeds 000/001: 2 pipeline stages, layer1 and
relu1 on stage 0, the rest on stage 1), not from the tool's own output."""
from __future__ import annotations

import pytest

from msinspect import load_dump
from tests.conftest import FIXTURES

SP = load_dump(FIXTURES / "sharding_propagation_dryrun_8rank")
RP = load_dump(FIXTURES / "recursive_pipeline_dryrun_8rank")


@pytest.mark.parametrize("rank", range(8))
def test_user_strategy_on_every_rank(rank):
    for stage in ("step_parallel_begin", "step_parallel_end"):
        strategy = SP.rank(rank).load(stage).node("matmul").strategy
        assert strategy.in_strategy == ((2, 4), (4, 1))
        assert strategy.user_set is True


@pytest.mark.parametrize("rank", range(8))
def test_partial_sums_reduced_over_the_batch_slice_group(rank):
    ir = SP.rank(rank).load("step_parallel_end")
    matmul = ir.node("matmul")
    (allreduce,) = [n for n in ir.graph(matmul.graph).nodes
                    if n.op == "AllReduce" and n.inputs and getattr(n.inputs[0], "index", None) == matmul.index]
    expected = "0-1-2-3" if rank < 4 else "4-5-6-7"
    assert allreduce.primitive_attrs["group_ranks"] == expected


def ops_of(rank: int) -> set[str]:
    return {n.op for n in RP.rank(rank).load("step_parallel_end").nodes()}


def test_pipeline_stages_differ_between_rank_groups():
    stage0 = [ops_of(r) for r in range(4)]
    stage1 = [ops_of(r) for r in range(4, 8)]
    assert all(ops == stage0[0] for ops in stage0)
    assert all(ops == stage1[0] for ops in stage1)
    assert "Send" in stage0[0] and "Receive" not in stage0[0]
    assert "Receive" in stage1[0] and "Send" not in stage1[0]


def test_every_rank_is_complete():
    for dump in (SP, RP):
        assert [r.rank for r in dump.ranks] == list(range(8))
        for rank in dump.ranks:
            for stage in ("step_parallel_begin", "step_parallel_end", "validate"):
                assert rank.load(stage).complete
