"""Analysed ranks whose rows wait on disk: what keeps the main process' memory flat over many ranks.

An analysed rank (:class:`~msinspect.analysis.collect.RankResult`) is mostly its rows: one per
operator, per strategy, per communication operator, per weight, some 0.5 MB of Python objects for
a 0.4 MB file. Held for every rank of a job, they made the main process grow by that much per
rank (1.5 GB at 2,048 ranks of a small transformer). From :data:`SPOOL_RANKS` ranks read,
:func:`~msinspect.analysis.collect.analyse` writes each rank's rows to a :class:`Spool` as the rank
arrives, each list its own compressed pickle in one unnamed temporary file (gone when the
analysis is, or the process ends), and keeps the rest of the rank in memory: its file, status,
counts, signature. The rank is a :class:`SpooledResult`: the same
:class:`~msinspect.analysis.collect.RankResult` to every reader, whose row lists are read back from
the spool each time they are asked for, so the tables (``Analysis.strategies()`` ...), the
summary and the rank groups read one rank's rows at a time and let them go.

Each access reads the rows again, a new list: a caller using them twice keeps them in a name.
Assigning a row list stores the new one in the spool. A spooled rank pickles (to a worker, to
a cache) as a plain ``RankResult`` with its rows.
"""
from __future__ import annotations

import os
import pickle
import tempfile
import zlib
from array import array

#: From this many ranks read, each rank's rows are spooled (``analyse(spool=...)`` says otherwise).
SPOOL_RANKS = 64

#: The row lists of a :class:`~msinspect.analysis.collect.RankResult` that are spooled.
ROWS = ("strategies", "comm", "params", "ops", "held")

_PROTOCOL = 5
_LEVEL = 1  # zlib's fastest: a rank's rows pickle to some 100 kB, compressed to a fifth


class Spool:
    """Values appended to an unnamed temporary file (``$TMPDIR``), each a zlib-compressed pickle,
    read back by the index :meth:`put` gave."""

    def __init__(self):
        self._file = tempfile.TemporaryFile(prefix="msinspect-rows-")
        self._ends = array("Q")

    def put(self, value) -> int:
        """Append ``value``; its index."""
        blob = zlib.compress(pickle.dumps(value, protocol=_PROTOCOL), _LEVEL)
        self._file.write(blob)
        self._ends.append((self._ends[-1] if self._ends else 0) + len(blob))
        return len(self._ends) - 1

    def get(self, index: int):
        """The value put at ``index``, read back (a new copy each time)."""
        start = self._ends[index - 1] if index else 0
        self._file.flush()
        blob = os.pread(self._file.fileno(), self._ends[index] - start, start)
        return pickle.loads(zlib.decompress(blob))

    @property
    def size(self) -> int:
        """Bytes written."""
        return self._ends[-1] if self._ends else 0

    def close(self) -> None:
        self._file.close()


def spooled(result, spool: Spool):
    """``result`` (a :class:`~msinspect.analysis.collect.RankResult`) as a :class:`SpooledResult`:
    its row lists put in ``spool``, the rest kept."""
    from msinspect.analysis.collect import SpooledResult

    head = SpooledResult.__new__(SpooledResult)
    for name, value in result.__dict__.items():
        if name not in ROWS:
            object.__setattr__(head, name, value)
    object.__setattr__(head, "_spool", spool)
    # the lists go in one after the other: the first's index says where each is (one int a rank,
    # not a list of five); a list put again later (row_list's setter) is noted in ``_moved``
    first = spool.put(getattr(result, ROWS[0]))
    moved = {index: at for index, at in ((i, spool.put(getattr(result, name))) for i, name in enumerate(ROWS) if i)
             if at != first + index}
    object.__setattr__(head, "_first", first)
    object.__setattr__(head, "_moved", moved or None)
    return head


def row_list(index: int, name: str) -> property:
    """The property of a :class:`SpooledResult` reading (and writing) its row list ``name``."""
    def get(self):
        moved = self._moved
        return self._spool.get(moved[index] if moved and index in moved else self._first + index)

    def put(self, rows):
        object.__setattr__(self, "_moved", {**(self._moved or {}), index: self._spool.put(rows)})

    return property(get, put, doc=f"The rank's {name} rows, read back from the spool (a new list each time).")
