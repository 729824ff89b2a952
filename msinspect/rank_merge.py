"""Per-rank rows merged across the ranks that agree: rows equal in every shown column but the
rank are one row with the list of ranks, so a 64-rank job whose ranks agree reads like one rank.
The report's tables (:mod:`msinspect.report.tables`) and the terminal's
(:mod:`msinspect.cli.display`) merge here; JSON and CSV keep one row per rank."""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Sequence


def rank_number(value: Any) -> int | None:
    """A row's ``rank`` as an int; None for a row without one (a file outside ``rank_N`` folders:
    None, NaN from a DataFrame, or a folder's name)."""
    if value is None or isinstance(value, (str, bool)) or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def merge_ranks(records: Iterable[dict], columns: Sequence[str],
                text: Callable[[Any], str]) -> list[tuple[dict[str, str], list[int]]]:
    """One ``(cells, ranks)`` per distinct content of ``columns`` (each cell as ``text`` writes
    it), with the ranks of the records holding it (a record without a rank number adds none), in
    the order of first appearance."""
    out: dict[tuple, tuple[dict[str, str], list[int]]] = {}
    for record in records:
        cells = {c: text(record.get(c)) for c in columns}
        _, ranks = out.setdefault(tuple(cells.values()), (cells, []))
        rank = rank_number(record.get("rank"))
        if rank is not None:
            ranks.append(rank)
    return list(out.values())
