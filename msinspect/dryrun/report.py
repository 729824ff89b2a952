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
class SimulatedRank:
    """One simulated rank of a dry run: how its processes ended and what IR they wrote.

    Not :class:`msinspect.analysis.rank.result.RankResult`, the rows analysing one rank's IR file
    gives: this is the run of a rank's processes, before any file is analysed."""

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
    mindspore_errors: list[str] = dataclasses.field(default_factory=list)
    """For a rank that did not compile: MindSpore's own ``[ERROR]`` / ``[EXCEPTION]`` /
    ``[CRITICAL]`` records of its log, in order, each once, as ``[ERROR] PARALLEL message``
    (:func:`mindspore_errors`); the first usually says why (``reason`` quotes it)."""
    failed_at: str = ""
    """For a rank that did not compile: where in the network MindSpore was when it failed, as
    ``path:line: code`` (the first line of the exception's function call stack), or ``""``."""
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
    ranks: list[SimulatedRank]
    """The ranks that were run (all of them, or those of ``only``)."""
    wall_seconds: float = 0.0
    """Wall time of the whole run."""
    interrupted: bool = False
    """True when the user stopped the run (Ctrl-C / SIGTERM)."""
    tag: str = ""
    """Value of MSINSPECT_DRYRUN_TAG in every process of this run (see ``tagged_processes``)."""
    kept_stages: list[str] | None = None
    """The passes kept in each rank folder (by default :data:`~msinspect.stages.DRYRUN_PASSES`);
    None: every pass MindSpore wrote (``keep_all_passes``)."""
    record: Path | None = None
    """The run record, ``config.json`` in the run folder: the run's settings and how it ended."""

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(r.ok for r in self.ranks)

    @property
    def failed(self) -> list[SimulatedRank]:
        return [r for r in self.ranks if not r.ok]

    @property
    def unreadable(self) -> list[SimulatedRank]:
        """The ranks that compiled but wrote IR msinspect cannot read (state ``compiled``)."""
        return [r for r in self.ranks if r.state is RankState.COMPILED]

    def failures(self) -> list["FailedRanks"]:
        """The ranks that failed or timed out (not those cancelled: :meth:`cancelled`), those that
        failed alike (same state, reason, MindSpore errors and place in the network) together, in
        rank order of their first rank."""
        return _grouped(r for r in self.failed if r.state is not RankState.CANCELLED)

    def cancelled(self) -> list["FailedRanks"]:
        """The ranks cancelled (the run was interrupted, or stopped after ranks failed alike), by
        reason; their logs only where they were written (a rank never started has none)."""
        return _grouped(r for r in self.ranks if r.state is RankState.CANCELLED)

    def rank(self, rank: int) -> SimulatedRank:
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
            "note": NOTHING_COMPUTED, "kept_stages": self.kept_stages, "record": conv(self.record),
            "ranks": [{f.name: conv(getattr(r, f.name)) for f in dataclasses.fields(r)} for r in self.ranks],
            "failures": [{f.name: conv(getattr(x, f.name)) for f in dataclasses.fields(x)} for x in self.failures()],
            "cancelled": [{f.name: conv(getattr(x, f.name)) for f in dataclasses.fields(x)} for x in self.cancelled()],
        }


def _grouped(results) -> list["FailedRanks"]:
    groups: dict[tuple, FailedRanks] = {}
    for r in results:
        key = (r.state.value, r.reason, tuple(r.mindspore_errors), r.failed_at)
        if key not in groups:
            groups[key] = FailedRanks(ranks=[], state=r.state.value, reason=r.reason,
                                  mindspore_errors=list(r.mindspore_errors), failed_at=r.failed_at, logs=[])
        groups[key].ranks.append(r.rank)
        if r.log is not None and r.log.is_file():
            groups[key].logs.append(r.log)
    return list(groups.values())


def _rank_free(text: str, ranks: tuple[int, ...]) -> str:
    """``text`` with each of ``ranks`` standing alone as a number (``rank 3``, ``rank_3``) read as
    ``<rank>``."""
    numbers = "|".join(str(r) for r in sorted(set(ranks), reverse=True))
    return re.sub(rf"(?<![\d.])(?:{numbers})(?!\d|\.\d)", "<rank>", text)


def failed_alike(a: SimulatedRank, b: SimulatedRank) -> bool:
    """Whether two ranks failed for a reason that does not depend on the rank: both ended by an
    error of the script or of MindSpore (not a timeout, nor a signal such as the kernel's OOM
    killer), with the same reason, MindSpore errors and place in the network once their rank
    numbers are left out. Such a failure holds for every rank of the job (a strategy that needs
    more devices than there are), so compiling the others would say it again."""
    if a.state is not RankState.FAILED or b.state is not RankState.FAILED:
        return False
    if (a.exit_code is not None and a.exit_code < 0) or (b.exit_code is not None and b.exit_code < 0):
        return False
    ranks = (a.rank, b.rank)

    def said(r: SimulatedRank) -> tuple:
        return tuple(_rank_free(t, ranks) for t in (r.reason, *r.mindspore_errors, r.failed_at))

    return bool(a.reason) and said(a) == said(b)


