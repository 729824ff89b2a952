"""Analysing every rank of a dump: one file per rank, parsed and analysed in a process pool, the
results gathered into pandas DataFrames."""
from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from msinspect.analysis.comm import COMM_COLUMNS, comm_rows
from msinspect.analysis.context import RankContext, shapes_are_global
from msinspect.analysis.operators import OP_COLUMNS, operator_rows
from msinspect.analysis.params import PARAM_COLUMNS, param_rows, slice_text, with_slices
from msinspect.analysis.strategies import STRATEGY_COLUMNS, strategy_rows
from msinspect.dumps import Dump, RankDump
from msinspect.errors import DumpNotFoundError
from msinspect.graph import to_networkx
from msinspect.parser import parse_file
from msinspect.ranks_read import ReadPlan, plan_reads

#: Stages tried, in order, when the user names none: ``validate`` has both the strategies and the
#: per-rank shapes in 2.10; ``execute`` has them in 2.2.
PREFERRED_STAGES = ("validate", "step_parallel_end", "execute", "step_parallel_begin")
#: Pre-parallel stages whose abstracts give the global shapes, best first.
REFERENCE_STAGES = ("step_parallel_begin", "step_parallel_end")


@dataclass
class RankResult:
    """What one rank's file holds, as plain rows (cheap to send between processes)."""

    rank: int | None
    label: str
    file: str
    stage: str
    family: str
    status: str
    strategies: list[dict] = field(default_factory=list)
    comm: list[dict] = field(default_factory=list)
    params: list[dict] = field(default_factory=list)
    ops: list[dict] = field(default_factory=list)
    reference: str | None = None


def pick_file(rank: RankDump, stage: str | None) -> Path:
    """The file of ``stage``, or of the first of :data:`PREFERRED_STAGES` the rank has, else its
    newest file."""
    if stage:
        return rank.file(stage)
    have = rank.stages()
    for candidate in PREFERRED_STAGES:
        if candidate in have:
            return rank.file(candidate)
    if not rank.files:
        raise DumpNotFoundError(f"{rank.path}: no IR files")
    return rank.files[-1]


def pick_reference(rank: RankDump, path: Path) -> Path | None:
    """A pre-parallel file of the same rank, for global shapes, when ``path`` shows per-rank ones."""
    if shapes_are_global(str(path)):
        return None
    have = rank.stages()
    for candidate in REFERENCE_STAGES:
        if candidate in have:
            return rank.file(candidate)
    return None


def world_of(dump: Dump) -> tuple[int, ...] | None:
    """Every rank of the job: from the run record (``config.json`` ``ranks``) beside the dump,
    else the ``rank_N`` folders found when they are 0..N-1."""
    for folder in (dump.path, dump.path.parent):
        record = Path(folder) / "config.json"
        if record.is_file():
            try:
                ranks = json.loads(record.read_text(encoding="utf-8")).get("ranks")
            except (OSError, ValueError):
                ranks = None
            if isinstance(ranks, int) and ranks > 0:
                return tuple(range(ranks))
    numbers = sorted({r.rank for r in dump.ranks if r.rank is not None}  # with ranks that could not be read
                     | {u.rank for u in dump.unreadable if u.rank is not None})
    if numbers and numbers == list(range(len(numbers))) and len(numbers) > 1:
        return tuple(numbers)
    return None


def _analyse(path: str, reference: str | None, ctx: RankContext, label: str) -> RankResult:
    ir = parse_file(path)
    ref = parse_file(reference) if reference else None
    graph = to_networkx(ir)
    return RankResult(
        rank=ctx.rank, label=label, file=path, stage=ir.stage, family=ir.family, status=ir.status,
        strategies=strategy_rows(ir, ctx, ref), comm=comm_rows(ir, ctx, graph),
        params=param_rows(ir, ctx, ref, graph), ops=operator_rows(ir, ctx), reference=reference,
    )


def stage_groups(results: list[RankResult], world: tuple[int, ...] | None) -> dict[int, tuple[int, ...]]:
    """Pipeline stages as seen in the dump: ranks holding the same set of weights share a stage."""
    by_weights: dict[frozenset, list[int]] = {}
    for result in results:
        if result.rank is None:
            continue
        names = frozenset(row["param"] for row in result.params)
        by_weights.setdefault(names, []).append(result.rank)
    if world and len(by_weights) == 1:
        only = next(iter(by_weights.values()))
        if len(only) == len(world):
            return {r: world for r in world}
    return {r: tuple(sorted(group)) for group in by_weights.values() for r in group}


