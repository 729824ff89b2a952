"""The per-rank passes: what analysing one rank's file makes, one list of rows a pass.

Each pass is a :class:`RankPass` in :data:`PASSES`, in the order they run. The collector
(:func:`~msinspect.analysis.job.collect.analyse`) runs each over a rank's file; its rows are
``RankResult.rows[name]``, read as ``result.<name>`` too; the spool (:mod:`msinspect.analysis.engine.spool`)
puts and reads back each pass's list; ``Analysis.table(name)`` is every rank's rows of it as one
DataFrame; the rank read by what differs (:mod:`msinspect.analysis.engine.alike`) checks what each pass
:attr:`~RankPass.reads` of a node. A new per-rank analysis is its own module with a rows function
(``rows(RankInput) -> list[dict]``), and one line in :data:`PASSES` (or :func:`register` from
elsewhere); a command that prints its rows names their fields in :mod:`msinspect.schema`.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from msinspect.analysis.rank.comm import COMM_COLUMNS, collectives_before, comm_rows, mark_users
from msinspect.analysis.rank.gradsync import WEIGHT_COLUMNS, weight_reads, weight_rows
from msinspect.analysis.rank.operators import OP_COLUMNS, operator_reads, operator_rows
from msinspect.analysis.rank.params import PARAM_COLUMNS, consumer_reads, optimizer_groups, param_rows
from msinspect.analysis.rank.result import expose
from msinspect.analysis.engine.spool import derived
from msinspect.analysis.rank.strategies import STRATEGY_COLUMNS, strategy_rows
from msinspect.mindspore.vocabulary import BEFORE_PLANNER
from msinspect.errors import MsInspectError
from msinspect.stages import files_of_stage, stage_of

if TYPE_CHECKING:
    import networkx as nx

    from msinspect.analysis.rank.context import RankContext
    from msinspect.analysis.rank.result import RankResult
    from msinspect.model import IRFile, Node


@dataclass(frozen=True)
class RankInput:
    """What a pass reads of one rank."""

    ir: IRFile
    """The rank's file, parsed (for a rank read by what differs: the other rank's, made this one's)."""
    ref: IRFile | None
    """Its reference (pre-parallel) file, parsed; None without one."""
    graph: nx.MultiDiGraph
    """The file's graph (:func:`msinspect.graph.to_networkx`)."""
    ctx: RankContext
    path: str
    """The rank's file, as its rows name it."""
    reference: str | None
    own: dict
    """What each of the rank's rows has of its own: ``rank``, ``file``, ``complete``."""
    made: dict = field(default_factory=dict)
    """The rows of the passes before this one, by name."""


@dataclass(frozen=True)
class Like:
    """What a rank read by what differs (:mod:`msinspect.analysis.engine.alike`) takes from the rank it
    is read against: that rank's result, the nodes whose values differ from its,
    whether the weight names MindSpore writes on the nodes are the same (an operator row reads
    them of the nodes before it: :func:`~msinspect.analysis.rank.operators.parameter_read`), and
    whether its reference file is its own file (no other file's values read), and which passes'
    :attr:`RankPass.reads` read the same of its nodes as of that rank's
    (:attr:`~msinspect.analysis.engine.alike.Exemplar.keeps`)."""

    result: RankResult
    changed: tuple[Node, ...]
    """The nodes whose values differ, in file order."""
    names_kept: bool
    own_reference: bool
    keeps: dict
    lines: dict = field(default_factory=dict)
    """Pass -> where each line's row is in the other rank's rows of it (made when first asked
    for; shared by the ranks read against that rank)."""

    def rows(self, part: str, made: list[dict], fields: dict) -> list[dict]:
        """The rank's rows of pass ``part``: those ``made`` (the changed nodes', or every one),
        else the other rank's with ``fields`` (the rank's own), as a
        :class:`~msinspect.analysis.engine.spool.Derived` list of that rank's."""
        base = self.result.rows[part]
        at = self.lines.get(part)
        if at is None:
            at = self.lines[part] = {}
            for i, row in enumerate(base):
                at.setdefault(row["line"], []).append(i)
        return derived(base, fields, {i: row for row in made for i in at.get(row["line"], ())})


