"""The report's tables made one rank at a time: each rank's rows read once (from the spool, for a
job of many ranks: :mod:`msinspect.analysis.engine.spool`), folded into what the page shows, and let go.

The page shows aggregates: rows merged across the ranks that agree, totals per kind, per group,
per rank. Made from DataFrames of every rank's rows (``Analysis.comm()`` ...), a job of 10,000
ranks held a million communication rows at once and the report could not be written; folded as
each rank comes, the main process holds one rank's rows and the aggregates, whose size is that of
the page. Each fold computes what the DataFrame code computed, row by row:

- the strategies and communication tables (:func:`msinspect.rank_merge.merge_ranks`, each merged
  row's ranks in a compact array);
- the communication summary per kind and per group, and each rank's wire bytes: the folds of
  :mod:`msinspect.analysis.job.comm_totals`, the one definition ``msinspect comm --by`` and
  ``summary`` sum with too; the glance's groups per kind;
- the cost section: :class:`~msinspect.analysis.job.cost_tables.CostFold`, the one fold ``msinspect
  cost`` reads too, whose axes come from the lowest rank of each stage that has weight layouts (a
  first, short pass), and :func:`~msinspect.analysis.rank.memory.memory_per_rank`'s rows;
- the gradient-synchronisation check (as :func:`~msinspect.analysis.rank.gradsync.gradient_sync`);
- the weights and their device grids, one grid per distinct layout, shared by the weights that
  have it;
- the operators the pictures are drawn around (:mod:`msinspect.report.around`).

A stage's rank list is compared by identity and each rank's place in it looked up in a dict:
hashing or searching a 10,000-rank tuple for every row made the old tables quadratic.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from msinspect.analysis.job.comm_totals import CommTotals, Total, group_of, moves, reason_of, why_text
from msinspect.analysis.job.cost import why_no_backward, why_no_forward
from msinspect.analysis.job.cost_tables import CostFold, StageAxes
from msinspect.analysis.rank.context import Stages
from msinspect.analysis.rank.gradsync import SliceHolders, verdict_of
from msinspect.analysis.rank.memory import memory_of_rank, shards_of_rank
from msinspect.analysis.rank.operators import forward_only
from msinspect.analysis.dataflow.node_facts import selector_matches
from msinspect.analysis.rank.params import weights_of, with_slices
from msinspect.rank_merge import Ranks, rank_number
from msinspect.ranks_text import ranks_text
from msinspect.report.tables import Row, text
from msinspect.schema import is_missing, is_set


class Merged:
    """:func:`~msinspect.report.tables.merged_rows` made one rank's rows at a time."""

    def __init__(self, columns: list[str]):
        self.columns = columns
        self._rows: dict[tuple, Ranks] = {}

    def add(self, record: dict) -> None:
        cells = tuple(text(record.get(c)) for c in self.columns)
        ranks = self._rows.get(cells)
        if ranks is None:
            ranks = self._rows[cells] = Ranks()
        ranks.add(record.get("rank"))

    def rows(self) -> list[Row]:
        shared: dict = {}
        return [Row(dict(zip(self.columns, cells)), ranks.listed(shared)) for cells, ranks in self._rows.items()]

    def __len__(self) -> int:
        return len(self._rows)


# ------------------------------------------------------------------ communication
def _summary(total: Total) -> dict:
    """A :class:`~msinspect.analysis.job.comm_totals.Total` as the page's tables show it."""
    return {"ops": total.operators, "ranks": total.ranks_text(), "tensor": total.tensor_bytes,
            "tensor_missing": total.tensor_missing, "wire": total.wire_bytes, "wire_missing": total.wire_missing,
            "why": why_text(total.why)}


