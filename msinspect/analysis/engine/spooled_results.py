"""The ranks of an analysis whose rows wait on disk (:mod:`msinspect.analysis.engine.spool`), held in
columns: a job of 10,000 ranks holds some 30 bytes a rank in the main process, not an object (24
more for a pipeline's: what its file says of its stage).

:class:`SpooledResults` holds, for each rank in task order, where its row lists are in the spool
(the index of the first; the others follow it, but for those put again later), which of the
tuples of the fields ranks that agree share is its (:data:`SHARED`: stage, status, counts,
signature ...; a handful for a job), the highest rank its file names, what its file says of its
pipeline stage (a few ints, for a pipeline's ranks only), and its plan entry, from
which its rank, label and files are made when asked for (:data:`PLANNED`; held apart for a rank
whose result says otherwise). Indexing it gives a :class:`SpooledResult`: a
:class:`~msinspect.analysis.rank.result.RankResult` to every reader, which reads and writes those
columns, and pickles as a plain ``RankResult`` with its rows.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import fields

from msinspect.analysis.rank import passes
from msinspect.analysis.job.pipeline_stages import StageFacts
from msinspect.analysis.rank.result import PassRows, RankResult
from msinspect.analysis.engine.spool import Spool
from msinspect.selection import reference_text

#: The fields of a spooled rank that are its own; the others but its rows are those of every
#: rank that agrees with it, held once (:data:`SHARED`).
OWN = ("rank", "label", "file", "reference", "highest_named", "stage_facts")
#: Those of :data:`OWN` the read plan gives (:func:`planned`).
PLANNED = ("rank", "label", "file", "reference")
SHARED = tuple(f.name for f in fields(RankResult) if f.name not in OWN and f.name != "rows")

_NO_RANK = -1  # a highest rank named of None, in its column
_FACTS = len(StageFacts._fields)  # a rank's stage facts: so many ints of its column
_NO_FACTS = -1  # stage facts of None: their step (never negative), in its column
_STEP = StageFacts._fields.index("step")
_SKIPPED = SHARED.index("skipped")


def planned(read) -> tuple:
    """What the plan says of a rank it reads (a :class:`~msinspect.ranks_read.RankRead`), as
    :data:`PLANNED`: ``(rank, label, file, reference file)``, the reference the file itself
    where the file is its own."""
    path = read.read_from
    reference = reference_text(read.source, path)  # text: no path made a rank
    return (read.rank, read.label, path, path if reference == path else reference)


class SpooledResults(Sequence):
    """``count`` ranks' results whose rows go in ``spool``, each put at its index as it arrives
    (:meth:`put`), read as a :class:`SpooledResult` (None before it arrived)."""

    def __init__(self, count: int, spool: Spool):
        self.spool = spool
        self.passes = passes.names()
        """The per-rank passes whose rows each rank puts, in order (those registered when made)."""
        self._first = array("Q", bytes(8 * count))  # the spool's index of each rank's first row list
        self._shared = array("I", bytes(4 * count))  # each rank's tuple of SHARED, in _heads
        self._highest = array("q", [_NO_RANK]) * count
        self._facts: array | None = None  # each rank's stage facts, _FACTS ints; made for a pipeline's first
        self._arrived = bytearray(count)
        self._reads: list = [None] * count  # the plan's entries (its objects: nothing made a rank)
        self._planned: dict[int, tuple] = {}  # PLANNED of the ranks without a plan entry that holds
        self._moved: dict[int, dict[int, int]] = {}  # rank -> its row lists put again: list -> index
        self._heads: list[tuple] = []
        self._head_at: dict[tuple, int] = {}

    def put(self, index: int, result: RankResult, read=None) -> None:
        """Rank ``index``'s result: its row lists into the spool (taken in where its worker put
        them, :attr:`~RankResult.rows_at`), the rest into the columns. ``read``: its plan entry,
        which makes its rank, label and files when the result holds the plan's."""
        own = tuple(getattr(result, name) for name in PLANNED)
        if read is not None and own == planned(read):
            self._reads[index] = read
        else:
            self._planned[index] = own
        self._highest[index] = _NO_RANK if result.highest_named is None else result.highest_named
        self._put_stage_facts(index, 0, result.stage_facts)
        spool = self.spool
        # the lists go in one after the other: the first's index says where each is (one number a
        # rank, not one a pass); a list put again later (SpooledResult's setter) is noted in _moved
        if result.rows_at is not None:  # put by the worker (spool.shelve): taken in where they are
            first = spool.adopt(*result.rows_at)
            # what they tell of the groups was told already (Gathered.arrive)
            result.rows_at, result.groups_seen, result.groups_unresolved = None, None, False
        else:
            first = spool.put(result.rows.get(self.passes[0], []))
            moved = {i: at for i, at in ((i, spool.put(result.rows.get(name, [])))
                                         for i, name in enumerate(self.passes) if i)
                     if at != first + i}
            if moved:
                self._moved[index] = moved
        self._first[index] = first
        self._shared[index] = self._head(tuple(tuple(result.skipped) if name == "skipped" else getattr(result, name)
                                               for name in SHARED))
        self._arrived[index] = 1

    def _head(self, values: tuple) -> int:
        """The index of ``values`` in :attr:`_heads`: ranks that agree share one; a tuple that
        cannot be a key (a failure's dict) is held for its rank alone."""
        try:
            found = self._head_at.get(values)
        except TypeError:
            found = None
        else:
            if found is None:
                found = self._head_at[values] = len(self._heads)
                self._heads.append(values)
            return found
        self._heads.append(values)
        return len(self._heads) - 1

    def __len__(self) -> int:
        return len(self._first)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = range(len(self))[index]  # IndexError past the end; negative from the end
        return SpooledResult(self, index) if self._arrived[index] else None

    # what a SpooledResult reads and writes

    def _rows(self, at: int, index: int) -> list:
        moved = self._moved.get(at)
        return self.spool.get(moved[index] if moved and index in moved else self._first[at] + index)

    def _put_rows(self, at: int, index: int, rows: list) -> None:
        self._moved.setdefault(at, {})[index] = self.spool.put(rows)

    def _own(self, at: int, index: int):
        if at in self._planned:
            return self._planned[at][index]
        read = self._reads[at]
        return (read.rank, read.label, read.read_from)[index] if index < 3 else planned(read)[index]

    def _put_own(self, at: int, index: int, value) -> None:
        values = list(self._planned[at] if at in self._planned else planned(self._reads[at]))
        values[index] = value
        self._planned[at], self._reads[at] = tuple(values), None

    def _highest_named(self, at: int, _index: int) -> int | None:
        value = self._highest[at]
        return None if value == _NO_RANK else value

    def _put_highest_named(self, at: int, _index: int, value: int | None) -> None:
        self._highest[at] = _NO_RANK if value is None else value

    def _stage_facts(self, at: int, _index: int) -> StageFacts | None:
        if self._facts is None or self._facts[at * _FACTS + _STEP] == _NO_FACTS:
            return None
        return StageFacts._make(self._facts[at * _FACTS:(at + 1) * _FACTS])

    def _put_stage_facts(self, at: int, _index: int, value: StageFacts | None) -> None:
        if value is None and self._facts is None:
            return
        if self._facts is None:  # 4 bytes an int: ranks, stages and their gcd are below 2**31
            self._facts = array("i", [_NO_FACTS if i == _STEP else 0 for i in range(_FACTS)]) * len(self)
        if value is None:
            self._facts[at * _FACTS + _STEP] = _NO_FACTS
        else:
            self._facts[at * _FACTS:(at + 1) * _FACTS] = array("i", value)

    def _field(self, at: int, index: int):
        value = self._heads[self._shared[at]][index]
        return list(value) if index == _SKIPPED else value  # held as a tuple, to be shared

    def _put_field(self, at: int, index: int, value) -> None:
        values = list(self._heads[self._shared[at]])
        values[index] = tuple(value) if index == _SKIPPED else value
        self._shared[at] = self._head(tuple(values))


