"""Small display helpers shared by the commands that print tables (no analysis here)."""
from __future__ import annotations


def short_scope(scope, parts: int = 2) -> str:
    """The last ``parts`` parts of a scope, for narrow displays: ``.../layer1-Dense``."""
    if not isinstance(scope, str) or scope.count("/") < parts:
        return scope if isinstance(scope, str) else ""
    return ".../" + "/".join(scope.split("/")[-parts:])


def rank_span(ranks) -> str:
    """``0-3`` for ranks (0, 1, 2, 3), ``0, 4`` for (0, 4); ``?`` when unknown."""
    if not ranks:
        return "?"
    ranks = list(ranks)
    if len(ranks) > 1 and ranks == list(range(ranks[0], ranks[0] + len(ranks))):
        return f"{ranks[0]}-{ranks[-1]}"
    return ", ".join(map(str, ranks))