class CommSummary:
    """The communication section's totals per kind and per group (per group shape with ``many``)
    and the glance's groups per kind, fed one rank's comm rows at a time: the totals are
    :class:`~msinspect.analysis.job.comm_totals.CommTotals`, as ``msinspect comm --by`` sums them."""

    def __init__(self, many: bool, lists=None):
        from msinspect.report.group_shapes import ShapeTotals

        self.many = many
        self.count = 0
        self.kinds = CommTotals("kind", why=True)
        self.groups = CommTotals("group", why=True)  # the operators that move data, without many
        self.shapes = ShapeTotals(lists)
        self.moving = Total()  # the operators that move data, with many: why their bytes cannot be told
        self.local = 0
        self.cut: dict = {}  # kind -> [group lists (by id: one object per content), operators without one, ops]

    def add_rank(self, rows: list[dict]) -> CommTotals:
        """Fold one rank's comm rows; returns their totals per kind (the rank's wire bytes)."""
        rank = CommTotals("kind", why=True).add(rows)
        self.kinds.merge(rank)
        self.count += rank.whole.operators
        for row in rows:
            if not moves(row):
                self.local += 1
                continue
            lists = group_of(row)
            cut = self.cut.setdefault(row["kind"], [{}, 0, set()])
            if lists is None:
                cut[1] += 1
            else:
                cut[0][id(lists)] = lists
            cut[2].add(row["op"])
            if self.many:
                self.shapes.add(row)
                self.moving.add(row, reason_of(row))
            else:
                self.groups.add((row,))
        return rank

    def kind_rows(self) -> list[dict]:
        return [{"kind": kind, **_summary(total)} for kind, total in self.kinds.items()]

    def group_rows(self) -> list[dict]:
        if self.many:
            why = why_text(self.moving.why)
            return [{"members": f"{t['groups']:,} groups of {t['shape']}" if t["groups"] > 1 else t["shape"],
                     "names": "one per group" if t["groups"] > 1 else "", "kinds": t["kinds"], "ops": t["ops"],
                     "ranks": t["ranks"], "tensor": t["tensor"], "tensor_missing": t["tensor_missing"],
                     "wire": t["wire"], "wire_missing": t["wire_missing"], "why": why}
                    for t in self.shapes.totals()]
        return [{"members": ranks_text(group) if group else "cannot tell", "names": ", ".join(total.names),
                 "kinds": ", ".join(total.kinds), **_summary(total)} for (group, _), total in self.groups.items()]


def wire_of_rank(rank: CommTotals, no_backward: str | None = None) -> tuple[tuple, dict]:
    """One rank's comm totals per kind (:meth:`CommSummary.add_rank`): ``(wire bytes known,
    operators without, bytes by kind, why its backward is not in its file)`` (the key the glance
    merges ranks by; ``no_backward``: :func:`~msinspect.analysis.job.cost.why_no_backward`) and
    ``{why, operators, no_backward}``."""
    whole = rank.whole
    by_kind = tuple((kind, int(total.wire)) for kind, total in rank.totals.items() if total.wire > 0)
    return (int(whole.wire), whole.wire_missing, by_kind, no_backward), {
        "why": why_text(whole.why) if whole.wire_missing else "", "operators": whole.operators,
        "no_backward": no_backward}


