"""The `dryrun` and `setup-dryrun` commands: thin over the API, honest exit codes."""
from __future__ import annotations

import json

from click.testing import CliRunner
from dryrun_helpers import NETS

from msinspect.cli import main


def test_setup_check_reports_ready(dryrun_xdg):
    result = CliRunner().invoke(main, ["setup-dryrun", "--check"])
    assert result.exit_code == 0, result.output
    assert "ready" in result.output


def test_setup_is_quiet_when_up_to_date(dryrun_xdg):
    result = CliRunner().invoke(main, ["setup-dryrun"])
    assert result.exit_code == 0, result.output
    assert "already up to date" in result.output


def test_setup_check_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = CliRunner().invoke(main, ["setup-dryrun", "--check"])
    assert result.exit_code == 1
    assert "msinspect setup-dryrun" in result.output


def test_bad_rank_selection_is_a_usage_error(dryrun_xdg, tmp_path):
    result = CliRunner().invoke(main, ["dryrun", str(NETS / "seed002_sharding_propagation.py"), "--ranks", "8",
                                       "--only", "9", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "outside 0..7" in result.output
    assert list(tmp_path.iterdir()) == []  # nothing was created


def test_cpu_target_fails_with_reason_and_args_reach_the_script(dryrun_xdg, tmp_path):
    result = CliRunner().invoke(main, ["dryrun", str(NETS / "cpu_target.py"), "--ranks", "8", "--only", "3",
                                       "--out", str(tmp_path), "--json", "--", "--epochs", "1"])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    assert report["ok"] is False and "nothing was computed" in report["note"]
    (rank,) = report["ranks"]
    assert rank["rank"] == 3 and rank["state"] == "failed"
    assert "device target to CPU" in rank["reason"]
    log = open(rank["log"]).read()
    assert "SCRIPT ARGS ['--epochs', '1']" in log


def test_relative_out_lands_under_the_callers_folder(dryrun_xdg, tmp_path, monkeypatch):
    """The ranks run in another working folder (msinspect train runs them beside the script): a
    relative out_root must still mean the caller's folder."""
    from msinspect.dryrun import run_dryrun

    monkeypatch.chdir(tmp_path)
    report = run_dryrun(NETS / "seed002_sharding_propagation.py", 8, only="0", out_root="relative_runs",
                        cwd=NETS, timeout=300)
    assert report.ok, [r.reason for r in report.failed]
    (run,) = (tmp_path / "relative_runs").iterdir()
    assert list((run / "rank_0").glob("*step_parallel_end*.ir"))
    assert not (NETS / "relative_runs").exists()
