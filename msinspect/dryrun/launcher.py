"""Launch a compile-only dry run: one MindSpore scheduler and one worker per simulated rank.

Each worker believes it is rank ``r`` of ``N`` (``RANK_ID``, ``RANK_SIZE``) in a cluster of
one (``MS_WORKER_NUM=1``) and uses MindSpore's dummy communication library
(``MS_SIMULATION_LEVEL=0``), so the real auto-parallel planner runs and writes the rank's
IR, but no device is used and nothing is computed.

What a user script must do to run unchanged
-------------------------------------------
* Call ``mindspore.communication.init()`` (with no backend name, or ``"nccl"``) before the
  network is compiled, and read ranks with ``get_rank()`` / ``get_group_size()``.
* Not hard-code the CPU device target. Leaving it unset is best: with the dry-run
  environment the GPU plugin loads and MindSpore's default device target becomes GPU by
  itself. ``ms.set_device("GPU")`` / ``set_context(device_target="GPU")`` also work;
  ``device_target="CPU"`` makes MindSpore refuse the parallel modes. A script that must
  choose can do ``ms.set_device(os.environ.get("MSINSPECT_DEVICE_TARGET", "Ascend"))``:
  the launcher sets ``MSINSPECT_DEVICE_TARGET=GPU``.
* Not set ``save_graphs_path`` itself (the launcher sets ``MS_DEV_SAVE_GRAPHS=2`` and
  ``MS_DEV_SAVE_GRAPHS_PATH`` to the new run folder). ``MS_DEV_SAVE_GRAPHS`` set by the
  script is fine.
* Operations the script runs eagerly (PyNative) while it builds the network, after ``init()``,
  run on the CPU device: the worker builds the network on the CPU and compiles it for the
  planner's GPU (:mod:`msinspect.dryrun.bootstrap`; ``build_device="gpu"`` turns that off).
  MindFormers needs it (``LlamaForCausalLM`` runs ``Tensor([0]).reshape(1, 1)`` while it is built).
* Relative paths (datasets) are resolved from the current directory, as with ``msrun``.
* Training loops run, but each step is a no-op: losses print as 0 and are not losses.
  The IR is complete before MindSpore's expected device errors (SetDevice, cudaHostAlloc).
"""
from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Callable, Iterable, Sequence

from . import record
from .environment import DryRunEnvironment, DryRunSetupError, Problem, detect_real_accelerator, load_environment
from .report import (NOTHING_COMPUTED, UNREADABLE, DryRunReport, RankState, SimulatedRank, failed_alike, failed_at,
                     failure_reason, find_pass_files, ir_verdict, mindspore_errors, stand_in_gpu_reason,
                     with_mindspore_error)
from msinspect import processes
from msinspect.errors import MsInspectError
from msinspect.processes import free_port, kill_group, kill_tagged, signals_as_interrupt
from msinspect.stages import DRYRUN_PASSES, STRATEGY_STAGE, files_of_stage

#: Environment variable carried by every process a dry run starts; used to find stragglers.
TAG_VARIABLE = "MSINSPECT_DRYRUN_TAG"

#: Variables from the caller's environment that would confuse the simulated cluster.
_SCRUBBED = re.compile(
    r"^(MS_ROLE|MS_SCHED_HOST|MS_SCHED_PORT|MS_WORKER_NUM|MS_SERVER_NUM|MS_NODE_ID|MS_SIMULATION_LEVEL|"
    r"RANK_ID|RANK_SIZE|RANK_TABLE_FILE|MINDSPORE_HCCL_CONFIG_PATH|DEVICE_ID|OMPI_.*|PMIX_.*|"
    r"MS_DEV_SAVE_GRAPHS.*|MS_DEV_DUMP_IR_PASSES|MSINSPECT_DRYRUN_TAG)$")

#: What ``--env NAME=VALUE`` may name: an environment variable's name.
VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_SCHEDULER_PROGRAM = "from mindspore.communication import init; init()"
#: The worker's program, run by path by the worker's interpreter (see its docstring).
BOOTSTRAP = Path(__file__).resolve().with_name("bootstrap.py")
BUILD_DEVICES = ("cpu", "gpu")
_STOP_GRACE_SECONDS = 3.0
_SCHEDULER_EXIT_WAIT = 10.0
_POLL = 0.2

