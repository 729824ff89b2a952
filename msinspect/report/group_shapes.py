"""Communication groups told by their shape, for a report of many ranks.

Each rank of a job runs its collectives over its own group: rank 0's tensor-parallel group is
``0-3``, rank 5's ``4-7``. The report's tables merge the ranks whose rows agree, so with every
group written out a job has one row per group and operator: thousands of rows at thousands of
ranks. From :data:`MANY` ranks read, a group that is an evenly spaced list holding the row's own
rank is written by its shape instead (``4 ranks, stride 1``, the same words for every rank whose
group has that shape), its hash name left out (one per group) and a Send / Receive peer written
relative to the rank (``+4``), so that the ranks that do the same thing are one row whatever
their size; ``msinspect comm`` and ``--json`` keep every rank's own group.
"""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from msinspect.ranks_text import ranks_text

if TYPE_CHECKING:
    import pandas as pd

#: From this many ranks read, groups are written by their shape.
MANY = 64


def shape_of(ranks) -> str | None:
    """``4 ranks, stride 1`` for an evenly spaced rank list of two ranks or more; None for any
    other list."""
    if not isinstance(ranks, (tuple, list)) or len(ranks) < 2:
        return None
    return _shape(tuple(ranks))


@lru_cache(maxsize=1 << 14)
def _shape(ranks: tuple[int, ...]) -> str | None:
    """:func:`shape_of` of a tuple, kept: a job names a few groups, each on thousands of rows."""
    ordered = sorted(ranks)
    stride = ordered[1] - ordered[0]
    if stride <= 0 or any(b - a != stride for a, b in zip(ordered, ordered[1:])):
        return None
    return f"{len(ordered)} ranks, stride {stride}"


def by_shape(frame: pd.DataFrame) -> pd.DataFrame:
    """The comm rows with each rank's own evenly spaced group written as its shape (``group``
    left out where it was), and a peer as its offset from the rank (``+4``)."""
    def group(row) -> object:
        shape = shape_of(row["group_ranks"])
        own = isinstance(row["group_ranks"], (tuple, list)) and row["rank"] in row["group_ranks"]
        return f"each rank's own: {shape}" if shape and own else (
            ranks_text(row["group_ranks"]) if isinstance(row["group_ranks"], (tuple, list)) else None)

    def peer(row) -> object:
        value, rank = row["peer"], row["rank"]
        if value is None or value != value or rank is None or rank != rank:
            return None
        return f"{int(value) - int(rank):+d}"

    records = frame.to_dict("records")
    shaped = [group(r) for r in records]
    renamed = [None if isinstance(s, str) and s.startswith("each rank's own") else r["group"]
               for s, r in zip(shaped, records)]
    return frame.assign(group_ranks=shaped, group=renamed, peer=[peer(r) for r in records])


def shape_totals(moving: pd.DataFrame) -> list[dict]:
    """Per group shape (and per group that has none): how many groups, the operators over them,
    the ranks, and the wire and tensor bytes per step summed over the ranks (None: one of them
    cannot be told)."""
    out: dict[str, dict] = {}
    for row in moving.to_dict("records"):
        ranks = row["group_ranks"]
        shape = shape_of(ranks)
        key = shape or (ranks_text(ranks) if isinstance(ranks, (tuple, list)) else "cannot tell")
        total = out.setdefault(key, {"shape": key, "groups": set(), "ops": 0, "ranks": set(), "kinds": {},
                                     "wire": 0, "wire_missing": 0, "tensor": 0, "tensor_missing": 0})
        if isinstance(ranks, (tuple, list)):
            total["groups"].add(tuple(ranks))
        total["ops"] += 1
        total["kinds"][row["kind"]] = None
        if row["rank"] is not None and row["rank"] == row["rank"]:
            total["ranks"].add(int(row["rank"]))
        for name in ("wire", "tensor"):
            value = row[f"{name}_bytes"]
            if value is None or value != value:
                total[f"{name}_missing"] += 1
            else:
                total[name] += int(value)
    return [{**t, "groups": len(t["groups"]), "ranks": ranks_text(t["ranks"]), "kinds": ", ".join(t["kinds"]),
             "wire": None if t["wire_missing"] else t["wire"], "tensor": None if t["tensor_missing"] else t["tensor"]}
            for t in out.values()]
