"""A what-if sweep: the dry run (:func:`msinspect.dryrun.run_dryrun`) once per setting of a grid
of values a script reads, each run kept, and per setting what a person picks a configuration by:
whether it compiled (else MindSpore's reason), the collectives per rank, the bytes each rank
sends per step by parallel axis, its static memory and an estimate of its activations
(:mod:`msinspect.analysis.rank.activations`), and with a stated device memory whether they fit.

A grid is one or more names, each with its values (``MP=1,2,4,8``); several names give every
combination, the first name varying slowest. A setting reaches the script as environment
variables (``via="env"``: ``MP=2``) or as arguments (``via="arg"``): each ``{NAME}`` in the
script's arguments is replaced by the value, and where no argument names it, ``--NAME=VALUE`` is
added at their end.

Everything lands in a new sweep folder ``<out_root>/sweep-<script>-<time>/``: one folder per
setting (``MP-2/``) holding that setting's dry-run folder (``dryrun-<script>-<time>/``, with its
``config.json``, which also records the setting under ``sweep``), and ``sweep.json``, the table
so far, rewritten after each setting. A setting that fails does not stop the sweep; an
interruption (Ctrl-C, SIGTERM) does, after the dry run has stopped every process it started
(:class:`SweepInterrupted` carries what was done). Nothing is computed: the dry run compiles.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import itertools
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from msinspect import processes
from msinspect.errors import MsInspectError

from .launcher import VARIABLE_NAME, DryRunError, DryRunInterrupted, run_dryrun
from .report import DryRunReport

VIA = ("env", "arg")
SWEEP_RECORD = "sweep.json"


class SweepError(DryRunError):
    """The sweep cannot start: a grid that cannot be read, no setting at all."""


def parse_grid(items: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``["MP=1,2,4,8", "DP=1,2"]`` -> ``[("MP", ["1", "2", "4", "8"]), ("DP", ["1", "2"])]``.
    Values are split at ``;`` where the text holds one (values with commas in them:
    ``S=1,2/2,1;2,2/2,1``), else at ``,``. :class:`SweepError` for a name given twice, a name
    that cannot be an environment variable's, or no value."""
    grid: list[tuple[str, list[str]]] = []
    for item in items:
        name, sep, values = item.partition("=")
        name = name.strip()
        if not sep or not VARIABLE_NAME.match(name):  # a setting is named as an environment variable
            raise SweepError(f"--grid {item!r}: expected NAME=v1,v2 with NAME a variable's name (letters, digits, _)")
        if any(name == n for n, _ in grid):
            raise SweepError(f"--grid {name} is given twice: give all its values in one --grid")
        parts = [v.strip() for v in values.split(";" if ";" in values else ",")]
        parts = [v for v in parts if v]
        if not parts:
            raise SweepError(f"--grid {item!r}: no value")
        grid.append((name, list(dict.fromkeys(parts))))
    if not grid:
        raise SweepError("no --grid given: nothing to sweep")
    return grid


def settings_of(grid: Sequence[tuple[str, Sequence[str]]]) -> list[dict[str, str]]:
    """Every combination of the grid's values, the first name varying slowest."""
    names = [n for n, _ in grid]
    return [dict(zip(names, values)) for values in itertools.product(*(v for _, v in grid))]


def label_of(setting: dict[str, str]) -> str:
    """``MP=2 DP=4``: how a setting reads in tables and records."""
    return " ".join(f"{k}={v}" for k, v in setting.items())


def folder_of(setting: dict[str, str]) -> str:
    """The setting's folder name: ``MP-2_DP-4``, what cannot be in a file name as ``_``."""
    text = "_".join(f"{k}-{v}" for k, v in setting.items())
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", text)[:120] or "setting"


def script_args_for(args: Sequence[str], setting: dict[str, str]) -> list[str]:
    """The script's arguments with ``{NAME}`` replaced by the setting's value; ``--NAME=VALUE``
    added at the end for each name no argument holds."""
    out, used = [], set()
    for arg in args:
        for name, value in setting.items():
            if "{" + name + "}" in arg:
                arg = arg.replace("{" + name + "}", value)
                used.add(name)
        out.append(arg)
    return out + [f"--{name}={value}" for name, value in setting.items() if name not in used]


