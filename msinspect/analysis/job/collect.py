"""Analysing every rank of a dump: one file per rank, parsed and analysed in a process pool, the
results gathered into pandas DataFrames."""
from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Mapping, Sequence
from contextlib import closing, nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Collection

from msinspect.analysis.rank import passes
from msinspect.analysis.rank.comm import SharedGroups, comm_nodes, ranks_named, stated_world, with_world
from msinspect.analysis.rank.context import RankContext
from msinspect.analysis.rank.failure import failure_row
from msinspect.analysis.dataflow.file_view import answer
from msinspect.analysis.rank.passes import Like, RankInput, before_planner_file
from msinspect.analysis.job.pipeline_stages import RankKeys, StagesTold, facts_of, stages_from_ir, with_groups
from msinspect.analysis.rank.gradsync import accumulators, trained_weights, updated_weights
from msinspect.analysis.rank.params import PARAM_COLUMNS, at_end_note, params_at_end, slice_text, weights_of, with_slices
from msinspect.analysis.rank.signature import Signature, held_weights, signature_of
from msinspect.analysis.rank.result import RankResult
from msinspect.analysis.engine.spool import SPOOL_RANKS, Derived, Spool, as_list, close_shelf, shelve
from msinspect.analysis.engine.spooled_results import SpooledResults, planned
from msinspect.analysis.engine.tally import Tally, tally, tally_of, with_comm
from msinspect.mindspore.vocabulary import PIPELINE_OPS, planner_ran
from msinspect import cache as caches
from msinspect import collector, parser_mode
from msinspect.dumps import Dump
from msinspect.errors import MsInspectError, shown_path
from msinspect.executors import _bare, batches, run_each
from msinspect.rank_lists import compact
from msinspect.ranks_read import RankRead, ReadPlan, plan_reads
from msinspect.selection import world_of
from msinspect.stages import later_pass

#: Set (to anything but ""), every rank is read in full: no rank is read by what differs from
#: another (:mod:`msinspect.analysis.engine.alike`).
READ_EVERY_RANK_ENV = "MSINSPECT_READ_EVERY_RANK"

#: The most ranks one task reads (its first in full, the others by what differs from it): a
#: worker holds a task's results until it ends, some 0.5 MB of rows a rank.
RANKS_A_TASK = 16

#: Every how many batches the main process hands freed memory back (:func:`msinspect.collector.trim`).
TRIM_EVERY = 8

if TYPE_CHECKING:  # pandas loads where a table is made: `summary` reads the rows and never does
    import pandas as pd

    from msinspect.analysis.engine import alike


def _skipped(ir) -> list[str]:
    path = shown_path(ir.path)
    return [f"{path}:{d.line}:{d.column}: {d.message}" if d.line else f"{path}: {d.message}"
            for d in ir.diagnostics]


def _cache_name(task: tuple, lenient: bool, cache: caches.Store | None) -> str | None:
    """The name of the rank's result in ``cache``; None without a cache or where the file cannot
    be read (the parse says why)."""
    if cache is None:
        return None
    path, reference, ctx, label = task
    try:
        before = before_planner_file(path)
        extra = (before, caches.file_digest(before).hex()) if before else ()
        return caches.result_key(path, reference, (ctx, label, lenient, passes.key()) + extra)
    except OSError:
        return None


def _analyse(path: str, reference: str | None, ctx: RankContext, label: str,
             lenient: bool = False, cache: caches.Store | None = None) -> RankResult:
    """The task of one rank read in full (run in a worker): its result from ``cache`` when kept
    there, else the file parsed and analysed, its graph let go, and the compact result kept in
    ``cache``."""
    return _cached((path, reference, ctx, label), lenient, cache,
                   lambda: _compute(path, reference, ctx, label, lenient))


def _cached(task: tuple, lenient: bool, cache: caches.Store | None, compute: Callable[[], RankResult]) -> RankResult:
    """The rank's result from ``cache`` when kept there, else ``compute()``'s, then kept."""
    name = _cache_name(task, lenient, cache)
    found = cache.load(name) if name else None
    if isinstance(found, RankResult):
        return found
    result = compute()
    if name:
        cache.store(name, result)
    return result


def _compute(path: str, reference: str | None, ctx: RankContext, label: str, lenient: bool) -> RankResult:
    """Parse and analyse one rank, Python's cycle collector paused (:mod:`msinspect.collector`);
    the rank's graph is emptied before it is let go, so its content is freed at once, not at the
    collector's next full pass."""
    with collector.paused():
        return _rows_of(path, reference, ctx, label, lenient)


def _rows_of(path: str, reference: str | None, ctx: RankContext, label: str, lenient: bool) -> RankResult:
    ir, ref, graph = _model(path, reference, lenient)
    result = _result(ir, ref, graph, path, reference, ctx, label)
    graph.clear()  # networkx's views make the graph cyclic: emptied, its nodes and edges go now
    return result


