"""Communication totals: comm rows summed per kind or per group, one definition for every view.

``msinspect comm --by kind/group`` (:func:`~msinspect.analysis.rank.comm.comm_totals`), the count
``msinspect summary`` prints per rank (:mod:`msinspect.analysis.engine.tally`) and the report's
communication section and glance (:mod:`msinspect.report.rollup`) all sum comm rows with
:class:`CommTotals`, fed one rank's rows at a time: what it keeps is one :class:`Total` per key,
never the rows, so a report of 10,000 ranks folds them as they come.

A sum of bytes is "cannot tell" (None) when any of its operators' bytes cannot be told; the
operators whose wire bytes cannot be told are counted, and, when asked, why
(:func:`unknown_reason`).
"""
from __future__ import annotations

import math
from collections import Counter
from typing import TYPE_CHECKING, Iterable

from msinspect.analysis.rank.context import shapes_are_global
from msinspect.mindspore.vocabulary import KINDS
from msinspect.rank_merge import rank_number
from msinspect.ranks_text import ranks_text
from msinspect.schema import is_missing

if TYPE_CHECKING:
    import pandas as pd

#: What ``comm --by`` groups by: a row's kind, or its group's rank list with whether it moves data.
BY = ("kind", "group")


def unknown_reason(row: dict) -> str:
    """Why a comm row's wire bytes cannot be told, in words."""
    from msinspect.stages import stage_of

    if is_missing(row["tensor_bytes"]):
        shape = row.get("shape")
        if isinstance(shape, (tuple, list)) and any(type(d) is int and d < 0 for d in shape):
            return (f"its tensor at the rank ({', '.join(map(str, shape))}) has a dynamic dimension (-1), "
                    "whose extent is known at run time only")
        return (f"the file shows global shapes ({stage_of(row['file'])}), not the tensor at the rank"
                if shapes_are_global(str(row["file"])) else "the tensor at the rank cannot be told")
    if is_missing(row.get("group_size")):
        return "its group's size cannot be told"
    return "no ring formula is known for it"


def reason_of(row: dict) -> str | None:
    """:func:`unknown_reason` of a row whose wire bytes cannot be told; None for one whose can."""
    return unknown_reason(row) if is_missing(row["wire_bytes"]) else None


def why_text(reasons: Counter) -> str:
    """``8 AllGather: ...; 2 Send: ...`` from ``{(op, reason): count}``."""
    return "; ".join(f"{n} {op}: {reason}" for (op, reason), n in reasons.items())


def moves(row: dict) -> bool:
    """Whether a comm row's operator moves data (``moves_data``; not told: no)."""
    value = row["moves_data"]
    return bool(value) if value is not None else False


def group_of(row: dict) -> tuple | None:
    """A comm row's group as a tuple of its ranks; None when it has no rank list."""
    ranks = row["group_ranks"]
    return tuple(ranks) if isinstance(ranks, (tuple, list)) else None