@dataclass
class SettingResult:
    """One setting of a sweep: how its dry run ended and what its ranks cost."""

    setting: dict[str, str]
    label: str
    folder: str
    """The setting's folder under the sweep folder (holding its dry-run folder)."""
    status: str = "not run"
    """``ok`` (every rank run compiled), ``failed`` (some did not: :attr:`failures`), ``error``
    (the dry run could not start it: :attr:`reason`), ``interrupted``, ``not run``."""
    run_dir: str | None = None
    """The dry-run folder: analyse it as any dump (``msinspect compare`` two of them)."""
    ranks_run: list[int] = field(default_factory=list)
    ranks_ok: list[int] = field(default_factory=list)
    reason: str = ""
    """Why it did not compile: the first failure's reason in MindSpore's words (:attr:`failures`
    has every group of ranks that failed alike)."""
    failures: list[dict] = field(default_factory=list)
    """Ranks that failed alike: ``ranks``, ``state``, ``reason``, ``mindspore_errors``, ``failed_at``."""
    wall_seconds: float = 0.0
    collectives: dict[int, int] = field(default_factory=dict)
    """Per rank that compiled: communication operators that move data (its ``comm`` rows with
    ``moves_data``)."""
    bytes_by_axis: dict[int, dict[str, int | None]] | None = None
    """Per rank: bytes on the wire per step by parallel axis (None: :attr:`cost_why`)."""
    memory: dict[int, dict[str, int | None]] | None = None
    """Per rank: static memory by part, ``total`` included (None: :attr:`memory_why`)."""
    activations: dict[int, int | None] | None = None
    """Per rank: the activation estimate in bytes (None for a rank: :attr:`activations_why`;
    None: the analysis could not run)."""
    cost_why: str = ""
    memory_why: str = ""
    activations_why: str = ""
    analysis_error: str = ""
    """Why the compiled ranks' IR could not be analysed, if it could not."""

    def to_dict(self) -> dict:
        from msinspect.schema import plain

        return plain({k: getattr(self, k) for k in self.__dataclass_fields__})


@dataclass
class SweepReport:
    """A sweep: its folder, the grid, one :class:`SettingResult` per setting."""

    script: Path
    sweep_dir: Path
    ranks: int
    only: str | None
    via: str
    grid: list[tuple[str, list[str]]]
    settings: list[SettingResult]
    started: str = ""
    wall_seconds: float = 0.0
    interrupted: bool = False
    device_memory: int | None = None
    """The device memory (bytes) the user stated: each setting's ranks are held against it."""

    @property
    def ok(self) -> bool:
        """Every setting compiled on every rank run (a sweep's purpose is to find those that do
        not, so a failed setting is a finding, not an error of the sweep)."""
        return not self.interrupted and all(s.status == "ok" for s in self.settings)

    def to_dict(self) -> dict:
        return {"script": str(self.script), "sweep_dir": str(self.sweep_dir), "ranks": self.ranks,
                "only": self.only, "via": self.via, "grid": {n: list(v) for n, v in self.grid},
                "started": self.started, "wall_seconds": round(self.wall_seconds, 1),
                "interrupted": self.interrupted, "device_memory": self.device_memory,
                "settings": [s.to_dict() for s in self.settings]}

    def write(self) -> Path:
        """``sweep.json`` in the sweep folder (atomically)."""
        path = self.sweep_dir / SWEEP_RECORD
        temporary = path.with_suffix(".json.tmp")
        temporary.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        temporary.replace(path)
        return path


class SweepInterrupted(KeyboardInterrupt):
    """The user stopped the sweep; the dry run stopped every process it started. ``report``
    holds what was done."""

    def __init__(self, report: SweepReport):
        super().__init__("sweep interrupted")
        self.report = report


SettingCallback = Callable[[int, SettingResult], None]
"""Called with the setting's index and its result: once when it starts (``status`` running), once
when it ends."""