@dataclass(frozen=True)
class RankPass:
    """One per-rank analysis: its name, how it makes a rank's rows, and its table's columns. Every
    pass's rows spool alike, one list a rank (:mod:`msinspect.analysis.engine.spool`)."""

    name: str
    """``RankResult.rows[name]``, ``result.<name>``, ``Analysis.table(name)``."""
    rows: Callable[[RankInput], list[dict]]
    """The rank's rows, its file read in full."""
    columns: tuple[str, ...]
    """The table's first columns, in order (:meth:`~msinspect.analysis.job.collect.Analysis.table`):
    each row holds them, a row may hold more."""
    follow: Callable[[RankInput, Like], list[dict] | None] | None = None
    """For a rank read by what differs: its rows taken from the other rank's (:meth:`Like.rows`),
    or None where they are made anew by :attr:`rows`; None: always made anew."""
    reads: Callable[[Node], tuple] | None = None
    """What a row reads of a node; a rank read by what differs whose nodes read the same as the
    other rank's has ``Like.keeps[name]`` true (:func:`~msinspect.analysis.engine.alike.patched`)."""
    complete: bool = True
    """Whether each row carries the rank's ``complete``."""
    hidden: tuple[str, ...] = ()
    """Keys of a row that other analyses read but the table leaves out."""


def before_planner_file(path: str) -> str | None:
    """The rank's ``step_parallel_begin`` file beside ``path`` (one only), when ``path`` is of a
    stage after the parallel pass began: which collectives the job had before the pass inserted
    any (:func:`~msinspect.analysis.rank.comm.mark_users`)."""
    if stage_of(path) in BEFORE_PLANNER:
        return None
    found = files_of_stage(Path(path).parent, "step_parallel_begin")
    return str(found[0]) if len(found) == 1 else None


def _users_before(path: str, reference: str | None, ref) -> frozenset:
    """:func:`~msinspect.analysis.rank.comm.collectives_before` of the rank's ``step_parallel_begin``
    (the reference when it is that file), read past what does not parse; empty where there is
    none or it cannot be read."""
    before = before_planner_file(path)
    if before is None:
        return frozenset()
    if ref is not None and reference is not None and Path(reference) == Path(before):
        return collectives_before(ref)
    from msinspect.parser import parse_file

    try:
        return collectives_before(parse_file(before, lenient=True))
    except MsInspectError:
        return frozenset()


def _comm(rank: RankInput) -> list[dict]:
    """:func:`~msinspect.analysis.rank.comm.comm_rows`, a collective the pass did not insert marked
    as the user's (:func:`~msinspect.analysis.rank.comm.mark_users`)."""
    comm = comm_rows(rank.ir, rank.ctx, rank.graph)
    if any(row["kind"] == "unknown" for row in comm):  # a collective the job's code had before the pass?
        mark_users(comm, rank.ir, _users_before(rank.path, rank.reference, rank.ref))
    return comm


def _strategies(rank: RankInput) -> list[dict]:
    return strategy_rows(rank.ir, rank.ctx, rank.ref, rank.graph)


def _follow_strategies(rank: RankInput, like: Like) -> list[dict] | None:
    """The rows of the other rank's nodes that are the same, where the reference is the rank's own
    file."""
    if not like.own_reference:
        return None
    return like.rows("strategies", strategy_rows(rank.ir, rank.ctx, rank.ref, rank.graph, only=like.changed),
                     rank.own)


def _params(rank: RankInput) -> list[dict]:
    return param_rows(rank.ir, rank.ctx, rank.ref, rank.graph)


def _follow_params(rank: RankInput, like: Like) -> list[dict] | None:
    """Where what a parameter row reads of the operators (the walk to its consumer reads the
    graph) is the same as of the other rank's, its reference its own file: that rank's rows with
    the rank's own optimizer-shard groups."""
    if not (like.keeps.get("params") and like.own_reference):
        return None
    ir, own = rank.ir, rank.own
    groups = optimizer_groups(ir, rank.graph, rank.ctx)
    names = {p.line: p.name for p in ir.params}
    base = like.result.rows["params"]
    shard = [groups.get(names.get(row["line"]), ("", None)) for row in base]
    return derived(base, own, {i: {**row, **own, "opt_shard_group": group, "opt_shard_ranks": ranks}
                               for i, (row, (group, ranks)) in enumerate(zip(base, shard))
                               if (group, ranks) != (row["opt_shard_group"], row["opt_shard_ranks"])})


