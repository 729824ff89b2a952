"""What a dry run produced: per-rank results judged by the files written, and the summary.

A rank compiled when every ``step_parallel_end`` file it wrote is complete by the file's own
node counts (MindSpore prints device errors after the compile in this mode, so exit codes say
nothing): it is ``ok`` when msinspect reads them too, ``compiled`` when msinspect's parser
rejects some of them (the dump is whole; msinspect lacks a construct: ``unreadable`` lists them).
Nothing is computed in a dry run: no loss is ever reported here.
"""
from __future__ import annotations

import dataclasses
import enum
import re
from pathlib import Path

from msinspect import processes
from msinspect.stages import files_of_stage

NOTHING_COMPUTED = (
    "Dry run: MindSpore's planner compiled the graph for each simulated rank; nothing was "
    "computed. Any 'loss' MindSpore printed in the logs is not a loss."
)


class RankState(str, enum.Enum):
    """Where a simulated rank ended (or is)."""

    QUEUED = "queued"
    RUNNING = "running"
    OK = "ok"
    COMPILED = "compiled"
    """Compiled and wrote whole IR, but msinspect's parser rejects some of it (see ``unreadable``)."""
    FAILED = "failed"
    TIMED_OUT = "timed out"
    CANCELLED = "cancelled"


@dataclasses.dataclass
class RankResult:
    """One simulated rank of a dry run."""

    rank: int
    """The simulated rank id (RANK_ID)."""
    state: RankState = RankState.QUEUED
    """ok / failed / timed out / cancelled (queued or running while the run goes on)."""
    reason: str = ""
    """Why it did not succeed, read from the log; empty when ok; for ``compiled``, what msinspect
    could not read."""
    ir_dir: Path | None = None
    """The rank's IR folder (``rank_N/``)."""
    log: Path | None = None
    """The worker's log (stdout and stderr)."""
    scheduler_log: Path | None = None
    """The log of the rank's scheduler process."""
    step_parallel_end: list[Path] = dataclasses.field(default_factory=list)
    """The step_parallel_end files written (one per compiled parallel graph)."""
    ir_complete: bool = False
    """Whether step_parallel_end was written and every such file is whole by its own node counts
    (also for a rank cancelled after writing it: its state is then ``cancelled``)."""
    unreadable: list[str] = dataclasses.field(default_factory=list)
    """The whole step_parallel_end files msinspect's parser rejects, each as ``path:line:col:
    message`` (empty when it reads them all)."""
    exit_code: int | None = None
    """The worker's exit status (negative: killed by that signal); informative only."""
    wall_seconds: float = 0.0
    """Wall time from starting the rank's scheduler to the end of its processes."""
    peak_rss_bytes: int | None = None
    """Peak resident memory of the worker process, from the kernel's rusage."""
    pids: list[int] = dataclasses.field(default_factory=list)
    """Process ids started for this rank (scheduler, worker)."""

    @property
    def ok(self) -> bool:
        """Whether the rank compiled and wrote whole strategy IR (``ok`` or ``compiled``)."""
        return self.state in (RankState.OK, RankState.COMPILED)


@dataclasses.dataclass
class DryRunReport:
    """The result of :func:`msinspect.dryrun.run_dryrun`."""

    script: Path
    """The script that was dry-run."""
    run_dir: Path
    """The new folder of this run: ``rank_N/`` IR folders and ``logs/``."""
    rank_size: int
    """The number of simulated ranks (RANK_SIZE)."""
    ranks: list[RankResult]
    """The ranks that were run (all of them, or those of ``only``)."""
    wall_seconds: float = 0.0
    """Wall time of the whole run."""
    interrupted: bool = False
    """True when the user stopped the run (Ctrl-C / SIGTERM)."""
    tag: str = ""
    """Value of MSINSPECT_DRYRUN_TAG in every process of this run (see ``tagged_processes``)."""

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(r.ok for r in self.ranks)

    @property
    def failed(self) -> list[RankResult]:
        return [r for r in self.ranks if not r.ok]

    @property
    def unreadable(self) -> list[RankResult]:
        """The ranks that compiled but wrote IR msinspect cannot read (state ``compiled``)."""
        return [r for r in self.ranks if r.state is RankState.COMPILED]

    def rank(self, rank: int) -> RankResult:
        for result in self.ranks:
            if result.rank == rank:
                return result
        raise KeyError(rank)

    def to_dict(self) -> dict:
        """The report in the output schema (:mod:`msinspect.schema`)."""
        from msinspect.schema import plain as conv

        return {
            "script": str(self.script), "run_dir": str(self.run_dir), "rank_size": self.rank_size,
            "wall_seconds": self.wall_seconds, "interrupted": self.interrupted, "ok": self.ok,
            "note": NOTHING_COMPUTED,
            "ranks": [{f.name: conv(getattr(r, f.name)) for f in dataclasses.fields(r)} for r in self.ranks],
        }


