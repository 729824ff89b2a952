"""What the summary and the pipeline stages read of a rank's rows, counted where the rows are made.

``msinspect summary`` prints counts per rank (strategies, communication by kind, wire bytes,
weights) and groups the ranks into pipeline stages by the weights they read. Counted from the rows,
that read every rank's rows back from the spool in the main process once the workers were done
(:mod:`msinspect.analysis.engine.spool`): some 0.85 ms a rank, 8.5 s of one core at 10,000 ranks, after
the workers had finished. The worker that makes a rank's rows counts them (:func:`tally_of`, from
the same rows), and the count travels with the rank's result (:attr:`RankResult.tally
<msinspect.analysis.job.collect.RankResult.tally>`); ranks that agree share one :class:`Tally`.
A result without one (read from an older cache, or not read) is counted from its rows
(:func:`tally`)."""
from __future__ import annotations

from typing import NamedTuple

from msinspect.analysis.job.comm_totals import CommTotals
from msinspect.analysis.engine.spool import column


class Tally(NamedTuple):
    """A rank's counts over its rows (hashable: ranks that agree share one); its communication
    counted by :class:`~msinspect.analysis.job.comm_totals.CommTotals`, as every comm total is."""

    strategies: int
    set_by_user: int
    """Strategy rows the user set (``set_by == "user"``)."""
    comm: int
    by_kind: tuple[tuple[str, int], ...]
    """Communication operators per kind, sorted by the kind's name."""
    wire_bytes: int | None
    """What the rank's communication sends per step: None ("cannot tell") when any operator's
    bytes cannot be told; 0 without communication."""
    wire_unknown: int
    """Operators whose wire bytes cannot be told."""
    sharded_weights: int
    """Parameter rows: the weights an operator with a strategy reads."""
    weights_read: frozenset[str]
    """Their names: ranks of one pipeline stage read the same."""


def _comm_counts(comm: list[dict]) -> tuple:
    totals = CommTotals("kind").add(comm)
    whole = totals.whole
    return (whole.operators, tuple(sorted((kind, t.operators) for kind, t in totals.totals.items())),
            whole.wire_bytes, whole.wire_missing)


def tally_of(strategies: list[dict], comm: list[dict], params: list[dict]) -> Tally:
    """The counts of a rank's rows."""
    n_comm, by_kind, wire, unknown = _comm_counts(comm)
    from msinspect.analysis.rank.params import weights_of

    weights = weights_of(params)  # not the graph's inputs
    return Tally(len(strategies), column(strategies, "set_by").count("user"), n_comm, by_kind,
                 wire, unknown, len(weights), frozenset(column(weights, "param")))


def with_comm(tally: Tally, comm: list[dict]) -> Tally:
    """``tally`` with its communication counted again from ``comm`` (the rank's comm rows, their
    groups filled in once every rank was read)."""
    n_comm, by_kind, wire, unknown = _comm_counts(comm)
    return tally._replace(comm=n_comm, by_kind=by_kind, wire_bytes=wire, wire_unknown=unknown)


def tally(result) -> Tally:
    """The rank's :class:`Tally`: the one its worker counted, else counted from its rows (each
    read once)."""
    found = getattr(result, "tally", None)
    if found is not None:
        return found
    return tally_of(result.strategies, result.comm, result.params)
