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
