"""A rank that fails says MindSpore's own reason (issue 26): the ``[ERROR]`` / ``[EXCEPTION]``
records of its log, not only the Python exception ("Failure:operator MatMul init failed"); ranks
that fail alike are told once, with their ranks.

``logs/matmul_2x8_on_8_ranks.rank_3.log`` is rank 3's log of a real dry run of
``nets/matmul_strategy.py 2,8/8,1`` on 8 ranks (MindSpore 2.10.0), absolute paths scrubbed."""
from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

from click.testing import CliRunner
from dryrun_helpers import NETS

from msinspect.cli import main

LOG = Path(__file__).parent / "logs" / "matmul_2x8_on_8_ranks.rank_3.log"
WHY = "The strategy is ((2, 8), (8, 1)), it requires 16 devices, but the device number of this stage is 8"


def _failed_run(tmp_path: Path, ranks: int, log_text: str):
    """``ranks`` ranks judged as the launcher judges them when each wrote ``log_text`` and no IR."""
    from msinspect.dryrun.launcher import _RankRunner
    from msinspect.dryrun.report import DryRunReport

    run_dir = tmp_path / "run"
    (run_dir / "logs").mkdir(parents=True)
    results = []
    for rank in range(ranks):
        (run_dir / f"rank_{rank}").mkdir()
        (run_dir / "logs" / f"rank_{rank}.log").write_text(log_text)
        runner = _RankRunner(rank=rank, rank_size=ranks, script=tmp_path / "net.py", script_args=(), run_dir=run_dir,
                             python="python", cwd=tmp_path, env={}, keep_all_passes=False, timeout=60,
                             cancel=threading.Event(), on_update=None)
        runner.result.exit_code = 1
        runner._judge(timed_out=False, cancelled=False)
        results.append(runner.result)
    return DryRunReport(script=tmp_path / "net.py", run_dir=run_dir, rank_size=ranks, ranks=results,
                        wall_seconds=1.0)


def test_mindspores_error_records_are_read_in_order_each_once(tmp_path):
    from msinspect.dryrun.report import failed_at, mindspore_errors

    errors = mindspore_errors(LOG)
    assert errors == [f"[ERROR] PARALLEL MatMulInfo11: {WHY}, it can not be divisible by 16",
                      "[ERROR] PARALLEL MatMulInfo11: InferRepeatedCalcInfo failed.",
                      "[ERROR] PARALLEL MatMulInfo11 : Init failed."]
    assert failed_at(LOG) == "<src>/matmul_strategy.py:32: return self.relu(self.matmul(x, self.w))"
    twice = tmp_path / "twice.log"
    twice.write_text(LOG.read_text() * 2)
    assert mindspore_errors(twice) == errors  # each once
    assert mindspore_errors(tmp_path / "none.log") == [] and failed_at(None) == ""


def test_device_errors_after_the_compile_are_not_mindspores_reason(tmp_path):
    from msinspect.dryrun.report import mindspore_errors

    log = tmp_path / "rank_0.log"
    log.write_text("[ERROR] ME(1,7f,python3):2026-11-25-22:20:41.537.566 [a.cc:1] WaitTaskFinishOnDevice] "
                   "SyncStream failed, exception:\n"
                   "[ERROR] DEVICE(1,7f,python3):2026-11-25-22:20:41.537.566 [b.cc:2] SetDevice] "
                   "SetDevice for id:0 failed, ret[35]\n"
                   "[EXCEPTION] CORE(1,7f,python3):2026-11-25-22:20:41.537.566 [c.cc:3] Infer]\n"
                   "For 'MatMul', the input dimensions must be equal\n")
    assert mindspore_errors(log) == ["[EXCEPTION] CORE For 'MatMul', the input dimensions must be equal"]


def test_a_failed_ranks_reason_quotes_mindspore(tmp_path):
    report = _failed_run(tmp_path, 1, LOG.read_text())
    (rank,) = report.ranks
    assert rank.state.value == "failed"
    assert rank.reason.startswith("RuntimeError: Failure:operator MatMul init failed; MindSpore's log: ")
    assert WHY in rank.reason
    assert len(rank.mindspore_errors) == 3 and rank.failed_at.endswith("self.relu(self.matmul(x, self.w))")
    assert report.to_dict()["ranks"][0]["mindspore_errors"] == rank.mindspore_errors


