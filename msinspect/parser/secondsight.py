"""A per-process table of what was made of each text, which keeps a text's value from its second
sight on."""
from __future__ import annotations

from typing import Hashable

from msinspect.parser.bounded import Bounded


class SecondSight:
    """What was made of each text, kept per process from the text's second sight on: a text seen
    once costs its hash, not its copy (in a dump most comment blocks and attribute texts are one
    node's own, while a worker's next rank repeats them all). Past ``size`` texts kept, or four
    times as many seen, it starts again; a size of 0 keeps nothing."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept = Bounded(size)
        self.seen: set[int] = set()

    def get(self, text: Hashable):
        return self.kept.get(text)

    def keep(self, text: Hashable, value):
        """``value``, kept for ``text`` (a text, or a tuple of texts) if ``text`` was seen before."""
        if not self.size:
            return value
        sight = hash(text)  # a str keeps its hash: the lookup before this one computed it
        if sight in self.seen:
            self.kept.put(text, value)
        else:
            if len(self.seen) >= 4 * self.size:
                self.seen.clear()
            self.seen.add(sight)
        return value