# --------------------------------------------------------------------------- completeness
_TOTAL_CNODES = re.compile(r"^Total number of cnodes:\s*(\d+)\s*$")
_CNODE_LINE = re.compile(r"^\s*(?:%\d+[(\[]|Return\()")  # %3(name) = ... and %5[@FuncUnion(...)]()


def _line_counts(path: Path) -> tuple[int | None, int]:
    """(the file's ``Total number of cnodes: N``, its node lines), read line by line.

    Node lines are definitions ``%N(...) = ...`` plus each subgraph's ``Return(...)``
    (MindSpore counts both as cnodes). A truncated file has fewer.
    """
    expected = None
    count = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if expected is None:
                m = _TOTAL_CNODES.match(line)
                if m:
                    expected = int(m.group(1))
                    continue
            if _CNODE_LINE.match(line):
                count += 1
    return expected, count


def _line_check(path: Path) -> bool:
    """Whether the file's ``Total number of cnodes: N`` equals its node lines (a file without the
    count cannot be judged and is not complete)."""
    try:
        expected, count = _line_counts(path)
    except OSError:
        return False
    return expected is not None and expected > 0 and count == expected


#: How :func:`ir_verdict` begins for a whole file that msinspect's parser rejects.
UNREADABLE = "IR not readable by msinspect: "


def ir_verdict(path: Path) -> str:
    """Why an IR file a rank wrote is not usable, or ``""`` when it is complete.

    - ``incomplete (...)``: the dump itself is cut short: fewer node lines than the count the
      file states (or no count at all), as when a process dies while writing;
    - ``IR not readable by msinspect: file:line:col: message``: the file holds every node line it
      states but msinspect's parser rejects it (a construct the grammar does not know) - the
      dump is fine, msinspect is not.
    """
    from msinspect.errors import MsInspectError, shown_path
    from msinspect.parser import parse_file

    path = Path(path)
    try:
        ir = parse_file(path)
    except MsInspectError as err:
        problem = str(err).splitlines()[0]
        if "end of file" not in problem:
            try:
                expected, count = _line_counts(path)
            except OSError:
                expected, count = None, 0
            if expected is None or count >= expected:
                return UNREADABLE + problem
            return f"incomplete ({count} node lines, its own count says {expected}): {problem}"
        return f"incomplete (cut short): {problem}"
    if not ir.complete:
        return f"incomplete ({shown_path(str(path))}: {ir.status}, nothing stated to check it against)"
    return ""


def is_complete(path: Path) -> bool:
    """Whether an IR file was written out completely and msinspect reads it whole
    (see :func:`ir_verdict` for the reason when not)."""
    return not ir_verdict(path)


def find_pass_files(ir_dir: Path, stage: str) -> list[Path]:
    """IR files (``.ir`` or ``.ir.gz``) of one pass (``step_parallel_end``...) by stage name,
    never by number."""
    return files_of_stage(ir_dir, stage)


# --------------------------------------------------------------------------- reasons
_EXPECTED_AFTER_COMPILE = re.compile(
    r"SetDevice|cudaHostAlloc|SyncStream|CUDA driver version|no CUDA-capable device|"
    r"WaitTaskFinishOnDevice|CUDA_ERROR_NO_DEVICE|cuda_driver|Cuda error", re.I)
_HINTS = (
    (re.compile(r"Invalid communication backend: CPU|Dryrun is not supported on CPU"),
     "the script sets the device target to CPU; a dry run needs it unset (or GPU): "
     "remove device_target='CPU' / ms.set_device('CPU')"),
    (re.compile(r"inputs shape cannot be broadcast on CPU/GPU"),
     "a BatchMatMul broadcasts its batch dimensions, which the dry run's GPU target refuses (Ascend "
     "accepts it); MindFormers' rotary embedding does so unless LlamaConfig(use_rope_slice=True), and so "
     "do the experts of its MoEV2 FFN (MoEConfig(use_gmm=True) builds MoEV3, which compiles)"),
    (re.compile(r"Address already in use|bind.*failed", re.I),
     "the scheduler port was taken by another process; re-run"),
)