# ------------------------------------------------------------------ gradient synchronisation
class GradientSync:
    """:func:`msinspect.analysis.rank.gradsync.gradient_sync` folded as the glance reads it (the replicas
    told by the same :class:`~msinspect.analysis.rank.gradsync.SliceHolders`): per verdict
    the weights, the weights replicated without synchronisation by their replicas, update and
    source (with the first of them), and why some cannot be told."""

    def __init__(self, analysis, stages: Stages):
        self.stages = stages
        self.replicas = SliceHolders()
        self.rows = 0
        self.params: dict = {}
        self.verdicts: dict[str, dict] = {"synchronised": {}, "not replicated": {}, "not synchronised": {},
                                          "cannot tell": {}}
        self.whys: dict = {}
        self.bad: dict = {}  # (replicas, update, source) -> [first index, names, first row]
        self.whole: list = []  # rows replicated by every rank holding them whole: told at the end
        self.holders: dict = {}

    def add_rank(self, held: list[dict], slices: list[dict], ctx) -> None:
        rows = [row for row in held if row["update"] or row["synced_by"]]
        if not rows:
            return
        by_layout = self.replicas.of(slices, ctx)
        for row in rows:
            index = self.rows
            self.rows += 1
            self.params[row["param"]] = None
            synced = bool(row["synced_by"])
            if row["param"] in by_layout and row["rank"] == ctx.rank:
                self._told(index, row, by_layout[row["param"]], "layout", synced)
            elif row["planner"] is False and row["rank"] is not None:
                self.holders.setdefault((row["param"], row["shape"]), []).append(row["rank"])
                self.whole.append((index, {k: row[k] for k in ("rank", "param", "shape", "update", "update_line",
                                                                "file")}, synced))
            else:
                self._told(index, row, None, None, synced)

    def _told(self, index: int, row: dict, replicas, source, synced: bool) -> None:
        verdict, why = verdict_of(synced, replicas, row["update"])
        self.verdicts[verdict][row["param"]] = None
        if verdict == "cannot tell":
            self.whys.setdefault(index, why)
        if verdict == "not synchronised":
            key = (replicas, row["update"], source)
            found = self.bad.setdefault(key, [index, {}, row])
            found[1][row["param"]] = None

    def finish(self) -> None:
        for index, row, synced in self.whole:
            self._told(index, row, tuple(sorted(self.holders[(row["param"], row["shape"])])), "whole", synced)
        self.whole = []


# ------------------------------------------------------------------ weights
@dataclass
class Weight:
    """One weight's rows of ``Analysis.slices()`` as the weights section reads them."""

    first: dict
    ranks: Ranks = field(default_factory=Ranks)
    problem: tuple[int, str] | None = None
    """The first of its rows whose layout cannot be told: (its place among the rows, why)."""
    layouts: dict = field(default_factory=dict)
    """(matrix, map, shape, id(stage)) -> (its first row's place, the stage, whether told)."""
    rows: int = 0
    shards: set = field(default_factory=set)
    """Its optimizer-shard group sizes (:func:`msinspect.report.grid.shard_sizes`)."""


class Weights:
    """The weights section (:func:`msinspect.report.html._params`) and the glance's device
    matrices, one rank's slices at a time."""

    def __init__(self, analysis, stages: Stages):
        self.analysis, self.stages = analysis, stages
        self.params: dict[str, Weight] = {}
        self.matrices: dict = {}  # id(stage) -> [stage, Counter of matrices]
        self._matrix_seen: set = set()

    def add_rank(self, slices: list[dict], ctx) -> None:
        from msinspect.report.glance import stage_of
        from msinspect.report.grid import shard_sizes

        for row in slices:
            param = row["param"]
            if row["device_matrix"] is not None:
                where = self.stages.canonical(stage_of(self.analysis, row["rank"]))
                key = (id(where), param, tuple(row["device_matrix"]))
                if key not in self._matrix_seen:
                    self._matrix_seen.add(key)
                    self.matrices.setdefault(key[0], [where, Counter()])[1][tuple(row["device_matrix"])] += 1
            if not isinstance(param, str):
                continue
            weight = self.params.get(param)
            if weight is None:
                weight = self.params[param] = Weight({k: row[k] for k in ("param", "global_shape", "op", "consumer",
                                                                           "in_strategy", "device_matrix",
                                                                           "tensor_map")})
            weight.ranks.add(row["rank"])
            weight.shards |= shard_sizes((row,))
            at = weight.rows
            weight.rows += 1
            if weight.problem is not None:
                continue
            if row["device_matrix"] is None or row["global_shape"] is None:
                weight.problem = (at, (f"no layout is known for {row['op']}'s strategy {row['in_strategy']} on "
                                       "this stage") if row["global_shape"] is not None
                                  else "its global shape is unknown")
                continue
            stage = ctx.stage_ranks or ctx.world
            if not stage:
                weight.problem = (at, "the ranks of its stage cannot be told")
                continue
            key = (tuple(row["device_matrix"]), tuple(row["tensor_map"]), tuple(row["global_shape"]), id(stage))
            weight.layouts.setdefault(key, (at, stage, bool(ctx.stage_ranks)))


