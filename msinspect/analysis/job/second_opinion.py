"""Each weight as msinspect reads it from the IR, held against MindSpore's own record of it.

Where a rank folder holds MindSpore's record (:mod:`msinspect.mindspore.records`: the dry run
keeps one for every compiled rank; a cluster job's strategy and group checkpoints work too), the
record is a second opinion written by the planner itself. For each weight row of
:meth:`~msinspect.analysis.job.collect.Analysis.slices` this adds what the record says (device matrix,
tensor map, the layout's slice shape, the optimizer-shard group's ranks, and the elements the rank
stores by MindSpore's loader: the layout's slice at the rank's place in its stage, then its part of
that along the first dimension over the shard group) and how the two compare:

* ``same``: every field both state is equal;
* ``differs``: at least one is not; ``record_says`` names each, with both values;
* ``cannot tell here``: msinspect could not tell a field the record states (the record says it);
* ``not in the record``: the record holds no entry of that name;
* ``no record``: the rank folder holds none (nothing compared).

MindSpore's records are never taken in place of the IR's reading: both are shown.
"""
from __future__ import annotations

from math import prod
from pathlib import Path
from typing import TYPE_CHECKING

from msinspect.analysis.rank.gradsync import trained_weights
from msinspect.mindspore.layouts import shard_of, slice_by_map

if TYPE_CHECKING:
    import pandas as pd

    from msinspect.mindspore.records import RankRecord, WeightLayout

RECORD_COLUMNS = ["record", "record_says", "ms_device_matrix", "ms_tensor_map", "ms_slice_shape", "ms_opt_shard_ranks",
                  "ms_slice"]


def rank_record(result):
    """The record in the folder of a rank's file (:class:`~msinspect.analysis.rank.result.RankResult`);
    None: it keeps none. A record that cannot be read raises
    :class:`~msinspect.mindspore.records.RecordError` naming its file."""
    from msinspect.mindspore.records import record_of

    return record_of(Path(result.file).parent) if result.file else None


def rank_records(analysis) -> dict:
    """Rank -> its folder's record (:func:`rank_record`)."""
    return {result.rank: rank_record(result) for result in analysis.results if result.file}


def keeps_record(folders) -> bool:
    """Whether any of these rank folders keeps a file of MindSpore's record."""
    from msinspect.mindspore.records import is_record_file

    return any(is_record_file(f.name) for folder in folders for f in Path(folder).iterdir() if f.is_file())


def compared_rows(analysis) -> pd.DataFrame | None:
    """The weight rows of the ranks whose folders keep MindSpore's record, with
    :data:`RECORD_COLUMNS`; None where no rank folder keeps one (nothing is read then)."""
    if not keeps_record({Path(r.file).parent for r in analysis.results if r.file}):
        return None
    frame = with_records(analysis, analysis.slices())
    return frame[frame["record"] != "no record"]


def verdict_counts(compared: pd.DataFrame) -> str:
    """``90 same, 1 differs``: the rows per verdict; ``none`` without rows."""
    return ", ".join(f"{n} {verdict}" for verdict, n in compared["record"].value_counts().items()) or "none"


def recorded_slice(layout: WeightLayout, record: RankRecord, rank: int | None,
                   shape) -> tuple[tuple[tuple[int, int], ...] | None, tuple[int, ...] | None]:
    """(the elements MindSpore's loader gives ``rank`` of this weight, the optimizer-shard group's
    ranks) by the record: the layout's slice at the rank's place in its stage (its rank modulo the
    stage's devices, ``_load_tensor_by_layout``; uneven rows, a Gather's manual split, as the
    strategy checkpoint's ``param_split_shape`` gives them), then under an optimizer shard its part
    along the first dimension by its place in the group (the group checkpoint's ranks). None where
    the record does not tell it. ``shape``: the weight's whole shape as the IR gives it."""
    rows = None
    if layout.uniform_split is False:  # uneven rows: the strategy checkpoint states them, in device order
        split = next((c.weights[layout.name] for c in record.checkpoints[::-1] if layout.name in c.weights), None)
        rows = split.split_shape if split is not None else None
        if rows is None:
            return None, None
    else:  # (an uneven layout's full shape is its slice times the parts: MindSpore 2.10's layout dictionary)
        shape = layout.full_shape or shape
    if rank is None or shape is None or len(layout.tensor_map) != len(shape) or any(d < 0 for d in shape):
        return None, None  # (a dynamic dimension: its extent is known at run time only)
    devices = prod(layout.device_matrix) if layout.device_matrix else 1
    bounds = slice_by_map(tuple(layout.device_matrix), tuple(layout.tensor_map), tuple(shape), rank % devices, rows)
    if not layout.opt_shard_group:
        return bounds, None
    ranks = next((g.groups[layout.opt_shard_group] for g in record.groups[::-1] if layout.opt_shard_group in g.groups),
                 None)
    if not ranks or rank not in ranks:
        return None, None
    return shard_of(bounds, len(ranks), sorted(ranks).index(rank)), tuple(ranks)


