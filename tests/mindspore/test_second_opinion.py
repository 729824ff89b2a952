"""Each weight as msinspect reads it from the IR, held against MindSpore's own record of it: the
dry runs of zoo 01 (dp 2 x tp 4) and zoo 04 (2 stages x dp 2 x tp 2, optimizer parallel) kept
MindSpore's layout dictionary, strategy checkpoint and group checkpoint for ranks 0 and 5
(fixtures/records, made by tools/regen_records.py from the same scripts as the zoo's dumps)."""
from __future__ import annotations

import json
import shutil

import pytest

import msinspect
from msinspect.analysis.second_opinion import rank_records, unread, with_records
from tests.conftest import FIXTURES, invoke

RECORDS = FIXTURES / "records"


def _with_records(tmp_path, net: str):
    """The zoo dump of ``net`` with the records of its recorded ranks beside their IR."""
    dump = tmp_path / net
    shutil.copytree(FIXTURES / "zoo" / net, dump)
    for rank in (RECORDS / net).glob("rank_*"):
        for record in rank.iterdir():
            shutil.copy(record, dump / rank.name / record.name)
    return dump


@pytest.mark.parametrize("net", ["01_semi_auto_tp4dp2", "04_pipeline_hsdp_recompute"])
@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_every_weight_read_from_the_ir_is_as_mindspore_recorded_it(tmp_path, net, stage):
    analysis = msinspect.load_dump(_with_records(tmp_path, net)).analyse(stage)
    slices = analysis.slices()
    records = rank_records(analysis)
    frame = with_records(analysis, slices, records)
    recorded = frame[frame["rank"].isin([0, 5])]
    assert len(recorded) > 20
    assert set(recorded["record"]) == {"same"}, recorded[recorded["record"] != "same"][["rank", "param", "record_says"]]
    assert set(frame[~frame["rank"].isin([0, 5])]["record"]) == {"no record"}
    assert unread(analysis, slices, records) == []  # every weight the ranks train has a row


def test_a_difference_from_the_record_is_a_finding_with_both_values(tmp_path):
    dump = _with_records(tmp_path, "04_pipeline_hsdp_recompute")
    layout = next((dump / "rank_5").glob("parameter_layout_*.json"))
    record = json.loads(layout.read_text())
    record["layouts"]["blocks.2.attention.wo"][1] = [-1, 0]  # as if MindSpore had cut wo's columns
    layout.write_text(json.dumps(record))
    done = invoke("shapes", dump, "--params", "--rank", "5")
    assert done.exit_code == 1
    assert ("rank 5: blocks.2.attention.wo: tensor_map (0, -1) here, (-1, 0) in MindSpore's record"
            in done.stderr), done.stderr


def test_diff_shows_what_mindspores_record_gives_each_rank(tmp_path):
    # zoo 04 by hand: ranks 5 and 7 are places 1 and 3 of stage 1 (4-7), tp 1 both, dp 0 and 1: wo
    # ((2, 2), (2, 1)) gives both rows 256:512, and the optimizer shard over {5, 7} rows 256:384 and
    # 384:512; rank 5's folder keeps MindSpore's record, rank 7's none
    dump = _with_records(tmp_path, "04_pipeline_hsdp_recompute")
    done = invoke("diff", dump / "rank_5", dump / "rank_7", "--json")
    assert done.exit_code in (0, 1), done.stderr
    rows = {row["param"]: row for row in json.loads(done.stdout)["differences"]["slices"]}
    wo = rows["blocks.2.attention.wo"]
    assert (wo["left_slice"], wo["right_slice"]) == ("[256:384, 0:512]", "[384:512, 0:512]")
    assert (wo["left_record"], wo["right_record"]) == ("[256:384, 0:512]", "no record")


def test_check_holds_every_weight_to_the_record_where_a_rank_kept_one(tmp_path):
    from msinspect.check import check

    dump = _with_records(tmp_path, "04_pipeline_hsdp_recompute")
    spec = FIXTURES / "zoo" / "nets" / "04_pipeline_hsdp_recompute.toml"
    (outcome,) = [o for o in check(spec, dump).outcomes if o.expectation.kind == "record"]
    assert outcome.passed and "same" in outcome.found
    layout = next((dump / "rank_5").glob("parameter_layout_*.json"))
    record = json.loads(layout.read_text())
    record["layouts"]["blocks.2.attention.wo"][1] = [-1, 0]
    layout.write_text(json.dumps(record))
    (outcome,) = [o for o in check(spec, dump).outcomes if o.expectation.kind == "record"]
    assert not outcome.passed
    assert "tensor_map (0, -1) here, (-1, 0) in MindSpore's record" in outcome.evidence[0].text
    # no record kept, no such outcome
    assert not [o for o in check(spec, FIXTURES / "zoo" / "04_pipeline_hsdp_recompute").outcomes
                if o.expectation.kind == "record"]


def test_the_report_puts_a_difference_from_the_record_at_a_glance(tmp_path):
    dump = _with_records(tmp_path, "04_pipeline_hsdp_recompute")
    page = tmp_path / "same.html"
    assert invoke("report", dump, "-o", page).exit_code == 0
    assert "held against it: 45 same" in page.read_text()
    layout = next((dump / "rank_5").glob("parameter_layout_*.json"))
    record = json.loads(layout.read_text())
    record["layouts"]["blocks.2.attention.wo"][1] = [-1, 0]
    layout.write_text(json.dumps(record))
    page = tmp_path / "differs.html"
    assert invoke("report", dump, "-o", page).exit_code == 0
    text = page.read_text()
    assert "1 weight not as MindSpore&#39;s own record says: blocks.2.attention.wo" in text
    assert "tensor_map (0, -1) here, (-1, 0) in MindSpore&#39;s record" in text
