"""The cost tables of a job, folded one rank at a time: the one place each communication
operator's cost is worked out (its bytes per step, parallel axis and phase, by the rules of
:mod:`msinspect.analysis.job.cost`) and summed per rank and into the rank-to-rank matrix.

``msinspect cost`` keeps every operator's row (:func:`comm_costs`, ``--json``'s ``operators``)
and groups them (:func:`bytes_by`); the report keeps
only each rank's sums and merges the ranks that agree, so that a job of 10,000 ranks is folded in
the memory of its page. Both are fed by :meth:`CostFold.add_rank`, and both take the matrix from
:meth:`CostFold.matrix`.

A stage's rank list is compared by identity and each rank's place in it looked up in a dict
(:class:`~msinspect.analysis.rank.context.Stages`): hashing or searching a 10,000-rank tuple for
every row made the report's tables quadratic.
"""
from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from msinspect.analysis.job.comm_totals import reason_of
from msinspect.analysis.job.cost import (COST_COLUMNS, MERGED, SHORT, SHORT_FORWARD, AxisRules, backward_missing,
                                         forward_missing, graph_runs, matrix_frame, operator_calls, phase_of, sends,
                                         untold_axis, weight_axes, why_no_backward, why_no_forward)
from msinspect.analysis.rank.context import Stages
from msinspect.analysis.rank.params import weights_of, with_slices
from msinspect.rank_merge import Ranks, rank_number
from msinspect.schema import is_missing, is_set

if TYPE_CHECKING:
    import pandas as pd


class StageAxes:
    """The device matrices covering each stage, from the weight layouts of its lowest rank that
    has any (:func:`msinspect.analysis.job.cost.stage_axes`); the stage's names for each matrix."""

    def __init__(self, analysis, stages: Stages):
        self.by_stage: dict[int, tuple] = {}  # id(stage) -> cost.weight_axes: (candidates, expert, ended)
        self.keep: list = []
        done = set()
        ranks = sorted({r.rank for r in analysis.results if rank_number(r.rank) is not None})
        by_rank = {r.rank: r for r in analysis.results if rank_number(r.rank) is not None}
        for rank in ranks:
            ctx = stages.context(analysis, rank)
            stage = ctx.stage_ranks or ctx.world or ()
            if not stage or id(stage) in done:
                continue
            rows = with_slices(weights_of(analysis.params_of(by_rank[rank])), ctx)
            found = weight_axes(rows, len(stage), analysis.files_beside)
            if found is None:
                continue
            done.add(id(stage))
            self.keep.append(stage)
            self.by_stage[id(stage)] = found
        self.experts = any(expert for _, expert, _ in self.by_stage.values())


def runs_per_graph(ops: list[dict]) -> dict[str, tuple[int, str]]:
    """One file's subgraph -> (times it runs per step, basis), from its operator rows
    (:func:`msinspect.analysis.job.cost.graph_runs` of its calls): each call of one subgraph, named
    in the line or a closure of it (``%34[@Partial(@g)](...)``: zoo 13's backward chunk, once a
    micro-batch), as :func:`~msinspect.analysis.rank.operators.graph_called` gives it."""
    return graph_runs((row["graph"], row["calls"]) for row in ops if row["calls"] is not None)


class SortedGroups:
    """Groups' rank lists one tuple per content (:meth:`one`), each sorted and each rank's place in
    it worked out once (the report's :class:`~msinspect.report.group_shapes.GroupLists` does the
    same, keeping the facts of a bounded number of lists)."""

    def __init__(self):
        self._facts: dict[tuple, tuple[list[int], dict[int, int]]] = {}
        self._values: dict[tuple, tuple] = {}

    def one(self, ranks) -> tuple | None:
        """The tuple of ``ranks``' content (one object for each content); None for no list."""
        if not isinstance(ranks, (tuple, list)):
            return None
        whole = tuple(ranks)
        return self._values.setdefault(whole, whole)

    def _of(self, ranks) -> tuple[list[int], dict[int, int]]:
        key = tuple(ranks)
        found = self._facts.get(key)
        if found is None:
            ordered = sorted(key)
            position: dict[int, int] = {}
            for i, r in enumerate(ordered):
                position.setdefault(r, i)
            found = self._facts[key] = (ordered, position)
        return found

    def position(self, ranks) -> dict[int, int]:
        return self._of(ranks)[1]

    def ordered(self, ranks) -> list[int]:
        return self._of(ranks)[0]


