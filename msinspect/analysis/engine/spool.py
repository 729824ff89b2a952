"""Analysed ranks whose rows wait on disk: what keeps the main process' memory flat over many ranks.

An analysed rank (:class:`~msinspect.analysis.rank.result.RankResult`) is mostly its rows: one per
operator, per strategy, per communication operator, per weight, some 0.5 MB of Python objects for
a 0.4 MB file. Held for every rank of a job, they would make the main process grow by that
much per rank (docs/performance.md). From :data:`SPOOL_RANKS` ranks read,
:func:`~msinspect.analysis.job.collect.analyse` has each rank's rows written to a :class:`Spool`, each
list its own compressed pickle: by the worker that analysed the rank, in its own file of the
spool's folder (:func:`shelve`; the main process takes in where they are, never the rows), or,
on a Dask cluster, by the main process as the rank arrives, in one unnamed temporary file. The
files go when the analysis does, or the process ends; the main process keeps the rest of the rank
in memory, in columns (:mod:`msinspect.analysis.engine.spooled_results`): its file, status, counts, signature.
The rank is a :class:`~msinspect.analysis.engine.spooled_results.SpooledResult`: the same
:class:`~msinspect.analysis.rank.result.RankResult` to every reader, whose row lists are read back from
the spool each time they are asked for, so the tables (``Analysis.strategies()`` ...), the
summary and the rank groups read one rank's rows at a time and let them go.

Each access reads the rows again, a new list: a caller using them twice keeps them in a name.
Assigning a row list stores the new one in the spool. A spooled rank pickles (to a worker, to
a cache) as a plain ``RankResult`` with its rows.

A rank read by what differs from another (:mod:`msinspect.analysis.engine.alike`) has most of its rows
from that rank: the same rows but for its rank and file (:class:`Derived`). Its worker put that
rank's lists in its file just before; it puts the follower's as a :class:`Delta` (where the base
list is, the fields set on each row, the rows made anew), not the rows: pickling and compressing
some 1,000 rows a rank was an eighth of a follower's time. Read back, a delta is its base list
(decoded once, kept while the next ranks read it) with the fields and rows put in: the same rows.
"""
from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import uuid
import weakref
import zlib
from array import array
from collections import OrderedDict
from dataclasses import dataclass

#: From this many ranks read, each rank's rows are spooled (``analyse(spool=...)`` says otherwise).
SPOOL_RANKS = 64

_PROTOCOL = 5
_LEVEL = 1  # zlib's fastest: a rank's rows pickle to some 100 kB, compressed to a fifth

#: How many base lists of deltas a spool keeps decoded (:meth:`Spool.get`): each of the row
#: lists of the exemplars of the workers, read in turn.
_BASES_KEPT = 8


class Derived:
    """Rows made from another rank's list ``base``: each of its rows with ``fields`` set (the
    rank, its file), but those at the indexes of ``made``, made anew. Made only when read: a
    worker shelving it puts a :class:`Delta` in the spool (:func:`shelve`) and counts it by its
    columns (:func:`column`), never making its rows; what leaves the worker otherwise is a list
    (:func:`as_list`; pickled, to a cache or a Dask client, it is one)."""

    __slots__ = ("base", "fields", "made")

    def __init__(self, base: list[dict], fields: dict, made: dict[int, dict]):
        self.base, self.fields, self.made = base, fields, made

    def __len__(self) -> int:
        return len(self.base)

    def __iter__(self):
        return _rows_of(self.base, self.fields, self.made)

    def __reduce__(self):
        return list, (list(self),)

    def column(self, name: str) -> list:
        """Each row's value of ``name``, without making the rows."""
        made = self.made
        if name in self.fields:
            value = self.fields[name]
            return [made[i][name] if i in made else value for i in range(len(self.base))]
        return [made[i][name] if i in made else row[name] for i, row in enumerate(self.base)]


def _rows_of(base: list[dict], fields: dict, made: dict[int, dict]):
    """Each row of ``base`` with ``fields`` set, those at ``made``'s indexes replaced by its rows."""
    return (made.get(i) or {**row, **fields} for i, row in enumerate(base))


def derived(base: list[dict], fields: dict, made: dict[int, dict]) -> Derived:
    """The :class:`Derived` rows of ``base`` with ``fields`` set, those at ``made``'s indexes
    replaced by its rows."""
    return Derived(base, fields, made)


def as_list(rows) -> list[dict]:
    """``rows`` as a list: a :class:`Derived` one's rows made."""
    return list(rows) if isinstance(rows, Derived) else rows


def column(rows, name: str) -> list:
    """Each row's value of ``name`` (a :class:`Derived` list's without making its rows)."""
    return rows.column(name) if isinstance(rows, Derived) else [row[name] for row in rows]


@dataclass(frozen=True)
class Delta:
    """A :class:`Derived` list as a worker's file holds it: its base list at ``start:end`` of the
    same file, the ``fields`` set on each of its rows and the rows ``made`` anew, by index."""

    start: int
    end: int
    fields: dict
    made: dict

    def rows(self, base: list[dict]) -> list[dict]:
        """The rows it stands for, given its base list (read back): those :func:`derived` made."""
        return list(_rows_of(base, self.fields, self.made))


#: The largest offset a spool's index holds in 4 bytes (:meth:`Spool._add`).
_OFFSET_MAX = 2 ** 32 - 1


