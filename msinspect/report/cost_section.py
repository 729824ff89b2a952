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


def _merge(rows: list[dict], key) -> list[dict]:
    """Rows of equal ``key(row)`` as one, with ``ranks`` their ranks' text."""
    merged: dict = {}
    for row in rows:
        merged.setdefault(key(row), []).append(row)
    def text(group):  # a file read without a rank folder has no rank: "-"
        known = [r["rank"] for r in group if r["rank"] is not None and r["rank"] == r["rank"]]
        return ", ".join(filter(None, [ranks_text(known) if known else "", "-" if len(known) < len(group) else ""]))

    return [{**group[0], "ranks": text(group)} for group in merged.values()]


def cost_section(analysis) -> dict | None:
    """What the template shows; None where the files hold no communication and no weight."""
    from msinspect.analysis.cost import bytes_by, comm_costs, rank_matrix
    from msinspect.analysis.memory import memory_per_rank
    from msinspect.report.matrix_svg import matrix_svg
    from msinspect.schema import is_missing

    costs = comm_costs(analysis)
    memory = memory_per_rank(analysis)
    if costs.empty and (memory.empty or not memory["weight_count"].any()):
        return None
    split = bytes_by(analysis, ("axis", "phase"), costs)
    axes = [a for a in AXES if a in set(split["axis"])] + sorted(set(split["axis"]) - set(AXES))
    phases = [p for p in PHASES if p in set(split["phase"])]
    per_rank = []
    for rank, rows in split.groupby("rank"):
        cells = {(r["axis"], r["phase"]): r["step_bytes"] for r in rows.to_dict("records")}
        totals = [v for v in cells.values()]
        per_rank.append({
            "rank": rank,
            "cells": tuple((a, p, None if is_missing(cells.get((a, p), 0)) else int(cells.get((a, p), 0)))
                           for a in axes for p in phases),
            "total": None if any(is_missing(v) for v in totals) else int(sum(totals)),
        })
    undecided = costs[costs["axis"] == "cannot tell"]
    return {
        "axes": axes, "phases": phases,
        "rows": _merge(per_rank, lambda r: (r["cells"], r["total"])),
        "basis": [_BASIS.get(b, b) for b in sorted(set(costs["count_basis"]))] if len(costs) else [],
        "undecided": [f"{n} operator(s): {why}" for why, n in undecided.groupby("axis_from").size().items()],
        "matrix_svg": matrix_svg(rank_matrix(analysis, costs)) if len(costs) else "",
        "assumption": MATRIX_ASSUMPTION,
        "memory": _merge(memory.to_dict("records"),
                         lambda r: tuple(r[c] for c in ("optimizer", "weights", "weight_count", "gradients",
                                                        "states", "other", "total"))),
    }