def run_sweep(script: Path | str, ranks: int, grid: Sequence[tuple[str, Sequence[str]]] | Sequence[str], *,
              via: str = "env", only: str | Sequence[int] | None = None, out_root: Path | str = "runs",
              jobs: int = 2, timeout: float = 600.0, script_args: Sequence[str] = (), keep_all_passes: bool = False,
              python: str | None = None, build_device: str = "cpu", environment=None,
              on_setting: SettingCallback | None = None, on_update=None, analyse_runs: bool = True,
              allow_accelerator: bool = False, device_memory: int | None = None) -> SweepReport:
    """Dry-run ``script`` as ``ranks`` simulated ranks (``only``: those) once per setting of
    ``grid`` (``[("MP", ["1", "2"])]`` or ``["MP=1,2"]``: :func:`parse_grid`), the setting passed
    ``via`` environment variables (``"env"``) or script arguments (``"arg"``:
    :func:`script_args_for`); return the :class:`SweepReport` (also in ``sweep.json``).

    ``analyse_runs``: read each compiled run's IR for the collectives, bytes per axis and memory
    per rank (:mod:`msinspect.analysis.compare.runs`'s readers of the cost analysis) and the activation
    estimate; ``device_memory`` (bytes): recorded, each rank held against it. Other arguments
    go to :func:`~msinspect.dryrun.run_dryrun` as they are. Raises :class:`SweepError` for a grid
    that cannot be read, :class:`~msinspect.dryrun.DryRunError` when the dry run cannot start at
    all (no environment, a real accelerator), :class:`SweepInterrupted` on Ctrl-C / SIGTERM."""
    if via not in VIA:
        raise SweepError(f"via must be one of {VIA}, not {via!r}")
    if grid and isinstance(grid[0], str):
        grid = parse_grid(grid)  # type: ignore[arg-type]
    grid = [(n, list(v)) for n, v in grid]  # type: ignore[misc]
    script = Path(script).resolve()
    if not script.is_file():
        raise DryRunError(f"script not found: {script}")
    from .launcher import select_ranks

    select_ranks(only if not isinstance(only, (list, tuple)) else list(only), ranks)  # a bad --only before any run
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", script.stem) or "script"
    sweep_dir = processes.new_run_dir(Path(out_root).resolve(), f"sweep-{stem}", error=SweepError)
    taken: set[str] = set()
    results = []
    for setting in settings_of(grid):
        folder = folder_of(setting)
        while folder in taken:
            folder += "_"
        taken.add(folder)
        results.append(SettingResult(setting=setting, label=label_of(setting), folder=folder))
    report = SweepReport(script=script, sweep_dir=sweep_dir, ranks=ranks,
                         only=only if only is None or isinstance(only, str) else ",".join(map(str, only)),
                         via=via, grid=grid, settings=results, started=_dt.datetime.now().isoformat(timespec="seconds"),
                         device_memory=device_memory)
    report.write()
    start = time.monotonic()
    try:
        with processes.signals_as_interrupt():  # SIGTERM between two runs (analysing one) too
            for index, result in enumerate(results):
                _run_one(report, index, result, script_args=script_args, only=only, jobs=jobs, timeout=timeout,
                         keep_all_passes=keep_all_passes, python=python, build_device=build_device,
                         environment=environment, on_setting=on_setting, on_update=on_update,
                         analyse_runs=analyse_runs, allow_accelerator=allow_accelerator)
                report.wall_seconds = time.monotonic() - start
                report.write()
    except KeyboardInterrupt:
        report.interrupted = True
        report.wall_seconds = time.monotonic() - start
        with contextlib.suppress(OSError):
            report.write()
        raise SweepInterrupted(report) from None
    return report