def test_ranks_that_fail_alike_are_told_once(tmp_path):
    from rich.table import Table

    from msinspect.cli.dryrun_cmd import _print_summary
    from msinspect.cli.output import console
    from msinspect.dryrun import format_summary

    report = _failed_run(tmp_path, 8, LOG.read_text())
    (failure,) = report.failures()
    assert failure.ranks == list(range(8)) and WHY in failure.reason
    out = console()
    out.width = 400
    with out.capture() as captured:
        _print_summary(out, report, Table, "nothing was computed")
    for text in (captured.get(), format_summary(report)):
        assert text.count(WHY) == 1, text
        assert "ranks 0-7 failed: RuntimeError: Failure:operator MatMul init failed" in text
        assert "InferRepeatedCalcInfo failed." in text and "matmul_strategy.py:32" in text
        headline = next(line for line in text.splitlines() if line.startswith("ranks 0-7 failed"))
        assert headline.rstrip().endswith(f"{WHY}, it can not be divisible by 16"), headline
    assert captured.get().count("reason below") == 8
    assert report.to_dict()["failures"][0]["ranks"] == list(range(8))


def test_a_hint_is_not_lengthened_by_mindspores_records(tmp_path):
    """A reason the dry run knows what to do about stays that advice."""
    text = ("[ERROR] PARALLEL(1,7f,python3):2026-11-25-22:20:41.537.566 [a.cc:1] F] something\n"
            "RuntimeError: Invalid communication backend: CPU for semi_auto_parallel/auto_parallel mode\n")
    (rank,) = _failed_run(tmp_path, 1, text).ranks
    assert "device target to CPU" in rank.reason and "MindSpore's log" not in rank.reason


def test_a_pipeline_without_pipelinecell_gets_the_hint(tmp_path):
    """MindSpore's words when a pipeline network (pipeline_stages > 1) goes to TrainOneStepCell without
    PipelineCell (issue 40, reported by a user; the message as MindSpore raises it): the reason says
    what to wrap, once for all ranks that failed so."""
    text = "RuntimeError: The pointer[grad_accu] is null.\n"
    report = _failed_run(tmp_path, 2, text)
    for rank in report.ranks:
        assert rank.reason.startswith("a pipeline-parallel network (pipeline_stages > 1) is wrapped in "
                                      "TrainOneStepCell without PipelineCell"), rank.reason
        assert "nn.PipelineCell(net_with_loss, micro_size)" in rank.reason
    (failure,) = report.failures()
    assert failure.ranks == [0, 1]


def test_a_strategy_that_needs_more_devices_fails_with_mindspores_reason(dryrun_xdg, tmp_path):
    """A real dry run: ((2, 2), (2, 1)) needs 4 devices, the job has 2."""
    result = CliRunner().invoke(main, ["dryrun", str(NETS / "matmul_strategy.py"), "--ranks", "2",
                                       "--out", str(tmp_path), "--", "2,2/2,1"], env={"COLUMNS": "400"})
    assert result.exit_code == 1, result.output
    why = "The strategy is ((2, 2), (2, 1)), it requires 4 devices, but the device number of this stage is 2"
    assert result.output.count(why) == 1, result.output
    assert "ranks 0-1 failed: RuntimeError: Failure:operator MatMul init failed" in result.output
    # The strategy is refused inside the parallel pass, after MindSpore dumped step_parallel_begin
    # and before step_parallel_end: only the pass written is named as kept (issue 40).
    assert "kept per rank: step_parallel_begin (" in result.output
    (run,) = tmp_path.iterdir()
    record = json.loads((run / "config.json").read_text())
    assert record["status"] == "failed" and record["ranks_ok"] == []
    assert record["parallel_mode"] == "semi_auto_parallel" and record["script_args"] == ["2,2/2,1"]
    (failure,) = record["failures"]
    assert failure["ranks"] == [0, 1] and why in failure["reason"]
    assert why in failure["mindspore_errors"][0]
    shutil.rmtree(run)