def _model(path: str, reference: str | None, lenient: bool):
    """The rank's file and its reference file parsed, and the file's graph."""
    from msinspect.graph import to_networkx  # a run answered from the cache loads neither Lark nor the builder
    from msinspect.parser import parse_file

    ir = parse_file(path, lenient=lenient)
    ref = _reference(path, reference, ir, lambda: parse_file(reference, lenient=lenient))
    return ir, ref, to_networkx(ir)


def _reference(path: str, reference: str | None, same, other):
    """The rank's reference file's reading: none without one; ``same`` (the rank's own file's)
    where the reference is that file (:func:`_own`); else ``other()``."""
    if not reference:
        return None
    return same if _own(path, reference) else other()


def _own(path: str, reference: str) -> bool:
    """Whether the rank's reference file is its own file (a rank with ``step_parallel_end`` only:
    its weights are the file's own)."""
    return reference == path or os.path.normpath(reference) == os.path.normpath(path)  # no Path a rank


def _own_fields(ctx: RankContext, path: str, complete: bool) -> dict:
    """What a rank's row taken from another rank's (:class:`~msinspect.analysis.rank.passes.Like`)
    has of its own: its rank, its file and whether that was read whole."""
    return {"rank": ctx.rank, "file": path, "complete": complete}


def _result(ir, ref, graph, path: str, reference: str | None, ctx: RankContext, label: str,
            like: Like | None = None) -> RankResult:
    """The rank's rows, made from its parsed file (and reference) and graph by each per-rank pass
    (:mod:`msinspect.analysis.rank.passes`). ``like``: what the rank is read against
    (:class:`~msinspect.analysis.rank.passes.Like`): a pass's rows of its nodes whose values are the
    same are that rank's where the pass says so (operators where the names MindSpore writes are
    the same; strategies where the reference is the rank's own file), but for their rank and file."""
    complete = ir.status != "incomplete" and (ref is None or ref.status != "incomplete")
    rows = passes.run(RankInput(ir, ref, graph, ctx, path, reference, _own_fields(ctx, path, complete)), like)
    comm = rows["comm"]
    result = RankResult(
        rank=ctx.rank, label=label, file=path, stage=ir.stage, family=ir.family, status=ir.status,
        rows=rows, reference=reference,
        weights=sum(1 for p in ir.params if p.has_default), world_size=stated_world(ir, graph),
        highest_named=max(ranks_named(ir, graph), default=None) if ctx.world is None else None,
        pipelined=any(n.op in PIPELINE_OPS for n in comm_nodes(ir, graph)),
        stage_facts=facts_of(ctx.rank, comm, comm_nodes(ir, graph)),
        skipped=_skipped(ir) + (_skipped(ref) if ref is not None else []),
        planner=planner_ran(ir.stage, ir.attrs), failure=failure_row(ir), complete=complete,
    )
    for rank_pass in passes.PASSES:
        if rank_pass.complete:
            made = rows[rank_pass.name]
            for row in made.made.values() if isinstance(made, Derived) else made:  # a Derived list's fields have it
                row["complete"] = complete
    held = answer(graph, ("held_weights",), lambda: held_weights(ir))  # the parameters: the program's
    result.signature = signature_of(result, held, _known_parts(like))
    result.tally = tally_of(result.strategies, comm, result.params)
    return result


def _known_parts(like: Like | None) -> dict[str, str] | None:
    """The signature's parts a rank read alike shares with the rank it is read against, its
    reference its own file: every part but its communication. Weights, operators, strategies
    and shapes read what the alike reading checks is the same (the weights' names, each node's
    operator, strategy, instance name and shapes); the communication rows hold the rank's groups."""
    if like is None or not like.own_reference or like.result.signature is None:
        return None
    return {part: digest for part, digest in like.result.signature.parts if part != "comm"}


def _analyse_batch(tasks: list[tuple], lenient: bool = False, cache: caches.Store | None = None,
                   alike: bool = True, run: str | None = None, shelf: str | None = None) -> list:
    """The tasks of consecutive ranks (run in a worker): each rank's result, or the msinspect
    error its file raised, in order. With ``alike`` (and not ``lenient``, nor the reference
    reading: :func:`_alike_reading`), a rank whose file has the name of the last rank read in
    full is read by what differs from it (:mod:`msinspect.analysis.engine.alike`); every other rank is
    read in full (:func:`_analyse`).
    ``run``: the analysis the batch is of; the last rank read in full stays with the worker for
    the run's next batch (:func:`_batch_reader`), so that a worker reads one rank in full, not one
    a batch. Without it, the batch is read on its own. ``shelf``: the folder of the run's spool;
    each rank's rows are put there by this worker and the result sent without them
    (:func:`_shelved`)."""
    alike = _alike_reading(alike, lenient)
    if run is None:
        batch = _Batch(lenient, cache, alike)
        try:
            return [_shelved(batch.read(task), shelf) for task in tasks]
        finally:
            batch.close()
    batch = _batch_reader(lenient, cache, alike, run)
    return [_shelved(batch.read(task), shelf) for task in tasks]