def weight_grids(param: str, weight: Weight, cache: dict, cells_up_to: int | None = None) -> tuple[list, str | None]:
    """The weight's device grids (:func:`msinspect.report.grid.grids_of`), one per layout, or why
    its layout cannot be told; a grid of the same layout over the same ranks made once and
    shared, renamed. A grid over more than ``cells_up_to`` devices is kept without its cells (no
    panels: a page does not draw it, it says how many devices and distinct slices it has): a
    cell per device, each distinct layout's grid held some 4 MB at 10,000 ranks."""
    from msinspect.report.grid import device_grid, grid_note

    grids, ranks = [], None
    for (matrix, tensor_map, shape, _), (at, stage, told) in weight.layouts.items():
        if weight.problem is not None and weight.problem[0] < at:
            break
        if ranks is None:
            ranks = set(weight.ranks.numbers)
        read = tuple(r for r in stage if r in ranks)
        key = (matrix, tensor_map, shape, id(stage), read)
        if key not in cache:
            try:
                cache[key] = device_grid(param, shape, matrix, tensor_map, stage, read)
                if cells_up_to is not None and len(stage) > cells_up_to:
                    cache[key] = replace(cache[key], panels=[])
            except ValueError as error:
                cache[key] = str(error)
        if isinstance(cache[key], str):
            return [], cache[key]
        grid = replace(cache[key], param=param, note=grid_note(told, weight.shards))
        grids.append(grid)
    if weight.problem is not None:
        return [], weight.problem[1]
    return grids, None


# ------------------------------------------------------------------ the pictures' operators
class Busiest:
    """Per kind of communication that moves data: its operator with the most wire bytes (the first
    of them), else the first of the kind (:func:`msinspect.report.around._busiest_per_kind`)."""

    def __init__(self):
        self.kinds: dict[str, list] = {}  # kind -> [count, best known row, first row]

    def add(self, row: dict) -> None:
        if not is_set(row["moves_data"]):
            return
        found = self.kinds.get(row["kind"])
        keep = {k: row.get(k) for k in ("name", "op", "line", "rank", "file", "wire_bytes")}
        if found is None:
            found = self.kinds[row["kind"]] = [0, None, keep]
        found[0] += 1
        if not is_missing(row["wire_bytes"]) and (found[1] is None or float(row["wire_bytes"]) > float(found[1]["wire_bytes"])):
            found[1] = keep


class Located:
    """Selectors looked for in each rank's operators, in order, until a rank's file has them
    (:func:`msinspect.report.around._locate`)."""

    def __init__(self, selectors: list[str]):
        self.todo = list(selectors)
        self.found: dict[str, list[dict]] = {}

    def add(self, ops: list[dict]) -> None:
        for selector in list(self.todo):
            hits = [row for row in ops if selector_matches(row["name"], row["scope"], selector)
                    and not is_set(row["plumbing"])]
            if hits:
                forward = [row for row in hits if not is_set(row["backward"])]
                self.found[selector] = forward or hits
                self.todo.remove(selector)


# ------------------------------------------------------------------ every rank, once
@dataclass
class Rolled:
    """What the page shows of every rank's rows (see the module)."""

    strategies: Merged
    comm_rows: Merged
    comm: CommSummary
    cost: CostFold
    sync: GradientSync
    weights: Weights
    busiest: Busiest
    located: Located
    wire: dict = field(default_factory=dict)
    """:func:`wire_of_rank`'s key -> the ranks that have it (:class:`Ranks`)."""
    wire_details: dict = field(default_factory=dict)
    held: dict = field(default_factory=dict)
    """The weights a rank holds (param, shape, bytes) -> the ranks holding them (:class:`Ranks`)."""
    memory: dict = field(default_factory=dict)
    """A rank's memory numbers -> [its memory row, the ranks that have them (:class:`Ranks`)]."""
    strategy_count: int = 0
    wrong_shapes: dict = field(default_factory=dict)
    wrong_ranks: set = field(default_factory=set)


