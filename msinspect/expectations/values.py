"""Checks of the values a spec entry (or an assertion helper's argument) may hold: every kind
validates its keys with these, so a bad value reads the same whatever kind it is in."""
from __future__ import annotations

from typing import Any

#: The most ranks a spec may name (a bound against typos such as ``ranks = 100000000``).
MAX_RANKS = 100_000


def is_int(value: Any) -> bool:
    """An integer that is not a bool (``true`` is not a number in a spec)."""
    return isinstance(value, int) and not isinstance(value, bool)


def shape_list(value: Any, what: str, *, least: int = 1) -> tuple:
    """A list of lists of integers ``>= least`` as a tuple of tuples; ValueError otherwise."""
    if not (isinstance(value, list) and all(isinstance(v, list) and all(is_int(d) and d >= least for d in v)
                                            for v in value)):
        kind = "positive" if least >= 1 else "non-negative"
        raise ValueError(f"{what} must be a list of lists of {kind} integers, like [[2, 4], [4, 1]]")
    return tuple(tuple(v) for v in value)


def text(raw: dict, key: str) -> None:
    """ValueError unless ``raw[key]``, when present, is a string."""
    if key in raw and not isinstance(raw[key], str):
        raise ValueError(f"{key} must be a string, not {type(raw[key]).__name__} {raw[key]!r}")


def rank_list(value: Any, what: str = "ranks") -> tuple[int, ...]:
    """A non-empty list of rank numbers as a tuple; ValueError otherwise."""
    if not (isinstance(value, list) and value and all(is_int(r) and 0 <= r < MAX_RANKS for r in value)):
        raise ValueError(f"{what} must be a non-empty list of rank numbers (integers 0 .. {MAX_RANKS - 1})")
    return tuple(value)