def _alike_reading(alike: bool, lenient: bool) -> bool:
    """Whether ranks are read by what differs (``alike`` asked for): not under ``lenient`` (a
    rank read in part has nothing to be compared with), nor under the reference reading
    (``MSINSPECT_PARSER=reference``, Lark alone: a follower's changed nodes are read again by the
    fast reading's reader, which that reading has not)."""
    return alike and not lenient and parser_mode.current() == parser_mode.FAST


def _shelved(result, shelf: str | None):
    """``result`` as sent to the main process: with ``shelf``, a copy whose rows are in this
    worker's file of that folder (:func:`~msinspect.analysis.engine.spool.shelve`), with where they are
    and what its comm rows tell of the groups (the result itself kept whole: a rank read alike
    takes rows of it)."""
    if not isinstance(result, RankResult):
        return result
    names = passes.names()
    if shelf is None:  # the rows go with it: a Derived list's made
        return replace(result, rows={name: as_list(result.rows.get(name, [])) for name in names})
    at = shelve(shelf, [result.rows.get(name, []) for name in names])
    head = replace(result, rows={name: [] for name in names})
    head.rows_at, head.groups_seen = at, SharedGroups.seen(result.comm)
    head.groups_unresolved = SharedGroups.unresolved(result.comm)
    return head


#: The worker's reader of batches (:func:`_batch_reader`) and what it was made for.
_READER: tuple[tuple, "_Batch"] | None = None


def _batch_reader(lenient: bool, cache: caches.Store | None, alike: bool, run: str) -> "_Batch":
    """The worker's reader, its exemplar kept from the batch before, when made for the same
    run and reading (``lenient``, ``alike``; the ``cache`` only keeps results); else a new one,
    the old let go: a rank is never compared with another run's."""
    global _READER
    how = (run, lenient, alike)
    if _READER is None or _READER[0] != how:
        release()
        _READER = (how, _Batch(lenient, cache, alike))
    _READER[1].cache = cache
    return _READER[1]


def release() -> None:
    """Let the worker's reader and its exemplar go: at the end of an analysis run in this
    process (one job), so that the exemplar's model and graph do not outlive it."""
    global _READER
    if _READER is not None:
        _READER[1].close()
        _READER = None
    close_shelf()


@dataclass
class _Led:
    """The rank of a batch read in full that the next are read against."""

    read: "alike.Exemplar"
    """Its lines, model and graph."""
    task: tuple
    result: RankResult
    lines: dict = field(default_factory=dict)
    """:attr:`~msinspect.analysis.rank.passes.Like.lines`."""


class _Batch:
    """Ranks read in order, the last rank read in full kept as the exemplar."""

    def __init__(self, lenient: bool, cache: caches.Store | None, alike: bool):
        self.lenient, self.cache, self.alike = lenient, cache, alike
        self.exemplar: _Led | None = None

    def read(self, task: tuple):
        path, reference, ctx, label = task
        try:
            if not self.alike:
                return _analyse(path, reference, ctx, label, lenient=self.lenient, cache=self.cache)
            return _cached(task, self.lenient, self.cache, lambda: self._read(task))
        except MsInspectError as error:
            return _bare(error)  # sent back to the main process: without its Lark chain

    def _read(self, task: tuple) -> RankResult:
        """By what differs from the exemplar where it can be, else in full (the new exemplar)."""
        result, departure = self._follow(task)
        if result is None:
            before = self.exemplar.read.label if self.exemplar is not None else None
            result = self._lead(task)
            if departure:
                result.departure, result.departed_from = departure, before
        return result

    def _follow(self, task: tuple):
        """``(result, None)`` read by what differs from the exemplar; ``(None, departure text)``
        where the file departs from it; ``(None, None)`` where it is not compared (no exemplar,
        another file name, a file that does not read cleanly)."""
        from msinspect.analysis.engine import alike

        path, reference, ctx, label = task
        if self.exemplar is None:
            return None, None
        led = self.exemplar
        exemplar, (e_path, e_reference, e_ctx, _) = led.read, led.task
        name = os.path.basename  # of the text: no Path a rank (see msinspect.dumps._rank_dump)
        if name(path) != name(e_path) or (reference is None) != (e_reference is None) \
                or (ctx.world, ctx.stage_ranks) != (e_ctx.world, e_ctx.stage_ranks):
            return None, None
        lines, differ = alike.compared(exemplar, path)
        if lines is None:
            return None, differ
        ref_ex = exemplar.ref_exemplar
        own = ref_ex is exemplar  # the reference is the rank's own file, for both
        if reference is not None:
            if name(reference) != name(e_reference) or ref_ex is None \
                    or own != _own(path, reference):
                return None, None
            ref_lines, ref_differ = (lines, differ) if own else alike.compared(ref_ex, reference, name(reference))
            if ref_lines is None:
                return None, ref_differ
        else:
            ref_lines, ref_differ = None, []
        with collector.paused(), alike.patched(exemplar, lines, differ, path, passes.readers()) as ir, \
                alike.patched(ref_ex, ref_lines, ref_differ, reference) if ref_ex is not None and not own \
                else nullcontext(ir if own else None) as ref:
            for read in (ir, ref):
                if isinstance(read, alike.Departure):
                    return None, read.format(exemplar.label) if read.departs else None
            like = Like(led.result, tuple(exemplar.by_line[line] for line in sorted(exemplar.changed)),
                        exemplar.names_kept, own or ref is None, exemplar.keeps, led.lines)
            result = _result(ir, ref, exemplar.graph, path, reference, ctx, label, like)
        result.read_by = exemplar.label
        return result, None

    def _lead(self, task: tuple) -> RankResult:
        """Read the rank in full and keep it as the exemplar."""
        from msinspect.analysis.engine import alike
        from msinspect.analysis.dataflow.file_view import remember

        path, reference, ctx, label = task
        with collector.paused():
            ir, ref, graph = _model(path, reference, self.lenient)
            remember(graph)  # its walks' answers serve the ranks read against it
            result = _result(ir, ref, graph, path, reference, ctx, label)
        self.close()
        lines = alike.lines_of(path) if result.complete else None
        own = ref is ir  # the reference is the rank's own file
        ref_lines = lines if own else alike.lines_of(reference) if reference and lines is not None else None
        if lines is not None and (reference is None or ref_lines is not None):
            exemplar = alike.Exemplar(label, lines, ir, graph)
            exemplar.ref_exemplar = (exemplar if own else alike.Exemplar(label, ref_lines, ref, None)
                                     if ref is not None else None)
            self.exemplar = _Led(exemplar, task, result)
        else:
            graph.clear()
        return result

    def close(self) -> None:
        if self.exemplar is not None:
            self.exemplar.read.graph.clear()  # networkx's views make the graph cyclic: emptied, it goes now
            self.exemplar = None