class Spool:
    """Values in zlib-compressed pickles, read back by the index each was given: those this
    process puts (:meth:`put`: one unnamed temporary file in ``$TMPDIR``), and those the workers
    put in their own files of the spool's folder (:func:`shelve`), taken in by where they are
    (:meth:`adopt`; each file unlinked as it is first opened, so that it goes with the last
    descriptor)."""

    def __init__(self):
        self._file = tempfile.TemporaryFile(prefix="msinspect-rows-")
        self._size = 0
        self._readers: list[int] = [self._file.fileno()]  # descriptors: this process' file, then workers'
        self._opened: dict[str, int] = {}  # a worker's file -> its reader
        # offsets 4 bytes each until a file passes 4 GiB (_add): 8 bytes a value fewer
        self._reader, self._start, self._end = array("H"), array("I"), array("I")
        self._folder: str | None = None
        self._bases: OrderedDict[tuple[int, int], list] = OrderedDict()  # deltas' bases, decoded
        # the workers' files stay open until the spool goes (they are unlinked already)
        self._release = weakref.finalize(self, _close_all, self._readers)

    def put(self, value) -> int:
        """Append ``value``; its index."""
        blob = _blob(value)
        self._file.write(blob)
        self._add(0, self._size, self._size + len(blob))
        self._size += len(blob)
        return len(self._end) - 1

    def _add(self, reader: int, start: int, end: int) -> None:
        if end > _OFFSET_MAX and self._end.typecode == "I":  # a file past 4 GiB: 8-byte offsets
            self._start, self._end = array("Q", self._start), array("Q", self._end)
        self._reader.append(reader)
        self._start.append(start)
        self._end.append(end)

    def folder(self) -> str:
        """Where the workers put their files (:func:`shelve`), made when first asked for."""
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="msinspect-rows-")
        return self._folder

    def adopt(self, path: str, spans: list[tuple[int, int]]) -> int:
        """Take in the values a worker put in ``path`` (one of :meth:`folder`) at ``spans``, in
        order; the index of the first (the others follow it)."""
        reader = self._opened.get(path)
        if reader is None:
            fd = os.open(path, os.O_RDONLY)
            os.unlink(path)
            reader = self._opened[path] = len(self._readers)
            self._readers.append(fd)
        first = len(self._end)
        for start, end in spans:
            self._add(reader, start, end)
        return first

    def get(self, index: int):
        """The value at ``index``, read back (a new copy each time)."""
        reader = self._reader[index]
        if reader == 0:
            self._file.flush()
        value = self._read(reader, self._start[index], self._end[index])
        if isinstance(value, Delta):
            return value.rows(self._base(reader, value.start, value.end))
        return value

    def _read(self, reader: int, start: int, end: int):
        return pickle.loads(zlib.decompress(os.pread(self._readers[reader], end - start, start)))

    def _base(self, reader: int, start: int, end: int) -> list:
        """A delta's base list (read only: :meth:`Delta.rows` copies its rows), kept decoded for
        the ranks after it."""
        key = (reader, start)
        found = self._bases.get(key)
        if found is None:
            found = self._bases[key] = self._read(reader, start, end)
            if len(self._bases) > _BASES_KEPT:
                self._bases.popitem(last=False)
        else:
            self._bases.move_to_end(key)
        return found

    @property
    def workers(self) -> int:
        """How many workers' files it has taken values in from (:meth:`adopt`)."""
        return len(self._opened)

    @property
    def size(self) -> int:
        """Bytes held."""
        return sum(self._end) - sum(self._start)

    def seal(self) -> None:
        """No worker puts anything more (the run has ended): the folder goes, with any file of a
        worker whose results never came (it died)."""
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def close(self) -> None:
        self.seal()
        self._bases.clear()
        self._file.close()
        self._release()


def _close_all(readers: list[int]) -> None:
    for fd in readers[1:]:
        os.close(fd)
    readers[1:] = []


def _blob(value) -> bytes:
    return zlib.compress(pickle.dumps(value, protocol=_PROTOCOL), _LEVEL)


#: This process' file in a spool's folder (:func:`shelve`): ``(folder, file)``.
_SHELF: tuple[str, object] | None = None
#: The lists put last in that file by a rank with no :class:`Derived` list (the exemplar the
#: next ranks' rows derive from): ``id -> (the list, its span)``.
_BASES: dict[int, tuple[list, tuple[int, int]]] = {}


def shelve(folder: str, values: list) -> tuple[str, list[tuple[int, int]]]:
    """In a worker: ``values`` (a rank's row lists) put in this process' own file of ``folder``
    (a :meth:`Spool.folder`), flushed; where they are, for :meth:`Spool.adopt`. The rows go from
    the worker to the disk, not through the main process, which takes in their place only. A
    :class:`Derived` list whose base this file holds goes in as a :class:`Delta`."""
    global _SHELF, _BASES
    if _SHELF is None or _SHELF[0] != folder:
        close_shelf()
        name = os.path.join(folder, f"rows-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        _SHELF = (folder, open(name, "ab"))
    file = _SHELF[1]
    spans = []
    for value in values:
        base = _BASES.get(id(value.base)) if isinstance(value, Derived) else None
        if base is not None and base[0] is value.base:
            value = Delta(*base[1], value.fields, value.made)
        blob = _blob(value)
        start = file.tell()
        file.write(blob)
        spans.append((start, start + len(blob)))
    file.flush()
    if not any(isinstance(value, Derived) for value in values):
        _BASES = {id(value): (value, span) for value, span in zip(values, spans)}
    return file.name, spans


def close_shelf() -> None:
    """Close this process' file of a spool's folder (the run it was for has ended)."""
    global _SHELF, _BASES
    if _SHELF is not None:
        _SHELF[1].close()
        _SHELF = None
    _BASES = {}
