"""No scheduler or worker survives a failed rank, a killed launcher or Ctrl-C."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from dryrun_helpers import SEED002


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_dead(pids, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.2)
    return [p for p in pids if _alive(p)]


def test_killed_rank_is_named_and_nothing_survives(dryrun_env, runs_root):
    from msinspect.dryrun import RankState, format_summary, run_dryrun, tagged_processes

    killed = {}

    def on_update(result, n_files):
        # kill rank 1's worker as soon as it runs (the second pid of a rank is its worker)
        if result.rank == 1 and len(result.pids) == 2 and not killed:
            killed["pid"] = result.pids[1]
            os.kill(result.pids[1], signal.SIGKILL)

    report = run_dryrun(SEED002, 8, only=[0, 1], out_root=runs_root, jobs=2, environment=dryrun_env,
                        timeout=300, on_update=on_update)
    assert killed
    r1 = report.rank(1)
    assert r1.state is RankState.FAILED
    assert "SIGKILL" in r1.reason
    assert report.rank(0).ok
    assert not report.ok
    summary = format_summary(report)
    assert "rank 1: failed" in summary and "SIGKILL" in summary
    all_pids = [p for r in report.ranks for p in r.pids]
    assert len(all_pids) == 4
    assert _wait_dead(all_pids, 1.0) == []
    assert tagged_processes(report.tag) == []


_CHILD = r"""
import json, signal, sys
from pathlib import Path
# Ctrl-C as a terminal gives it: a suite started in the background (make test &) runs with SIGINT
# ignored, which its children inherit, and Python then never raises KeyboardInterrupt
signal.signal(signal.SIGINT, signal.default_int_handler)
from msinspect.dryrun import run_dryrun, DryRunEnvironment
env = DryRunEnvironment(Path(sys.argv[2]))
def on_update(result, n):
    if len(result.pids) == 2:
        sys.stdout.write(json.dumps({"rank": result.rank, "pids": result.pids}) + "\n")
        sys.stdout.flush()
run_dryrun(sys.argv[1], 8, only=[0, 1], out_root=sys.argv[3], jobs=2, environment=env, on_update=on_update)
"""


def _tag_of(pid: int, wait: float = 10.0) -> bytes:
    """The run tag in a launched process's environment. Until the process has exec'd, /proc shows
    its parent's environment (no tag): on a loaded machine the first read can come that early."""
    deadline = time.monotonic() + wait
    while True:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            found = [v for v in fh.read().split(b"\0") if v.startswith(b"MSINSPECT_DRYRUN_TAG=")]
        if found or time.monotonic() > deadline:
            assert found, f"process {pid} carries no MSINSPECT_DRYRUN_TAG after {wait} s"
            return found[0].split(b"=", 1)[1]
        time.sleep(0.05)


def _launch_and_interrupt(dryrun_env, runs_root, sig):
    repo = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(repo) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(SEED002), str(dryrun_env.cuda_home), str(runs_root)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                             start_new_session=True)
    try:
        first = json.loads(child.stdout.readline())
        pids = first["pids"]
        tag = _tag_of(pids[1])
        time.sleep(1.0)  # mid-run: the worker is importing MindSpore / compiling
        child.send_signal(sig)
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    return child, pids, tag.decode()


def test_launcher_killed_with_sigkill_leaves_nothing(dryrun_env, runs_root):
    from msinspect.dryrun import tagged_processes

    child, pids, tag = _launch_and_interrupt(dryrun_env, runs_root, signal.SIGKILL)
    assert child.returncode == -signal.SIGKILL
    # no handler runs in the launcher: its watchdog process notices and kills the groups
    assert _wait_dead(pids, 20.0) == []
    deadline = time.monotonic() + 10
    while tagged_processes(tag) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert tagged_processes(tag) == []


def test_ctrl_c_stops_every_process(dryrun_env, runs_root):
    from msinspect.dryrun import tagged_processes

    child, pids, tag = _launch_and_interrupt(dryrun_env, runs_root, signal.SIGINT)
    assert child.returncode != 0
    assert "DryRunInterrupted" in child.stderr.read()
    assert _wait_dead(pids, 5.0) == []
    assert tagged_processes(tag) == []
