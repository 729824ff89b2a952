"""Communication groups told by their shape, for a report of many ranks.

Each rank of a job runs its collectives over its own group: rank 0's tensor-parallel group is
``0-3``, rank 5's ``4-7``. The report's tables merge the ranks whose rows agree, so with every
group written out a job has one row per group and operator: thousands of rows at thousands of
ranks. From :data:`MANY` ranks read, a group that is an evenly spaced list holding the row's own
rank is written by its shape instead (``4 ranks, stride 1``, the same words for every rank whose
group has that shape), its hash name left out (one per group) and a Send / Receive peer written
relative to the rank (``+4``), so that the ranks that do the same thing are one row whatever
their size; ``msinspect comm`` and ``--json`` keep every rank's own group.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from msinspect.analysis.job.comm_totals import Total
from msinspect.ranks_text import ranks_text

if TYPE_CHECKING:
    import pandas as pd

#: From this many ranks read, groups are written by their shape.
MANY = 64


def shape_of(ranks) -> str | None:
    """``4 ranks, stride 1`` for an evenly spaced rank list of two ranks or more; None for any
    other list. One string object per shape, shared by the groups of that shape."""
    if not isinstance(ranks, (tuple, list)) or len(ranks) < 2:
        return None
    ordered = sorted(ranks)
    stride = ordered[1] - ordered[0]
    if stride <= 0 or any(b - a != stride for a, b in zip(ordered, ordered[1:])):
        return None
    key = (len(ordered), stride)
    found = _SHAPES.get(key)
    if found is None:
        found = _SHAPES[key] = f"{len(ordered)} ranks, stride {stride}"
    return found


#: (size, stride) -> its words (:func:`shape_of`): a job has a few shapes and thousands of groups.
_SHAPES: dict[tuple[int, int], str] = {}

#: How many small groups' facts :class:`GroupLists` keeps, the most recently asked for: the ranks
#: come in order and a small group is on the rows of its own ranks, so its facts are asked for
#: again soon or not for long; made again when asked for after that (a few ranks sorted).
KEPT_FACTS = 1024

#: A group of more ranks than this keeps its facts for good (the world group: 10,000 ranks to
#: sort and index).
BIG_GROUP = 64


class GroupLists:
    """Communication groups' rank lists, one tuple per content, with what the report asks of each
    (its shape, its text, each rank's place in it, its ranks sorted) worked out once. The world
    group of 10,000 ranks is on many rows of every rank: hashed, sorted or searched for each row,
    it made the report quadratic in the ranks. :meth:`one` looks a list up by its object, so a
    rank's rows that share one list hash it once; :meth:`forget_objects` lets the rank's go. The
    facts of the :data:`KEPT_FACTS` small groups asked for last are kept, those of a big group
    (:data:`BIG_GROUP`) all along: kept for every group, they grew with the ranks (some 600 bytes
    a group, 7,500 groups at 10,000 ranks)."""

    def __init__(self):
        self._values: dict[tuple, tuple] = {}
        self._objects: dict[int, tuple] = {}
        self._facts: OrderedDict[int, dict] = OrderedDict()
        self._big: dict[int, dict] = {}

    def forget_objects(self) -> None:
        """Forget the list objects seen so far (their contents stay known)."""
        self._objects = {}

    def one(self, ranks) -> tuple | None:
        """The tuple of ``ranks``' content (one object for each content); None for no list."""
        if not isinstance(ranks, (tuple, list)):
            return None
        found = self._objects.get(id(ranks))
        if found is None or found[0] is not ranks:
            whole = tuple(ranks)
            found = self._objects[id(ranks)] = (ranks, self._values.setdefault(whole, whole))
        return found[1]

    def _of(self, ranks: tuple) -> dict:
        """The facts of a tuple :meth:`one` gave (by its id: the tuple lives as long as this)."""
        if len(ranks) > BIG_GROUP:
            facts = self._big.get(id(ranks))
            if facts is None:
                facts = self._big[id(ranks)] = {}
            return facts
        facts = self._facts.get(id(ranks))
        if facts is None:
            facts = self._facts[id(ranks)] = {}
            if len(self._facts) > KEPT_FACTS:
                self._facts.popitem(last=False)
        else:
            self._facts.move_to_end(id(ranks))
        return facts

    def shape(self, ranks: tuple) -> str | None:
        """:func:`shape_of` of a tuple :meth:`one` gave."""
        facts = self._of(ranks)
        if "shape" not in facts:
            facts["shape"] = shape_of(ranks)
        return facts["shape"]

    def text(self, ranks: tuple) -> str:
        facts = self._of(ranks)
        if "text" not in facts:
            facts["text"] = ranks_text(ranks)
        return facts["text"]

    def position(self, ranks: tuple) -> dict[int, int]:
        """Each rank's index in the list sorted."""
        facts = self._of(ranks)
        if "position" not in facts:
            facts["ordered"] = sorted(ranks)
            position: dict[int, int] = {}
            for i, r in enumerate(facts["ordered"]):
                position.setdefault(r, i)
            facts["position"] = position
        return facts["position"]

    def ordered(self, ranks: tuple) -> list[int]:
        """The list sorted (:meth:`position` makes both)."""
        facts = self._of(ranks)
        if "ordered" not in facts:
            self.position(ranks)
        return facts["ordered"]


def shaped(row: dict, lists: GroupLists | None = None) -> dict:
    """One comm row's ``group_ranks``, ``group`` and ``peer`` as :func:`by_shape` writes them."""
    lists = lists or GroupLists()
    ranks, rank = lists.one(row["group_ranks"]), row["rank"]
    shape = lists.shape(ranks) if ranks is not None else None
    own = ranks is not None and rank in lists.position(ranks)
    group = f"each rank's own: {shape}" if shape and own else (lists.text(ranks) if ranks is not None else None)
    value = row["peer"]
    if value is None or value != value or rank is None or rank != rank:
        peer = None
    else:
        peer = f"{int(value) - int(rank):+d}"
    return {"group_ranks": group, "group": None if shape and own else row["group"], "peer": peer}


def by_shape(frame: pd.DataFrame) -> pd.DataFrame:
    """The comm rows with each rank's own evenly spaced group written as its shape (``group``
    left out where it was), and a peer as its offset from the rank (``+4``)."""
    lists = GroupLists()
    records = [shaped(r, lists) for r in frame.to_dict("records")]
    return frame.assign(**{c: [r[c] for r in records] for c in ("group_ranks", "group", "peer")})


class ShapeTotals:
    """:func:`shape_totals` fed one comm row at a time (``lists``: the rank lists seen): per key, a
    :class:`~msinspect.analysis.job.comm_totals.Total` (the sums every comm total makes) and the
    groups it holds."""

    def __init__(self, lists: GroupLists | None = None):
        self._out: dict[str, tuple[Total, dict]] = {}
        self.lists = lists or GroupLists()

    def add(self, row: dict) -> None:
        ranks = self.lists.one(row["group_ranks"])
        shape = self.lists.shape(ranks) if ranks is not None else None
        key = shape or (self.lists.text(ranks) if ranks is not None else "cannot tell")
        found = self._out.get(key)
        if found is None:
            found = self._out[key] = (Total(), {})
        if ranks is not None:
            found[1][id(ranks)] = None  # one object per content (GroupLists.one)
        found[0].add(row)

    def totals(self) -> list[dict]:
        return [{"shape": key, "groups": len(groups), "ops": t.operators, "ranks": t.ranks_text(),
                 "kinds": ", ".join(t.kinds), "wire": t.wire_bytes, "wire_missing": t.wire_missing,
                 "tensor": t.tensor_bytes, "tensor_missing": t.tensor_missing}
                for key, (t, groups) in self._out.items()]


def shape_totals(moving: pd.DataFrame) -> list[dict]:
    """Per group shape (and per group that has none): how many groups, the operators over them,
    the ranks, and the wire and tensor bytes per step summed over the ranks (None: one of them
    cannot be told)."""
    totals = ShapeTotals()
    for row in moving.to_dict("records"):
        totals.add(row)
    return totals.totals()