@dataclasses.dataclass
class FailedRanks:
    """Ranks of a dry run that did not compile, for one reason (:meth:`DryRunReport.failures`).

    Not :class:`msinspect.analysis.rank.failure.Failure`, what an ``analyze_fail.ir`` file records of
    an exception MindSpore caught: this groups simulated ranks whose processes failed alike."""

    ranks: list[int]
    state: str
    """``failed``, ``timed out`` or ``cancelled``."""
    reason: str
    mindspore_errors: list[str]
    failed_at: str
    logs: list[Path]
    """The ranks' logs, in rank order."""

    def lines(self, *, relative_to: Path | None = None) -> list[str]:
        """The failure in words: ``ranks 0-7 failed: reason``, then the MindSpore errors the reason
        does not quote, where in the network, and the logs."""
        from msinspect.ranks_text import ranks_text

        lines = [f"{ranks_text(self.ranks, word=True)} {self.state}: {self.reason}"]
        more = [e for e in self.mindspore_errors if e not in self.reason]
        if more:
            lines.append("  MindSpore's log " + ("also says:" if len(more) < len(self.mindspore_errors) else "says:"))
            lines += [f"    {e}" for e in more]
        if self.failed_at:
            lines.append(f"  in the network at {self.failed_at}")
        logs = [str(p.relative_to(relative_to)) if relative_to and p.is_relative_to(relative_to) else str(p)
                for p in self.logs]
        if logs:
            many = f"{logs[0]} ... {logs[-1]}" if len(logs) == len(self.ranks) else ", ".join(logs)
            lines.append("  log: " + (logs[0] if len(logs) == 1 else many))
        return lines


def kept_note(report: DryRunReport) -> str:
    """What a run kept of MindSpore's IR and how to get the rest: the passes of
    ``report.kept_stages`` some rank folder holds (a pass the network's mode never writes, e.g.
    ``step_auto_parallel_begin`` under semi-auto parallel, is not named), with the ranks that hold
    them when not every rank does; ``""`` when the run kept every pass or no rank wrote one."""
    from msinspect.ranks_text import ranks_text
    from msinspect.stages import files_of_stage, stage_of

    if report.kept_stages is None:
        return ""
    held = {r.rank: {stage_of(p.name) for p in files_of_stage(r.ir_dir, tuple(report.kept_stages))}
            for r in report.ranks if r.ir_dir is not None}
    held = {rank: stages for rank, stages in held.items() if stages}
    if not held:
        return ""
    stages = [s for s in report.kept_stages if any(s in h for h in held.values())]
    which = "per rank" if len(held) == len(report.ranks) else f"in the folders of {ranks_text(sorted(held), word=True)}"
    return (f"kept {which}: {', '.join(stages)} (what msinspect's analyses read); MindSpore's other "
            "passes (about 90 IR files a rank) were not written: --keep-all-passes keeps every pass")


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
    (re.compile(r"The pointer\[grad_accu\] is null"),
     "a pipeline-parallel network (pipeline_stages > 1) is wrapped in TrainOneStepCell without PipelineCell "
     "(MindSpore: \"The pointer[grad_accu] is null.\"): wrap the network with its loss in "
     "nn.PipelineCell(net_with_loss, micro_size) (or mindspore.parallel.nn.Pipeline) and "
     "give that to TrainOneStepCell / Model; it splits the batch into micro-batches and accumulates their gradients"),
    (re.compile(r"Address already in use|bind.*failed", re.I),
     "the scheduler port was taken by another process; re-run"),
)


def failure_reason(log: Path | None, *, max_len: int = 300) -> str:
    """The most telling error line of a dry-run worker's log: :func:`msinspect.processes.failure_reason`
    with the dry run's hints, passing over the device errors every dry run prints after compiling."""
    return processes.failure_reason(log, hints=_HINTS, ignore=_EXPECTED_AFTER_COMPILE, max_len=max_len)


#: A MindSpore log record: ``[ERROR] PARALLEL(921,7f9e...,python3):2026-11-25-22:20:41.537.566
#: [mindspore/ccsrc/.../operator_info.cc:746] InferRepeatedCalcInfo] message`` (its Python logger
#: writes ``[ERROR] ME(921:1403...,MainProcess):time [mindspore/x.py:59] message``, with no function).
_MS_RECORD = re.compile(r"^\[(ERROR|EXCEPTION|CRITICAL)\] ([A-Za-z_]+)\([^)]*\):\S+ \[[^\]]*\] "
                        r"(?:[\w:~<>()]+\](?: |$))?(.*)$")
