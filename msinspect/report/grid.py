"""How a weight is cut over its device matrix, cell by cell: the model behind the device-grid
pictures (:mod:`msinspect.report.grid_svg`).

A stage's devices form the device matrix (row-major over the stage's ranks); the tensor map says
which matrix axis, counted from the right, cuts each tensor dimension (-1: none). An axis that cuts
no dimension is a replication axis (MindSpore's repeated-calculation axis is one, on the right):
ranks that differ only along it hold the same slice. The slices come from
:class:`msinspect.mindspore.layouts.Layout`, the analysis's own definition.

For drawing, axes of size 1 are dropped; the last two remaining axes are the rows and columns of
a 2-D grid and every other axis gives small multiples (one grid per combination of their values).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

from msinspect.mindspore.layouts import Layout, map_axes
from msinspect.analysis.rank.params import slice_text
from msinspect.analysis.job.op_rows import no_weight

Bounds = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Axis:
    """One axis of the device matrix."""

    position: int
    """Its place in the device matrix, from the left (``dm[position]``)."""
    size: int
    """How many devices lie along it."""
    cuts: tuple[int, ...]
    """The tensor dimensions it cuts; empty for a replication axis."""

    @property
    def label(self) -> str:
        role = ("cuts dim " + ", ".join(map(str, self.cuts))) if self.cuts else "replicated"
        return f"dm[{self.position}]={self.size}: {role}"


@dataclass(frozen=True)
class Cell:
    """One device of the stage."""

    local_rank: int
    """Its index in the stage (row-major over the device matrix)."""
    rank: int
    """Its global rank."""
    coordinate: tuple[int, ...]
    """Its position in the device matrix."""
    slice: Bounds
    """``(start, stop)`` per tensor dimension of the part it holds."""
    colour: int
    """Index of its slice among the distinct slices (equal slices, equal index)."""
    read: bool = True
    """Whether the dump of this rank was read (else its slice follows from the stage's layout only)."""

    @property
    def slice_text(self) -> str:
        return slice_text(self.slice)


@dataclass(frozen=True)
class Panel:
    """One 2-D grid of the small multiples: the cells with the outer axes fixed."""

    outer: tuple[tuple[Axis, int], ...]
    """The outer axes and their value in this panel (empty when there is one panel)."""
    rows: tuple[tuple[Cell, ...], ...]

    @property
    def title(self) -> str:
        return ", ".join(f"dm[{a.position}]={v}" for a, v in self.outer) or "all devices"


@dataclass
class DeviceGrid:
    """A weight cut over its device matrix."""

    param: str
    shape: tuple[int, ...]
    device_matrix: tuple[int, ...]
    tensor_map: tuple[int, ...]
    ranks: tuple[int, ...]
    """The stage's ranks in device-matrix order."""
    axes: tuple[Axis, ...]
    row_axis: Axis | None
    col_axis: Axis | None
    outer_axes: tuple[Axis, ...]
    panels: list[Panel] = field(default_factory=list)
    slices: list[Bounds] = field(default_factory=list)
    """The distinct slices, in colour order."""
    note: str | None = None
    """A caveat drawn with the picture (e.g. the ranks of the stage were assumed, not told)."""

    def cell(self, rank: int) -> Cell:
        """The cell of a global rank; KeyError when the rank is not in this stage."""
        for panel in self.panels:
            for row in panel.rows:
                for cell in row:
                    if cell.rank == rank:
                        return cell
        raise KeyError(f"rank {rank} is not among this grid's ranks {self.ranks}")

    def cells(self) -> list[Cell]:
        return [c for p in self.panels for row in p.rows for c in row]


def _axes(device_matrix: tuple[int, ...], tensor_map: tuple) -> tuple[Axis, ...]:
    """Each device axis with the tensor dimensions it cuts (a dimension cut over several axes,
    the Layout API's ``(1, 0)`` entry, is cut by each)."""
    n = len(device_matrix)
    cuts: dict[int, list[int]] = {}
    for dim, entry in enumerate(tensor_map):
        for axis in map_axes(entry):
            cuts.setdefault(n - 1 - axis, []).append(dim)
    return tuple(Axis(i, size, tuple(cuts.get(i, ()))) for i, size in enumerate(device_matrix))


def device_grid(param: str, shape, device_matrix, tensor_map, ranks, read_ranks=None) -> DeviceGrid:
    """The grid of a weight of global ``shape`` with this layout over the stage's ``ranks``
    (global rank numbers in device-matrix order). ``read_ranks``: the ranks whose dump was read
    (default: all). ValueError when the ranks do not fill the device matrix or the map does not fit."""
    shape, device_matrix, tensor_map = tuple(shape), tuple(device_matrix), tuple(tensor_map)
    ranks = tuple(ranks)
    devices = 1
    for size in device_matrix:
        devices *= size
    if devices != len(ranks):
        raise ValueError(f"device matrix {device_matrix} holds {devices} devices, the stage {len(ranks)}")
    if len(tensor_map) != len(shape) or any(a >= len(device_matrix) for e in tensor_map for a in map_axes(e)):
        raise ValueError(f"tensor map {tensor_map} does not fit shape {shape} on matrix {device_matrix}")
    read = set(ranks if read_ranks is None else read_ranks)
    layout = Layout(device_matrix, (tensor_map,))
    axes = _axes(device_matrix, tensor_map)
    drawn = [a for a in axes if a.size > 1]
    row_axis, col_axis = (drawn[-2] if len(drawn) >= 2 else None), (drawn[-1] if drawn else None)
    outer = tuple(drawn[:-2])
    colours: dict[Bounds, int] = {}
    by_coord: dict[tuple[int, ...], Cell] = {}
    for local, rank in enumerate(ranks):
        coord = layout.coordinate(local)
        bounds = layout.slice_of(0, shape, local)
        colour = colours.setdefault(bounds, len(colours))
        by_coord[coord] = Cell(local, rank, coord, bounds, colour, rank in read)
    grid = DeviceGrid(param, shape, device_matrix, tensor_map, ranks, axes, row_axis, col_axis, outer,
                      slices=list(colours))
    for values in product(*(range(a.size) for a in outer)):
        fixed = {a.position: v for a, v in zip(outer, values)}
        rows = []
        for r in range(row_axis.size if row_axis else 1):
            row = []
            for c in range(col_axis.size if col_axis else 1):
                coord = [0] * len(device_matrix)
                for pos, v in fixed.items():
                    coord[pos] = v
                if row_axis:
                    coord[row_axis.position] = r
                if col_axis:
                    coord[col_axis.position] = c
                row.append(by_coord[tuple(coord)])
            rows.append(tuple(row))
        grid.panels.append(Panel(tuple(zip(outer, values)), tuple(rows)))
    return grid


def weight_rows(slices) -> dict[str, list[dict]]:
    """The rows of ``analysis.slices()`` per weight, as dicts, weights in the order they first come
    (one conversion of the whole table, never a DataFrame per weight: ``bench/bench_report.py``)."""
    out: dict[str, list[dict]] = {}
    for row in slices.to_dict("records"):
        if isinstance(row["param"], str):
            out.setdefault(row["param"], []).append(row)
    return out


def shard_sizes(rows) -> set:
    """The optimizer-shard group sizes of a weight's rows (None for a group whose ranks are not
    told); empty: not sharded."""
    return {len(r["opt_shard_ranks"]) if r.get("opt_shard_ranks") else None for r in rows if r.get("opt_shard_group")}


def grid_note(stage_told: bool, shards: set) -> str | None:
    """What a weight's grid says beside its cells: a stage that could not be told, and an
    optimizer shard, under which a rank stores part of its cell."""
    notes = []
    if not stage_told:
        notes.append("pipeline stages cannot be told (not every rank read at one stage): "
                     "drawn over every rank of the job, as the slices analysis assumes")
    if shards:
        parts = f"1/{next(iter(shards))}" if len(shards) == 1 and None not in shards else "a part"
        notes.append(f"optimizer shard: each rank stores {parts} of its cell's first dimension, by its place in "
                     "its optimizer-shard group, and gathers the rest before use (its slice in shapes --params)")
    return "; ".join(notes) or None


def grids_of(analysis, param: str, rows: list[dict] | None = None) -> list[DeviceGrid]:
    """The device grids of the weight named ``param`` (its short name) from an
    :class:`~msinspect.analysis.job.collect.Analysis`: one per distinct layout (a weight held by two
    pipeline stages gets two). KeyError when no rank holds it; ValueError (with the reason) when
    its layout cannot be told. ``rows``: the weight's rows of ``analysis.slices()`` (as dicts) when
    the caller holds them (the slices are computed afresh on each call of that method)."""
    if rows is None:
        rows = weight_rows(analysis.slices())
        if param not in rows:
            kinds = {name: r[0].get("kind") for name, r in rows.items()}
            raise no_weight(param, [n for n, k in kinds.items() if k != "input"],  # a NoMatchError, a KeyError too
                            [n for n, k in kinds.items() if k == "input"])
        rows = rows[param]
    grids, seen = [], set()
    for row in rows:
        if row["device_matrix"] is None or row["global_shape"] is None:
            raise ValueError(f"{param}: its layout cannot be told: "
                             + (f"no layout is known for {row['op']}'s strategy {row['in_strategy']} on "
                                "this stage" if row["global_shape"] is not None else "its global shape is unknown"))
        ctx = analysis.context(row["rank"])
        stage = ctx.stage_ranks or ctx.world
        if not stage:
            raise ValueError(f"{param}: the ranks of its stage cannot be told")
        key = (tuple(row["device_matrix"]), tuple(row["tensor_map"]), tuple(row["global_shape"]), tuple(stage))
        if key in seen:
            continue
        seen.add(key)
        read = [r["rank"] for r in rows if r["rank"] in stage]
        grid = device_grid(param, key[2], key[0], key[1], key[3], read)
        grid.note = grid_note(bool(ctx.stage_ranks), shard_sizes(r for r in rows if r["rank"] in stage))
        grids.append(grid)
    return grids
