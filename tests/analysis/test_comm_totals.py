"""Communication totals are summed one way (msinspect.analysis.job.comm_totals): ``comm --by`` (the
DataFrame), the report's communication section and ``summary``'s per-rank counts say the same
numbers, worked out by hand from the network scripts (fixtures/zoo/nets/), and folding rank by
rank gives what folding every row at once gives."""
from __future__ import annotations

import math
import re

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.comm import comm_totals
from msinspect.analysis.job.comm_totals import CommTotals
from msinspect.analysis.engine.tally import tally
from msinspect.report.rollup import roll_up
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
F32 = 4


@pytest.fixture(scope="module")
def pipeline_hsdp():
    return analyse(msinspect.load_dump(ZOO / "04_pipeline_hsdp_recompute"), "step_parallel_end")


@pytest.fixture(scope="module")
def moe():
    return analyse(msinspect.load_dump(ZOO / "15_mf_llama_moe_ep8"), "validate")


def _nan(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def test_pipeline_totals_agree_in_the_cli_the_report_and_summary(pipeline_hsdp):
    """Zoo 04 (04_pipeline_hsdp_recompute.py): 2 stages of 4 ranks, 4 micro-batches; stage 0
    (ranks 0-3) Sends each micro-batch's (128, 512) float32 activation, stage 1 (ranks 4-7)
    Receives it: 4 operators on each of the 8 ranks, 32 in all, each moving 128 x 512 x 4 =
    262,144 bytes."""
    each = 128 * 512 * F32
    cli = comm_totals(pipeline_hsdp.comm(), "kind").set_index("kind").loc["pipeline"]
    assert (cli["operators"], cli["rank_count"], cli["ops"]) == (32, 8, ("Receive", "Send"))
    assert (cli["tensor_bytes"], cli["wire_bytes"], cli["unknown_bytes"]) == (32 * each, 32 * each, 0)
    page = {row["kind"]: row for row in roll_up(pipeline_hsdp, many=False).comm.kind_rows()}["pipeline"]
    assert (page["ops"], page["ranks"], page["tensor"], page["wire"], page["wire_missing"], page["why"]) == (
        32, "0-7", 32 * each, 32 * each, 0, "")
    for result in pipeline_hsdp.results:
        assert dict(tally(result).by_kind)["pipeline"] == 4, result.rank


def test_optimizer_groups_agree_in_the_cli_and_the_report(pipeline_hsdp):
    """Zoo 04's optimizer shards each weight over its stage's data-parallel pair ({0, 2}, {1, 3},
    {4, 6}, {5, 7}: dp 2 x mp 2 in a stage of 4) and weights held whole by stage 0 over its 4 ranks
    ({0, 1, 2, 3}); the report lists those groups, with the optimizer among their kinds."""
    comm = pipeline_hsdp.comm()
    cli = comm_totals(comm[comm["kind"] == "optimizer"], "group")
    pairs = {(0, 2), (1, 3), (4, 6), (5, 7), (0, 1, 2, 3)}
    assert pairs <= set(cli["group_ranks"])
    page = {row["members"]: row for row in roll_up(pipeline_hsdp, many=False).comm.group_rows()}
    assert {"0, 2", "1, 3", "4, 6", "5, 7", "0-3"} <= set(page)
    for members in ("0, 2", "1, 3", "4, 6", "5, 7", "0-3"):
        assert "optimizer" in page[members]["kinds"].split(", "), members


def test_a_total_over_bytes_that_cannot_be_told_cannot_be_told(moe):
    """Zoo 15 (15_mf_llama_moe_ep8.py) at validate, ranks 0 and 5: each MoE layer's function
    dispatches with three AlltoAllV (tokens, expert ids, results back), 2 layers: 6 a rank, 12 in
    all, of kind ``user`` (a self-defined-shard Morph's function calls them). Their send counts are
    given at run time, so their wire bytes cannot be told: the kind's wire total cannot be told
    either (None, never the sum of the others), in the CLI, on the page and in each rank's count,
    and the page says why for all 12."""
    cli = comm_totals(moe.comm(), "kind").set_index("kind").loc["user"]
    assert _nan(cli["wire_bytes"]) and cli["unknown_bytes"] >= 12
    page = {row["kind"]: row for row in roll_up(moe, many=False).comm.kind_rows()}["user"]
    assert page["wire"] is None and page["wire_missing"] == cli["unknown_bytes"]
    told = sum(int(n) for n in re.findall(r"(\d+) AlltoAllV: ", page["why"]))
    assert told == 12
    for result in moe.results:
        counts = tally(result)
        assert counts.wire_bytes is None and counts.wire_unknown >= 6, result.rank


def test_folded_rank_by_rank_is_folded_at_once(moe, pipeline_hsdp):
    """The report folds each rank's rows as they come (a fold per rank merged into the job's);
    the CLI folds the table's rows at once: the same totals, keys in the same order."""
    for analysis in (pipeline_hsdp, moe):
        for by in ("kind", "group"):
            at_once = CommTotals(by).add(row for result in analysis.results for row in result.comm).frame()
            each, merged = CommTotals(by), CommTotals(by)
            for result in analysis.results:
                each.add(result.comm)
                merged.merge(CommTotals(by).add(result.comm))
            assert each.frame().to_json() == at_once.to_json() == merged.frame().to_json()
            assert at_once.to_json() == comm_totals(analysis.comm(), by).to_json()


def test_a_fold_by_anything_else_is_refused():
    with pytest.raises(ValueError, match="kind, group"):
        CommTotals("rank")