#: At most this many of a rank's MindSpore errors are kept (the first says why; the rest follow from it).
MAX_ERRORS = 5


def _log_lines(log: Path | None) -> list[str]:
    if log is None:
        return []
    try:
        return Path(log).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def mindspore_errors(log: Path | None, *, limit: int = MAX_ERRORS, max_len: int = 400) -> list[str]:
    """MindSpore's own error records in a worker's log, in order, each once, at most ``limit``:
    ``[ERROR] PARALLEL MatMulInfo11: The strategy is ((2, 8), (8, 1)), it requires 16 devices, but
    the device number of this stage is 8, ...`` (level, module and message; the process, time and
    source location left out). A record with no message takes the line under it. The device errors
    every dry run prints after compiling are passed over. [] when there are none or no log."""
    lines = _log_lines(log)
    found: list[str] = []
    for i, line in enumerate(lines):
        m = _MS_RECORD.match(line)
        if not m:
            continue
        level, module, message = m.group(1), m.group(2), m.group(3).strip()
        if not message:
            message = next((l.strip() for l in lines[i + 1:i + 6] if l.strip() and not l.startswith(("-", "["))), "")
        if not message or _EXPECTED_AFTER_COMPILE.search(message):
            continue
        text = f"[{level}] {module} {message}"[:max_len]
        if text not in found:
            found.append(text)
        if len(found) >= limit:
            break
    return found


def with_mindspore_error(reason: str, errors: list[str]) -> str:
    """``reason`` (the exception that ended the script) followed by MindSpore's first error record,
    which says why (``RuntimeError: Failure:operator MatMul init failed; MindSpore's log: [ERROR]
    PARALLEL MatMulInfo11: The strategy is ((2, 8), (8, 1)), it requires 16 devices ...``), unless
    the reason is one of the dry run's hints (it says what to do) or already holds that message."""
    if not errors or any(reason == hint for _, hint in _HINTS):
        return reason
    first = errors[0]
    message = first.split(" ", 2)[-1]
    if message in reason:
        return reason
    return f"{reason}; MindSpore's log: {first}" if reason else first


#: ``In file /home/u/net.py:32, 25~47/        return self.relu(self.matmul(x, self.w))/``: a line of
#: the function call stack MindSpore adds to a compile error.
_IN_FILE = re.compile(r"^In file (.+?):(\d+)(?:~\d+)?, [\d~]+/(.*)/\s*$")


def failed_at(log: Path | None) -> str:
    """Where in the network a compile failed: the first ``In file`` line after the log's last
    Python traceback (the innermost frame of MindSpore's function call stack), as
    ``path:line: code``; ``""`` when the log has none."""
    lines = _log_lines(log)
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback")), default=0)
    for line in lines[start:]:
        m = _IN_FILE.match(line)
        if m:
            return f"{m.group(1)}:{m.group(2)}: {m.group(3).strip()}"
    return ""


def parallel_modes(log: Path | None) -> list[str]:
    """The parallel modes a worker compiled its graphs in, in order, as its bootstrap printed them
    (``semi_auto_parallel``, ``auto_parallel (sharding_propagation)`` ...); [] when it compiled none."""
    from .bootstrap import PARALLEL_MARK

    return [line[len(PARALLEL_MARK):].strip() for line in _log_lines(log) if line.startswith(PARALLEL_MARK + " ")]


def record_notes(log: Path | None) -> dict[str, list[str]]:
    """What a worker's bootstrap said of MindSpore's records of its layouts: ``recorded`` (the
    file names of each compile, in order), ``script`` (``what: path`` of each record the script
    saves itself, left alone) and ``failed`` (why a record could not be made)."""
    from .bootstrap import OWN_RECORD_MARK, RECORD_FAILED_MARK, RECORD_MARK

    notes: dict[str, list[str]] = {"recorded": [], "script": [], "failed": []}
    for line in _log_lines(log):
        for key, mark in (("recorded", RECORD_MARK), ("script", OWN_RECORD_MARK), ("failed", RECORD_FAILED_MARK)):
            if line.startswith(mark + " "):
                text = line[len(mark):].strip()
                notes[key] += text.split() if key == "recorded" else [text]
    return notes


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
            log = f"; log: {r.log}" if r.log is not None and r.log.is_file() else ""
            lines.append(f"  rank {r.rank}: {r.state.value:<8}(reason below{log})")
    for failure in report.failures() + report.cancelled():  # ranks that failed alike: said once
        lines += failure.lines()
    if report.interrupted:
        lines.append("interrupted by the user; all dry-run processes were stopped")
    kept = kept_note(report)
    if kept:
        lines.append(kept)
    if report.record is not None:
        lines.append(f"settings: {report.record}")
    return "\n".join(lines)
