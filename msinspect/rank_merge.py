"""Per-rank rows merged across the ranks that agree: rows equal in every shown column but the
rank are one row with the list of ranks, so a 64-rank job whose ranks agree reads like one rank.
The report's tables (:mod:`msinspect.report.tables`) and the terminal's
(:mod:`msinspect.cli.display`) merge here; JSON and CSV keep one row per rank."""
from __future__ import annotations

import math
from array import array
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


class Ranks:
    """Rank numbers as they come, kept as runs of consecutive numbers (``start, stop`` pairs in a
    compact array): the ranks come in order, so the merged row that every rank of a 10,000-rank job
    shares is one run, not 10,000 numbers (a rank apart from the one before starts a run of its
    own: two numbers). A rank that is no number (a file read outside ``rank_N`` folders) is kept
    apart, in :attr:`others`; iterating gives the numbers, then those. :meth:`listed` gives equal
    lists one shared list."""

    _shared: dict[bytes, list[int]]

    def __init__(self):
        self._runs = array("q")
        self.others: list = []

    def add(self, rank) -> None:
        number = rank_number(rank)
        if number is None:
            self.others.append(rank)
            return
        runs = self._runs
        if runs and runs[-1] == number:
            runs[-1] = number + 1
        else:
            runs.append(number)
            runs.append(number + 1)

    @property
    def numbers(self) -> array:
        """The numbers in the order they came."""
        out, runs = array("q"), self._runs
        for i in range(0, len(runs), 2):
            out.extend(range(runs[i], runs[i + 1]))
        return out

    def __iter__(self):
        runs = self._runs
        for i in range(0, len(runs), 2):
            yield from range(runs[i], runs[i + 1])
        yield from self.others

    def __len__(self) -> int:
        runs = self._runs
        return sum(runs[i + 1] - runs[i] for i in range(0, len(runs), 2)) + len(self.others)

    def listed(self, shared: dict) -> list[int]:
        key = self._runs.tobytes()  # one way only to cut a list into runs: equal lists, equal keys
        if key not in shared:
            shared[key] = self.numbers.tolist()
        return shared[key]