class Analysis:
    """The analysed files of a dump, one per rank, with their tables."""

    def __init__(self, dump: Dump, results: list[RankResult], world: tuple[int, ...] | None,
                 plan: ReadPlan | None = None):
        self.dump = dump
        self.results = results
        self.world = world
        self.plan = plan
        """Which ranks were read, at which stage, and which not (:mod:`msinspect.ranks_read`)."""
        self._odd = {str(r.file) for r in plan.other_stage} if plan else set()
        # pipeline stages compare the weights of ranks read at one stage: with a rank read at
        # another stage, or not read, they cannot be told
        whole = plan is None or not (plan.other_stage or plan.not_read)
        self.stages = stage_groups(results, world) if whole else {}

    def _flag(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Add ``other_stage``: the row comes from a rank read at another stage than the rest."""
        frame["other_stage"] = frame["file"].isin(self._odd) if not frame.empty else pd.Series(dtype=bool)
        return frame

    def context(self, rank: int | None) -> RankContext:
        """The context of one rank, with its pipeline stage."""
        return RankContext(rank, self.world, self.stages.get(rank) if rank is not None else None)

    def strategies(self) -> pd.DataFrame:
        """One row per operator with a strategy, per rank."""
        return self._flag(_frame([row for r in self.results for row in r.strategies], STRATEGY_COLUMNS))

    def comm(self) -> pd.DataFrame:
        """One row per communication or redistribution operator, per rank."""
        return self._flag(_frame([row for r in self.results for row in r.comm], COMM_COLUMNS))

    def operators(self) -> pd.DataFrame:
        """One row per CNode, per rank."""
        return self._flag(_frame([row for r in self.results for row in r.ops], OP_COLUMNS))

    def slices(self) -> pd.DataFrame:
        """One row per weight per rank: its layout and the slice the rank holds."""
        rows = []
        for result in self.results:
            rows += with_slices(result.params, self.context(result.rank))
        frame = _frame(rows, PARAM_COLUMNS)
        frame["slice_text"] = [slice_text(s) for s in frame["slice"]]
        return self._flag(frame)

    def shapes(self) -> pd.DataFrame:
        """One row per operator input: global shape, strategy, the per-rank shape that follows,
        the one found in the dump, and whether they agree."""
        rows = []
        for row in self.strategies().to_dict("records"):
            g_in, r_in, exp = row["global_inputs"], row["rank_inputs"], row["expected_rank_inputs"]
            for i, strategy in enumerate(row["in_strategy"] or ()):
                rows.append({
                    "rank": row["rank"], "name": row["name"], "op": row["op"], "input": i,
                    "global_shape": g_in[i] if g_in and i < len(g_in) else None, "strategy": strategy,
                    "expected": exp[i] if exp and i < len(exp) else None,
                    "found": r_in[i] if r_in and i < len(r_in) else None,
                    "file": row["file"], "line": row["line"], "scope": row["scope"],
                })
        frame = pd.DataFrame(rows, columns=["rank", "name", "op", "input", "global_shape", "strategy",
                                            "expected", "found", "ok", "file", "line", "scope"])
        frame["ok"] = [None if e is None or f is None else e == f
                       for e, f in zip(frame["expected"], frame["found"])]
        return self._flag(frame)


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for column in columns:
        if column not in frame:
            frame[column] = None
    return frame[columns + [c for c in frame.columns if c not in columns]]


def analyse(dump: Dump, stage: str | None = None, *, jobs: int | None = None,
            progress: Callable[[str], None] | None = None) -> Analysis:
    """Parse and analyse one file per rank (the ``stage`` file, or the best one) in a process pool
    of ``jobs`` workers (default: every core)."""
    world = world_of(dump)
    plan = plan_reads(dump, stage)
    tasks = []
    for read in plan.read:
        rank, path = read.source, read.file
        reference = pick_reference(rank, path)
        ctx = RankContext(rank.rank, world)
        tasks.append((str(path), str(reference) if reference else None, ctx, rank.label))
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(tasks)))
    results: list[RankResult] = []
    if jobs == 1:
        for task in tasks:
            results.append(_analyse(*task))
            if progress:
                progress(task[3])
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_analyse, *task) for task in tasks]
            for task, future in zip(tasks, futures):
                results.append(future.result())
                if progress:
                    progress(task[3])
    return Analysis(dump, results, world, plan)

