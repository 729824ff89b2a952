"""The report's "Cost per step" section: each rank's wire bytes per step by parallel axis and
phase, the rank-to-rank matrix as a heat map, and static memory per rank
(:mod:`msinspect.analysis.cost`, :mod:`msinspect.analysis.memory`); ranks whose numbers agree
share one row."""
from __future__ import annotations

from msinspect.analysis.cost import AXES, MATRIX_ASSUMPTION, PHASES
from msinspect.ranks_text import ranks_text

_BASIS = {"once": "once per operator in the file",
          "unrolled": "micro-batches as MindSpore unrolls them (one copy per micro index)",
          "called": "times the file calls the subgraph holding it"}


def _ranks_text(ranks) -> str:
    """The ranks of merged rows; a file read without a rank folder has no rank: "-"."""
    known = [r for r in ranks if r is not None and r == r]
    return ", ".join(filter(None, [ranks_text(known) if known else "", "-" if len(known) < len(ranks) else ""]))


def cost_section(rolled) -> dict | None:
    """What the template shows, from every rank's rows folded once
    (:func:`msinspect.report.rollup.roll_up`: as :func:`~msinspect.analysis.cost.comm_costs`,
    ``bytes_by``, ``rank_matrix`` and :func:`~msinspect.analysis.memory.memory_per_rank` count);
    None where the files hold no communication and no weight."""
    from msinspect.report.matrix_svg import matrix_svg

    cost = rolled.cost
    if not cost.count and not any(row["weight_count"] for row, _ in rolled.memory.values()):
        return None
    axes = [a for a in AXES if a in cost.seen_axes] + sorted(cost.seen_axes - set(AXES))
    phases = [p for p in PHASES if p in cost.seen_phases]
    per_rank: dict = {}  # (cells, total) -> ranks, the lowest rank first
    for items, ranks in cost.per_rank.items():
        cells = dict(items)
        key = (tuple((a, p, cells.get((a, p), 0)) for a in axes for p in phases),
               None if any(v is None for v in cells.values()) else int(sum(cells.values())))
        per_rank.setdefault(key, []).extend(ranks)
    rows = sorted(({"rank": min(ranks), "cells": key[0], "total": key[1], "ranks": ranks_text(ranks)}
                   for key, ranks in per_rank.items()), key=lambda r: r["rank"])
    return {
        "axes": axes, "phases": phases,
        "rows": rows,
        "basis": [_BASIS.get(b, b) for b in sorted(cost.basis)],
        "undecided": [f"{n} operator(s): {why}" for why, n in sorted(cost.undecided.items())],
        "matrix_svg": matrix_svg(cost.matrix()) if cost.count else "",
        "assumption": MATRIX_ASSUMPTION,
        "memory": [{**first, "ranks": _ranks_text(ranks)} for first, ranks in rolled.memory.values()],
    }
