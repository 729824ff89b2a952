"""A list of rank numbers held in little memory: a job of 10,000 ranks names lists of thousands
(a data-parallel group, the world, a pipeline stage), most of them strided."""
from __future__ import annotations


def compact(ranks: tuple[int, ...] | range) -> tuple[int, ...] | range:
    """``ranks`` as a range where it is one (ascending and strided: no number held for each
    rank), else the tuple itself."""
    if isinstance(ranks, range):
        return ranks
    if len(ranks) > 1 and ranks[1] > ranks[0]:
        strided = range(ranks[0], ranks[-1] + 1, ranks[1] - ranks[0])
        if len(strided) == len(ranks) and all(a == b for a, b in zip(ranks, strided)):
            return strided
    return ranks
