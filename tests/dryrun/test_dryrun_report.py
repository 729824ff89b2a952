"""Completeness by the file's own counts, failure reasons read from logs, file lookup by stage."""
from __future__ import annotations

from pathlib import Path

from msinspect.dryrun.report import _line_check, failure_reason, find_pass_files

IR = """# IR entry: @1_net_construct_1
# Total subgraphs: 1

Node counting information:
Total number of nodes: 9
Total number of cnodes: 3

subgraph @1_net_construct_1() {
  %0(CNode_1) = PrimFunc_MatMul(%para1_x, %para2_w, Bool(0), Bool(0)) {instance name: matmul} {in_strategy: ((2, 4), (4, 1))}
      : (<Tensor[Float32], (8, 8)>, <Tensor[Float32], (8, 16)>) -> (<Tensor[Float32], (8, 16)>)
  %1(CNode_2) = PrimFunc_ReLU(%0)
      : (<Tensor[Float32], (8, 16)>) -> (<Tensor[Float32], (8, 16)>)
  Return(%1)
      : (<Tensor[Float32], (8, 16)>)
}


"""


def test_complete_file(tmp_path):
    path = tmp_path / "step_parallel_end_0133.ir"
    path.write_text(IR)
    assert _line_check(path)


def test_truncated_file(tmp_path):
    path = tmp_path / "step_parallel_end_0133.ir"
    path.write_text(IR[: IR.index("  Return")])
    assert not _line_check(path)


def test_file_without_count(tmp_path):
    path = tmp_path / "x.ir"
    path.write_text(IR.replace("Total number of cnodes: 3\n", ""))
    assert not _line_check(path)
    assert not _line_check(tmp_path / "missing.ir")


def test_find_by_stage_name_not_number(tmp_path):
    for name in ("step_parallel_end_0133.ir", "21_step_parallel_end_0021.ir", "step_parallel_begin_0132.ir",
                 "opt_pass_step_parallel_end_x.ir"):
        (tmp_path / name).write_text("")
    assert [p.name for p in find_pass_files(tmp_path, "step_parallel_end")] == [
        "21_step_parallel_end_0021.ir", "step_parallel_end_0133.ir"]