def _cost_row(row: dict, runs: int, basis: str, sent, bytes_why, axis: str, why: str, phase: str) -> dict:
    """One operator row of the cost (:data:`~msinspect.analysis.job.cost.COST_COLUMNS`) of a comm row
    ``row``: ``runs`` a step (0: a copy CSE merges, :data:`~msinspect.analysis.job.cost.MERGED`),
    ``sent`` its bytes a step."""
    ranks, wire = row["group_ranks"], row["wire_bytes"]
    return {"rank": row["rank"], "line": row["line"], "name": row["name"], "op": row["op"], "kind": row["kind"],
            "group_ranks": tuple(ranks) if isinstance(ranks, (tuple, list)) else None,
            "wire_bytes": None if is_missing(wire) else int(wire), "runs": runs, "count_basis": basis,
            "step_bytes": sent, "bytes_why": bytes_why, "axis": axis, "axis_from": why, "phase": phase,
            "micro": row.get("micro"), "graph": row["graph"], "file": row["file"]}


class CostFold:
    """Every rank's communication cost per step, fed one rank's comm rows at a time
    (:meth:`add_rank`): each rank's step bytes per (axis, phase) (:attr:`per_rank`, ranks that
    agree merged), the bases, the operators whose axis cannot be told, the rank-to-rank matrix
    (:meth:`matrix`) and, with ``keep_rows``, every operator's row (:meth:`frame`).

    ``lists``: an object whose ``position(ranks)`` and ``ordered(ranks)`` give a group's sorted
    rank list and each rank's place in it (:class:`SortedGroups` by default)."""

    def __init__(self, axes: StageAxes, stages: Stages, lists=None, keep_rows: bool = False):
        self.axes, self.stages, self.lists = axes, stages, lists if lists is not None else SortedGroups()
        self.count = 0
        self.per_rank: dict[tuple, object] = {}  # the rank's cells, as items -> its ranks (a Ranks)
        self.seen_axes: set = set()
        self.seen_phases: set = set()
        self.basis: set = set()
        self.undecided: Counter = Counter()
        self.cells: dict[tuple[int, int], float] = {}
        self.unknown: dict[int, int] = {}
        self.received: dict[tuple[int, int], float] = {}  # Receive: counted where its sender was not read
        self.missing: dict = {}  # rank -> why its backward is not in its file (cost.backward_missing)
        self.read: set = set()
        self.rules = AxisRules(axes.experts)
        self.rows: list[dict] | None = [] if keep_rows else None

    @classmethod
    def of(cls, analysis, *, keep_rows: bool = False) -> CostFold:
        """The fold of every rank of ``analysis``, in its order."""
        stages = Stages()
        fold = cls(StageAxes(analysis, stages), stages, keep_rows=keep_rows)
        for result in analysis.results:
            ctx = stages.context(analysis, result.rank)
            # each group one object per content: the axis rules keep their answer by the object
            comm = [{**row, "group_ranks": fold.lists.one(row["group_ranks"])} for row in result.comm]
            ops = result.ops if any(is_set(r["moves_data"]) for r in comm) else None
            fold.add_rank(result.rank, ctx, comm, ops, why_no_backward(result), result.strategies,
                          why_no_forward(result))
        return fold

    def _axis(self, row, ctx, forward_axis, calls: dict) -> tuple[str, str]:
        """:class:`~msinspect.analysis.job.cost.AxisRules` of one row, the weights' answer kept per
        group and stage (each list one object per content: ``GroupLists.one``)."""
        stage = ctx.stage_ranks or ctx.world or ()
        ranks = row["group_ranks"]
        candidates, _, ended = self.axes.by_stage.get(id(stage), ((), False, ()))
        return self.rules.of(row, candidates=candidates, position=self.stages.position(stage), devices=len(stage),
                             forward=forward_axis, calls=calls, key=(id(stage), id(ranks)), ended=ended)

    def add_rank(self, rank, ctx, comm: list[dict], ops: list[dict] | None, no_backward: str | None = None,
                 strategies: list[dict] = (), no_forward: str | None = None) -> None:
        """One rank's comm rows (those that move data count), ``ops``: its operator rows (None:
        it has no call operator to count); ``no_backward``: why its backward is not in its file
        (:func:`~msinspect.analysis.job.cost.why_no_backward`), None where it is; ``strategies``: its
        strategy rows (the operators' layouts name a group's axis); ``no_forward``: why its
        forward's collectives are not (:func:`~msinspect.analysis.job.cost.why_no_forward`: a file
        before the parallel pass)."""
        runs = runs_per_graph(ops) if ops else {}
        calls = operator_calls(strategies)
        forward_axis: dict[str, tuple[str, str]] = {}
        cells: dict[tuple[str, str], list] = {}
        for phase, why in (("backward", no_backward), ("forward", no_forward)):
            if why is not None:  # not in the file: cannot tell, never 0 (cost.bytes_by's rows alike)
                self.missing.setdefault(rank, why)
                cells[(untold_axis(why), phase)] = [0, True]
                self.seen_axes.add(untold_axis(why))
                self.seen_phases.add(phase)
        number = rank_number(rank)
        for row in comm:
            if not is_set(row["moves_data"]):
                continue
            self.count += 1
            axis, why = self._axis(row, ctx, forward_axis, calls)
            name = row["name"] or ""
            if not name.startswith("grad") and axis != "cannot tell":
                forward_axis.setdefault(name, (axis, why))
            count, basis = runs.get(row["graph"], (1, "once"))
            if not is_missing(row.get("micro")):
                basis = "unrolled" if basis == "once" else basis
            phase = phase_of(row["kind"], row.get("scope"), row["name"])
            if not is_missing(row.get("merged_into")):  # a copy CSE merges: it never runs (comm.py)
                self.basis.add(MERGED)  # in no total, no cell, no operator count
                if self.rows is not None:
                    self.rows.append(_cost_row(row, 0, MERGED, 0, None, axis, why, phase))
                continue
            self.basis.add(basis)
            if axis == "cannot tell":
                self.undecided[why] += 1
            wire = row["wire_bytes"]
            sent = None if is_missing(wire) else int(wire) * count
            self.seen_axes.add(axis)
            self.seen_phases.add(phase)
            cell = cells.setdefault((axis, phase), [0, False])
            if sent is None:
                cell[1] = True
            else:
                cell[0] += sent
            if self.rows is not None:
                self.rows.append(_cost_row(row, count, basis, sent, reason_of(row), axis, why, phase))
            if rank is not None:
                self.read.add(rank)
                self._matrix(rank, row, sent)
        if number is not None and cells:
            key = tuple(sorted((k, None if unknown else int(v)) for k, (v, unknown) in cells.items()))
            self.per_rank.setdefault(key, Ranks()).add(number)

    def _matrix(self, rank, row, sent) -> None:
        """One row's cells of the rank-to-rank matrix (:data:`~msinspect.analysis.job.cost.MATRIX_ASSUMPTION`)."""
        ranks = row["group_ranks"] if isinstance(row["group_ranks"], (tuple, list)) else None
        position = self.lists.position(ranks) if ranks else {}
        if sent is None or not ranks or rank not in position:
            self.unknown[rank] = self.unknown.get(rank, 0) + 1
            return
        group = self.lists.ordered(ranks)
        if row["op"] == "Receive":  # its peer's Send: counted where the peer was not read (matrix())
            for peer in group:
                if peer != rank:
                    self.received[(peer, rank)] = self.received.get((peer, rank), 0) + sent
            return
        for src, dst, amount in sends(row["op"], rank, group, position[rank], sent):
            self.cells[(src, dst)] = self.cells.get((src, dst), 0) + amount

    def matrix(self):
        """Who sends how many bytes to whom per step: one row per (``src``, ``dst``) pair with
        ``bytes`` > 0 under :data:`~msinspect.analysis.job.cost.MATRIX_ASSUMPTION`; ``unknown``:
        the operators of ``src`` whose bytes or peers cannot be told; ``note`` where ``src``'s
        file holds no gradient graph (:func:`~msinspect.analysis.job.cost.matrix_frame`)."""
        cells = dict(self.cells)
        for (src, dst), amount in self.received.items():
            if src not in self.read:
                cells[(src, dst)] = cells.get((src, dst), 0) + amount
        return matrix_frame(cells, self.unknown, self.missing)

    def frame(self):
        """Every operator's row kept (``keep_rows``), in :data:`~msinspect.analysis.job.cost.COST_COLUMNS`."""
        import pandas as pd

        frame = pd.DataFrame(self.rows, columns=COST_COLUMNS)
        frame["step_bytes"] = frame["step_bytes"].astype(object)
        frame["wire_bytes"] = frame["wire_bytes"].astype(object)
        return frame