def _ran_every_pass(result: RankResult) -> None:
    """MsInspectError where the process that analysed the rank ran without a per-rank pass this
    one has: a pass registered at run time (:func:`~msinspect.analysis.rank.passes.register`) reaches
    the worker processes forked after it only, never a Dask worker nor a process started before."""
    missing = [name for name in passes.names() if name not in result.rows]
    if missing:
        raise MsInspectError(f"{result.label}: the process that analysed it has no per-rank pass "
                             f"{', '.join(missing)} (registered after that process started); a pass every "
                             "process runs is a line in PASSES of msinspect/analysis/rank/passes.py")


def _died_on(task: tuple, error: MsInspectError) -> MsInspectError:
    """The error of a rank whose batch's worker died: the same, naming the rank's own file."""
    from msinspect.errors import WorkerError

    if isinstance(error, WorkerError):
        return WorkerError(path=task[0], line=0, column=0, message=error.message)
    return error


def _unreadable(task: tuple, error: MsInspectError) -> RankResult:
    """Under ``lenient``: a rank whose file could not be read at all, with the reason."""
    path, reference, ctx, label = task
    return RankResult(rank=ctx.rank, label=label, file=path, stage="", family="", status="unreadable",
                      rows={name: [] for name in passes.names()}, reference=reference, complete=False,
                      error=str(error).split("\n", 1)[0])


class Gathered:
    """The ranks' results as they arrive, in task order: each rank's rows spooled when ``spool``
    (:mod:`msinspect.analysis.engine.spool`), else held; what the groups' names stand for learnt from
    each (:class:`~msinspect.analysis.rank.comm.SharedGroups`); ranks of one signature sharing one.
    :meth:`finish` then gives the world group's rows the world learnt from the files, and each
    group a rank names by its hash only the ranks the others tell: the rows of those ranks only
    are read back, filled in and spooled again."""

    def __init__(self, count: int, spool: bool):
        self.rows = Spool() if spool else None
        self.results: list[RankResult | None] | SpooledResults = (SpooledResults(count, self.rows) if spool
                                                                  else [None] * count)
        self.groups = SharedGroups(log=self.rows)  # spooled: what the ranks tell of groups waits on disk too
        self.unresolved: list[int] = []  # ranks with a group whose ranks their own file does not tell
        self.signatures: dict[Signature, Signature] = {}
        self.tallies: dict[Tally, Tally] = {}

    def arrive(self, index: int, result: RankResult, read: RankRead | None = None) -> None:
        """Rank ``index``'s result (task order); ``read``: the plan's entry of the rank, from which
        a spooled result whose rank, label and files are the plan's makes them when asked for."""
        if result.rows_at is not None:  # its rows are on disk already: what they tell came with it
            self.groups.add_seen(result.groups_seen)
            unresolved = result.groups_unresolved
        else:
            self.groups.add(result.comm)
            unresolved = self.groups.unresolved(result.comm)
        if unresolved:
            self.unresolved.append(index)
        if result.signature is not None:  # ranks that agree share one
            result.signature = self.signatures.setdefault(result.signature, result.signature)
        if result.tally is not None:
            result.tally = self.tallies.setdefault(result.tally, result.tally)
        if self.rows is None:
            self.results[index] = result
        else:
            self.results.put(index, result, read)

    def finish(self, world: tuple[int, ...] | None) -> tuple[list[RankResult], tuple[int, ...] | None]:
        """Every result and the world: ``world``, else the one the files state
        (:func:`world_from_ir`)."""
        results = self.results
        learnt = world is None
        if learnt:
            world = world_from_ir(results)
            if world is not None:
                self.groups.world_found(world)
        for index in self.unresolved:  # a group one rank names by its hash only; the world's group
            result = results[index]
            comm = result.comm
            if learnt and world is not None:
                with_world(comm, world)
            self.groups.fill(comm, world)
            result.comm = comm
            if result.tally is not None:
                result.tally = with_comm(result.tally, comm)
            if result.stage_facts is not None:
                result.stage_facts = with_groups(result.stage_facts, result.rank, comm)
        return results, world