def _ops(rank: RankInput) -> list[dict]:
    return operator_rows(rank.ir, rank.ctx, rank.graph)


def _follow_ops(rank: RankInput, like: Like) -> list[dict] | None:
    """The rows of the other rank's nodes that are the same, where the weight names MindSpore
    writes are."""
    if not like.names_kept:
        return None
    if like.keeps.get("ops"):  # no changed node's row reads what changed (its groups, most often)
        return derived(like.result.rows["ops"], rank.own, {})
    return like.rows("ops", operator_rows(rank.ir, rank.ctx, rank.graph, only=like.changed), rank.own)


def _held(rank: RankInput) -> list[dict]:
    return weight_rows(rank.ir, rank.ctx.rank, rank.made["comm"])


def _follow_held(rank: RankInput, like: Like) -> list[dict] | None:
    """Where what a weight row reads of the operators (of the comm rows their kinds, producers
    and lines, which the graph gives) is the same as of the other rank's: that rank's rows."""
    if not like.keeps.get("held"):
        return None
    return derived(like.result.rows["held"], {"rank": rank.own["rank"], "file": rank.own["file"]}, {})


#: Every per-rank pass, in the order they run (a pass reads the rows of those before it in
#: :attr:`RankInput.made`).
PASSES: tuple[RankPass, ...] = (
    RankPass("comm", _comm, tuple(COMM_COLUMNS)),
    RankPass("strategies", _strategies, tuple(STRATEGY_COLUMNS), _follow_strategies,
             hidden=("call",)),  # the layout rules' input (mindspore.layouts.call_of)
    RankPass("params", _params, tuple(PARAM_COLUMNS), _follow_params, consumer_reads),
    RankPass("ops", _ops, tuple(OP_COLUMNS), _follow_ops, operator_reads,
             hidden=("calls",)),  # the run counts' input (operators.graph_called)
    RankPass("held", _held, tuple(WEIGHT_COLUMNS), _follow_held, weight_reads, complete=False),
)


def names() -> tuple[str, ...]:
    """Each pass's name, in :data:`PASSES`' order."""
    return tuple(p.name for p in PASSES)


def named(name: str) -> RankPass:
    """The pass called ``name``; KeyError if there is none."""
    for p in PASSES:
        if p.name == name:
            return p
    raise KeyError(name)


def readers() -> dict[str, Callable]:
    """What each pass that says so reads of a node (:attr:`RankPass.reads`), by name."""
    return {p.name: p.reads for p in PASSES if p.reads is not None}


def run(rank: RankInput, like: Like | None = None) -> dict[str, list[dict]]:
    """Every pass's rows of the rank, by name: each taken from ``like``'s rank where the pass says
    it may be (:attr:`RankPass.follow`), else made."""
    made = rank.made
    for p in PASSES:
        rows = p.follow(rank, like) if like is not None and p.follow is not None else None
        made[p.name] = p.rows(rank) if rows is None else rows
    return made


def key() -> tuple:
    """What the rank results a cache keeps depend on of the registry: each pass's name and
    functions (:func:`~msinspect.analysis.job.collect._cache_name`)."""
    return tuple((p.name,) + tuple(f"{f.__module__}.{f.__qualname__}" if f is not None else None
                                   for f in (p.rows, p.follow, p.reads)) for p in PASSES)


def register(new: RankPass) -> None:
    """Add ``new`` after every pass (its name not one of theirs)."""
    global PASSES
    if new.name in names():
        raise ValueError(f"a per-rank pass called {new.name!r} is registered already")
    expose(new.name)
    PASSES = PASSES + (new,)


def unregister(name: str) -> None:
    """Remove the pass called ``name``."""
    global PASSES
    named(name)
    PASSES = tuple(p for p in PASSES if p.name != name)


@contextmanager
def registered(new: RankPass) -> Iterator[RankPass]:
    """``new`` registered for as long as the ``with`` lasts."""
    register(new)
    try:
        yield new
    finally:
        unregister(new.name)


for _pass in PASSES:
    expose(_pass.name)