def _text(value) -> str:
    from msinspect.analysis.rank.params import slice_text

    if value is None:
        return "-"
    if isinstance(value, tuple) and value and isinstance(value[0], tuple) and len(value[0]) == 2 \
            and all(isinstance(v, int) for v in value[0]):
        return slice_text(value)  # bounds
    return str(tuple(value) if isinstance(value, list) else value)


def _tuple(value):
    if isinstance(value, (list, tuple)):
        return tuple(_tuple(v) for v in value)
    return value


def compare(row: dict, layout: WeightLayout | None, record: RankRecord | None) -> dict:
    """The record's columns for one weight row (:data:`RECORD_COLUMNS`)."""
    out = dict.fromkeys(RECORD_COLUMNS)
    if record is None:
        out["record"] = "no record"
        return out
    if layout is None and row.get("kind") == "input":  # MindSpore records a graph input only where it laid it out
        out["record"] = "no record"
        return out
    if layout is None:
        out["record"], out["record_says"] = "not in the record", f"MindSpore's record holds no {row['param']}"
        return out
    stored, ranks = recorded_slice(layout, record, row["rank"], row["global_shape"])
    shard = row.get("opt_shard_ranks")
    # an optimizer gather over the rank alone (a pipeline's micro-step gather of a weight too small
    # to shard) cuts nothing: the record says no shard
    ours = {"device_matrix": row["device_matrix"], "tensor_map": row["tensor_map"], "slice_shape": row["slice_shape"],
            "opt_shard_ranks": tuple(shard) if shard and len(shard) > 1 else None, "slice": row["slice"]}
    theirs = {"device_matrix": layout.device_matrix, "tensor_map": layout.tensor_map,
              "slice_shape": layout.slice_shape, "opt_shard_ranks": ranks, "slice": stored}
    for key, value in theirs.items():
        out[f"ms_{key}"] = value
    differ, untold = [], []
    for key, value in theirs.items():
        mine = _tuple(ours[key])
        value = _tuple(value)
        if value is None and not (key == "opt_shard_ranks" and layout.opt_shard_group == "" and mine is None):
            continue  # the record does not say (or, for the shard, says none: compared as None below)
        if mine is None and value is not None:
            untold.append(key)
        elif mine != value:
            differ.append(f"{key} {_text(mine)} here, {_text(value)} in MindSpore's record")
    if not layout.opt_shard_group and ours["opt_shard_ranks"]:
        differ.append(f"optimizer shard over {_text(ours['opt_shard_ranks'])} here, none in MindSpore's record")
    if differ:
        out["record"], out["record_says"] = "differs", "; ".join(differ)
    elif untold:
        out["record"] = "cannot tell here"
        out["record_says"] = "MindSpore's record states " + ", ".join(
            f"{key} {_text(_tuple(theirs[key]))}" for key in untold)
    else:
        out["record"] = "same"
    return out


def with_records(analysis, slices: pd.DataFrame, records: dict | None = None) -> pd.DataFrame:
    """``slices`` (rows of :meth:`~msinspect.analysis.job.collect.Analysis.slices`) with
    :data:`RECORD_COLUMNS` from each rank's record (``records``: :func:`rank_records`, made here
    when not given)."""
    records = rank_records(analysis) if records is None else records
    frame = slices.copy()
    rows = []
    for row in frame.to_dict("records"):
        record = records.get(row["rank"])
        rows.append(compare(row, record.weights.get(row["param"]) if record is not None else None, record))
    for column in RECORD_COLUMNS:
        frame[column] = [r[column] for r in rows]
    return frame


def unread(analysis, slices: pd.DataFrame, records: dict | None = None) -> list[tuple]:
    """The weights a rank's record lays out (a weight the rank's file trains, by that name: not an
    optimizer state; in a file that trains none, any weight it holds) that msinspect gave no row:
    (rank, name, MindSpore's device matrix and tensor map). What the IR's reading left out."""
    records = rank_records(analysis) if records is None else records
    held = {(r, p) for r, p in zip(slices["rank"], slices["param"])}
    out = []
    for result in analysis.results:
        record = records.get(result.rank)
        if record is None:
            continue
        names = trained_weights(result.held)
        for name, layout in record.weights.items():
            if name in names and (result.rank, name) not in held:
                out.append((result.rank, name, layout.device_matrix, layout.tensor_map))
    return out
