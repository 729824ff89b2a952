"""A per-process table of what was made of each text, of at most ``size`` entries: the one
eviction rule of the parser's tables (the fast reading's templates, shapes, skeletons and
per-text values). Past ``size`` entries it starts again: a dump repeats a few thousand texts, so a
full table is a sign of texts that do not repeat, and emptying it whole keeps every lookup a plain
dict lookup (no order to maintain, as an LRU would on each hit)."""
from __future__ import annotations

from typing import Hashable


class Bounded(dict):
    """A dict of at most ``size`` entries, written with :meth:`put`; a size of 0 keeps nothing
    (the reference reading's tables)."""

    __slots__ = ("size",)

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: Hashable, value):
        """``value``, kept under ``key`` (the table emptied first when full)."""
        if not self.size:
            return value
        if len(self) >= self.size:
            self.clear()
        self[key] = value
        return value
