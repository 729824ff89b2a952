"""Rank groups on real dumps: facts derived by hand from the zoo's network scripts.

- zoo 01 (``nets/01_semi_auto_tp4dp2.py``): semi-auto, a strategy on every operator, TP 4 x DP 2
  on 8 ranks, no pipeline. Every rank compiles the same graph; what differs between ranks is only
  which TP group ({0-3} or {4-7}) and DP group ({r, r+4}) it talks to. So: one group, ranks 0-7,
  no pipeline, no odd rank.
- zoo 04 (``nets/04_pipeline_hsdp_recompute.py``): 2 pipeline stages of 4 ranks (MindSpore puts
  rank r on stage r // 4): embedding and blocks 0-1 on ranks 0-3, blocks 2-3 and the head on
  ranks 4-7, dp 2 x tp 2 inside each stage. Stage 0 and stage 1 hold other weights and other
  operators, so at least one group per stage, and no group spans both.
- a copy of zoo 01 where rank 5's first ``q_matmul`` is given another strategy in the IR text,
  and rank 2's first Transpose is made another operator: both are flagged, rank 5 with
  q_matmul and both strategies, rank 2 with one operator more of the new type and one Transpose
  fewer; the group is still ranks 0-7.
"""
from __future__ import annotations

import gzip
import json
import shutil

import pytest

import msinspect
from msinspect.analysis import analyse, rank_groups
from msinspect.cache import Store
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
SPMD_RANKS = [f"rank_{r}" for r in range(8)]


def test_tp4dp2_is_one_group_without_pipeline():
    groups = rank_groups(analyse(msinspect.load_dump(ZOO / "01_semi_auto_tp4dp2")))
    assert [g.name for g in groups.groups] == ["A"]
    (group,) = groups.groups
    assert group.ranks == SPMD_RANKS and group.numbers == list(range(8))
    assert group.odd == {} and groups.ungrouped == {}
    assert group.pipeline_stage is None and group.pipelined is False
    assert group.heading() == "ranks 0-7: group A (no pipeline)"


def test_pipeline_has_a_group_per_stage_and_none_across():
    groups = rank_groups(analyse(msinspect.load_dump(ZOO / "04_pipeline_hsdp_recompute"), "step_parallel_end"))
    stage_of_rank = {r: r // 4 for r in range(8)}
    assert len(groups.groups) >= 2
    for group in groups.groups:
        stages = {stage_of_rank[r] for r in group.numbers}
        assert len(stages) == 1, f"group {group.name} spans stages: {group.numbers}"
        assert group.pipeline_stage == stages.pop()
        assert group.odd == {}
        others = [g.name for g in groups.groups if g is not group]
        assert [d.split(":")[0] for d in group.distinct] == [f"vs group {n}" for n in others]
        assert all("weights" in d for d in group.distinct)  # another stage holds other weights
    assert {g.pipeline_stage for g in groups.groups} == {0, 1}
    assert sorted(r for g in groups.groups for r in g.numbers) == list(range(8))
    assert groups.groups[0].heading().startswith("ranks 0-3: group A (pipeline stage 0)")


@pytest.fixture
def tp4dp2_copy(tmp_path):
    copy = tmp_path / "tp4dp2"
    shutil.copytree(ZOO / "01_semi_auto_tp4dp2", copy)
    return copy


def _edit_first(path, marker: str, old: str, new: str, times: int) -> None:
    """On the first line of the file holding ``marker``, put ``new`` in place of ``old`` (found ``times``)."""
    lines = gzip.decompress(path.read_bytes()).decode().split("\n")
    at = next(i for i, line in enumerate(lines) if marker in line)
    assert lines[at].count(old) == times
    lines[at] = lines[at].replace(old, new)
    path.write_bytes(gzip.compress("\n".join(lines).encode()))


def test_a_rank_with_another_strategy_is_flagged(tp4dp2_copy, tmp_path):
    results = Store(tmp_path / "results")
    dump = msinspect.load_dump(tp4dp2_copy)
    before = rank_groups(analyse(dump, cache=results))  # fills the cache of analysed ranks
    assert len(results.entries()) == 8
    assert [g.odd for g in before.groups] == [{}]
    (validate,) = (tp4dp2_copy / "rank_5").glob("*_validate_*.ir.gz")
    _edit_first(validate, "{instance name: q_matmul}", "in_strategy: ((2, 1), (1, 4))", "in_strategy: ((2, 4), (4, 1))", 2)
    (validate,) = (tp4dp2_copy / "rank_2").glob("*_validate_*.ir.gz")
    _edit_first(validate, "= PrimFunc_Transpose(", "= PrimFunc_Transpose(", "= PrimFunc_TransposeView(", 1)
    after = rank_groups(analyse(dump, cache=results))   # a changed file is never served stale
    assert len(results.entries()) == 10
    (group,) = after.groups
    assert group.ranks == SPMD_RANKS and list(group.odd) == ["rank_2", "rank_5"]
    assert "operators: 1 more (TransposeView); 1 fewer (Transpose)" in group.odd["rank_2"]
    (what,) = group.odd["rank_5"]
    assert what.startswith("q_matmul (MatMul): in ((2, 4), (4, 1)) (user) where the others have in ((2, 1), (1, 4)) (user)")
    assert any("odd: rank_5 differs from its group-mates: q_matmul (MatMul)" in line for line in after.lines())


def test_summary_prints_the_groups_and_its_json_carries_them():
    """The recursive-pipeline fixture: 2 pipeline stages of 4 ranks (MindSpore: rank r on stage r // 4)."""
    from tests.test_cli_parse import msinspect as run_cli

    dump = FIXTURES / "recursive_pipeline_dryrun_8rank"
    shown = run_cli("summary", dump)
    assert shown.returncode == 0, shown.stderr
    assert "ranks 0-3: group A (pipeline stage 0): vs group B: weights" in shown.stdout
    assert "ranks 4-7: group B (pipeline stage 1): vs group A: weights" in shown.stdout
    rows = json.loads(run_cli("summary", dump, "--json").stdout)
    assert [(r["rank"], r["rank_group"]) for r in rows] == [(n, "AB"[n // 4]) for n in range(8)]
    assert all(r["rank_group_odd"] is None and r["rank_group_distinct"][0].startswith("vs group ") for r in rows)

