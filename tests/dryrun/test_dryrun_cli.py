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


# ---- item 12: scripts that run eager operations while building (MindFormers) run unchanged
def test_eager_operations_while_building_run_on_the_cpu_device(dryrun_xdg, tmp_path):
    """The worker builds the network on the CPU device from init() on and compiles it for the
    GPU: the eager operation runs, Python code still sees the GPU target while building, and the
    strategy IR is written. The rank runs with the interpreter ``--python`` names (this one: one
    run for both)."""
    import sys

    result = CliRunner().invoke(main, ["dryrun", str(NETS / "eager_build.py"), "--ranks", "2", "--only", "1",
                                       "--python", sys.executable, "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    (rank,) = report["ranks"]
    assert rank["rank"] == 1 and rank["state"] == "ok" and rank["step_parallel_end"]
    log = open(rank["log"]).read()
    assert "EAGER VALUE 0.0" in log
    assert "BUILD DEVICE TARGET GPU" in log and "COMPILED ON GPU" in log
    assert "building the network on the CPU device" in log


def test_eager_operations_on_the_stand_in_gpu_fail_with_the_cause(dryrun_env, tmp_path):
    """With --build-device gpu the same script fails; the reason names the cause, where, and the fix."""
    from msinspect.dryrun import run_dryrun

    report = run_dryrun(NETS / "eager_build.py", 2, only="0", out_root=tmp_path, environment=dryrun_env,
                        timeout=300, build_device="gpu")
    (rank,) = report.ranks
    assert rank.state.value == "failed" and not rank.step_parallel_end
    assert "eagerly (PyNative)" in rank.reason and "stand-in GPU" in rank.reason
    assert "eager_build.py:" in rank.reason  # the script's own line, not MindSpore's
    assert "without --build-device gpu" in rank.reason


def test_python_option_checks_the_interpreter(dryrun_xdg, tmp_path):
    """`--python PATH` runs the ranks with another environment's interpreter; one that cannot
    (missing, or without MindSpore) is refused before anything starts."""
    import venv

    result = CliRunner().invoke(main, ["dryrun", str(NETS / "eager_build.py"), "--ranks", "2",
                                       "--python", str(tmp_path / "missing" / "python"), "--out", str(tmp_path)])
    assert result.exit_code != 0 and "no such interpreter" in result.output
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    result = CliRunner().invoke(main, ["dryrun", str(NETS / "eager_build.py"), "--ranks", "2",
                                       "--python", str(bare / "bin" / "python"), "--out", str(tmp_path / "o")])
    assert result.exit_code != 0 and "MindSpore is not installed" in result.output
    assert not (tmp_path / "o").exists()
