"""A failure that holds for every rank stops the run (issue 40): the ranks still to compile are
cancelled, saying why, and never pointed to logs they did not write; ``--keep-going`` compiles all."""
from __future__ import annotations

import json
import threading

from click.testing import CliRunner

from dryrun_helpers import NETS
from msinspect.cli import main

LOG = NETS.parent / "logs" / "matmul_2x8_on_8_ranks.rank_3.log"


def _judged(tmp_path, rank: int, text: str, exit_code: int = 1):
    from msinspect.dryrun.launcher import _RankRunner

    run_dir = tmp_path / "run"
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    (run_dir / f"rank_{rank}").mkdir()
    (run_dir / "logs" / f"rank_{rank}.log").write_text(text)
    runner = _RankRunner(rank=rank, rank_size=8, script=tmp_path / "net.py", script_args=(), run_dir=run_dir,
                         python="python", cwd=tmp_path, env={}, keep_all_passes=False, timeout=60,
                         cancel=threading.Event(), on_update=None)
    runner.result.exit_code = exit_code
    runner._judge(timed_out=False, cancelled=False)
    return runner.result


def test_a_strategy_error_holds_for_every_rank(tmp_path):
    """Rank 3's real log of ((2, 8), (8, 1)) on 8 ranks: the same words on any rank."""
    from msinspect.dryrun.report import failed_alike

    text = LOG.read_text()
    assert failed_alike(_judged(tmp_path, 3, text), _judged(tmp_path, 5, text))


def test_rank_numbers_are_left_out_but_other_numbers_are_not(tmp_path):
    from msinspect.dryrun.report import failed_alike

    def log(rank, devices):
        return f"ValueError: rank {rank} of rank_{rank}: the strategy needs {devices} devices\n"

    assert failed_alike(_judged(tmp_path, 0, log(0, 16)), _judged(tmp_path, 1, log(1, 16)))
    assert not failed_alike(_judged(tmp_path, 2, log(2, 16)), _judged(tmp_path, 3, log(3, 32)))
    # a rank killed by a signal (the kernel's OOM killer) says nothing of the others
    assert not failed_alike(_judged(tmp_path, 4, log(4, 16), -9), _judged(tmp_path, 5, log(5, 16), -9))


def test_ranks_that_fail_alike_cancel_the_rest(dryrun_xdg, tmp_path):
    """matmul_strategy.py 2,4/4,1 asks for 2 * 4 = 8 devices; the job has 4, so MindSpore refuses the
    strategy on every rank. Two at a time: ranks 0 and 1 start; the first to fail frees its place to
    rank 2; the second failure (whichever of the three it is) stops the run. So two of ranks 0-2 fail
    alike, the third is cancelled while running, and rank 3, whose turn comes after the second
    failure, is never started. Which two fail first is the machine's timing, not the launcher's."""
    result = CliRunner().invoke(main, ["dryrun", str(NETS / "matmul_strategy.py"), "--ranks", "4", "--jobs", "2",
                                       "--out", str(tmp_path), "--", "2,4/4,1"], env={"COLUMNS": "400"})
    assert result.exit_code == 1, result.output
    (run,) = tmp_path.iterdir()
    record = json.loads((run / "config.json").read_text())
    (failure,) = record["failures"]
    failed = failure["ranks"]
    assert len(failed) == 2 and set(failed) < {0, 1, 2} and "it requires 8 devices" in failure["reason"]
    (running,) = {0, 1, 2} - set(failed)
    cancelled = {rank: c for c in record["cancelled"] for rank in c["ranks"]}
    assert sorted(cancelled) == sorted([running, 3])
    pair = {(0, 1): "ranks 0-1", (0, 2): "ranks 0, 2", (1, 2): "ranks 1-2"}[tuple(failed)]
    why = f"{pair} failed alike, for a reason that does not depend on the rank; --keep-going compiles every rank"
    assert cancelled[3]["reason"] == f"not started: {why}" and cancelled[3]["logs"] == []
    assert why in cancelled[running]["reason"]
    assert not (run / "logs" / "rank_3.log").exists() and "rank_3.log" not in result.output
    text = " ".join(result.output.split())
    assert f"rank 3 cancelled: not started: {why}" in text
    assert "4/4 ranks 2 failed 2 cancelled" in text  # the progress bar's last word: cancelled is not failed


def test_ranks_never_started_after_ctrl_c_are_cancelled_without_a_log(tmp_path):
    """A rank whose turn comes after Ctrl-C starts nothing: it is cancelled (not failed), and the
    summary points to no log of it (none was written)."""
    from msinspect.dryrun.launcher import Cancel, _RankRunner
    from msinspect.dryrun.report import DryRunReport, RankState, format_summary

    run_dir = tmp_path / "run"
    (run_dir / "logs").mkdir(parents=True)
    cancel = Cancel()
    cancel.set()  # the run was interrupted before these ranks' turn
    runners = [_RankRunner(rank=rank, rank_size=2, script=tmp_path / "net.py", script_args=(), run_dir=run_dir,
                           python="python", cwd=tmp_path, env={}, keep_all_passes=False, timeout=60, cancel=cancel,
                           on_update=None) for rank in (0, 1)]
    results = [runner.run() for runner in runners]
    assert all(r.state is RankState.CANCELLED and r.log is None and r.pids == [] for r in results)
    report = DryRunReport(script=tmp_path / "net.py", run_dir=run_dir, rank_size=2, ranks=results, interrupted=True)
    assert report.failures() == []
    (cancelled,) = report.cancelled()
    assert cancelled.ranks == [0, 1] and cancelled.reason == "not started: run interrupted" and cancelled.logs == []
    summary = format_summary(report)
    assert "ranks 0-1 cancelled: not started: run interrupted" in summary
    assert "log:" not in summary and "rank_0.log" not in summary  # no log named for a rank that wrote none
    assert not list((run_dir / "logs").iterdir())