# ------------------------------------------------------------------ the tables of msinspect cost
def comm_costs(analysis) -> pd.DataFrame:
    """One row per communication operator that moves data, per rank read
    (:data:`~msinspect.analysis.job.cost.COST_COLUMNS`): its ``wire_bytes`` (the comm rows'), how
    often it runs per step (``runs``, ``count_basis``), ``step_bytes`` = wire bytes x runs (None:
    cannot tell, and ``bytes_why`` says why:
    :func:`~msinspect.analysis.job.comm_totals.unknown_reason`), its parallel ``axis`` (with
    ``axis_from``: the rule, or why it cannot tell) and ``phase``."""
    return CostFold.of(analysis, keep_rows=True).frame()


def _total(values: pd.Series):
    return None if values.map(is_missing).any() else int(values.sum())


def bytes_by(analysis, by=("axis",), costs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per rank and per ``by`` (``axis``, ``phase`` or both): ``operators``, ``step_bytes``
    (summed; None, "cannot tell", when any operator's bytes cannot be told) and ``unknown`` (how
    many cannot). ``costs``: :func:`comm_costs`, when the caller has it."""
    import pandas as pd

    keys = ["rank", *by]
    costs = comm_costs(analysis) if costs is None else costs
    columns = keys + ["operators", "step_bytes", "unknown", "note"]
    missing = backward_missing(analysis)
    before = forward_missing(analysis)
    if costs.empty and not missing and not before:
        return pd.DataFrame(columns=columns)
    costs = costs[costs["count_basis"] != MERGED] if not costs.empty else costs  # copies that never run
    out = (costs.groupby(keys, sort=True, dropna=False)
           .agg(operators=("op", "size"), step_bytes=("step_bytes", _total),
                unknown=("step_bytes", lambda s: int(s.map(is_missing).sum())))
           .reset_index()) if not costs.empty else pd.DataFrame(columns=columns)
    out["step_bytes"] = pd.Series([None if is_missing(v) else int(v) for v in out["step_bytes"]], dtype=object)
    out["note"] = None
    if missing:
        out = _without_backward(out, by, missing)
    for axis in dict.fromkeys(map(untold_axis, before.values())):  # the axis each reason leaves untold
        out = _without_backward(out, by, {r: why for r, why in before.items() if untold_axis(why) == axis},
                                "forward", axis)
    return out[columns]


def _without_backward(out: pd.DataFrame, by: tuple, missing: dict, phase: str = "backward",
                      axis: str = "cannot tell") -> pd.DataFrame:
    """:func:`bytes_by`'s rows with, for each rank whose file holds no gradient graph, its backward
    said "cannot tell" (:func:`backward_missing`): by axis and phase, a backward row of axis
    "cannot tell" that says so (the mirrors the file holds keep their rows, noted as part of the
    backward); by phase, the backward row's bytes; by axis, every axis's bytes per step (the
    backward's share of each is not in the file). The bytes the file does hold stay in the note.
    ``phase`` "forward": the same of the forward's collectives, for a file before the parallel
    pass (:func:`forward_missing`). ``axis`` other than "cannot tell": the reasons leave that axis's
    bytes of the phase untold, no other's (its rows say "cannot tell", or a row of it is added)."""
    import pandas as pd

    out = out.astype({"operators": object, "unknown": object, "step_bytes": object})
    mine = out["rank"].isin(list(missing))
    short = SHORT if phase == "backward" else SHORT_FORWARD
    if "phase" in by:
        part = mine & (out["phase"] == phase)
    else:
        part = mine
    if axis != "cannot tell" and "axis" in by:
        part &= out["axis"] == axis
    if by == ("axis", "phase") and axis == "cannot tell":
        out.loc[part, "note"] = ("mirrors only: the rest of the backward is not in the file" if phase == "backward"
                                 else "the file's own only: " + short)
        had = set()
    else:
        out.loc[part, "note"] = [f"{int(v):,} bytes in the file; {short}" if not is_missing(v) else short
                                 for v in out.loc[part, "step_bytes"]]
        out.loc[part, "step_bytes"] = None
        had = set(out.loc[part, "rank"])
    added = [{"rank": rank, **{k: axis if k == "axis" else phase for k in by}, "operators": None,
              "step_bytes": None, "unknown": None, "note": short}
             for rank in missing if rank not in had]
    if added:
        out = pd.concat([out, pd.DataFrame(added, columns=out.columns)], ignore_index=True)
    out["step_bytes"] = pd.Series([None if is_missing(v) else int(v) for v in out["step_bytes"]], dtype=object)

    def order(i):
        row = out.iloc[i]
        rank = row["rank"]
        return (is_missing(rank), rank if not is_missing(rank) else 0, *(str(row[k]) for k in by))

    return out.iloc[sorted(range(len(out)), key=order)].reset_index(drop=True)


def bytes_by_axis(analysis, costs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Bytes each rank sends on the wire per step, per parallel axis (:func:`bytes_by`)."""
    return bytes_by(analysis, ("axis",), costs)


def bytes_by_phase(analysis, costs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Bytes each rank sends on the wire per step, per phase (:func:`bytes_by`)."""
    return bytes_by(analysis, ("phase",), costs)


def rank_matrix(analysis) -> pd.DataFrame:
    """Who sends how many bytes to whom per step (:meth:`CostFold.matrix`)."""
    return CostFold.of(analysis).matrix()
