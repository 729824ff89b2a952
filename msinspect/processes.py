"""Process utilities shared by the two launchers (:mod:`msinspect.dryrun.launcher`,
:mod:`msinspect.train.launcher`): a free port, a new run folder, finding and killing the
processes of a run by a tag in their environment (psutil; the dry run's watchdog uses the same),
stopping a process group, turning termination signals into :class:`KeyboardInterrupt` while a run
is under way, and the reason a worker's log gives for its failure."""
from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Iterable, Iterator, Pattern

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


#: The run record in a run folder, beside ``rank_N/`` and ``logs/``: how the run was made and how
#: it ended (``msinspect train`` and ``msinspect dryrun`` write it; the analyses read ``ranks``).
RUN_RECORD = "config.json"


def update_run_record(run_dir: Path | str, fields: dict) -> Path:
    """Write ``fields`` into the run record of ``run_dir``, keeping what is already there (a dry run
    that ``msinspect train`` started is recorded by both), atomically (temp file, then rename)."""
    path = Path(run_dir) / RUN_RECORD
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    if not isinstance(record, dict):
        record = {}
    record.update(fields)
    tmp = path.with_name(f".{RUN_RECORD}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


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


#: What :func:`failure_reason` says of a log that is not there.
NO_LOG = "no log written"

# A Python exception line (``ValueError: ...``, ``mindspore.X.FooError``, ``KeyboardInterrupt``),
# or a script's own ``error: ...`` line.
_PY_EXCEPTION = re.compile(r"^(?:(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Interrupt)\b:?\s*(.*)|error:.*)$")
#: A line break written as ``\n`` inside a quoted message (a KeyError prints its message's repr:
#: ``KeyError: "... : WithLoss(\n  (net): MLP(\n ..."``), with the indent after it.
_ESCAPED_BREAK = re.compile(r"(?:\\n)+\s*")
# MindSpore's log lines at error level; the message follows a ``----`` banner on the next lines.
_MS_ERROR = re.compile(r"^\[(?:ERROR|CRITICAL)\]")


def failure_reason(log: Path | None, *, hints: Iterable[tuple[Pattern, str]] = (),
                   ignore: Pattern | None = None, max_len: int = 300) -> str:
    """The most telling error of a worker's log, cut to ``max_len`` characters.

    The advice of the first of ``hints`` (``(pattern, advice)``) whose pattern a line matches;
    else the last Python exception line; else the first MindSpore ``[ERROR]`` / ``[CRITICAL]``
    line with the message under it. Errors that ``ignore`` matches (what a run is expected to
    print, e.g. a dry run's device errors after compiling) are passed over, unless nothing else is
    found for an exception. ``""`` when the log tells nothing, :data:`NO_LOG` when there is no
    log, ``log unreadable: ...`` when it cannot be read.
    """
    if log is None or not Path(log).is_file():
        return NO_LOG
    try:
        lines = Path(log).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        return f"log unreadable: {exc}"
    for pattern, hint in hints:
        if any(pattern.search(line) for line in lines):
            return hint
    exception = None
    for line in lines:
        stripped = line.strip()
        if _PY_EXCEPTION.match(stripped) and not stripped.startswith("Traceback"):
            exception = _ESCAPED_BREAK.sub(" ", stripped)
    if exception and not (ignore and ignore.search(exception)):
        return exception[:max_len]
    for i, line in enumerate(lines):
        if _MS_ERROR.match(line) and not (ignore and ignore.search(" ".join(lines[i:i + 6]))):
            detail = [l.strip() for l in lines[i + 1:i + 8] if l.strip() and not l.startswith("---")]
            text = line.split("] ", 2)[-1] + (": " + detail[0] if detail else "")
            return text[:max_len]
    return exception[:max_len] if exception else ""
