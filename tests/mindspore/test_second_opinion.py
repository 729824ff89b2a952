"""Each weight as msinspect reads it from the IR, held against MindSpore's own record of it: every
kept rank of zoo 01 (dp 2 x tp 4) and zoo 04 (2 stages x dp 2 x tp 2, optimizer parallel) keeps
MindSpore's layout dictionary, strategy checkpoint and group checkpoint (tools/regen_records.py:
the same scripts and settings as the zoo's dumps)."""
from __future__ import annotations

import json
import shutil

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.second_opinion import rank_records, unread, with_records
from tests.conftest import FIXTURES, invoke

ZOO = FIXTURES / "zoo"


def _copy(tmp_path, net: str):
    """The zoo dump of ``net``, whose kept ranks keep MindSpore's record, to edit."""
    dump = tmp_path / net
    shutil.copytree(ZOO / net, dump)
    return dump


@pytest.mark.parametrize("net", ["01_semi_auto_tp4dp2", "04_pipeline_hsdp_recompute"])
@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_every_weight_read_from_the_ir_is_as_mindspore_recorded_it(net, stage):
    analysis = analyse(msinspect.load_dump(ZOO / net), stage)
    slices = analysis.slices()
    records = rank_records(analysis)
    frame = with_records(analysis, slices, records)
    assert len(frame) > 80
    assert set(frame["record"]) == {"same"}, frame[frame["record"] != "same"][["rank", "param", "record_says"]]
    assert unread(analysis, slices, records) == []  # every weight the ranks train has a row


def test_a_rank_folder_without_a_record_compares_nothing(tmp_path):
    dump = _copy(tmp_path, "04_pipeline_hsdp_recompute")
    for record in (dump / "rank_7").iterdir():
        if record.suffix in (".json", ".ckpt", ".pb"):
            record.unlink()
    frame = with_records(analyse(msinspect.load_dump(dump), "validate"), analyse(msinspect.load_dump(dump), "validate").slices())
    assert set(frame[frame["rank"] == 7]["record"]) == {"no record"}
    assert set(frame[frame["rank"] != 7]["record"]) == {"same"}


def test_a_difference_from_the_record_is_a_finding_with_both_values(tmp_path):
    dump = _copy(tmp_path, "04_pipeline_hsdp_recompute")
    layout = next((dump / "rank_5").glob("parameter_layout_*.json"))
    record = json.loads(layout.read_text())
    record["layouts"]["blocks.2.attention.wo"][1] = [-1, 0]  # as if MindSpore had cut wo's columns
    layout.write_text(json.dumps(record))
    done = invoke("shapes", dump, "--params", "--rank", "5")
    assert done.exit_code == 1
    assert ("rank 5: blocks.2.attention.wo: tensor_map (0, -1) here, (-1, 0) in MindSpore's record"
            in done.stderr), done.stderr


def test_diff_shows_what_mindspores_record_gives_each_rank():
    # zoo 04 by hand: ranks 5 and 7 are places 1 and 3 of stage 1 (4-7), tp 1 both, dp 0 and 1: wo
    # ((2, 2), (2, 1)) gives both rows 256:512, and the optimizer shard over {5, 7} rows 256:384 and
    # 384:512; both folders keep MindSpore's record, which says the same
    done = invoke("diff", ZOO / "04_pipeline_hsdp_recompute" / "rank_5", ZOO / "04_pipeline_hsdp_recompute" / "rank_7",
                  "--json")
    assert done.exit_code in (0, 1), done.stderr
    rows = {row["param"]: row for row in json.loads(done.stdout)["differences"]["slices"]}
    wo = rows["blocks.2.attention.wo"]
    assert (wo["left_slice"], wo["right_slice"]) == ("[256:384, 0:512]", "[384:512, 0:512]")
    assert (wo["left_record"], wo["right_record"]) == ("[256:384, 0:512]", "[384:512, 0:512]")


def test_check_holds_every_weight_to_the_record_where_a_rank_kept_one(tmp_path):
    from msinspect.check import check

    dump = _copy(tmp_path, "04_pipeline_hsdp_recompute")
    spec = FIXTURES / "zoo" / "nets" / "04_pipeline_hsdp_recompute.toml"
    (outcome,) = [o for o in check(spec, dump).outcomes if o.expectation.kind == "record"]
    assert outcome.passed and "same" in outcome.found
    layout = next((dump / "rank_5").glob("parameter_layout_*.json"))
    record = json.loads(layout.read_text())
    record["layouts"]["blocks.2.attention.wo"][1] = [-1, 0]
    layout.write_text(json.dumps(record))
    (outcome,) = [o for o in check(spec, dump).outcomes if o.expectation.kind == "record"]
    assert not outcome.passed
    assert "differs: tensor_map (0, -1) here, (-1, 0) in MindSpore's record" in outcome.evidence[0].text
    # no record kept, no such outcome
    for rank in dump.glob("rank_*"):
        for record in rank.iterdir():
            if record.suffix in (".json", ".ckpt", ".pb"):
                record.unlink()
    assert not [o for o in check(spec, dump).outcomes if o.expectation.kind == "record"]


def test_the_report_puts_a_difference_from_the_record_at_a_glance(tmp_path):
    dump = _copy(tmp_path, "04_pipeline_hsdp_recompute")
    page = tmp_path / "same.html"
    assert invoke("report", dump, "-o", page).exit_code == 0
    # 4 ranks of stage 0 hold 22 weights with a strategy, 4 of stage 1 hold 23, each with the
    # pipeline's gradient accumulator (accu_grads.<weight>, in MindSpore's record too): 2 x 180;
    # each of the 8 ranks reads the two graph inputs (the net's inputs0 and inputs1), whole under
    # full batch: 16
    assert "held against it: 376 same" in page.read_text()
    layout = next((dump / "rank_5").glob("parameter_layout_*.json"))
    record = json.loads(layout.read_text())
    record["layouts"]["blocks.2.attention.wo"][1] = [-1, 0]
    layout.write_text(json.dumps(record))
    page = tmp_path / "differs.html"
    assert invoke("report", dump, "-o", page).exit_code == 0
    text = page.read_text()
    assert "1 weight not as MindSpore&#39;s own record says: blocks.2.attention.wo" in text
    assert "tensor_map (0, -1) here, (-1, 0) in MindSpore&#39;s record" in text
