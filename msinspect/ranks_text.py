"""How a set of rank numbers reads in every message, table and report: ``0-3, 6``."""
from __future__ import annotations

from typing import Iterable


def ranks_text(ranks: Iterable[int], *, word: bool = False) -> str:
    """``0-3, 6`` for ranks 0, 1, 2, 3 and 6: ascending, each rank once, every run of consecutive
    ranks as ``first-last`` (``0-1`` for two); "" for none. ``word``: ``ranks 0-3, 6``, ``rank 6``
    for a single rank, ``no rank`` for none."""
    numbers = sorted({int(r) for r in ranks})
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    text = ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in runs)
    if not word:
        return text
    return "no rank" if not numbers else f"{'rank' if len(numbers) == 1 else 'ranks'} {text}"