class RankSet:
    """Ranks, each once: rank numbers as bits of a byte array from the lowest one's byte (10,000
    ranks in 1.25 kB, where a set of their ints takes some 500 kB, and a report of many ranks
    keeps one per kind and per group shape), anything else (a folder's name, for a file outside
    ``rank_N`` folders) in a set."""

    __slots__ = ("_bits", "_start", "_others", "_last")

    def __init__(self):
        self._last = None
        """The rank added last (a rank's rows come one after another: added once)."""
        self._bits = bytearray()
        self._start = 0
        """The rank number of the first bit, a multiple of 8."""
        self._others: set = set()

    def add(self, rank) -> None:
        if rank is self._last and rank is not None:
            return
        self._last = rank
        number = rank_number(rank)
        if number is None or number < 0:
            self._others.add(rank)
            return
        at = (number >> 3) - (self._start >> 3)
        if not self._bits:
            self._start, at = number & ~7, 0
            self._bits.append(0)
        elif at < 0:
            self._bits[:0] = bytes(-at)
            self._start, at = number & ~7, 0
        elif at >= len(self._bits):
            self._bits.extend(bytes(at + 1 - len(self._bits)))
        self._bits[at] |= 1 << (number & 7)

    def _as_int(self) -> int:
        return int.from_bytes(self._bits, "little") << self._start

    def __ior__(self, other: RankSet) -> RankSet:
        self._others |= other._others
        if other._bits:
            merged = self._as_int() | other._as_int() if self._bits else other._as_int()
            self._start = min(self._start, other._start) if self._bits else other._start
            merged >>= self._start
            self._bits = bytearray(merged.to_bytes((merged.bit_length() + 7) // 8, "little"))
        return self

    def numbers(self) -> list[int]:
        """The rank numbers, ascending (those kept as bits, then any number among the others)."""
        out, start = [], self._start
        for i, byte in enumerate(self._bits):
            if byte:
                out.extend(start + 8 * i + bit for bit in range(8) if byte >> bit & 1)
        return out + [n for n in map(rank_number, self._others) if n is not None]

    def __len__(self) -> int:
        return int.from_bytes(self._bits, "little").bit_count() + len(self._others)


class Total:
    """Comm rows of one key summed: operators, the ranks they are on, their op types, kinds and
    group names (each in the order first seen), and their tensor and wire bytes (what is told,
    and how many operators' bytes are not)."""

    __slots__ = ("operators", "ranks", "ops", "kinds", "names", "tensor", "tensor_missing", "wire",
                 "wire_missing", "why")

    def __init__(self):
        self.operators = 0
        self.ranks = RankSet()
        """Every rank told (a number, or a folder's name for a file outside rank_N folders)."""
        self.ops: dict = {}
        self.kinds: dict = {}
        self.names: dict = {}
        self.tensor = 0
        """The tensor bytes told, summed (see :attr:`tensor_bytes`)."""
        self.tensor_missing = 0
        self.wire = 0
        """The wire bytes told, summed (see :attr:`wire_bytes`)."""
        self.wire_missing = 0
        self.why: Counter = Counter()
        """``{(op, reason): operators}`` of the wire bytes not told, when the fold was asked why."""

    def add(self, row: dict, reason: str | None = None) -> None:
        self.operators += 1
        rank = row.get("rank")
        if not is_missing(rank):
            self.ranks.add(rank)
        self.ops[row["op"]] = None
        self.kinds[row["kind"]] = None
        name = row.get("group")
        if not is_missing(name):
            self.names[str(name)] = None
        value = row["tensor_bytes"]
        if is_missing(value):
            self.tensor_missing += 1
        else:
            self.tensor += value
        value = row["wire_bytes"]
        if is_missing(value):
            self.wire_missing += 1
        else:
            self.wire += value
        if reason is not None:
            self.why[(row["op"], reason)] += 1

    def merge(self, other: Total) -> None:
        """Add ``other``'s rows (those of rows after this one's)."""
        self.operators += other.operators
        self.ranks |= other.ranks
        for mine, theirs in ((self.ops, other.ops), (self.kinds, other.kinds), (self.names, other.names)):
            mine.update(theirs)
        self.tensor += other.tensor
        self.tensor_missing += other.tensor_missing
        self.wire += other.wire
        self.wire_missing += other.wire_missing
        self.why.update(other.why)

    @property
    def tensor_bytes(self) -> int | None:
        """The tensor bytes summed; None ("cannot tell") when any operator's cannot be told."""
        return None if self.tensor_missing else int(self.tensor)

    @property
    def wire_bytes(self) -> int | None:
        """The wire bytes summed; None ("cannot tell") when any operator's cannot be told."""
        return None if self.wire_missing else int(self.wire)

    def ranks_text(self) -> str:
        """The numbered ranks as ``0-3, 6``."""
        return ranks_text(self.ranks.numbers())


class CommTotals:
    """Comm rows summed per key (``by``: ``kind``, or ``group``: the group's rank list with
    whether the operator moves data) and over all (:attr:`whole`), fed one rank's rows at a time
    (:meth:`add`). ``why``: also count why wire bytes cannot be told (:func:`unknown_reason`)."""

    def __init__(self, by: str = "kind", why: bool = False):
        if by not in BY:
            raise ValueError(f"by must be one of {', '.join(BY)}, not {by!r}")
        self.by = by
        self._why = why
        self.whole = Total()
        self.totals: dict = {}
        """Key -> :class:`Total`, in the order the keys were first seen."""

    def key(self, row: dict):
        return row["kind"] if self.by == "kind" else (group_of(row), moves(row))

    def add(self, rows: Iterable[dict]) -> CommTotals:
        """Fold ``rows`` (one rank's, or any rows after those folded so far); returns self."""
        for row in rows:
            reason = reason_of(row) if self._why else None
            self.whole.add(row, reason)
            key = self.key(row)
            total = self.totals.get(key)
            if total is None:
                total = self.totals[key] = Total()
            total.add(row, reason)
        return self

    def merge(self, other: CommTotals) -> None:
        """Add the totals of ``other`` (a fold by the same key of rows after this one's)."""
        self.whole.merge(other.whole)
        for key, total in other.totals.items():
            mine = self.totals.get(key)
            if mine is None:
                mine = self.totals[key] = Total()
            mine.merge(total)

    def items(self) -> list[tuple]:
        """``(key, Total)``: kinds in :data:`~msinspect.mindspore.vocabulary.KINDS` order, groups
        in the order first seen."""
        if self.by == "group":
            return list(self.totals.items())
        order = {k: i for i, k in enumerate(KINDS)}
        return sorted(self.totals.items(), key=lambda item: order.get(item[0], len(order)))

    def frame(self) -> pd.DataFrame:
        """The totals as ``msinspect comm --by`` shows them: the key columns (``kind``, or
        ``group_ranks`` (NaN: none) and ``moves_data``), then ``operators``, ``rank_count``,
        ``ops`` (sorted), ``tensor_bytes`` and ``wire_bytes`` (NaN: cannot tell) and
        ``unknown_bytes`` (operators whose wire bytes cannot be told)."""
        import pandas as pd

        keys = ["kind"] if self.by == "kind" else ["group_ranks", "moves_data"]
        columns = keys + ["operators", "rank_count", "ops", "tensor_bytes", "wire_bytes", "unknown_bytes"]
        items = self.items()
        if not items:
            return pd.DataFrame(columns=columns)
        if self.by == "kind":
            data = {"kind": [key for key, _ in items]}
        else:
            data = {"group_ranks": [math.nan if key[0] is None else key[0] for key, _ in items],
                    "moves_data": [key[1] for key, _ in items]}
        data.update(operators=[t.operators for _, t in items], rank_count=[len(t.ranks) for _, t in items],
                    ops=[tuple(sorted(t.ops)) for _, t in items],
                    # a column with a None in it is float64, NaN for None, as a DataFrame's sum gives
                    tensor_bytes=pd.Series([t.tensor_bytes for _, t in items]).astype(object),
                    wire_bytes=pd.Series([t.wire_bytes for _, t in items]).astype(object),
                    unknown_bytes=[t.wire_missing for _, t in items])
        return pd.DataFrame(data, columns=columns)
