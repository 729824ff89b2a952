"""A rank's signature: its graph less what names the rank, one digest per part, made in the worker
that analysed the rank from its rows (:mod:`msinspect.analysis.job.collect`), compared by the rank
groups (:mod:`msinspect.analysis.job.rank_groups`, which say what the parts are)."""
from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from typing import Protocol

from msinspect.model import unnumbered

#: The parts of a signature, in the order differences are told.
PARTS = ("weights", "ops", "strategies", "shapes", "comm")


class RankRows(Protocol):
    """The rows of an analysed rank that a signature is made of (a
    :class:`~msinspect.analysis.job.collect.RankResult`)."""

    strategies: list[dict]
    comm: list[dict]
    params: list[dict]
    ops: list[dict]


@dataclass(frozen=True)
class Signature:
    """A rank's graph less its rank-specific values: one digest per part of :data:`PARTS`."""

    parts: tuple[tuple[str, str], ...]
    """``(part, digest)`` for each of :data:`PARTS`."""
    holds: str = ""
    """Digest of the names of the weights the file holds: ranks of one pipeline stage share it."""

    @property
    def digest(self) -> str:
        return hashlib.sha256(repr(self.parts).encode()).hexdigest()[:16]

    def differing(self, other: Signature) -> list[str]:
        """The parts whose digests differ."""
        mine, theirs = dict(self.parts), dict(other.parts)
        return [p for p in PARTS if mine.get(p) != theirs.get(p)]


def items_of(rows: RankRows, part: str) -> Counter:
    """The multiset a part of the signature digests, from the rank's rows."""
    if part == "weights":
        from msinspect.analysis.rank.params import weights_of

        return Counter(frozenset(row["param"] for row in weights_of(rows.params)))
    if part == "ops":
        return Counter(row["op"] for row in rows.ops)
    if part == "strategies":
        return Counter((row["op"], row["in_strategy"], row["out_strategy"], row["set_by"])
                       for row in rows.strategies)
    if part == "shapes":
        return Counter((row["op"], row["rank_inputs"], row["rank_output"]) for row in rows.strategies)
    if part == "comm":
        return Counter((row["op"], row["kind"], row.get("group_size"), row.get("shape"), row.get("dtype"))
                       for row in rows.comm)
    raise ValueError(part)


def held_weights(ir) -> frozenset[str]:
    """The names of the weights a parsed file holds (its parameters with a value), less the
    ``paraN_`` number MindSpore puts before them."""
    return frozenset(unnumbered(p.name) for p in ir.params if p.has_default)


def _digest(value) -> str:
    return hashlib.sha256(repr(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def signature_of(rows: RankRows, held: frozenset[str] = frozenset(), known: dict[str, str] | None = None) -> Signature:
    """The signature of an analysed rank (made where it was analysed, from its rows and the
    weights its file holds). ``known``: digests of parts already told (those of a rank read alike
    that its rows cannot change: :func:`~msinspect.analysis.job.collect._result`)."""
    known = known or {}
    parts = tuple((part, known[part] if part in known else _digest(sorted(items_of(rows, part).items(), key=repr)))
                  for part in PARTS)
    return Signature(parts, _digest(sorted(held)))