UpdateCallback = Callable[[SimulatedRank, int], None]
"""Called with a rank's result (state so far) and the number of IR files it has written."""


class DryRunError(MsInspectError, RuntimeError):
    """The dry run cannot start (bad arguments, real accelerator present, environment missing)."""


class DryRunInterrupted(KeyboardInterrupt):
    """The user stopped the run; every process was stopped. ``report`` holds what was done."""

    def __init__(self, report: DryRunReport):
        super().__init__("dry run interrupted")
        self.report = report


# --------------------------------------------------------------------------- process groups
_groups_lock = threading.Lock()
_live_groups: set[int] = set()


def _register(pgid: int) -> None:
    with _groups_lock:
        _live_groups.add(pgid)


def _kill_group(pgid: int, *, grace: float = _STOP_GRACE_SECONDS) -> None:
    """SIGTERM a process group, then SIGKILL what is left of it after ``grace`` seconds."""
    kill_group(pgid, grace=grace)
    with _groups_lock:
        _live_groups.discard(pgid)


def tagged_processes(tag: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``MSINSPECT_DRYRUN_TAG=tag``."""
    return processes.tagged_processes(TAG_VARIABLE, tag)


def _kill_all_groups() -> None:
    with _groups_lock:
        groups = list(_live_groups)
    for pgid in groups:
        _kill_group(pgid, grace=1.0)


atexit.register(_kill_all_groups)


# --------------------------------------------------------------------------- watchdog
# A separate process that outlives a launcher killed with SIGKILL (where no handler runs): it
# learns each process group through a pipe and, if the pipe closes without "done", kills them
# all and any process still carrying the run's tag.
_WATCHDOG_PROGRAM = r"""
import os, signal, sys, time
tag, variable = sys.argv[1], sys.argv[2]
sys.path.insert(0, sys.argv[3])  # msinspect, as the launcher found it (installed or a checkout)
from msinspect.processes import kill_tagged  # the launchers' own scan (psutil)
groups, done = set(), False
for line in sys.stdin:
    line = line.strip()
    if line == "done":
        done = True
        break
    if line[:1] in "+-" and line[1:].isdigit():
        (groups.add if line[0] == "+" else groups.discard)(int(line[1:]))
if not done:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for g in groups:
            try:
                os.killpg(g, sig)
            except OSError:
                pass
        time.sleep(2 if sig == signal.SIGTERM else 0)
    kill_tagged(variable, tag)
"""


class _Watchdog:
    def __init__(self, python: str, tag: str):
        """``python`` runs the watchdog: one that imports msinspect and psutil (the launcher's own)."""
        self._lock = threading.Lock()
        env = {k: v for k, v in os.environ.items() if k != TAG_VARIABLE}
        package_root = str(Path(processes.__file__).resolve().parent.parent)
        self.proc = subprocess.Popen([python, "-c", _WATCHDOG_PROGRAM, tag, TAG_VARIABLE, package_root],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                     start_new_session=True, text=True)

    def _send(self, line: str) -> None:
        with self._lock:
            with contextlib.suppress(OSError, ValueError):
                self.proc.stdin.write(line + "\n")
                self.proc.stdin.flush()

    def add(self, pgid: int) -> None:
        self._send(f"+{pgid}")

    def discard(self, pgid: int) -> None:
        self._send(f"-{pgid}")

    def close(self, *, clean: bool) -> None:
        if clean:
            self._send("done")
        with contextlib.suppress(OSError, ValueError):
            self.proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)


# --------------------------------------------------------------------------- helpers
def new_run_dir(out_root: Path | str, script: Path | str) -> Path:
    """Create and return a new folder ``<out_root>/dryrun-<script>-<timestamp>[-n]``; never reuse one."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(script).stem) or "script"
    return processes.new_run_dir(out_root, f"dryrun-{stem}", error=DryRunError)


def parse_env_options(items: Iterable[str]) -> dict[str, str]:
    """``["MP=2", "MS_DEV_X=a=b"]`` -> ``{"MP": "2", "MS_DEV_X": "a=b"}`` (the value is all after the
    first ``=``, possibly empty). :class:`DryRunError` for an item without ``=``, a name that cannot
    be a variable's, a name given twice, or one the dry run sets itself per process (the simulated
    cluster's: ``RANK_ID``, ``MS_ROLE``, ``MS_DEV_SAVE_GRAPHS`` ...)."""
    found: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not VARIABLE_NAME.match(name):
            raise DryRunError(f"--env {item!r}: expected NAME=VALUE, NAME a variable's name (letters, digits, _; "
                              "not starting with a digit)")
        if name in found:
            raise DryRunError(f"--env {name} is given twice ({name}={found[name]}, {item})")
        if _SCRUBBED.match(name):
            raise DryRunError(f"--env {name}: the dry run sets {name} itself for each simulated rank; "
                              "it cannot be set from outside")
        found[name] = value
    return found


def _clean_env(base: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in base.items() if not _SCRUBBED.match(k)}


def _prune(ir_dir: Path) -> None:
    """Remove what is neither a parallel-stage IR file nor one of MindSpore's records of its
    layouts (:func:`msinspect.mindspore.records.is_record_file`) from a rank folder of this run."""
    from msinspect.mindspore.records import is_record_file

    if not ir_dir.is_dir():
        return
    keep = set(files_of_stage(ir_dir, DRYRUN_PASSES))
    for path in ir_dir.iterdir():
        if path.is_file() and path not in keep and not is_record_file(path.name):
            path.unlink()


def process_variables(role: str, *, rank: int | str, rank_size: int, port: int | str, run_dir: Path,
                      build_device: str, keep_all_passes: bool) -> dict[str, str]:
    """The variables a rank's scheduler (``MS_SCHED``) or worker (``MS_WORKER``) gets on top of the
    run's environment: the cluster of one, the simulated rank, where the IR goes, which passes."""
    env = {"MS_ROLE": role, "MS_SCHED_HOST": "127.0.0.1", "MS_SCHED_PORT": str(port), "MS_WORKER_NUM": "1",
           "PYTHONUNBUFFERED": "1"}
    if role == "MS_WORKER":
        env.update({"MS_SIMULATION_LEVEL": "0", "RANK_SIZE": str(rank_size), "RANK_ID": str(rank),
                    "MS_DEV_SAVE_GRAPHS": "2", "MS_DEV_SAVE_GRAPHS_PATH": str(run_dir),
                    "MSINSPECT_BUILD_DEVICE": build_device.upper()})
        if not keep_all_passes:
            env["MS_DEV_DUMP_IR_PASSES"] = ",".join(DRYRUN_PASSES)
    return env


def _exit_code(status: int) -> int:
    return os.waitstatus_to_exitcode(status)


# --------------------------------------------------------------------------- one rank
class Cancel(threading.Event):
    """Set when the ranks still queued or running are to stop; ``why`` says why (the run was
    interrupted, or ranks failed alike for a reason that holds for every rank)."""

    why = "run interrupted"


class _RankRunner:
    def __init__(self, *, rank: int, rank_size: int, script: Path, script_args: Sequence[str], run_dir: Path,
                 python: str, cwd: Path, env: dict[str, str], keep_all_passes: bool, timeout: float,
                 cancel: threading.Event, on_update: UpdateCallback | None, watchdog: "_Watchdog | None" = None,
                 build_device: str = "cpu"):
        self.rank, self.rank_size = rank, rank_size
        self.script, self.script_args = script, list(script_args)
        self.run_dir, self.python, self.cwd, self.env = run_dir, python, cwd, env
        self.keep_all_passes, self.timeout = keep_all_passes, timeout
        self.cancel, self.on_update, self.watchdog = cancel, on_update, watchdog
        self.build_device = build_device
        logs = run_dir / "logs"
        self.result = SimulatedRank(rank=rank, ir_dir=run_dir / f"rank_{rank}", log=logs / f"rank_{rank}.log",
                                 scheduler_log=logs / f"rank_{rank}.scheduler.log")

    def _update(self) -> None:
        if self.on_update is not None:
            ir_dir = self.result.ir_dir
            n = sum(1 for _ in ir_dir.iterdir()) if ir_dir is not None and ir_dir.is_dir() else 0
            with contextlib.suppress(Exception):
                self.on_update(self.result, n)

    def _start(self, role: str, port: int, log: Path) -> subprocess.Popen:
        env = dict(self.env)
        env.update(process_variables(role, rank=self.rank, rank_size=self.rank_size, port=port, run_dir=self.run_dir,
                                     build_device=self.build_device, keep_all_passes=self.keep_all_passes))
        with open(log, "w") as fh:
            fh.write(f"# msinspect dry run, {'worker' if role == 'MS_WORKER' else 'scheduler'} of simulated rank "
                     f"{self.rank}/{self.rank_size}. {NOTHING_COMPUTED}\n")
            fh.flush()
            # The scheduler only hosts the cluster's meta server: a two-line program does it, so a
            # script's own start-up work (data loading, imports) is not paid twice per rank.
            argv = ([self.python, "-u", str(BOOTSTRAP), str(self.script), *self.script_args] if role == "MS_WORKER"
                    else [self.python, "-c", _SCHEDULER_PROGRAM])
            # It runs in the run's logs/ folder: `python -c` puts its working directory on
            # sys.path, and a user's folder may hold modules that MindSpore imports by plain name.
            cwd = self.cwd if role == "MS_WORKER" else log.parent
            proc = subprocess.Popen(argv, cwd=cwd, env=env,
                                    stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        _register(proc.pid)
        if self.watchdog is not None:
            self.watchdog.add(proc.pid)
        self.result.pids.append(proc.pid)
        return proc

    def run(self) -> SimulatedRank:
        r = self.result
        if self.cancel.is_set():
            r.state, r.reason = RankState.CANCELLED, f"not started: {getattr(self.cancel, 'why', Cancel.why)}"
            r.log = r.scheduler_log = None  # never written
            self._update()
            return r
        start = time.monotonic()
        r.state = RankState.RUNNING
        sched = worker = None
        timed_out = cancelled = False
        try:
            port = free_port()
            sched = self._start("MS_SCHED", port, r.scheduler_log)
            worker = self._start("MS_WORKER", port, r.log)
            self._update()
            deadline = start + self.timeout
            last_update = 0.0
            while True:
                pid, status, rusage = os.wait4(worker.pid, os.WNOHANG)
                if pid == worker.pid:
                    worker.returncode = r.exit_code = _exit_code(status)
                    r.peak_rss_bytes = rusage.ru_maxrss * 1024
                    break
                if self.cancel.is_set():
                    cancelled = True
                    break
                if time.monotonic() > deadline:
                    timed_out = True
                    break
                if time.monotonic() - last_update > 1.0:
                    last_update = time.monotonic()
                    self._update()
                time.sleep(_POLL)
            if r.exit_code == 0:
                # The scheduler leaves by itself once its worker has unregistered; a worker that
                # failed never unregisters, and its scheduler would wait out the whole grace.
                end = time.monotonic() + _SCHEDULER_EXIT_WAIT
                while sched.poll() is None and time.monotonic() < end and not self.cancel.is_set():
                    time.sleep(_POLL)
        finally:
            for proc in (worker, sched):
                if proc is not None:
                    _kill_group(proc.pid)
                    if self.watchdog is not None:
                        self.watchdog.discard(proc.pid)
                    with contextlib.suppress(Exception):
                        proc.wait(timeout=5)
            if worker is not None and r.exit_code is None and worker.returncode is not None:
                r.exit_code = worker.returncode
        r.wall_seconds = time.monotonic() - start
        self._judge(timed_out=timed_out, cancelled=cancelled)
        if not self.keep_all_passes and r.ir_dir is not None:
            _prune(r.ir_dir)
        self._update()
        return r

    def _judge(self, *, timed_out: bool, cancelled: bool) -> None:
        r = self.result
        assert r.ir_dir is not None
        r.step_parallel_end = find_pass_files(r.ir_dir, STRATEGY_STAGE)
        verdicts = [v for v in (ir_verdict(p) for p in r.step_parallel_end) if v]
        # A whole file that msinspect's parser rejects is msinspect's gap, not the rank's failure.
        r.unreadable = [v[len(UNREADABLE):] for v in verdicts if v.startswith(UNREADABLE)]
        broken = [v for v in verdicts if not v.startswith(UNREADABLE)]
        complete = r.ir_complete = bool(r.step_parallel_end) and not broken
        if complete and not cancelled:
            if r.unreadable:
                r.state = RankState.COMPILED
                r.reason = (f"compiled; msinspect cannot read {len(r.unreadable)} of its {len(r.step_parallel_end)} "
                            "step_parallel_end file(s): " + "; ".join(r.unreadable))
            else:
                r.state, r.reason = RankState.OK, ""
            return
        if cancelled:
            r.state = RankState.CANCELLED
            r.reason = (f"stopped: {getattr(self.cancel, 'why', Cancel.why)}"
                        + (" (after writing a complete step_parallel_end)" if complete else ""))
            return
        r.mindspore_errors, r.failed_at = mindspore_errors(r.log), failed_at(r.log)
        if timed_out:
            r.state = RankState.TIMED_OUT
            r.reason = f"no complete step_parallel_end within {self.timeout:g} s"
            return
        r.state = RankState.FAILED
        from_log = with_mindspore_error(failure_reason(r.log), r.mindspore_errors)
        if r.exit_code is not None and r.exit_code < 0:
            try:
                signame = signal.Signals(-r.exit_code).name
            except ValueError:
                signame = f"signal {-r.exit_code}"
            what = f"worker killed by {signame}"
            r.reason = what + (f"; last error: {from_log}" if from_log else "")
        elif r.step_parallel_end:
            r.reason = "step_parallel_end " + broken[0] + (f"; {from_log}" if from_log else "")
        else:
            r.reason = stand_in_gpu_reason(r.log, self.build_device) or from_log or (
                "no step_parallel_end written: does the script set a parallel mode and call init(), "
                "and leave save_graphs_path unset?")


# --------------------------------------------------------------------------- the run
def select_ranks(only: Iterable[int] | str | None, ranks: int) -> list[int]:
    """The ranks ``only`` names (``[0, 4]`` or ``"0,4-5"``; None: all of ``ranks``), sorted;
    :class:`DryRunError` for a rank outside ``0 .. ranks - 1`` or none at all."""
    if only is None:
        return list(range(ranks))
    if isinstance(only, str):
        chosen: set[int] = set()
        for part in only.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                lo, hi = (int(x) for x in part.split("-", 1)) if "-" in part[1:] else (int(part),) * 2
            except ValueError:
                raise DryRunError(f"--only {only!r}: expected rank numbers such as 0,4 or 0-3") from None
            if not (0 <= lo < ranks and 0 <= hi < ranks):
                raise DryRunError(f"ranks {part} are outside 0..{ranks - 1}")
            chosen.update(range(lo, hi + 1))
    else:
        chosen = {int(x) for x in only}
    bad = sorted(r for r in chosen if not 0 <= r < ranks)
    if bad:
        raise DryRunError(f"ranks {bad} are outside 0..{ranks - 1}")
    if not chosen:
        raise DryRunError("no rank selected")
    return sorted(chosen)


def run_dryrun(script: Path | str, ranks: int, *, out_root: Path | str = "runs",
               only: Iterable[int] | str | None = None, jobs: int = 2, script_args: Sequence[str] = (),
               keep_all_passes: bool = False, timeout: float = 600.0, cwd: Path | str | None = None,
               python: str | None = None, environment: DryRunEnvironment | None = None,
               extra_env: dict[str, str] | None = None, env_options: dict[str, str] | None = None,
               on_update: UpdateCallback | None = None, allow_accelerator: bool = False,
               build_device: str = "cpu", keep_going: bool = False) -> DryRunReport:
    """Dry-run ``script`` as ``ranks`` simulated ranks; return what each rank wrote.

    Every run writes into a new folder ``<out_root>/dryrun-<script>-<timestamp>/`` with one
    ``rank_N/`` IR folder per rank and ``logs/rank_N.log`` (+ ``rank_N.scheduler.log``).
    By default only the passes the analyses read are dumped (``MS_DEV_DUMP_IR_PASSES``: the
    parallel stages and ``validate``, :data:`~msinspect.stages.DRYRUN_PASSES`) and anything else
    is removed from the new rank folders; ``keep_all_passes`` keeps them all. The run's settings
    and how it ended go to ``config.json`` in the run folder (:mod:`msinspect.dryrun.record`).

    ``env_options`` (``--env NAME=VALUE``, read by :func:`parse_env_options`) are set in every
    scheduler and worker and recorded as the run's own settings (``msinspect compare`` shows two
    runs that differ in one); ``extra_env`` is a caller's (``msinspect train``, a sweep) set the same
    way without being part of the command line.

    Once two ranks have failed alike for a reason that does not depend on the rank
    (:func:`~msinspect.dryrun.report.failed_alike`: a strategy that needs more devices than the
    job has fails so on every rank), the ranks still queued or running are cancelled, saying why;
    ``keep_going`` compiles every rank whatever fails.

    ``only`` picks a subset of ranks (``[0, 4]`` or ``"0,4-5"``); ``jobs`` ranks run at once;
    ``timeout`` bounds each rank (seconds). A rank is ok when every step_parallel_end file it
    wrote is complete by its own node counts and msinspect reads it; ``compiled`` when the files
    are complete but msinspect's parser rejects some (listed in ``unreadable``); exit codes are not
    used (MindSpore prints device errors after the compile in this mode).

    ``python`` runs the script (default: this interpreter): another environment's, e.g. one with
    another MindSpore release (2.7 - 2.10 dry-run the same way, with this environment's CUDA
    home). ``build_device`` is where operations the script runs while building its network (after
    ``init()``, before the first compile) execute: ``"cpu"`` (default) or ``"gpu"``, the dry run's
    stand-in, which executes nothing (see :mod:`msinspect.dryrun.bootstrap`).

    No process outlives the call: each scheduler and worker gets its own process group,
    killed when its rank ends, fails, times out, or the run is interrupted (Ctrl-C, SIGTERM:
    :class:`DryRunInterrupted` is raised after clean-up, carrying the partial report).
    Raises :class:`DryRunError` when a real GPU / Ascend is present (use msrun there) unless
    ``allow_accelerator``, and :class:`DryRunSetupError` when the environment is not prepared.
    """
    script = Path(script).resolve()
    if not script.is_file():
        raise DryRunError(f"script not found: {script}")
    if ranks < 1:
        raise DryRunError("ranks must be at least 1")
    if jobs < 1:
        raise DryRunError("jobs must be at least 1")
    if build_device not in BUILD_DEVICES:
        raise DryRunError(f"build_device must be one of {BUILD_DEVICES}, not {build_device!r}")
    selected = select_ranks(only, ranks)
    env_options = parse_env_options(f"{k}={v}" for k, v in (env_options or {}).items())
    mindspore = check_interpreter(python) if python is not None else record.version_of("mindspore")
    if not allow_accelerator:
        accel = detect_real_accelerator()
        if accel:
            raise DryRunError(
                f"a real accelerator is present: {accel}. The dry run is for machines without one; here "
                f"MindSpore's own launcher runs the script for real, e.g. `msrun --worker_num={ranks} "
                f"--local_worker_num={ranks} --log_dir=LOGS --join=True {script.name}` with "
                "MS_DEV_SAVE_GRAPHS=2 (or pass allow_accelerator / --force to dry-run anyway).")
    env_obj = environment if environment is not None else load_environment()
    # Absolute: the ranks run with their own working folder, and MindSpore resolves a relative
    # MS_DEV_SAVE_GRAPHS_PATH against it.
    run_dir = new_run_dir(Path(out_root).resolve(), script)
    (run_dir / "logs").mkdir()
    tag = f"{run_dir.name}-{uuid.uuid4().hex[:8]}"
    env = _clean_env(env_obj.env())
    env.update(extra_env or {})
    env.update(env_options)
    env[TAG_VARIABLE] = tag
    env["MSINSPECT_DEVICE_TARGET"] = "GPU"
    dumped = env.get("MS_DEV_DUMP_IR_PASSES")  # a caller's own choice (msinspect train's), kept whole
    kept = list(DRYRUN_PASSES) if not keep_all_passes else dumped.split(",") if dumped else None
    worker = process_variables("MS_WORKER", rank="<rank>", rank_size=ranks, port="<port>", run_dir=run_dir,
                               build_device=build_device, keep_all_passes=keep_all_passes)
    settings = record.settings(
        script=script, script_args=script_args, cwd=Path(cwd).resolve() if cwd else Path.cwd(), ranks=ranks,
        selected=selected, jobs=jobs, timeout=timeout, keep_all_passes=keep_all_passes, kept_stages=kept,
        build_device=build_device, python=python, mindspore=mindspore, env=env, worker=worker,
        env_options=env_options, keep_going=keep_going, removed=[k for k in os.environ if _SCRUBBED.match(k)], tag=tag)
    record_path = processes.update_run_record(run_dir, settings)
    cancel = Cancel()
    watchdog = _Watchdog(sys.executable, tag)  # the launcher's own: it has msinspect and psutil
    runners = [_RankRunner(rank=r, rank_size=ranks, script=script, script_args=script_args, run_dir=run_dir,
                           python=python or sys.executable, cwd=Path(cwd) if cwd else Path.cwd(), env=env,
                           keep_all_passes=keep_all_passes, timeout=timeout, cancel=cancel, on_update=on_update,
                           watchdog=watchdog, build_device=build_device)
               for r in selected]
    report = DryRunReport(script=script, run_dir=run_dir, rank_size=ranks, ranks=[x.result for x in runners],
                          tag=tag, kept_stages=kept, record=record_path)
    for runner in runners:
        runner._update()
    judging = threading.Lock()

    def run_rank(runner: _RankRunner) -> SimulatedRank:
        result = runner.run()
        # Judged in the rank's own thread, before it takes the next rank from the queue.
        if not keep_going and result.state is RankState.FAILED and not cancel.is_set():
            with judging:
                _stop_if_failed_alike(report, cancel)
        return result

    start = time.monotonic()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="dryrun-rank")
    try:
        with signals_as_interrupt((signal.SIGTERM, signal.SIGHUP)):
            futures = [pool.submit(run_rank, runner) for runner in runners]
            pending = set(futures)
            while pending:
                _, pending = concurrent.futures.wait(pending, timeout=0.5)
            for fut in futures:
                fut.result()  # re-raise a launcher bug, if any
    except KeyboardInterrupt:
        cancel.set()
        report.interrupted = True
        for runner in runners:  # this run's groups only; other runs in this process go on
            for pgid in runner.result.pids:
                _kill_group(pgid, grace=1.0)
        pool.shutdown(wait=True, cancel_futures=False)
        _sweep(tag)
        report.wall_seconds = time.monotonic() - start
        _finish_record(report)
        raise DryRunInterrupted(report) from None
    finally:
        cancel.set()
        pool.shutdown(wait=True)
        _sweep(tag)
        watchdog.close(clean=True)
    report.wall_seconds = time.monotonic() - start
    _finish_record(report)
    return report


def _stop_if_failed_alike(report: DryRunReport, cancel: Cancel) -> None:
    """Cancel the ranks still to finish once two have failed alike (a reason that holds for all)."""
    from msinspect.ranks_text import ranks_text

    done = [r for r in report.ranks if r.state is RankState.FAILED]
    for i, a in enumerate(done):
        for b in done[i + 1:]:
            if failed_alike(a, b):
                cancel.why = (f"{ranks_text((a.rank, b.rank), word=True)} failed alike, for a reason that does not "
                              "depend on the rank; --keep-going compiles every rank")
                cancel.set()
                return


def _finish_record(report: DryRunReport) -> None:
    """Complete the run record with how the run ended (a record that cannot be written is not
    worth failing a finished run for)."""
    with contextlib.suppress(OSError, ValueError, TypeError):
        processes.update_run_record(report.run_dir, record.outcome(report))


def check_interpreter(python: str) -> str:
    """The MindSpore version of the interpreter ``python`` (a path, or a name found on PATH), or
    :class:`DryRunError` saying why it cannot run a dry run's ranks."""
    import shutil

    found = shutil.which(python) if os.sep not in python else (python if os.access(python, os.X_OK) else None)
    if found is None:
        raise DryRunError(f"--python {python}: no such interpreter (not an executable file, nor found on PATH)")
    program = ("import importlib.metadata as m, sys\n"
               "try:\n    print(m.version('mindspore'))\n"
               "except m.PackageNotFoundError:\n    sys.exit('MindSpore is not installed')")
    try:
        proc = subprocess.run([found, "-c", program], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DryRunError(f"--python {python}: cannot run it ({exc})") from None
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise DryRunError(f"--python {python}: {why}; the interpreter that runs the ranks needs MindSpore "
                          "(2.7 - 2.10) and numpy<2")
    return proc.stdout.strip()


def _sweep(tag: str) -> None:
    """Kill any process of this run that escaped its process group (it carries the run's tag)."""
    kill_tagged(TAG_VARIABLE, tag)


__all__ = ["run_dryrun", "DryRunError", "DryRunInterrupted", "DryRunSetupError", "Problem", "free_port",
           "new_run_dir", "parse_env_options", "tagged_processes", "TAG_VARIABLE"]