def _run_one(report: SweepReport, index: int, result: SettingResult, *, script_args, only, jobs, timeout,
             keep_all_passes, python, build_device, environment, on_setting, on_update, analyse_runs,
             allow_accelerator) -> None:
    setting = result.setting
    result.status = "running"
    if on_setting:
        on_setting(index, result)
    args = script_args_for(script_args, setting) if report.via == "arg" else list(script_args)
    extra = dict(setting) if report.via == "env" else {}
    started = time.monotonic()
    try:
        run = run_dryrun(report.script, report.ranks, out_root=report.sweep_dir / result.folder, only=only,
                         jobs=jobs, script_args=args, keep_all_passes=keep_all_passes, timeout=timeout,
                         python=python, environment=environment, extra_env=extra, on_update=on_update,
                         allow_accelerator=allow_accelerator, build_device=build_device)
    except DryRunInterrupted as stopped:
        _take(result, stopped.report)
        result.status = "interrupted"
        result.wall_seconds = time.monotonic() - started
        _mark(stopped.report, report, result)
        if on_setting:
            on_setting(index, result)
        raise
    except DryRunError:
        raise  # the dry run cannot start at all (environment, accelerator): no setting would
    except (MsInspectError, OSError) as error:  # this setting only: the sweep goes on
        result.status, result.reason = "error", f"{type(error).__name__}: {error}"
        result.wall_seconds = time.monotonic() - started
        if on_setting:
            on_setting(index, result)
        return
    _take(result, run)
    result.wall_seconds = time.monotonic() - started
    _mark(run, report, result)
    if analyse_runs and result.ranks_ok:
        _analyse(result, run)
    if on_setting:
        on_setting(index, result)


def _take(result: SettingResult, run: DryRunReport) -> None:
    from msinspect.schema import plain

    result.run_dir = str(run.run_dir)
    result.ranks_run = [r.rank for r in run.ranks]
    result.ranks_ok = [r.rank for r in run.ranks if r.ok]
    result.status = "interrupted" if run.interrupted else "ok" if run.ok else "failed"
    result.failures = [{"ranks": f.ranks, "state": f.state, "reason": f.reason,
                        "mindspore_errors": f.mindspore_errors, "failed_at": f.failed_at,
                        "logs": [plain(p) for p in f.logs]} for f in run.failures()]
    result.reason = result.failures[0]["reason"] if result.failures else ""


def _mark(run: DryRunReport, report: SweepReport, result: SettingResult) -> None:
    """Record the setting in the dry run's own record: ``msinspect compare`` labels the run by it."""
    with contextlib.suppress(OSError, ValueError, TypeError):
        processes.update_run_record(run.run_dir, {"sweep": {
            "label": result.label, "setting": result.setting, "via": report.via,
            "sweep_dir": str(report.sweep_dir)}})


def _analyse(result: SettingResult, run: DryRunReport) -> None:
    """Collectives, bytes per axis, memory and activations of the ranks that compiled."""
    from msinspect.analysis.job.collect import analyse
    from msinspect.analysis.compare.runs import axis_bytes, rank_memory
    from msinspect.dumps import Dump, load_dump

    try:
        dump = load_dump(run.run_dir)
        keep = [r for r in dump.ranks if r.rank in set(result.ranks_ok)]
        analysis = analyse(Dump(dump.path, keep, dump.unreadable) if len(keep) != len(dump.ranks) else dump)
        result.collectives = {res.rank: sum(1 for row in res.comm if row.get("moves_data"))
                              for res in analysis.results}
        result.bytes_by_axis, result.cost_why = axis_bytes(analysis)
        result.memory, result.memory_why = rank_memory(analysis)
        result.activations, result.activations_why = _activations(analysis)
    except (MsInspectError, OSError, ValueError) as error:
        result.analysis_error = f"{type(error).__name__}: {error}"


def _activations(analysis) -> tuple[dict | None, str]:
    """The activation estimate per rank (:func:`~msinspect.analysis.rank.activations.activations_per_rank`)
    as ``{rank: bytes or None}``, and why a rank's cannot be told (the first reason) or ""."""
    from msinspect.analysis.rank.activations import activations_per_rank

    rows = activations_per_rank(analysis).to_dict("records")
    why = next((row["why"] for row in rows if row["activations"] is None), "")
    return {row["rank"]: row["activations"] for row in rows}, why