def failure_reason(log: Path | None, *, max_len: int = 300) -> str:
    """The most telling error line of a dry-run worker's log: :func:`msinspect.processes.failure_reason`
    with the dry run's hints, passing over the device errors every dry run prints after compiling."""
    return processes.failure_reason(log, hints=_HINTS, ignore=_EXPECTED_AFTER_COMPILE, max_len=max_len)


_STAND_IN_GPU = re.compile(r"CUDA driver version is insufficient|SetDevice for id:\d+ failed|no CUDA-capable device")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (.+)$')
#: Printed by the worker's bootstrap when the build on the CPU device begins (bootstrap.BUILD_MARK).
_BUILD_MARK = "msinspect dry run: building the network on the CPU device"


def _last_traceback(lines: list[str]) -> tuple[list[str], list[str]]:
    """The frame lines and the exception's text (its line and up to 8 after it, up to the next log
    record) of the log's last Python traceback; two empty lists when there is none."""
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback")), default=None)
    if start is None:
        return [], []
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()), len(lines))
    text = []
    for line in lines[end:end + 9]:
        if text and (line.startswith("[") or line.startswith("Traceback")):
            break
        text.append(line)
    return lines[start + 1:end], text


def _where(frames: list[str]) -> str:
    """``file:line in function`` of the deepest frame that is neither MindSpore's nor the dry run's
    own, or ``""``."""
    found = [m.groups() for m in map(_FRAME.match, frames) if m]
    own = ("/mindspore/", "bootstrap.py", "<frozen runpy>", "/runpy.py")
    found = [f for f in found if not any(part in f[0] for part in own)]
    return f"{found[-1][0]}:{found[-1][1]} in {found[-1][2]}" if found else ""


def stand_in_gpu_reason(log: Path | None, build_device: str = "cpu") -> str:
    """Why a rank that wrote no strategy IR failed on the dry run's stand-in GPU, with what to do,
    or ``""`` when its log shows no such failure.

    The stand-in compiles for the GPU target but executes nothing: an operation run eagerly
    (PyNative) on it fails with "CUDA driver version is insufficient for CUDA runtime version".
    The dry run prints that after every compile as well, so it counts only as the exception that
    ended the script (the log's last traceback), where no IR was written.
    """
    if log is None:
        return ""
    try:
        lines = Path(log).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    frames, exception = _last_traceback(lines)
    if not any(_STAND_IN_GPU.search(line) for line in exception):
        return ""
    where = _where(frames)
    at = f" at {where}" if where else ""
    what = (f"the script ran an operation eagerly (PyNative){at} on the dry run's stand-in GPU, which "
            "executes nothing (\"CUDA driver version is insufficient\"; MindFormers' LlamaForCausalLM does so "
            "while it is built: Tensor([0]).reshape(1, 1))")
    if build_device == "gpu":
        return what + "; run without --build-device gpu: the dry run then builds the network on the CPU device"
    if not any(_BUILD_MARK in line for line in lines):
        return what + (" before mindspore.communication.init() returned; the dry run builds on the CPU device "
                       "from init() on: call init() before building the network")
    return what + (" after the first graph compile, when the device is the planner's again (a network built "
                   "or run eagerly after another was compiled); compile the parallel network first")


def format_summary(report: DryRunReport) -> str:
    """A plain-text summary (the CLI renders a rich table of the same facts)."""
    whole = [r for r in report.ranks if r.ir_complete]
    lines = [NOTHING_COMPUTED, f"run folder: {report.run_dir}",
             f"{len(whole)}/{len(report.ranks)} ranks wrote complete strategy IR (step_parallel_end)"
             f" in {report.wall_seconds:.1f} s"]
    for r in report.ranks:
        if r.state is RankState.OK:
            lines.append(f"  rank {r.rank}: ok      {r.step_parallel_end[0] if r.step_parallel_end else ''}")
        elif r.state is RankState.COMPILED:
            lines.append(f"  rank {r.rank}: compiled, but msinspect cannot read {len(r.unreadable)} of its "
                         f"{len(r.step_parallel_end)} step_parallel_end file(s): " + "; ".join(r.unreadable))
        else:
            lines.append(f"  rank {r.rank}: {r.state.value:<8}{r.reason}  (log: {r.log})")
    if report.interrupted:
        lines.append("interrupted by the user; all dry-run processes were stopped")
    return "\n".join(lines)