class SpooledResult(PassRows):
    """Rank ``at`` of a :class:`SpooledResults`' columns, read as a
    :class:`~msinspect.analysis.rank.result.RankResult`: its row lists read back from the spool at
    each access (a new list each time), set by putting the new list in the spool; its other fields
    read from (and written to) the columns. Pickles as a plain ``RankResult``."""

    __slots__ = ("_of", "_at")

    def __init__(self, of: SpooledResults, at: int):
        self._of, self._at = of, at

    def __reduce__(self):
        return _whole, ({f.name: dict(self.rows) if f.name == "rows" else getattr(self, f.name)
                         for f in fields(RankResult)},)

    @property
    def rows(self) -> SpooledRows:
        """Each pass's rows, by name, read back from the spool at each access."""
        return SpooledRows(self._of, self._at)

    def __eq__(self, other) -> bool:
        return isinstance(other, SpooledResult) and other._of is self._of and other._at == self._at

    def __hash__(self) -> int:
        return hash((id(self._of), self._at))

    def __repr__(self) -> str:
        return f"SpooledResult(rank={self.rank!r}, label={self.label!r}, file={self.file!r})"

    @property
    def _spool(self) -> Spool:
        return self._of.spool


class SpooledRows(MutableMapping):
    """The row lists of rank ``at`` of a :class:`SpooledResults`, by pass: each read back from the
    spool when asked for (a new list each time), set by putting the new list in the spool."""

    __slots__ = ("_of", "_at")

    def __init__(self, of: SpooledResults, at: int):
        self._of, self._at = of, at

    def __getitem__(self, name: str) -> list:
        return self._of._rows(self._at, self._index(name))

    def __setitem__(self, name: str, rows: list) -> None:
        self._of._put_rows(self._at, self._index(name), rows)

    def __delitem__(self, name: str) -> None:
        raise TypeError("a spooled rank's rows of a pass can be replaced, not removed")

    def __iter__(self):
        return iter(self._of.passes)

    def __len__(self) -> int:
        return len(self._of.passes)

    def _index(self, name: str) -> int:
        try:
            return self._of.passes.index(name)
        except ValueError:
            raise KeyError(name) from None


def _whole(values: dict) -> RankResult:
    return RankResult(**values)


def _column(get: Callable, put: Callable, index: int, doc: str) -> property:
    """The property of a :class:`SpooledResult` reading its value with ``get(columns, at, index)``
    and writing it with ``put(columns, at, index, value)`` (methods of :class:`SpooledResults`)."""
    return property(lambda self: get(self._of, self._at, index),
                    lambda self, value: put(self._of, self._at, index, value), doc=doc)


for _index, _name in enumerate(PLANNED):
    setattr(SpooledResult, _name, _column(SpooledResults._own, SpooledResults._put_own, _index,
                                          f"The rank's {_name} (see :class:`RankResult`)."))
for _index, _name in enumerate(SHARED):
    setattr(SpooledResult, _name, _column(SpooledResults._field, SpooledResults._put_field, _index,
                                          f"The rank's {_name} (see :class:`RankResult`)."))
SpooledResult.stage_facts = _column(SpooledResults._stage_facts, SpooledResults._put_stage_facts, 0,
                                    "What the file says of the rank's pipeline stage (see :class:`RankResult`).")
SpooledResult.highest_named = _column(SpooledResults._highest_named, SpooledResults._put_highest_named, 0,
                                      "The highest rank the file's communication names (see :class:`RankResult`).")