def _log(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rank_0.log"
    path.write_text(text)
    return path


def test_reason_is_the_python_exception(tmp_path):
    log = _log(tmp_path, "epoch: 1 step: 1, loss is 0\nTraceback (most recent call last):\n  File \"x.py\"\n"
                         "ValueError: For 'MatMul', the shard strategy ((3, 1)) is invalid\n")
    assert failure_reason(log).startswith("ValueError: For 'MatMul'")


def test_expected_device_errors_are_not_the_reason(tmp_path):
    log = _log(tmp_path, "[ERROR] ME(1):x [a.cc:1] WaitTaskFinishOnDevice] SyncStream failed, exception:\n"
                         "----\nSetDevice for id:0 failed, ret[35]\n")
    assert failure_reason(log) == ""


def test_cpu_target_gets_a_hint(tmp_path):
    log = _log(tmp_path, "RuntimeError: Invalid communication backend: CPU for semi_auto_parallel/auto_parallel "
                         "mode, currently only support Ascend/GPU backend.\n")
    assert "device target to CPU" in failure_reason(log)


def test_no_log(tmp_path):
    assert failure_reason(tmp_path / "none.log") == "no log written"


# ---- a rank whose IR the parser rejects is not a truncated dump (crafted rank folders)
def _rank_folder(tmp_path, text: str) -> Path:
    folder = tmp_path / "rank_0"
    folder.mkdir()
    path = folder / "step_parallel_end_0133.ir"
    path.write_text(text)
    return path


def test_verdict_complete(tmp_path):
    from msinspect.dryrun.report import ir_verdict, is_complete
    path = _rank_folder(tmp_path, IR)
    assert ir_verdict(path) == "" and is_complete(path)


def test_verdict_ir_the_parser_rejects(tmp_path):
    from msinspect.dryrun.report import ir_verdict, is_complete
    # every node line is there (the dump is whole) but one carries a construct the grammar lacks
    path = _rank_folder(tmp_path, IR.replace("PrimFunc_ReLU(%0)", "PrimFunc_ReLU(%0) ?!?"))
    verdict = ir_verdict(path)
    assert verdict.startswith(f"IR not readable by msinspect: {path}:11:35: unexpected")  # line 11, at "?"
    assert "incomplete" not in verdict and not is_complete(path)


def test_verdict_truncated_dump(tmp_path):
    from msinspect.dryrun.report import ir_verdict
    path = _rank_folder(tmp_path, IR[: IR.index("  Return")])
    verdict = ir_verdict(path)
    assert verdict.startswith("incomplete") and "not readable" not in verdict


def _judged(tmp_path: Path, ir_text: str | None, **how):
    """A rank judged as the launcher judges it when its processes have ended (no MindSpore run)."""
    import threading

    from msinspect.dryrun.launcher import _RankRunner
    from msinspect.dryrun.report import DryRunReport

    run_dir = tmp_path / "run"
    (run_dir / "rank_0").mkdir(parents=True)
    if ir_text is not None:
        (run_dir / "rank_0" / "step_parallel_end_0133.ir").write_text(ir_text)
    runner = _RankRunner(rank=0, rank_size=8, script=tmp_path / "net.py", script_args=(), run_dir=run_dir,
                         python="python", cwd=tmp_path, env={}, keep_all_passes=True, timeout=60,
                         cancel=threading.Event(), on_update=None)
    runner._judge(**{"timed_out": False, "cancelled": False, **how})
    report = DryRunReport(script=tmp_path / "net.py", run_dir=run_dir, rank_size=8, ranks=[runner.result],
                          wall_seconds=1.0, interrupted=how.get("cancelled", False))
    return runner.result, report


def test_a_rank_cancelled_after_writing_whole_ir_is_counted_as_having_written_it(tmp_path):
    from msinspect.dryrun.report import RankState, format_summary

    rank, report = _judged(tmp_path, IR, cancelled=True)
    assert rank.state is RankState.CANCELLED and rank.ir_complete
    assert "after writing a complete step_parallel_end" in rank.reason
    assert "1/1 ranks wrote complete strategy IR" in format_summary(report)
    assert report.to_dict()["ranks"][0]["ir_complete"] is True
    # cut short, or never written: not complete, whatever stopped the rank
    for text in (IR[: IR.index("  Return")], None):
        rank, report = _judged(tmp_path / str(text is None), text, cancelled=True)
        assert not rank.ir_complete and rank.reason == "stopped: run interrupted"
        assert "0/1 ranks wrote complete strategy IR" in format_summary(report)
    rank, _ = _judged(tmp_path / "ok", IR)
    assert rank.ok and rank.ir_complete


# ---- a rank that compiled but wrote IR msinspect cannot read is "compiled", never "failed"
def test_a_whole_dump_the_parser_rejects_is_compiled_with_the_files_named(tmp_path):
    from msinspect.dryrun.report import RankState, format_summary

    bad = IR.replace("PrimFunc_ReLU(%0)", "PrimFunc_ReLU(%0) ?!?")
    rank, report = _judged(tmp_path, bad)
    assert rank.state is RankState.COMPILED and rank.state is not RankState.FAILED
    assert rank.ok and rank.ir_complete and report.ok
    (problem,) = rank.unreadable
    assert problem.startswith(str(tmp_path / "run" / "rank_0" / "step_parallel_end_0133.ir") + ":11:35:")
    assert "step_parallel_end_0133.ir" in rank.reason and "cannot read 1 of its 1" in rank.reason
    assert report.unreadable == [rank]
    summary = format_summary(report)
    assert "rank 0: compiled, but msinspect cannot read" in summary and "step_parallel_end_0133.ir:11:35" in summary
    assert report.to_dict()["ranks"][0]["state"] == "compiled"
    assert report.to_dict()["ranks"][0]["unreadable"] == [problem]


def test_a_cut_short_dump_still_fails(tmp_path):
    from msinspect.dryrun.report import RankState

    rank, report = _judged(tmp_path, IR[: IR.index("  Return")])
    assert rank.state is RankState.FAILED and not rank.ok and not report.ok
    assert rank.reason.startswith("step_parallel_end incomplete") and rank.unreadable == []


def test_the_cli_summary_shows_a_compiled_rank(tmp_path):
    from rich.table import Table

    from msinspect.cli.dryrun_cmd import _print_summary
    from msinspect.cli.output import console

    _, report = _judged(tmp_path, IR.replace("PrimFunc_ReLU(%0)", "PrimFunc_ReLU(%0) ?!?"))
    out = console()
    out.width = 400
    with out.capture() as captured:
        _print_summary(out, report, Table, "nothing was computed")
    text = captured.get()
    assert "compiled" in text and "cannot read all of their IR" in text and "step_parallel_end_0133.ir:11:35" in text


# ---- an eager operation on the stand-in GPU: the cause, where, and what to do
_EAGER = """Traceback (most recent call last):
  File "/opt/msinspect/dryrun/bootstrap.py", line 120, in main
    runpy.run_path(script, run_name="__main__")
  File "<frozen runpy>", line 291, in run_path
  File "/home/u/train_llama.py", line 30, in <module>
    net = LlamaForCausalLM(config)
  File "/env/site-packages/mindformers/generation/text_generator.py", line 98, in __init__
    self.hard_mask = Tensor([0], dtype=ms.bfloat16).reshape(1, 1)
  File "/env/site-packages/mindspore/common/tensor.py", line 641, in reshape
    return self._reshape
RuntimeError: 
----------------------------------------------------
- Cuda error:
----------------------------------------------------
The cudaGetLastError[35], CUDA driver version is insufficient for CUDA runtime version
"""


def test_stand_in_gpu_reason_names_the_frame_and_the_fix(tmp_path):
    from msinspect.dryrun.report import stand_in_gpu_reason

    mark = "msinspect dry run: building the network on the CPU device; compiling it for GPU\n"
    log = _log(tmp_path, _EAGER)
    before_init = stand_in_gpu_reason(log, "cpu")
    assert "mindformers/generation/text_generator.py:98 in __init__" in before_init
    assert "before mindspore.communication.init() returned" in before_init
    assert "without --build-device gpu" in stand_in_gpu_reason(log, "gpu")
    assert "after the first graph compile" in stand_in_gpu_reason(_log(tmp_path, mark + _EAGER), "cpu")


def test_device_errors_after_another_failure_are_not_the_cause(tmp_path):
    """The dry run prints the stand-in's errors at exit too: only the exception that ended the
    script counts."""
    from msinspect.dryrun.report import stand_in_gpu_reason

    text = ("Traceback (most recent call last):\n  File \"/home/u/net.py\", line 3, in <module>\n"
            "ValueError: For 'MatMul', the shard strategy ((3, 1)) is invalid\n"
            "[ERROR] ME(1):x [a.cc:1] WaitTaskFinishOnDevice] SyncStream failed, exception:\n"
            "SetDevice for id:0 failed, ret[35], CUDA driver version is insufficient for CUDA runtime version\n")
    assert stand_in_gpu_reason(_log(tmp_path, text)) == ""
    assert stand_in_gpu_reason(None) == "" and stand_in_gpu_reason(tmp_path / "none.log") == ""


def test_broadcast_batchmatmul_gets_the_mindformers_hint(tmp_path):
    log = _log(tmp_path, "ValueError: For BatchMatMul, inputs shape cannot be broadcast on CPU/GPU, with x shape "
                         "[const vector]{2, 8, 64, 64}, y shape [const vector]{64, 64}\n")
    assert "use_rope_slice=True" in failure_reason(log)
