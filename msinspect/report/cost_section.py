"""The report's "Cost per step" section: each rank's wire bytes per step by parallel axis and
phase, the rank-to-rank matrix as a heat map, static memory per rank, the activation estimate
per rank and, with a device memory stated, whether each rank fits (:mod:`msinspect.analysis.job.cost`,
:mod:`msinspect.analysis.rank.memory`, :mod:`msinspect.analysis.rank.activations`); ranks whose numbers
agree share one row."""
from __future__ import annotations

from typing import Iterable, Iterator

from msinspect.analysis.job.cost import AXES, MATRIX_ASSUMPTION, PHASES
from msinspect.ranks_text import ranks_text

_BASIS = {"once": "once per operator in the file",
          "unrolled": "micro-batches as MindSpore unrolls them (one copy per micro index)",
          "called": "times the file calls the subgraph holding it"}


#: How many ranks' activation rows are made into dicts at a time (:func:`memory_fit`).
_CHUNK = 1024


def _ranks_text(ranks) -> str:
    """The ranks of merged rows; a file read without a rank folder has no rank: "-"."""
    known = [r for r in ranks if r is not None and r == r]
    return ", ".join(filter(None, [ranks_text(known) if known else "", "-" if len(known) < len(ranks) else ""]))


def _merged(rows: list[dict], keys: list[str]) -> list[dict]:
    """Rows whose ``keys`` agree as one, with their ranks in words (``ranks``), lowest rank first."""
    merged: dict = {}
    for row in rows:
        merged.setdefault(tuple(row[k] for k in keys), ([], row))[0].append(row["rank"])
    return [{**{k: row[k] for k in keys}, "ranks": _ranks_text(ranks)} for ranks, row in merged.values()]


def memory_fit(analysis, memory_rows: Iterable[dict], device_memory: int | None) -> dict:
    """The activation estimate per rank (:func:`~msinspect.analysis.rank.activations.activations_per_rank`)
    and, with ``device_memory``, each rank's static ``total`` (``memory_rows``: one per rank, read
    only then) plus its activations against it, ranks that agree merged; what the estimate leaves
    out. The ranks' rows are read one at a time, never held as a list of 10,000 dicts."""
    from msinspect.analysis.rank.activations import LEAVES_OUT, activations_per_rank, fit_of

    frame = activations_per_rank(analysis)

    def active() -> Iterator[dict]:
        for start in range(0, len(frame), _CHUNK):
            yield from frame.iloc[start:start + _CHUNK].to_dict("records")

    fits = []
    if device_memory is not None:
        mine = {row["rank"]: (row["activations"], row["why"]) for row in active()}
        for row in memory_rows:
            activations, why = mine.get(row["rank"], (None, None))
            fits.append({"rank": row["rank"], "static": row["total"], "activations": activations,
                         **fit_of(row["total"], activations, device_memory, why or "")})
    return {"activations": _merged(active(), ["stage", "micro_batches", "in_flight", "per_micro", "shared",
                                              "inputs", "activations", "why"]),
            "leaves_out": LEAVES_OUT, "device_memory": device_memory,
            "fits": _merged(fits, ["static", "activations", "total", "headroom", "fits"])}


def _grouped(missing: dict) -> dict[str, list]:
    """Reason -> the ranks it holds for (``Cost.missing``: rank -> why its backward is not in its file)."""
    out: dict[str, list] = {}
    for rank, why in missing.items():
        out.setdefault(why, []).append(rank)
    return out


def cost_section(rolled, analysis=None, device_memory: int | None = None) -> dict | None:
    """What the template shows, from every rank's rows folded once
    (:func:`msinspect.report.rollup.roll_up`: as :func:`~msinspect.analysis.job.cost.comm_costs`,
    ``bytes_by``, ``rank_matrix`` and :func:`~msinspect.analysis.rank.memory.memory_per_rank` count);
    with the ``analysis``, the activation estimate, and with ``device_memory`` (bytes) whether
    each rank fits (:func:`memory_fit`). None where the files hold no communication and no weight."""
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
        "missing": [f"{ranks_text(sorted(r for r in ranks if r is not None)) or 'the file read'}: {why}"
                    for why, ranks in _grouped(cost.missing).items()],
        "matrix_svg": matrix_svg(cost.matrix()) if cost.count else "",
        "assumption": MATRIX_ASSUMPTION,
        "memory": [{**first, "ranks": _ranks_text(ranks)} for first, ranks in rolled.memory.values()],
        "fit": memory_fit(analysis, ({**first, "rank": r} for first, ranks in rolled.memory.values() for r in ranks),
                          device_memory) if analysis is not None else None,
    }
