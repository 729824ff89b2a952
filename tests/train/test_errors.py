"""Failures that must be clear and must happen before any process starts."""
from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from msinspect.cli import main
from msinspect.data import DataError
from msinspect.train import launcher, run_job


def _no_processes(*args, **kwargs):
    raise AssertionError(f"a process was started: {args[0] if args else kwargs}")


def test_bad_data_path_fails_before_any_process(tmp_path, monkeypatch, needs_mindspore):
    monkeypatch.setattr(subprocess, "Popen", _no_processes)
    monkeypatch.setattr(launcher.subprocess, "Popen", _no_processes)
    with pytest.raises(DataError, match="no such folder"):
        run_job("manual_parallel", data=tmp_path / "no-mnist-here", out_root=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()  # not even a run folder


def test_cli_bad_data_path_exits_2_and_names_the_path(tmp_path, monkeypatch, needs_mindspore):
    monkeypatch.setattr(launcher.subprocess, "Popen", _no_processes)
    result = CliRunner().invoke(main, ["train", "manual_parallel", "--data", str(tmp_path / "nope"),
                                       "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2, result.output
    assert "nope" in result.output and "no such folder" in result.output
    assert not (tmp_path / "runs").exists()


def test_unknown_mode_is_refused(tmp_path):
    result = CliRunner().invoke(main, ["train", "pipeline_magic"])
    assert result.exit_code == 2
    assert "manual_parallel" in result.output


def test_run_folders_are_never_reused(tmp_path):
    first = launcher.new_run_dir(tmp_path, "manual_parallel")
    second = launcher.new_run_dir(tmp_path, "manual_parallel")
    assert first != second and first.is_dir() and second.is_dir()


def test_parse_losses(tmp_path):
    log = tmp_path / "worker_0.log"
    log.write_text("[WARNING] noise\nepoch: 1 step: 20, loss is 2.25\n"
                   "msinspect-job: epoch 1 mean loss 1.5 over 156 steps\n"
                   "epoch: 2 step: 4, loss is 1.0\n")
    steps, means = launcher.parse_losses(log)
    assert steps == [(1, 20, "2.25"), (2, 4, "1.0")]
    assert means == ["1.5"]


def test_bad_spec_fails_before_any_process(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text("[[expect.strategy]\n")
    run = subprocess.run([sys.executable, "-m", "msinspect", "train", "sharding_propagation", "--spec", str(spec),
                          "--out", str(tmp_path / "runs")], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "not valid TOML" in run.stderr and str(spec) in run.stderr
    assert not (tmp_path / "runs").exists()


def test_arguments_the_job_would_refuse_fail_before_any_process(tmp_path, monkeypatch):
    """manual_parallel cuts its global batch of 32 across the ranks (train_jobs/manual_parallel.py):
    3 ranks do not divide it; 16 images are less than one batch, and the jobs drop an incomplete
    last batch, so nothing would train. Both are said at once, not after msrun started 3 processes."""
    monkeypatch.setattr(subprocess, "Popen", _no_processes)
    monkeypatch.setattr(launcher.subprocess, "Popen", _no_processes)
    with pytest.raises(launcher.JobArgumentError, match="--batch-size 32 does not divide by 3 ranks"):
        run_job("manual_parallel", ranks=3, out_root=tmp_path / "runs")
    with pytest.raises(launcher.JobArgumentError, match="--num-samples 16 is less than one batch of 32"):
        run_job("manual_parallel", num_samples=16, out_root=tmp_path / "runs")
    args = ["train", "manual_parallel", "--ranks", "4", "--batch-size", "30", "--out", str(tmp_path / "runs")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "--batch-size 30 does not divide by 4 ranks" in result.output
    assert not (tmp_path / "runs").exists()