def world_from_ir(results: list[RankResult]) -> tuple[int, ...] | None:
    """The world when no run record or full set of rank folders gives it: the size the files
    state over the world group, when they agree and it holds every rank read or named."""
    sizes = {r.world_size for r in results if r.world_size}
    if len(sizes) != 1:
        return None
    size = sizes.pop()
    seen = {r.rank for r in results if r.rank is not None} | {r.highest_named for r in results
                                                              if r.highest_named is not None}
    return tuple(range(size)) if not seen or max(seen) < size else None


class OneStage(RankKeys):
    """Each of ``ranks`` -> ``world``, the stages of a job without a pipeline, as a read-only
    mapping holding the ranks as a range where they are one, not an entry a rank."""

    def __init__(self, ranks: list[int], world: tuple[int, ...]):
        super().__init__(ranks)
        self._world = world

    def __getitem__(self, rank: int) -> tuple[int, ...]:
        if rank in self._ranks:
            return self._world
        raise KeyError(rank)

    def __repr__(self) -> str:
        return f"OneStage({self._ranks!r}, world={compact(tuple(self._world))!r})"


def stage_groups(results: list[RankResult], world: tuple[int, ...] | None) -> Mapping[int, tuple[int, ...]]:
    """Pipeline stages as seen in the dump: ranks holding the same set of weights share a stage.
    With some ranks only, a job without a pipeline has the world as its one stage; a pipeline's
    stages cannot be told (the ranks present are not the stage), nor where every rank holds the
    same weights (a pipeline has two stages at least): :func:`ir_stages` may tell them."""
    by_weights: dict[frozenset, list[int]] = {}
    for result in results:
        if result.rank is None or not result.complete:  # a partial rank would look like a stage of its own
            continue
        names = tally(result).weights_read
        by_weights.setdefault(names, []).append(result.rank)
    present = {r.rank for r in results if r.rank is not None}
    if not world:
        return {}  # ranks that are not 0..N-1 and no stated world: the stage's size cannot be told
    pipelined = any(r.pipelined for r in results)
    if len(by_weights) == 1:
        only = next(iter(by_weights.values()))
        if not pipelined:
            return OneStage(only, world)
        return {}  # a pipeline whose ranks all hold the same weights: they do not tell its stages
    if not set(world) <= present:
        return {}  # a pipeline read in part: its stages cannot be told from the ranks present
    return {r: tuple(sorted(group)) for group in by_weights.values() for r in group}


def ir_stages(results: list[RankResult], world: tuple[int, ...] | None) -> StagesTold:
    """Pipeline stages as the ranks' files tell them: each rank's stage index, Send / Receive
    peers and in-stage groups (:attr:`RankResult.stage_facts`) by MindSpore's rule
    (:func:`~msinspect.analysis.job.pipeline_stages.stages_from_ir`), for every rank read."""
    return stages_from_ir(((r.rank, r.stage_facts) for r in results if r.rank is not None), world)


