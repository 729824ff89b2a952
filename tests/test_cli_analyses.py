"""The analysis subcommands as a user types them: tables, JSON, CSV, exit codes and errors."""
from __future__ import annotations

import csv
import io
import json

from tests.conftest import FIXTURES, ROOT
from tests.test_cli_parse import msinspect

SP = FIXTURES / "sharding_propagation_dryrun_8rank"
RP = FIXTURES / "recursive_pipeline_dryrun_8rank"


def test_help_lists_every_analysis():
    run = msinspect("--help")
    assert run.returncode == 0
    for command in ("summary", "strategies", "comm", "shapes", "diff", "check", "render"):
        assert command in run.stdout


def test_summary_shows_pipeline_stages():
    run = msinspect("summary", RP, "--jobs", "2")
    assert run.returncode == 0, run.stderr
    assert "pipeline stages (ranks holding the same weights): 0-3; 4-7" in run.stdout


def test_strategies_json_filtered_by_op_and_rank():
    run = msinspect("strategies", SP, "--op", "matmul", "--rank", "3", "--json")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert [(r["rank"], r["name"], r["in_strategy"], r["set_by"]) for r in rows] == \
        [(3, "matmul", [[2, 4], [4, 1]], "user")]


def test_strategies_table_planner_only():
    run = msinspect("strategies", SP, "--set-by", "planner", "--rank", "0")
    assert run.returncode == 0, run.stderr
    assert "relu" in run.stdout and "matmul2" in run.stdout
    assert " user " not in run.stdout


def test_comm_csv_and_per_group_summary():
    run = msinspect("comm", SP, "--rank", "6", "--csv")
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    forward = [r for r in rows if r["kind"] == "forward" and r["producer"] == "matmul"]
    assert len(forward) == 1 and forward[0]["group_ranks"] == "[4, 5, 6, 7]"  # JSON text, not a Python repr
    run = msinspect("comm", SP, "--rank", "6", "--by", "group", "--json")
    groups = {(tuple(r["group_ranks"]) if r["group_ranks"] else None, r["moves_data"]) for r in json.loads(run.stdout)}
    assert groups == {((4, 5, 6, 7), True), ((2, 6), True), (tuple(range(8)), True), (None, False)}


def test_which_part_of_w_does_rank_5_hold():
    run = msinspect("shapes", SP, "--params", "--param", "w", "--rank", "5", "--json")
    assert run.returncode == 0, run.stderr
    (row,) = json.loads(run.stdout)
    assert row["slice"] == [[8, 16], [0, 16]] and row["slice_text"] == "[8:16, 0:16]"


def test_shapes_all_consistent_exit_zero():
    run = msinspect("shapes", FIXTURES / "seed_002")
    assert run.returncode == 0, run.stderr
    assert "(8, 4)" in run.stdout


def test_diff_two_ranks_text_and_json():
    run = msinspect("diff", RP / "rank_0", RP / "rank_4")
    assert run.returncode == 0, run.stderr
    assert "different pipeline stages" in run.stdout
    run = msinspect("diff", RP / "rank_0", RP / "rank_4", "--json")
    data = json.loads(run.stdout)
    assert data["same_stage"] is False and data["left_stage_ranks"] == [0, 1, 2, 3]
    run = msinspect("diff", SP / "rank_1", SP / "rank_1", "--exit-code")
    assert run.returncode == 0 and "no differences" in run.stdout
    run = msinspect("diff", SP / "rank_1", SP / "rank_2", "--exit-code")
    assert run.returncode == 1


def test_check_passes_and_fails_with_exit_codes(tmp_path):
    run = msinspect("check", ROOT / "train_jobs" / "sharding_propagation.toml", SP)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failed" in run.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('[[expect.strategy]]\nop = "relu"\nin_strategy = [[2, 4]]\nbasis = "2.2 seed"\n')
    run = msinspect("check", bad, SP, "--failed-only")
    assert run.returncode == 1
    assert "FAIL expect.strategy[0] strategy relu" in run.stdout and "found:    ((2, 1))" in run.stdout
    run = msinspect("check", bad, SP, "--json")
    assert json.loads(run.stdout)["failed_count"] == 1


def test_errors_wrong_path_empty_folder_bad_spec(tmp_path):
    run = msinspect("strategies", tmp_path / "nowhere")
    assert run.returncode == 2 and "no such file or folder" in run.stderr
    run = msinspect("comm", tmp_path)
    assert run.returncode == 2 and "no MindSpore IR files" in run.stderr
    run = msinspect("check", tmp_path / "missing.toml", SP)
    assert run.returncode == 2 and "no such spec file" in run.stderr
    run = msinspect("diff", SP, SP / "rank_0")
    assert run.returncode == 2 and "holds several ranks" in run.stderr
    run = msinspect("strategies", SP, "--stage", "execute")
    assert run.returncode == 2 and "no 'execute' IR file" in run.stderr


def test_broken_ir_reports_file_line_column(tmp_path):
    rank = tmp_path / "rank_0"
    rank.mkdir()
    text = (FIXTURES / "seed_002" / "step_parallel_begin_0041.excerpt.ir").read_text().splitlines()
    text[3] = text[3].replace("ReLU(%3)", "ReLU(%3 ?")
    (rank / "step_parallel_begin_0001.ir").write_text("\n".join(text) + "\n")
    run = msinspect("strategies", rank)
    assert run.returncode == 1
    assert "step_parallel_begin_0001.ir:4:" in run.stderr


def test_totals_of_one_rank_are_titled_for_that_rank_not_the_whole_job():
    one = msinspect("comm", SP, "--rank", "6", "--by", "group")
    assert one.returncode == 0, one.stderr
    assert "communication per group, rank 6" in one.stdout and "whole job" not in one.stdout
    every = msinspect("comm", SP, "--by", "kind")
    assert "communication per kind, whole job" in every.stdout