def roll_up(analysis, *, many: bool, selectors: list[str] = (), rank: int | None = None) -> Rolled:
    """Every rank's rows read once (in the analysis' order) and folded into :class:`Rolled`.
    ``selectors``: the operators to find for the pictures; ``rank``: found in that rank only (the
    busiest collectives too)."""
    from msinspect.report.group_shapes import GroupLists, shaped
    from msinspect.report.tables import COMM_SHOWN, STRATEGY_SHOWN

    stages, lists = Stages(), GroupLists()
    out = Rolled(Merged(STRATEGY_SHOWN), Merged(COMM_SHOWN), CommSummary(many, lists),
                 CostFold(StageAxes(analysis, stages), stages, lists),
                 GradientSync(analysis, stages), Weights(analysis, stages), Busiest(), Located(list(selectors)))
    for result in analysis.results:
        number = rank_number(result.rank)
        ctx = stages.context(analysis, result.rank)
        # the weights as the analysis reads them (Analysis.params_of: the step_parallel_end's where
        # the files read state none), as Analysis.slices() and check read them
        strategies, comm, params, held = result.strategies, result.comm, analysis.params_of(result), result.held
        mine = rank is None or result.rank == rank
        calls = any(is_set(r["moves_data"]) for r in comm) or (mine and out.located.todo)
        ops = result.ops if calls else None
        for row in strategies:
            out.strategies.add(row)
            out.strategy_count += 1
            if row.get("shapes_ok") is False:
                out.wrong_shapes[row["name"]] = None
                if number is not None:
                    out.wrong_ranks.add(number)
        lists.forget_objects()  # the last rank's lists go; their contents stay known
        for row in comm:
            group = lists.one(row["group_ranks"])
            if group is not None:
                row["group_ranks"] = group
            shown = {**row, **(shaped(row, lists) if many else {"group_ranks": lists.text(group)
                                                               if group is not None else None}),
                     "wire_bytes": _bytes_text(row["wire_bytes"]), "tensor_bytes": _bytes_text(row["tensor_bytes"])}
            out.comm_rows.add(shown)
            if mine:
                out.busiest.add(row)
        wire = out.comm.add_rank(comm)
        if mine and ops is not None and out.located.todo:
            out.located.add(ops)
        no_backward = why_no_backward(result)
        out.cost.add_rank(result.rank, ctx, comm, ops, no_backward, strategies, why_no_forward(result))
        slices = with_slices(weights_of(params), ctx)
        out.weights.add_rank(slices, ctx)
        out.sync.add_rank(held, slices, ctx)
        memory = memory_of_rank(result.rank, held, shards_of_rank(comm, held),
                                lambda: forward_only(result.ops))
        key = tuple(memory[c] for c in ("optimizer", "weights", "weight_count", "gradients", "states", "other", "total"))
        out.memory.setdefault(key, [memory, Ranks()])[1].add(result.rank)
        if number is None:
            continue
        key, details = wire_of_rank(wire, no_backward)
        out.wire.setdefault(key, Ranks()).add(number)
        out.wire_details.setdefault(key, details)
        with_layout = {row["param"] for row in slices}
        kept = tuple(sorted((row["param"], row["shape"], row["bytes"]) for row in held
                            if row["update"] or row["synced_by"] or row["param"] in with_layout))
        out.held.setdefault(kept, Ranks()).add(number)
    out.sync.finish()
    return out


def _bytes_text(value) -> str:
    return "cannot tell" if is_missing(value) else f"{int(value):,}"