class Analysis:
    """The analysed files of a dump, one per rank, with their tables."""

    def __init__(self, dump: Dump, results: list[RankResult], world: tuple[int, ...] | None,
                 plan: ReadPlan | None = None):
        self.dump = dump
        self.results = results
        """One :class:`RankResult` per rank read, in the plan's order; from
        :data:`~msinspect.analysis.engine.spool.SPOOL_RANKS` ranks, each a :class:`SpooledResult` whose
        rows are read back from disk at each access (each table reads one rank at a time)."""
        self.world = world
        self.plan = plan
        """Which ranks were read, at which stage, and which not (:mod:`msinspect.ranks_read`)."""
        self._odd = {r.read_from for r in plan.other_stage} if plan else set()
        # pipeline stages compare the weights of ranks read at one stage: with a rank read at
        # another stage, or not read, they cannot be told; the files' Send / Receive and groups may
        whole = plan is None or not (plan.other_stage or plan.not_read)
        self.stages = stage_groups(results, world) if whole else {}
        """Each rank read -> the ranks of its pipeline stage; empty: cannot tell."""
        self.stages_by: str | None = "weights" if self.stages else None
        """How :attr:`stages` were told: ``weights`` (ranks holding the same weights share a
        stage: :func:`stage_groups`), ``ir`` (each file's stage, peers and groups:
        :func:`ir_stages`); None: not told."""
        self.stages_note: str | None = None
        """Why a pipeline's stages cannot be told; where both ways tell them and disagree, that."""
        self.pipelined = any(r.pipelined for r in results)
        """Whether a rank read sends or receives between pipeline stages: where the stages cannot
        be told, a rank's stage is then not the world (:class:`RankContext`)."""
        if self.pipelined:
            told = ir_stages(results, world)
            if not self.stages:
                self.stages, self.stages_note = told.stages, told.note
                self.stages_by = "ir" if told.stages else None
            elif told.stages and dict(told.stages) != dict(self.stages):
                self.stages_note = "the files' Send / Receive and groups tell other stages than their weights"

    def _flag(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Add ``other_stage``: the row comes from a rank read at another stage than the rest."""
        import pandas as pd

        frame["other_stage"] = frame["file"].isin(self._odd) if not frame.empty else pd.Series(dtype=bool)
        return frame

    @property
    def skipped(self) -> list[str]:
        """Under ``lenient``: every skipped span, count that did not hold, and unreadable file."""
        return [line for r in self.results for line in r.skipped] + [r.error for r in self.results if r.error]

    @property
    def complete(self) -> bool:
        """Whether every rank's file was read whole."""
        return all(r.complete for r in self.results)

    def context(self, rank: int | None) -> RankContext:
        """The context of one rank, with its pipeline stage."""
        return RankContext(rank, self.world, self.stages.get(rank) if rank is not None else None, self.pipelined)

    def table(self, name: str) -> pd.DataFrame:
        """Every rank's rows of the per-rank pass ``name`` (:mod:`msinspect.analysis.rank.passes`), its
        columns first, less its hidden keys, and ``other_stage``; KeyError where no pass has that
        name."""
        rank_pass = passes.named(name)
        frame = _frame([row for r in self.results for row in r.rows.get(name, [])], list(rank_pass.columns))
        return self._flag(frame.drop(columns=list(rank_pass.hidden), errors="ignore"))

    def strategies(self) -> pd.DataFrame:
        """One row per operator with a strategy, per rank."""
        return self.table("strategies")

    def comm(self) -> pd.DataFrame:
        """One row per communication or redistribution operator, per rank."""
        return self.table("comm")

    def operators(self) -> pd.DataFrame:
        """One row per CNode, per rank."""
        return self.table("ops")

    @functools.cached_property
    def _weights_beside(self) -> tuple[dict[str, list[dict]], dict[str, list[str]]]:
        """(:attr:`weights_at_end`, :attr:`weights_untold`), made in one pass over the files read."""
        at_end: dict[str, list[dict]] = {}
        untold: dict[str, list[str]] = {}
        for result in self.results:
            if not result.planner or not later_pass(result.file):
                continue
            stated = {row["param"] for row in weights_of(result.params)}
            missing = (trained_weights(result.held) | accumulators(result.held)) - stated
            if not missing:  # most files: read nothing beside them
                continue
            rows = [row for row in params_at_end(result.file, self.context(result.rank)) or []
                    if row["param"] in missing]
            if rows:
                at_end[result.file] = rows
            # a weight a forward graph only declares (another pipeline stage's) is none the rank uses
            if left := updated_weights(result.held) - stated - {row["param"] for row in rows}:
                untold[result.file] = sorted(left)
        return at_end, untold

    @property
    def weights_at_end(self) -> dict[str, list[dict]]:
        """Per file read, the weights it trains (:func:`~msinspect.analysis.rank.gradsync.trained_weights`)
        and their gradients' accumulators (:func:`~msinspect.analysis.rank.gradsync.accumulators`) that
        it states no layout of, as the rank's step_parallel_end beside it states them
        (:func:`~msinspect.analysis.rank.params.params_at_end`: later passes keep the parallel pass's
        layouts; MindSpore expands a self-defined-shard operator after the parallel passes, and
        under ``enable_nd_tp`` validate's MatMuls print no strategy), by file; a file is missing
        where it states each weight it trains, or nothing beside it states the ones it does not.
        The one place that decides it: :meth:`params_of` reads it, and through it :meth:`slices`,
        the report and ``check``."""
        return self._weights_beside[0]

    @functools.cached_property
    def files_beside(self) -> frozenset[str]:
        """The step_parallel_end files :attr:`weights_at_end` took weights from (its rows' ``file``):
        a layout only their rows give is the file beside's, which a rule built on it says."""
        return frozenset(row["file"] for rows in self.weights_at_end.values() for row in rows)

    @property
    def weights_untold(self) -> dict[str, list[str]]:
        """Per file read (of a later pass, the parallel pass run), the weights it updates
        (:func:`~msinspect.analysis.rank.gradsync.updated_weights`) whose layout neither it nor a
        step_parallel_end beside it states (:attr:`weights_at_end`), by name: their slices cannot be
        told from the files read."""
        return self._weights_beside[1]

    def at_end_notes(self) -> list[str]:
        """What ``shapes --params`` and the report say of the weights the files read train but do
        not lay out (:func:`~msinspect.analysis.rank.params.at_end_note`); empty where they lay out each."""
        return at_end_note((r.stage for r in self.results if r.stage), self.weights_at_end, self.weights_untold,
                           any(weights_of(r.params) for r in self.results))

    def params_of(self, result: RankResult) -> list[dict]:
        """The rank's parameter rows (before their slices: :func:`~msinspect.analysis.rank.params.with_slices`):
        its file's, and the weights of the step_parallel_end beside it that it trains but states no
        layout of (:attr:`weights_at_end`)."""
        found = self.weights_at_end.get(result.file)
        return list(result.params) + found if found else result.params

    def slices(self) -> pd.DataFrame:
        """One row per weight per rank: its layout and the slice the rank holds (the weights of
        the step_parallel_end beside the files read where they state none: :attr:`weights_at_end`)."""
        rows = []
        for result in self.results:
            rows += with_slices(self.params_of(result), self.context(result.rank))
        frame = _frame(rows, PARAM_COLUMNS)
        frame["slice_text"] = [slice_text(s) if s is not None else "cannot tell" for s in frame["slice"]]
        return self._flag(frame)

    def gradient_sync(self) -> pd.DataFrame:
        """One row per trained weight per rank: its replicas and whether its gradient is summed
        over them (:func:`msinspect.analysis.rank.gradsync.gradient_sync`)."""
        from msinspect.analysis.rank.gradsync import gradient_sync

        return gradient_sync(self)

    def shapes(self) -> pd.DataFrame:
        """One row per operator input: global shape, strategy, the per-rank shape that follows
        (``expected_rank_shape``), the one found in the dump (``rank_shape``), and whether they agree
        (``ok``; None: cannot tell)."""
        import pandas as pd

        rows = []
        for row in self.strategies().to_dict("records"):
            g_in, r_in, exp = row["global_inputs"], row["rank_inputs"], row["expected_rank_inputs"]
            for i, strategy in enumerate(row["in_strategy"] or ()):
                rows.append({
                    "rank": row["rank"], "name": row["name"], "op": row["op"], "input": i,
                    "global_shape": g_in[i] if g_in and i < len(g_in) else None, "strategy": strategy,
                    "expected_rank_shape": exp[i] if exp and i < len(exp) else None,
                    "rank_shape": r_in[i] if r_in and i < len(r_in) else None,
                    "stage": row["stage"], "file": row["file"], "line": row["line"], "scope": row["scope"],
                    "complete": row.get("complete", True),
                })
        frame = pd.DataFrame(rows, columns=["rank", "name", "op", "input", "global_shape", "strategy",
                                            "expected_rank_shape", "rank_shape", "ok", "stage", "file", "line",
                                            "scope", "complete"])
        frame["ok"] = [None if e is None or f is None else e == f
                       for e, f in zip(frame["expected_rank_shape"], frame["rank_shape"])]
        return self._flag(frame)


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame(rows)
    for column in columns:
        if column not in frame:
            frame[column] = None
    return frame[columns + [c for c in frame.columns if c not in columns]]


def _shelf(gathered: Gathered, scheduler: str | None) -> str | None:
    """Where the workers put the ranks' rows themselves (:func:`_shelved`): the folder of the
    run's spool, where there is one and the workers share this machine's disk (not on a Dask
    cluster, whose workers send the rows)."""
    from msinspect.executors import scheduler_address

    if gathered.rows is None or scheduler_address(scheduler):
        return None
    return gathered.rows.folder()


def rank_tasks(plan: ReadPlan, world: tuple[int, ...] | None, only: Collection[int] | None = None) -> list[tuple]:
    """The task of each rank the plan reads (of ``only``, when given): ``(file, reference file,
    context, label)``, what :func:`_analyse_batch` reads."""
    return [rank_task(read, world) for read in _reads(plan, only)]


def _reads(plan: ReadPlan, only: Collection[int] | None) -> list[RankRead]:
    return [read for read in plan.read if only is None or read.rank in only]


def rank_task(read: RankRead, world: tuple[int, ...] | None) -> tuple:
    """The task of one rank the plan reads (see :func:`rank_tasks`)."""
    rank, label, path, reference = planned(read)
    return (path, reference, RankContext(rank, world), label)


class _Batches(Sequence):
    """The arguments of each batch's task (:func:`_analyse_batch`), made when the batch is sent:
    a job of 10,000 ranks holds the tasks of the batches in flight, not one of every rank."""

    def __init__(self, reads: list[RankRead], cut: list[range], world: tuple[int, ...] | None):
        self.reads, self.cut, self.world = reads, cut, world

    def __len__(self) -> int:
        return len(self.cut)

    def __getitem__(self, index: int) -> tuple[list[tuple]]:
        return ([rank_task(self.reads[i], self.world) for i in self.cut[index]],)


def analyse(dump: Dump, stage: str | None = None, *, jobs: int | None = None,
            progress: Callable[[str], None] | None = None, lenient: bool = False,
            world: int | None = None, scheduler: str | None = None,
            cache: caches.Store | bool | None = None, only: Collection[int] | None = None,
            spool: bool | None = None, alike: bool | None = None) -> Analysis:
    """Parse and analyse one file per rank (the ``stage`` file, or the best one) in a process pool
    of ``jobs`` workers (default: every core), or on the Dask cluster of ``scheduler``
    (``tcp://HOST:PORT``, default ``MSINSPECT_SCHEDULER``; see :mod:`msinspect.executors`).
    ``progress(label)`` is called as each rank's result arrives.

    Strict (default): the first file that does not parse raises its
    :class:`~msinspect.errors.IRParseError` (``file:line:col``). Lenient: every file is read past
    what does not parse; its rows carry ``complete: False`` and the result's ``skipped`` lists
    every skipped span; a file that cannot be read at all gives a rank with ``error`` set and no
    rows, and every other rank's results still come out.

    ``world``: the job's rank count, as the user states it; else the run record, the rank folders
    when they are 0..N-1, or the size the IR states over the world group (a dump of some ranks
    only).

    ``cache``: where each rank's result is kept between runs (:data:`msinspect.cache.RESULTS`, the
    default unless ``MSINSPECT_NO_CACHE`` is set), another :class:`~msinspect.cache.Store`, or
    False for none.

    ``only``: analyse the files of these ranks alone (one rank to export, say); the plan still
    lists every rank. A group named only by its hash is then found from the ranks analysed and
    the world's strided rank lists.

    ``spool``: keep each rank's rows on disk as it arrives and read them back when asked for
    (:mod:`msinspect.analysis.engine.spool`; the same answers, and the main process' memory flat in the
    ranks); default: from :data:`~msinspect.analysis.engine.spool.SPOOL_RANKS` ranks read.

    ``alike``: read a rank whose file is the one before it in its batch but for rank-specific
    values by what differs (:mod:`msinspect.analysis.engine.alike`: the same answers, without its parse
    and graph); default: yes, unless ``MSINSPECT_READ_EVERY_RANK`` is set. Not under ``lenient``,
    nor under the reference reading (``MSINSPECT_PARSER=reference``: every rank read by Lark)."""
    if cache is None or cache is True:
        cache = caches.RESULTS if caches.enabled() else None
    cache = cache or None
    if world is not None:
        present = [r.rank for r in dump.ranks if r.rank is not None]
        if world < 1 or (present and max(present) >= world):
            raise MsInspectError(f"--world {world}: the dump holds rank_{max(present, default=0)}, "
                                 f"so the job has more than {world} ranks")
    world = tuple(range(world)) if world is not None else world_of(dump)
    plan = plan_reads(dump, stage)
    reads = _reads(plan, only)
    if spool is None:
        spool = len(reads) >= SPOOL_RANKS
    if alike is None:
        alike = not os.environ.get(READ_EVERY_RANK_ENV)
    gathered = Gathered(len(reads), spool)
    # consecutive ranks a task, so that a worker reads the first rank it gets in full and the rest
    # by what differs from it (msinspect.analysis.engine.alike); a few ranks: one a task, every core busy
    cut = batches(len(reads), jobs or os.cpu_count() or 1, RANKS_A_TASK)
    try:
        with closing(run_each(_analyse_batch, _Batches(reads, cut, world), jobs=jobs,
                              scheduler=scheduler, name=lambda task: task[0][0][0], lenient=lenient, cache=cache,
                              alike=alike, run=uuid.uuid4().hex, shelf=_shelf(gathered, scheduler))) as outcomes:
            for done, (index, (tasks,), outcome) in enumerate(outcomes, 1):  # as each batch's results arrive
                if isinstance(outcome, MsInspectError):  # its worker died: each rank of it says so
                    outcome = [_died_on(task, outcome) for task in tasks]
                for at, task, result in zip(cut[index], tasks, outcome):
                    if isinstance(result, MsInspectError):
                        if not lenient:
                            raise result
                        result = _unreadable(task, result)
                    _ran_every_pass(result)
                    gathered.arrive(at, result, reads[at])
                    del result  # a spooled rank's rows go now
                    if progress:
                        progress(task[3])
                del outcome  # the batch's results: each rank's went to the spool
                if done % TRIM_EVERY == 0:
                    collector.trim()
    finally:
        release()  # the exemplar of ranks read in this process goes with the run
        if gathered.rows is not None:
            gathered.rows.seal()
    results, world = gathered.finish(world)
    return Analysis(dump, results, world, plan)
