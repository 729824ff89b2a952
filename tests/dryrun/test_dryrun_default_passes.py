"""A default dry run keeps what the analyses read (issue 26): ``validate`` beside the parallel
stages, so that ``shapes`` has every rank's shapes and ``comm`` the bytes of every collective;
it says what it left out, and records the run's settings in its ``config.json``.

All on the session's seed 002 run (8 ranks, default settings): no dry run of its own."""
from __future__ import annotations

import importlib.metadata
import json

from click.testing import CliRunner
from dryrun_helpers import RANKS, SEED002

from msinspect.cli import main


def _json(args: list[str]):
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout[result.stdout.index("["):])


def test_the_default_keeps_validate_and_the_parallel_stages(seed002_report):
    from msinspect.stages import DRYRUN_PASSES, stage_of

    assert seed002_report.ok, [r.reason for r in seed002_report.failed]
    assert seed002_report.kept_stages == list(DRYRUN_PASSES)
    for r in seed002_report.ranks:
        stages = {stage_of(p) for p in r.ir_dir.iterdir()}
        assert {"validate", "step_parallel_begin", "step_parallel_end"} <= stages <= set(DRYRUN_PASSES), stages


def test_shapes_of_a_default_run_has_every_ranks_shapes(seed002_report):
    rows = _json(["shapes", str(seed002_report.run_dir)])
    matmul = [r for r in rows if r["name"] == "matmul"]
    assert {r["rank"] for r in matmul} == set(range(RANKS))
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
    assert record["ranks"] == RANKS and record["run_ranks"] == list(range(RANKS)) == record["ranks_ok"]
    assert record["parallel_mode"] == "auto_parallel (sharding_propagation)"
    assert record["mindspore"] == importlib.metadata.version("mindspore")
    assert record["all_passes"] is False and record["kept_stages"] == list(DRYRUN_PASSES)
    workers = record["environment"]["workers"]
    assert workers["MS_SIMULATION_LEVEL"] == "0" and workers["RANK_SIZE"] == str(RANKS)
    assert workers["RANK_ID"] == "<rank>" and workers["MS_DEV_DUMP_IR_PASSES"] == ",".join(DRYRUN_PASSES)
    assert record["environment"]["all_processes"]["CUDA_HOME"]
    assert record["command"][:5] == ["msinspect", "dryrun", str(SEED002.resolve()), "--ranks", str(RANKS)]
    assert record["started"] <= record["finished"] and record["wall_seconds"] > 0


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
