"""A dry run's run record: ``config.json`` in the run folder, beside ``rank_N/`` and ``logs/``.

The same record ``msinspect train`` writes (its dry runs are recorded by both: neither replaces
the other's fields), read back by the analyses (``ranks`` is the job's world when only some
ranks were run), ``diff`` (two runs' records differ) and the report (``run``, ``device``,
``mindspore``, ``ranks``, ``status`` ...). Written when the run starts (``status: running``) and
completed when it ends. Its fields:

* ``run`` (``dry_run``), ``device``, ``note`` (nothing was computed);
* ``script``, ``script_args``, ``cwd``, ``command`` (the ``msinspect dryrun`` command line that
  makes the same run), ``ranks`` (simulated device count), ``run_ranks`` (the ranks run),
  ``jobs``, ``timeout``, ``keep_going``, ``build_device``, ``python``, ``mindspore``, ``msinspect``;
* ``all_passes`` and ``kept_stages`` (the passes kept in each rank folder; null: all);
* ``environment``: the variables msinspect set, ``all_processes`` (every scheduler and worker:
  the dry run's CUDA home, its tag ...; a path put before the caller's value reads ``DIR:$PATH``)
  and ``workers`` (per rank: ``<rank>`` stands for the rank, ``<port>`` for its scheduler's port);
  ``options``: the variables set with ``--env NAME=VALUE`` (``{}`` when none); ``read``: every
  variable MindSpore reads that the ranks got (:data:`READ_BY_MINDSPORE`: ``MS_*``, ``MINDSPORE*``,
  ``HCCL*`` ...), whether from the caller's environment, ``--env`` or the dry run itself, as
  ``name -> value`` (two runs that differ only in one of these differ in their records);
  ``environment_removed``: the caller's variables taken out (they would confuse the simulated
  cluster);
* ``tag``, ``started``, ``status`` (``running``, ``ok``, ``failed``, ``interrupted``);
* at the end: ``finished``, ``wall_seconds``, ``parallel_mode`` (as the ranks' first compile saw
  it; a list when they saw several, a ``{rank: mode}`` object when ranks disagree, null when no
  graph was compiled), ``ranks_ok``, ``failures`` (``ranks``, ``state``, ``reason``,
  ``mindspore_errors``, ``failed_at``, ``logs``: ranks that failed or timed out alike together),
  ``cancelled`` (``ranks``, ``reason``, ``logs``: ranks stopped or never started because the run
  was interrupted, or because ranks failed alike and ``keep_going`` was off; logs only where
  written);
* at the end, MindSpore's records of its layouts (:mod:`msinspect.dryrun.bootstrap` writes them,
  :mod:`msinspect.mindspore.records` reads them): ``records`` (``{rank: [file names]}``, the
  record files in each rank folder: ``parameter_layout_K.json``, ``strategy_K.ckpt``,
  ``group_info_K.pb`` for compile K), ``script_records`` (``{rank: ["strategy checkpoint:
  PATH", ...]}``, the records the script saves itself, where it set a file of its own: left
  alone, not in the rank folder) and ``record_failures`` (``{rank: [why]}``: a record that could
  not be made; the compile went on). Each is ``{}`` when no rank has one.
"""
from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import re
import sys
from pathlib import Path
from typing import Mapping, Sequence

from .report import NOTHING_COMPUTED, DryRunReport, parallel_modes, record_notes


#: Variables MindSpore (or its communication libraries) reads, recorded with their values whatever
#: set them: a run that differs in one is another run (``msinspect compare`` shows it).
READ_BY_MINDSPORE = re.compile(r"^(MS_|MINDSPORE|HCCL|GLOG_|ASCEND_|MSINSPECT_)")


def _now() -> str:
    return _dt.datetime.now().isoformat(timespec="seconds")


