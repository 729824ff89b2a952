"""Two runs of one model compared (``msinspect compare``): another parallel configuration, another
MindSpore release, sequence parallel on or off. Not two ranks of one job: that is
:mod:`msinspect.analysis.compare.ranks`, which this builds on.

One rank of each run (the same rank number, default the lowest both hold) is compared operator by
operator after alignment (:func:`msinspect.analysis.compare.ranks.diff_ranks`, itself on
:func:`msinspect.analysis.dataflow.align.align`: op type, scope, the number of dimensions of each tensor and
the operator's place among its data neighbours, never names), so that an operator keeps its
identity when a strategy changes its per-rank shapes. What is said:

* ``strategies``: the aligned operators whose strategy changed, operators that changed alike
  (one per transformer block) as one row with their count ``n``; the scope's cell indices
  (``blocks-CellList/0-Block``) read ``*`` there;
* ``comm``: the communication the parallel pass inserted into the rank's graph, by kind, op and
  scope (the same ``*``), with each side's count, groups and bytes, and what changed:
  ``added`` / ``removed`` (on one side only), ``more`` / ``fewer``, ``regrouped`` (the groups
  differ), ``resized`` (the bytes differ) or ``same``;
* ``axes`` and ``memory``: bytes per parallel axis per step and memory per rank before and after,
  from the cost analysis (:mod:`msinspect.analysis.job.cost` / ``memory``); where it is not there,
  "cannot tell" with why, never 0;
* ``settings``: what the two run records (``config.json``) say differently: the script's
  arguments, the environment variables the run set (a sweep's setting, ``dryrun --env``) or that
  MindSpore reads (``MS_*``, ``HCCL*`` ... from the caller's environment), MindSpore's version,
  the world;
* ``ranks``: the rank diff itself (operators on one side only, shapes, strategies, groups,
  slices: :class:`~msinspect.analysis.compare.ranks.RankDiff`) and how many operators of each side could
  not be aligned (those are not compared).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from msinspect.analysis.job.collect import Analysis, analyse
from msinspect.analysis.job.cost_tables import bytes_by_axis
from msinspect.analysis.compare.ranks import RankDiff, diff_ranks
from msinspect.analysis.rank.memory import memory_per_rank
from msinspect.mindspore.vocabulary import VOCABULARY
from msinspect.mindspore.naming import stable_name
from msinspect.analysis.compare.same_run import passes, run_folder, run_record
from msinspect.dumps import RankDump, load_dump
from msinspect.errors import NoMatchError
from msinspect.ranks_text import ranks_text

#: The parts of a rank's static memory compared (:func:`msinspect.analysis.rank.memory.memory_per_rank`).
MEMORY_PARTS = ("weights", "gradients", "states", "other", "total")

STRATEGY_COLUMNS = ["op", "name", "scope", "gradient", "n", "left_strategy", "right_strategy"]
COMM_COLUMNS = ["kind", "op", "scope", "change", "left_count", "right_count", "left_groups", "right_groups",
                "left_wire_bytes", "right_wire_bytes", "left_tensor_bytes", "right_tensor_bytes"]
#: Changes of a ``comm`` row, most telling first (the text lists rows in this order).
CHANGES = ("removed", "added", "fewer", "more", "regrouped", "resized", "same")

#: Run-record variables that say nothing about the job (they differ between any two runs).
_RUN_NOISE = re.compile(r"^(MSINSPECT_DRYRUN_TAG|MSINSPECT_DEVICE_TARGET|PATH|LD_LIBRARY_PATH|LD_PRELOAD|CUDA_HOME|"
                        r"PYTHONPATH|"
                        r"XDG_CACHE_HOME|MS_DEV_SAVE_GRAPHS_PATH|PYTHONUNBUFFERED)$")
#: Run-record fields compared (beyond the environment).
_RECORD_FIELDS = ("script", "script_args", "ranks", "mindspore", "parallel_mode", "all_passes")


def scope_pattern(scope) -> str:
    """A scope with its cell-list indices as ``*`` (``blocks-CellList/*-Block/attention-Attention``):
    what operators repeated per block share."""
    return re.sub(r"(?<=/)\d+(?=-)", "*", scope) if isinstance(scope, str) else ""


# ---------------------------------------------------------------- bytes and memory per rank
def axis_bytes(analysis: Analysis) -> tuple[dict | None, str]:
    """Bytes each rank sends on the wire per step by parallel axis
    (:func:`msinspect.analysis.job.cost_tables.bytes_by_axis`), as ``{rank: {axis: bytes}}`` (None for
    bytes the cost analysis cannot tell), and ""; or None and why not."""
    try:
        found = bytes_by_axis(analysis)
    except Exception as error:  # noqa: BLE001 (a cost the analysis cannot give is said, not fatal)
        return None, f"cannot tell: the cost analysis failed ({type(error).__name__}: {error})"
    out: dict = {}
    for row in found.to_dict("records"):
        value = row.get("step_bytes")
        out.setdefault(row.get("rank"), {})[str(row.get("axis"))] = None if _missing(value) else int(value)
    return out, ""


def rank_memory(analysis: Analysis) -> tuple[dict | None, str]:
    """Static memory per rank (:func:`msinspect.analysis.rank.memory.memory_per_rank`) as
    ``{rank: {part: bytes}}``, parts :data:`MEMORY_PARTS` (None: cannot tell), and ""; or None and
    why not."""
    try:
        found = memory_per_rank(analysis)
    except Exception as error:  # noqa: BLE001
        return None, f"cannot tell: the memory analysis failed ({type(error).__name__}: {error})"
    out = {}
    for row in found.to_dict("records"):
        out[row.get("rank")] = {part: None if _missing(row.get(part)) else int(row[part]) for part in MEMORY_PARTS}
    return out, ""


def _missing(value) -> bool:
    from msinspect.schema import is_missing

    return is_missing(value) or not isinstance(value, (int, float))


def change_text(left, right, unknown: str = "-") -> str:
    """How a count went from ``left`` to ``right``: ``same``, ``new`` (from 0), ``+461%``;
    ``unknown`` where either side cannot be told."""
    from msinspect.schema import is_missing

    if is_missing(left) or is_missing(right):
        return unknown
    if left == right:
        return "same"
    return "new" if not left else f"{(right - left) / left:+.0%}"


# ---------------------------------------------------------------- the result
@dataclass
class JobDiff:
    """Two runs compared at one rank (see the module docstring)."""

    left_run: str
    """The left run's folder (the one holding its ``rank_N/`` folders)."""
    right_run: str
    left_label: str
    """A short name of each side: the setting a sweep ran it with, else its run folder's name."""
    right_label: str
    rank: int | None
    """The rank compared (the same rank number on both sides)."""
    left_file: str
    right_file: str
    left_world: int | None
    right_world: int | None
    left_ranks_read: tuple[int, ...] = ()
    """The ranks each run's dump holds (the bytes and memory read them all)."""
    right_ranks_read: tuple[int, ...] = ()
    settings: list[dict] = field(default_factory=list)
    """What the two run records say differently: ``{"name", "left", "right"}``."""
    notes: list[str] = field(default_factory=list)
    """What limits the comparison (a stage read on one side only, ranks not aligned ...)."""
    strategies: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=STRATEGY_COLUMNS))
    comm: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=COMM_COLUMNS))
    axes: pd.DataFrame | None = None
    """``axis``, ``left_bytes``, ``right_bytes``: bytes per rank and step by parallel axis; None:
    :attr:`axes_why`."""
    axes_why: str = ""
    memory: pd.DataFrame | None = None
    """``part``, ``left_bytes``, ``right_bytes`` at :attr:`rank`; None: :attr:`memory_why`."""
    memory_why: str = ""
    ranks: RankDiff | None = None
    """The operator-level diff of the two ranks."""

    @property
    def strategy_changes(self) -> int:
        """How many aligned operators changed strategy (rows' ``n`` summed)."""
        return int(self.strategies["n"].sum()) if not self.strategies.empty else 0

    def comm_changes(self) -> pd.DataFrame:
        """The ``comm`` rows that changed, most telling first."""
        frame = self.comm[self.comm["change"] != "same"]
        order = {c: i for i, c in enumerate(CHANGES)}
        return frame.assign(_o=[order[c] for c in frame["change"]]).sort_values(
            ["_o", "kind", "op", "scope"], kind="stable").drop(columns="_o")

    def to_dict(self) -> dict:
        """Plain data; keys never depend on the runs' labels."""
        from msinspect.schema import records

        def frame(value):
            return None if value is None else records(value)

        return {"left_run": self.left_run, "right_run": self.right_run, "left_label": self.left_label,
                "right_label": self.right_label, "rank": self.rank, "left_file": self.left_file,
                "right_file": self.right_file, "left_world": self.left_world, "right_world": self.right_world,
                "left_ranks_read": list(self.left_ranks_read), "right_ranks_read": list(self.right_ranks_read),
                "settings": self.settings, "notes": self.notes, "strategy_changes": self.strategy_changes,
                "strategies": records(self.strategies), "comm": records(self.comm),
                "axes": frame(self.axes), "axes_why": self.axes_why,
                "memory": frame(self.memory), "memory_why": self.memory_why,
                "ranks": self.ranks.to_dict() if self.ranks is not None else None}


# ---------------------------------------------------------------- building it
def _rank_of(dump, rank: int | None, other_ranks: set[int], side: str, path) -> RankDump:
    present = {r.rank: r for r in dump.ranks if r.rank is not None}
    if rank is None:
        both = sorted(set(present) & other_ranks)
        if both:
            return present[both[0]]
        if len(dump.ranks) == 1:
            return dump.ranks[0]
        raise NoMatchError(f"{path}: the two runs hold no rank number in common ({side}: "
                           f"{ranks_text(present, word=True)}); name one with --rank")
    if rank not in present:
        raise NoMatchError(f"{path}: no rank {rank} ({side} holds {ranks_text(present, word=True)})")
    return present[rank]


def _label(rank: RankDump, record: dict | None) -> str:
    sweep = record.get("sweep") if record else None
    if isinstance(sweep, dict) and sweep.get("label"):
        return str(sweep["label"])
    return run_folder(rank).name


def _environment(record: dict | None) -> dict:
    """The variables a run's processes got that tell it apart: those MindSpore reads whatever set them
    (``read``), those the run set (``all_processes``) and those given with ``--env`` (``options``),
    less :data:`_RUN_NOISE`."""
    recorded = (record or {}).get("environment")
    recorded = recorded if isinstance(recorded, dict) else {}
    env: dict = {}
    for part in ("read", "all_processes", "options"):
        values = recorded.get(part)
        if isinstance(values, dict):
            env.update(values)
    return {k: v for k, v in env.items() if not _RUN_NOISE.match(k)}


def record_differences(left: dict | None, right: dict | None) -> list[dict]:
    """What two run records say differently, as ``{"name", "left", "right"}`` rows: the fields of
    :data:`_RECORD_FIELDS` (``script`` by file name) and the environment variables of each run
    (:func:`_environment`: less those any two runs differ in, the run's tag, paths)."""
    rows = []
    for name in _RECORD_FIELDS:
        a, b = (left or {}).get(name), (right or {}).get(name)
        if name == "script":
            a, b = (Path(a).name if a else a), (Path(b).name if b else b)
        if name == "script_args":
            a, b = a or [], b or []
        if a != b:
            rows.append({"name": name, "left": a, "right": b})
    ea, eb = _environment(left), _environment(right)
    for name in sorted(ea.keys() | eb.keys()):
        if ea.get(name) != eb.get(name):
            rows.append({"name": f"${name}", "left": ea.get(name), "right": eb.get(name)})
    return rows


def _strategy_rows(diff: RankDiff, right_ops: list[dict]) -> pd.DataFrame:
    """The rank diff's strategy differences, operators that changed alike as one row;
    ``right_ops``: the right rank's operator rows (whether each is part of the gradient)."""
    grouped: dict[tuple, dict] = {}
    backward = {r["line"]: bool(r.get("backward")) for r in right_ops}
    for row in diff.strategies.to_dict("records"):
        scope = scope_pattern(row["scope"])
        gradient = backward.get(row["right_line"], False)
        key = (row["op"], stable_name(row["name"]), scope, gradient, str(row["left_strategy"]),
               str(row["right_strategy"]))
        if key not in grouped:
            grouped[key] = {"op": row["op"], "name": stable_name(row["name"]), "scope": scope,
                            "gradient": gradient, "n": 0,
                            "left_strategy": row["left_strategy"], "right_strategy": row["right_strategy"]}
        grouped[key]["n"] += 1
    return pd.DataFrame(list(grouped.values()), columns=STRATEGY_COLUMNS)


def _comm_side(rows: list[dict]) -> dict[tuple, dict]:
    out: dict[tuple, dict] = {}
    for row in rows:
        if row.get("op") is None:
            continue
        key = (row.get("kind"), row.get("op"), scope_pattern(row.get("scope")))
        entry = out.setdefault(key, {"count": 0, "groups": set(), "wire": 0, "tensor": 0, "unknown": False})
        entry["count"] += 1
        group = row.get("group_ranks")
        if isinstance(group, (tuple, list)) and group:
            entry["groups"].add(tuple(group))
        for name, column in (("wire", "wire_bytes"), ("tensor", "tensor_bytes")):
            value = row.get(column)
            if isinstance(value, (int, float)) and value == value:
                entry[name] += int(value)
            elif row.get("moves_data"):
                entry["unknown"] = True
    return out


def _groups_text(groups: set) -> str:
    return "; ".join(ranks_text(g) for g in sorted(groups)) if groups else "-"


def comm_rows(left: list[dict], right: list[dict]) -> pd.DataFrame:
    """Each side's communication rows (of one rank) by kind, op and scope pattern, compared."""
    a, b = _comm_side(left), _comm_side(right)
    rows = []
    for key in sorted(a.keys() | b.keys(), key=lambda k: tuple(str(x) for x in k)):
        x, y = a.get(key), b.get(key)
        if x is None:
            change = "added"
        elif y is None:
            change = "removed"
        elif x["count"] != y["count"]:
            change = "more" if y["count"] > x["count"] else "fewer"
        elif x["groups"] != y["groups"]:
            change = "regrouped"
        elif (x["wire"], x["tensor"]) != (y["wire"], y["tensor"]):
            change = "resized"
        else:
            change = "same"
        rows.append({"kind": key[0], "op": key[1], "scope": key[2], "change": change,
                     "left_count": x["count"] if x else 0, "right_count": y["count"] if y else 0,
                     "left_groups": _groups_text(x["groups"]) if x else "-",
                     "right_groups": _groups_text(y["groups"]) if y else "-",
                     "left_wire_bytes": x["wire"] if x else 0, "right_wire_bytes": y["wire"] if y else 0,
                     "left_tensor_bytes": x["tensor"] if x else 0, "right_tensor_bytes": y["tensor"] if y else 0})
    return pd.DataFrame(rows, columns=COMM_COLUMNS)


def _two_columns(left: dict | None, right: dict | None, key: str, absent=None) -> pd.DataFrame:
    """``key``, ``left_bytes``, ``right_bytes``; ``absent``: what a name one side lacks holds
    (0 for an axis a side sends nothing on; None, cannot tell, where the side says nothing)."""
    names = list(dict.fromkeys(list(left or {}) + list(right or {})))
    return pd.DataFrame([{key: n, "left_bytes": (left or {}).get(n, absent if left is not None else None),
                          "right_bytes": (right or {}).get(n, absent if right is not None else None)}
                         for n in names], columns=[key, "left_bytes", "right_bytes"], dtype=object)


def _result_rows(analysis: Analysis, rank: int | None, what: str) -> list[dict]:
    for result in analysis.results:
        if result.rank == rank:
            return list(getattr(result, what))
    return []


def compare_runs(left: str | os.PathLike, right: str | os.PathLike, rank: int | None = None,
                 stage: str | None = None, *, lenient: bool = False, jobs: int | None = None) -> JobDiff:
    """Compare two runs of one model at ``rank`` (default: the lowest rank both hold). ``left``
    and ``right``: anything :func:`~msinspect.dumps.load_dump` reads as one job (a run folder, a
    folder holding one, a dump root). ``stage``: the pass read on both sides (default: validate,
    else step_parallel_end ...)."""
    dump_l, dump_r = load_dump(left), load_dump(right)
    ranks_l = {r.rank for r in dump_l.ranks if r.rank is not None}
    ranks_r = {r.rank for r in dump_r.ranks if r.rank is not None}
    rank_l = _rank_of(dump_l, rank, ranks_r, "left", left)
    rank_r = _rank_of(dump_r, rank_l.rank if rank is None else rank, ranks_l, "right", right)
    analysis_l = analyse(dump_l, stage, lenient=lenient, jobs=jobs)
    analysis_r = analyse(dump_r, stage, lenient=lenient, jobs=jobs)
    ranks = diff_ranks(rank_l, rank_r, stage, lenient=lenient)
    rec_l, rec_r = run_record(rank_l), run_record(rank_r)
    result = JobDiff(str(run_folder(rank_l)), str(run_folder(rank_r)), _label(rank_l, rec_l), _label(rank_r, rec_r),
                     rank_l.rank, ranks.left_file, ranks.right_file,
                     _size(analysis_l.world), _size(analysis_r.world), tuple(sorted(ranks_l)), tuple(sorted(ranks_r)),
                     ranks=ranks)
    if result.left_label == result.right_label:
        result.left_label, result.right_label = "left", "right"
    result.settings = record_differences(rec_l, rec_r)
    result.strategies = _strategy_rows(ranks, _result_rows(analysis_r, rank_r.rank, "ops"))
    result.comm = comm_rows(_result_rows(analysis_l, rank_l.rank, "comm"),
                            _result_rows(analysis_r, rank_r.rank, "comm"))
    result.notes = _notes(ranks, rank_l, rank_r)
    for name, function in (("axes", axis_bytes), ("memory", rank_memory)):
        (found_l, why_l), (found_r, why_r) = function(analysis_l), function(analysis_r)
        if found_l is None or found_r is None:
            setattr(result, f"{name}_why", why_l or why_r)
        else:
            axes = name == "axes"  # a rank with no collective on an axis sends 0 bytes on it
            setattr(result, name, _two_columns(found_l.get(rank_l.rank, {} if axes else None),
                                               found_r.get(rank_r.rank, {} if axes else None),
                                               "axis" if axes else "part", 0 if axes else None))
    return result


def _notes(ranks: RankDiff, rank_l: RankDump, rank_r: RankDump) -> list[str]:
    notes = []
    stage_l, stage_r = _stage(ranks.left_file), _stage(ranks.right_file)
    if stage_l != stage_r:
        notes.append(f"the two sides were read at different passes ({stage_l}, {stage_r}): shapes and "
                     "strategies of different passes are compared")
    lp, rp = passes(rank_l), passes(rank_r)
    if lp is not None and rp is not None and lp != rp:
        notes.append(f"the rank folders hold different passes ({', '.join(sorted(lp ^ rp))} on one side only); "
                     f"{stage_l} was read on both")
    # operators (not communication: that is compared by kind, op and scope) on one side only
    alone = {"left": 0, "right": 0}
    for row in ranks.only.to_dict("records"):
        if row["op"] not in VOCABULARY:
            alone["left"] += max(0, row["left_count"] - row["right_count"])
            alone["right"] += max(0, row["right_count"] - row["left_count"])
    if any(alone.values()):
        notes.append(f"operators found on one side only, so not compared: {alone['left']} of left, "
                     f"{alone['right']} of right (msinspect diff {rank_l.path} {rank_r.path} lists them)")
    return notes


def _stage(file: str) -> str:
    from msinspect.stages import stage_of

    return stage_of(Path(file).name)


def _size(world) -> int | None:
    return len(world) if world else None
