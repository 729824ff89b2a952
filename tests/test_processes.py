"""The process utilities both launchers use (msinspect.processes), on real processes."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest

from msinspect.errors import MsInspectError
from msinspect.processes import (NO_LOG, failure_reason, free_port, group_alive, kill_group, kill_tagged, new_run_dir,
                                 signals_as_interrupt, tagged_processes)

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def _spawn(env_extra: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(SLEEPER, env=dict(os.environ, **(env_extra or {})), start_new_session=True)


def _gone(proc: subprocess.Popen, seconds: float = 10.0) -> bool:
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_free_port_can_be_bound():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_new_run_dir_never_reuses(tmp_path):
    first = new_run_dir(tmp_path / "runs", "dryrun-x")
    second = new_run_dir(tmp_path / "runs", "dryrun-x")
    assert first != second and first.is_dir() and second.is_dir()
    assert first.name.startswith("dryrun-x-") and second.name.startswith(first.name)


def test_new_run_dir_raises_the_given_error_when_no_name_is_left(tmp_path, monkeypatch):
    class Boom(MsInspectError):
        pass

    real_mkdir = type(tmp_path).mkdir

    def taken(self, *args, exist_ok=False, **kwargs):
        if not exist_ok:  # every run folder name is taken
            raise FileExistsError(self)
        real_mkdir(self, *args, exist_ok=exist_ok, **kwargs)

    root = tmp_path / "runs"
    monkeypatch.setattr(type(root), "mkdir", taken)
    with pytest.raises(Boom, match="could not create a new run folder"):
        new_run_dir(root, "train-m", error=Boom)


def test_tagged_processes_finds_only_the_tagged_live_process():
    tagged = _spawn({"MSINSPECT_TEST_TAG": "t-1"})
    other = _spawn({"MSINSPECT_TEST_TAG": "t-2"})
    try:
        deadline = time.monotonic() + 10
        while tagged.pid not in tagged_processes("MSINSPECT_TEST_TAG", "t-1") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tagged_processes("MSINSPECT_TEST_TAG", "t-1") == [tagged.pid]
        kill_tagged("MSINSPECT_TEST_TAG", "t-1")
        assert _gone(tagged)
        assert tagged_processes("MSINSPECT_TEST_TAG", "t-1") == []
        assert other.poll() is None  # another tag is left alone
    finally:
        for proc in (tagged, other):
            proc.kill()
            proc.wait()


def test_a_zombie_is_not_live():
    proc = _spawn({"MSINSPECT_TEST_TAG": "z"})
    try:
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while psutil.Process(proc.pid).status() != psutil.STATUS_ZOMBIE and time.monotonic() < deadline:
            time.sleep(0.05)
        assert psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE  # not reaped yet
        assert tagged_processes("MSINSPECT_TEST_TAG", "z") == []
        assert not group_alive(proc.pid)
    finally:
        proc.wait()


def test_kill_group_stops_a_group_that_ignores_sigterm():
    stubborn = subprocess.Popen([sys.executable, "-c", "import signal, sys, time; "
                                 "signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
                                 "time.sleep(60)"], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert stubborn.stdout.readline().strip() == "ready"
        assert group_alive(stubborn.pid)
        kill_group(stubborn.pid, grace=0.5)
        assert _gone(stubborn)
        assert stubborn.returncode == -signal.SIGKILL
        assert not group_alive(stubborn.pid)
    finally:
        stubborn.kill()
        stubborn.wait()


def test_signals_as_interrupt_only_inside_the_block():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with signals_as_interrupt((signal.SIGTERM,)):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
    assert signal.getsignal(signal.SIGTERM) is before


# ---- the reason a worker's log gives (both launchers read their logs with the one function)
def test_failure_reason_is_the_last_exception_of_a_training_log(tmp_path):
    log = tmp_path / "worker_3.log"
    log.write_text("epoch: 1 step: 1, loss is 2.30\nTraceback (most recent call last):\n  File \"train.py\", line 9\n"
                   "RuntimeError: first\nDuring handling ...\nmindspore._c_expression.CommError: Init HCCL failed\n")
    assert failure_reason(log) == "mindspore._c_expression.CommError: Init HCCL failed"


def test_failure_reason_reads_a_quoted_message_on_one_line(tmp_path):
    """MindSpore 2.10's PipelineCell raises a KeyError naming the network's cells; Python prints
    the message's repr, its line breaks as ``\\n`` (line 107 of a rank's log, from a net whose
    stage_config named ReLU primitives, which are no cells)."""
    log = tmp_path / "rank_0.log"
    log.write_text("""KeyError: "For 'PipelineCell', the argument 'stage_config' : {'net.act': 0} is not found in """
                   """'network' : WithLoss(\\n  (net): MLP(\\n    (fc1): Dense()\\n  )\\n)"\n""")
    assert failure_reason(log) == ("""KeyError: "For 'PipelineCell', the argument 'stage_config' : {'net.act': 0} is not """
                                   """found in 'network' : WithLoss( (net): MLP( (fc1): Dense() ) )\"""")


def test_failure_reason_reads_a_scripts_own_error_line(tmp_path):
    log = tmp_path / "worker_0.log"
    log.write_text("msinspect-job: loading data\nerror: no MNIST files under /data\n")
    assert failure_reason(log) == "error: no MNIST files under /data"


def test_failure_reason_gives_mindspores_error_with_the_message_under_its_banner(tmp_path):
    log = tmp_path / "worker_0.log"
    # MindSpore's format: [LEVEL] ME(pid,thread,python):time [file:line] Function] message
    log.write_text("[WARNING] ME(7,1,python):2026-01-01-00:00:00.000.000 [a.cc:1] Warn] w\n"
                   "[ERROR] ME(7,1,python):2026-01-01-00:00:00.000.000 [b.cc:2] Init] collective init failed\n"
                   "----------------------------------------------------\n- Framework Error Message:\n")
    assert failure_reason(log) == "Init] collective init failed: - Framework Error Message:"


def test_failure_reason_of_no_log_and_of_a_quiet_log(tmp_path):
    assert failure_reason(tmp_path / "missing.log") == NO_LOG
    quiet = tmp_path / "quiet.log"
    quiet.write_text("epoch: 1 step: 1, loss is 2.30\n")
    assert failure_reason(quiet) == ""
