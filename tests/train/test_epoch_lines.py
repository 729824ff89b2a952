"""``msinspect train`` says each epoch's mean loss as rank 0 ends it, and never a dry run's
zeros (issue 40, item 4: ``make demo`` was silent for the 148 s of manual-parallel training).

The worker log is written as the job's callbacks print it: MindSpore's ``LossMonitor`` lines
(``epoch: E step: S, loss is L``) and ``train_jobs/common.py``'s ``EpochMeanLoss`` line
(``msinspect-job: epoch E mean loss L over N steps``, ``L`` as Python's ``repr`` of a float).
Two epochs of three steps with losses 2.4, 2.1, 1.8 then 1.2, 1.0, 0.8 have means
(2.4 + 2.1 + 1.8) / 3 = 2.1 and (1.2 + 1.0 + 0.8) / 3 = 1.0.
"""
from __future__ import annotations

from msinspect.train import launcher
from msinspect.train.launcher import epoch_lines

EPOCH_1 = ["epoch: 1 step: 1, loss is 2.4", "epoch: 1 step: 2, loss is 2.1", "epoch: 1 step: 3, loss is 1.8",
           f"msinspect-job: epoch 1 mean loss {(2.4 + 2.1 + 1.8) / 3!r} over 3 steps"]
EPOCH_2 = ["epoch: 2 step: 1, loss is 1.2", "epoch: 2 step: 2, loss is 1.0", "epoch: 2 step: 3, loss is 0.8",
           f"msinspect-job: epoch 2 mean loss {(1.2 + 1.0 + 0.8) / 3!r} over 3 steps"]


def test_each_epoch_is_said_once_as_it_ends(tmp_path):
    log = tmp_path / "worker_0.log"
    log.write_text("msinspect-job: rank 0 of 8, device CPU\n" + "\n".join(EPOCH_1[:2]) + "\n")
    assert epoch_lines("manual_parallel", log, 0, 10, 5.0) == []  # no epoch has ended
    log.write_text(log.read_text() + "\n".join(EPOCH_1[2:]) + "\n")
    assert epoch_lines("manual_parallel", log, 0, 10, 12.4) == [
        "manual_parallel: epoch 1/10: mean loss 2.1000 (rank 0), 12 s"]
    log.write_text(log.read_text() + "\n".join(EPOCH_2) + "\n")
    assert epoch_lines("manual_parallel", log, 1, 10, 20.0) == [
        "manual_parallel: epoch 2/10: mean loss 1.0000 (rank 0), 20 s"]


def test_a_log_not_yet_written_says_nothing(tmp_path):
    assert epoch_lines("manual_parallel", tmp_path / "worker_0.log", 0, 10, 1.0) == []


def test_a_dry_run_says_it_computes_nothing_and_no_loss(tmp_path, monkeypatch):
    said: list[str] = []
    monkeypatch.setattr(launcher, "_run_dry", lambda *args: "the dry run")
    assert launcher.run_job("sharding_propagation", real=False, out_root=tmp_path, on_line=said.append) == "the dry run"
    assert said == ["sharding_propagation: dry run: MindSpore's planner compiles 8 ranks; "
                    "nothing is computed, so no losses"]


def test_the_train_command_prints_the_lines_it_is_given(monkeypatch):
    """The CLI keeps each line (above its progress bar, on stderr): the job is replaced by one that
    says an epoch and hands back the fixture's dry-run dump (as tests/test_train_workflow.py)."""
    import msinspect.train
    from tests.conftest import invoke
    from tests.test_train_workflow import DUMP, _dry_run

    def job(mode, **kw):
        kw["on_line"]("manual_parallel: epoch 1/10: mean loss 2.1000 (rank 0), 12 s")
        return _dry_run(DUMP)

    monkeypatch.setattr(msinspect.train, "run_job", job)
    run = invoke("train", "sharding_propagation", "--no-check")
    assert "manual_parallel: epoch 1/10: mean loss 2.1000 (rank 0), 12 s" in run.stderr, run.stderr
