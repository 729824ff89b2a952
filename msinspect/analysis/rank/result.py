"""What analysing one rank's file gives: plain rows and counts, cheap to send between processes
(:func:`msinspect.analysis.job.collect.analyse` makes one per rank). Each per-rank pass's rows
(:mod:`msinspect.analysis.rank.passes`) are ``rows[name]``, read and set as ``result.<name>`` too."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from msinspect.analysis.job.pipeline_stages import StageFacts
    from msinspect.analysis.rank.signature import Signature
    from msinspect.analysis.engine.tally import Tally


class PassRows:
    """``result.<name>``: the rows of the per-rank pass ``name`` (``result.rows[name]``; a pass
    without rows in the result has none), for each pass the registry exposes (:func:`expose`)."""

    __slots__ = ()


@dataclass
class RankResult(PassRows):
    """What one rank's file holds, as plain rows (cheap to send between processes)."""

    rank: int | None
    label: str
    file: str
    stage: str
    family: str
    status: str
    rows: dict[str, list[dict]] = field(default_factory=dict)
    """Each per-rank pass's rows, by its name (:data:`msinspect.analysis.rank.passes.PASSES`)."""
    reference: str | None = None
    weights: int | None = None
    """Parameters of the file with a value (``: has_default``), whether cut or not."""
    world_size: int | None = None
    """The world size the file states (:func:`~msinspect.analysis.rank.comm.stated_world`)."""
    highest_named: int | None = None
    """The highest rank the file's communication names (:func:`~msinspect.analysis.rank.comm.ranks_named`):
    a world of fewer ranks cannot hold it (:func:`~msinspect.analysis.job.collect.world_from_ir`).
    One number, not the list: a rank of a data-parallel group of 2,500 names them all. Not told
    (None) where the world was known when the rank was read: nothing reads it then."""
    pipelined: bool = False
    """Whether the file sends or receives between pipeline stages."""
    stage_facts: StageFacts | None = None
    """What the file says of the rank's pipeline stage: its stage index, its Send / Receive peers,
    its in-stage groups, as a few ints (:mod:`msinspect.analysis.job.pipeline_stages`); None: no
    Send / Receive, or the rank is not known."""
    complete: bool = True
    """Whether the file (and its reference file) was read whole with every stated count holding;
    False under ``lenient`` when something was skipped. Every row carries it as ``complete``."""
    skipped: list[str] = field(default_factory=list)
    """Under ``lenient``: each skipped span or count that did not hold, as ``file:line:col: message``."""
    error: str | None = None
    """Under ``lenient``: why the rank's file could not be read at all (no rows then)."""
    signature: Signature | None = None
    """What the rank's graph is less its rank-specific values (:mod:`msinspect.analysis.rank.signature`)."""
    failure: dict | None = None
    """An ``analyze_fail.ir``'s failure (:func:`~msinspect.analysis.rank.failure.failure_row`): the
    exception MindSpore caught and the evaluation stack; None for any other file."""
    planner: bool | None = None
    """Whether the parallel pass ran in the file (:func:`~msinspect.mindspore.vocabulary.planner_ran`)."""
    read_by: str | None = None
    """The rank (its label) whose file this one was read against, by what differs
    (:mod:`msinspect.analysis.engine.alike`); None: read in full."""
    departure: str | None = None
    """Why the rank was read in full though its file has the name of the rank read before it in
    its batch (``departed_from``): where its text departs from that rank's beyond rank-specific
    values."""
    departed_from: str | None = None
    rows_at: tuple[str, list[tuple[int, int]]] | None = None
    """Where a worker put the rank's rows (:func:`~msinspect.analysis.engine.spool.shelve`), sent in
    their place (the row lists are then empty): taken in by the main process' spool."""
    groups_seen: tuple | None = None
    """With :attr:`rows_at`: what the rank's comm rows tell of the groups
    (:meth:`~msinspect.analysis.rank.comm.SharedGroups.seen`), and :attr:`groups_unresolved` whether
    one of them names a group whose ranks its file does not tell."""
    groups_unresolved: bool = False
    tally: Tally | None = None
    """What the summary and the pipeline stages read of the rows, counted where they were made
    (:mod:`msinspect.analysis.engine.tally`); None: counted from the rows when asked for."""


def expose(name: str) -> None:
    """Give every result ``result.<name>``, the rows of pass ``name``
    (:func:`msinspect.analysis.rank.passes.register`); ValueError where a result has another value of
    that name."""
    if isinstance(getattr(PassRows, name, None), property):
        return
    if name.startswith("_") or hasattr(RankResult, name) or name in RankResult.__dataclass_fields__:
        raise ValueError(f"a per-rank pass cannot be called {name!r}: a rank's result has a value of that name")

    def get(self):
        return self.rows.get(name, [])

    def put(self, rows) -> None:
        self.rows[name] = rows

    setattr(PassRows, name, property(get, put, doc=f"The rank's rows of the pass {name!r}."))
