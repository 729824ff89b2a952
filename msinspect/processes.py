"""Process utilities shared by the two launchers (:mod:`msinspect.dryrun.launcher`,
:mod:`msinspect.train.launcher`): a free port, a new run folder, finding and killing the
processes of a run by a tag in their environment (psutil), stopping a process group, and turning
termination signals into :class:`KeyboardInterrupt` while a run is under way."""
from __future__ import annotations

import contextlib
import datetime as _dt
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Iterator

import psutil

from msinspect.errors import MsInspectError


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_run_dir(out_root: Path | str, base: str, *,
                error: type[MsInspectError] = MsInspectError) -> Path:
    """Create and return a new folder ``<out_root>/<base>-<timestamp>[-n]``; never reuse one.
    ``error`` is raised when no new name is left (999 runs within one second)."""
    root = Path(out_root)
    root.mkdir(parents=True, exist_ok=True)
    stamped = f"{base}-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"
    for n in range(1, 1000):
        candidate = root / (stamped if n == 1 else f"{stamped}-{n}")
        try:
            candidate.mkdir(exist_ok=False)
        except FileExistsError:
            continue
        return candidate
    raise error(f"could not create a new run folder under {root}")


def _alive(proc: psutil.Process) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def tagged_processes(variable: str, tag: str) -> list[int]:
    """Pids of live (non-zombie) processes other than this one whose environment carries
    ``variable=tag``; processes whose environment cannot be read are not counted."""
    found = []
    for proc in psutil.process_iter():
        if proc.pid == os.getpid():
            continue
        try:
            env = proc.environ()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
        if env.get(variable) == tag and _alive(proc):
            found.append(proc.pid)
    return found


def kill_tagged(variable: str, tag: str, sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to every process :func:`tagged_processes` finds."""
    for pid in tagged_processes(variable, tag):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` has a member that is not a zombie."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A group whose members are all zombies still answers the signal 0.
    for proc in psutil.process_iter():
        try:
            in_group = os.getpgid(proc.pid) == pgid
        except OSError:
            continue
        if in_group and _alive(proc):
            return True
    return False


def kill_group(pgid: int, *, grace: float) -> None:
    """SIGTERM a process group, then SIGKILL what is left of it after ``grace`` seconds."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    except PermissionError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


@contextlib.contextmanager
def signals_as_interrupt(signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGHUP)) -> Iterator[None]:
    """In the main thread, turn ``signals`` into :class:`KeyboardInterrupt` for the block's
    duration (elsewhere, where Python cannot set handlers, nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = {}
    for sig in signals:
        with contextlib.suppress(ValueError, OSError):
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, old)
