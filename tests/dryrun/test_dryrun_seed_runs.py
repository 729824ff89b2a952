"""A dry run of the seed 002 network on 8 simulated ranks (two of them compiled:
``SEED002_RANKS``), checked per rank; and what
a default dry run keeps (issue 26): ``validate`` beside the parallel stages, so that ``shapes``
has every rank's shapes and ``comm`` the bytes of every collective, what it left out, and the
run's settings in its ``config.json`` (seed 002's run, default settings).

The run is the session's (tests/dryrun/conftest.py): one file, so that the pytest worker that
runs it (``make test``: each file whole on one worker) makes it once. Seed 000's network is the
recursive_pipeline job's: its plan is checked on the job's own dry run (tests/train/test_train_jobs.py)."""
from __future__ import annotations

import importlib.metadata
import json
import re

from click.testing import CliRunner
from dryrun_helpers import RANKS, SEED002, SEED002_RANKS, assert_honest, group_ranks, ir_text, primitive_calls

from msinspect.cli import main

STRATEGY = "{in_strategy: ((2, 4), (4, 1))}"


RECORDS = ["group_info_0.pb", "parameter_layout_0.json", "strategy_0.ckpt"]


def test_seed002_every_rank_complete(seed002_report):
    from msinspect.dryrun import find_pass_files
    from msinspect.dryrun.report import is_complete

    report = seed002_report
    assert report.ok, "\n".join(f"rank {r.rank}: {r.state.value} {r.reason}" for r in report.failed)
    assert [r.rank for r in report.ranks] == list(SEED002_RANKS)
    for r in report.ranks:
        assert r.step_parallel_end and all(is_complete(p) for p in r.step_parallel_end)
        assert r.ir_dir == report.run_dir / f"rank_{r.rank}"
        # default: only the parallel-stage files and validate are kept, and MindSpore's records
        # of the one compile's layouts (a Model.train under the global context)
        names = sorted(p.name for p in r.ir_dir.iterdir())
        ir = [n for n in names if n not in RECORDS]
        assert sorted(set(names) - set(ir)) == RECORDS, names
        assert all(re.match(r"(\d+_)?(step_(auto_)?parallel_(begin|end)|validate)(_\d+)?\.ir$", n) for n in ir), ir
        assert find_pass_files(r.ir_dir, "step_parallel_begin")


def test_seed002_user_strategy_on_every_rank(seed002_report):
    for rank in SEED002_RANKS:
        matmuls = [line for line in primitive_calls(ir_text(seed002_report, rank), "MatMul")
                   if "instance name: matmul}" in line]
        assert len(matmuls) == 1, f"rank {rank}: {len(matmuls)} forward 'matmul' nodes"
        assert matmuls[0].rstrip().endswith(STRATEGY), matmuls[0][-200:]


def test_seed002_groups_name_the_right_ranks(seed002_report):
    for rank in SEED002_RANKS:
        groups = group_ranks(ir_text(seed002_report, rank))
        half = "0-1-2-3" if rank < 4 else "4-5-6-7"
        # The (4, 1) cut of the weight's rows is reduced over the 4 ranks of the rank's half.
        assert half in groups, (rank, groups)
        for group in groups:
            assert str(rank) in group.split("-"), f"rank {rank} holds a group without itself: {group}"


def test_seed002_losses_labelled_in_logs(seed002_report):
    from msinspect.dryrun import NOTHING_COMPUTED

    log = seed002_report.rank(0).log.read_text()
    assert log.startswith("# msinspect dry run") and NOTHING_COMPUTED in log.splitlines()[0]


def test_the_report_is_honest(seed002_report):
    assert_honest(seed002_report)


def _json(args: list[str]):
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout[result.stdout.index("["):])


def test_the_default_keeps_validate_and_the_parallel_stages(seed002_report):
    from msinspect.stages import DRYRUN_PASSES, stage_of

    assert seed002_report.ok, [r.reason for r in seed002_report.failed]
    assert seed002_report.kept_stages == list(DRYRUN_PASSES)
    for r in seed002_report.ranks:
        stages = {stage_of(p) for p in r.ir_dir.iterdir() if p.name not in RECORDS}
        assert {"validate", "step_parallel_begin", "step_parallel_end"} <= stages <= set(DRYRUN_PASSES), stages


def test_shapes_of_a_default_run_has_every_ranks_shapes(seed002_report):
    rows = _json(["shapes", str(seed002_report.run_dir)])
    matmul = [r for r in rows if r["name"] == "matmul"]
    assert {r["rank"] for r in matmul} == set(SEED002_RANKS)
    assert all(r["stage"] == "validate" for r in rows)
    # the user's ((2, 4), (4, 1)) cut of (16, 32) x (32, 16), seen on the rank: (8, 8) and (8, 16)
    assert all(r["rank_shape"] is not None and r["ok"] is True for r in matmul), matmul[:2]
    assert {tuple(r["rank_shape"]) for r in matmul if r["rank"] == 0} == {(8, 8), (8, 16)}


def test_comm_of_a_default_run_has_the_bytes_of_every_collective(seed002_report):
    rows = _json(["comm", str(seed002_report.run_dir), "--by", "kind"])
    collectives = [r for r in rows if r["kind"] != "local"]
    assert collectives, rows
    assert all(r["unknown_bytes"] == 0 and r["tensor_bytes"] > 0 for r in collectives), collectives


def test_the_run_records_its_settings(seed002_report):
    from msinspect.stages import DRYRUN_PASSES

    record = json.loads((seed002_report.run_dir / "config.json").read_text())
    assert seed002_report.record == seed002_report.run_dir / "config.json"
    assert record["run"] == "dry_run" and record["status"] == "ok" and record["failures"] == []
    assert record["script"] == str(SEED002.resolve()) and record["script_args"] == []
    assert record["ranks"] == RANKS and record["run_ranks"] == list(SEED002_RANKS) == record["ranks_ok"]
    assert record["parallel_mode"] == "auto_parallel (sharding_propagation)"
    assert record["mindspore"] == importlib.metadata.version("mindspore")
    assert record["all_passes"] is False and record["kept_stages"] == list(DRYRUN_PASSES)
    workers = record["environment"]["workers"]
    assert workers["MS_SIMULATION_LEVEL"] == "0" and workers["RANK_SIZE"] == str(RANKS)
    assert workers["RANK_ID"] == "<rank>" and workers["MS_DEV_DUMP_IR_PASSES"] == ",".join(DRYRUN_PASSES)
    assert record["environment"]["all_processes"]["CUDA_HOME"]
    assert record["command"][:5] == ["msinspect", "dryrun", str(SEED002.resolve()), "--ranks", str(RANKS)]
    assert record["started"] <= record["finished"] and record["wall_seconds"] > 0
    assert record["records"] == {str(r): RECORDS for r in SEED002_RANKS}
    assert record["script_records"] == {} and record["record_failures"] == {}


def test_the_summary_says_what_was_left_out_and_how_to_get_it(seed002_report):
    from rich.table import Table

    from msinspect.cli.dryrun_cmd import _print_summary
    from msinspect.cli.output import console
    from msinspect.dryrun import format_summary

    out = console()
    out.width = 400
    with out.capture() as captured:
        _print_summary(out, seed002_report, Table, "nothing was computed")
    for text in (captured.get(), format_summary(seed002_report)):
        assert "validate" in text and "were not written: --keep-all-passes keeps every pass" in text
        assert "config.json" in text