def variables_set(env: Mapping[str, str], base: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` that ``base`` lacks or holds otherwise; a value that holds
    ``base``'s own reads it as ``$NAME`` (``/cache/cuda/bin:$PATH``)."""
    out = {}
    for name in sorted(env):
        value, old = env[name], base.get(name)
        if value == old:
            continue
        out[name] = value.replace(old, f"${name}") if old and len(old) > 1 and old in value else value
    return out


def version_of(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def command_line(script: Path, ranks: int, selected: Sequence[int], *, jobs: int, timeout: float,
                 keep_all_passes: bool, python: str | None, build_device: str,
                 script_args: Sequence[str], env_options: Mapping[str, str] | None = None,
                 keep_going: bool = False) -> list[str]:
    """The ``msinspect dryrun`` command that makes the same run (``--out`` left to the caller)."""
    from msinspect.ranks_text import ranks_text

    argv = ["msinspect", "dryrun", str(script), "--ranks", str(ranks)]
    if list(selected) != list(range(ranks)):
        argv += ["--only", ranks_text(selected).replace(" ", "")]
    argv += ["--jobs", str(jobs), "--timeout", f"{timeout:g}"]
    if keep_all_passes:
        argv.append("--keep-all-passes")
    if keep_going:
        argv.append("--keep-going")
    if python:
        argv += ["--python", python]
    if build_device != "cpu":
        argv += ["--build-device", build_device]
    for name, value in (env_options or {}).items():
        argv += ["--env", f"{name}={value}"]
    if script_args:
        argv += ["--", *script_args]
    return argv


def settings(*, script: Path, script_args: Sequence[str], cwd: Path, ranks: int, selected: Sequence[int],
             jobs: int, timeout: float, keep_all_passes: bool, kept_stages: Sequence[str] | None,
             build_device: str, python: str | None, mindspore: str | None, env: Mapping[str, str],
             worker: Mapping[str, str], removed: Sequence[str], tag: str,
             env_options: Mapping[str, str] | None = None, keep_going: bool = False) -> dict:
    """The record written when the run starts (see the module's docstring)."""
    return {
        "run": "dry_run", "device": "CPU (compile-only dry run)", "note": NOTHING_COMPUTED,
        "script": str(script), "script_args": list(script_args), "cwd": str(cwd),
        "command": command_line(script, ranks, selected, jobs=jobs, timeout=timeout,
                                keep_all_passes=keep_all_passes, python=python, build_device=build_device,
                                script_args=script_args, env_options=env_options, keep_going=keep_going),
        "ranks": ranks, "run_ranks": list(selected), "jobs": jobs, "timeout": timeout, "keep_going": keep_going,
        "build_device": build_device,
        "python": python or sys.executable, "mindspore": mindspore,
        "msinspect": version_of("msinspect"),
        "all_passes": kept_stages is None, "kept_stages": list(kept_stages) if kept_stages is not None else None,
        "environment": {"all_processes": variables_set(env, os.environ), "workers": dict(worker),
                        "options": dict(env_options or {}),
                        "read": {k: v for k, v in sorted({**env, **worker}.items()) if READ_BY_MINDSPORE.match(k)}},
        "environment_removed": sorted(removed),
        "tag": tag, "started": _now(), "status": "running",
    }


def parallel_mode(report: DryRunReport):
    """The parallel mode(s) the ranks compiled in: one mode, a list when every rank saw the same
    several, ``{rank: modes}`` when ranks disagree; None when no rank compiled a graph."""
    seen = {r.rank: parallel_modes(r.log) for r in report.ranks}
    told = {rank: modes for rank, modes in seen.items() if modes}
    if not told:
        return None
    distinct = {tuple(m) for m in told.values()}
    if len(distinct) == 1:
        (modes,) = distinct
        return modes[0] if len(modes) == 1 else list(modes)
    return {str(rank): modes[0] if len(modes) == 1 else modes for rank, modes in told.items()}


def records(report: DryRunReport) -> dict[str, dict]:
    """``records``, ``script_records`` and ``record_failures`` (see the module's docstring)."""
    from msinspect.mindspore.records import is_record_file

    files, script, failed = {}, {}, {}
    for r in report.ranks:
        try:
            names = sorted(p.name for p in r.ir_dir.iterdir() if p.is_file() and is_record_file(p.name)) \
                if r.ir_dir is not None and r.ir_dir.is_dir() else []
        except OSError:
            names = []
        notes = record_notes(r.log)
        for out, value in ((files, names), (script, notes["script"]), (failed, notes["failed"])):
            if value:
                out[str(r.rank)] = value
    return {"records": files, "script_records": script, "record_failures": failed}


def outcome(report: DryRunReport) -> dict:
    """The fields written when the run ends."""
    from msinspect.schema import plain

    status = "interrupted" if report.interrupted else "ok" if report.ok else "failed"
    return {
        "status": status, "finished": _now(), "wall_seconds": round(report.wall_seconds, 1),
        "parallel_mode": parallel_mode(report),
        "ranks_ok": [r.rank for r in report.ranks if r.ok],
        "failures": [{"ranks": f.ranks, "state": f.state, "reason": f.reason,
                      "mindspore_errors": f.mindspore_errors, "failed_at": f.failed_at,
                      "logs": [plain(p) for p in f.logs]} for f in report.failures()],
        "cancelled": [{"ranks": f.ranks, "reason": f.reason, "logs": [plain(p) for p in f.logs]}
                      for f in report.cancelled()],
        **records(report),
    }
