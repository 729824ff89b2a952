"""``[[expect.count]]``: how many operators of a kind each listed rank has."""
from __future__ import annotations

from typing import TYPE_CHECKING

from msinspect.expectations.base import ExpectationKind, register
from msinspect.expectations.evidence import Outcome, evidence_of, kind_matches, rank_of
from msinspect.expectations.values import is_int
from msinspect.ranks_text import ranks_text

if TYPE_CHECKING:
    from msinspect.check import Checker
    from msinspect.spec import Expectation


@register
class Count(ExpectationKind):
    name = "count"
    required = frozenset({"kind", "min"})
    optional = frozenset({"max"})
    text_keys = ("kind",)
    needs_ranks = True

    def validate(self, values):
        for key in ("min", "max"):
            if key in values and (not is_int(values[key]) or values[key] < 0):
                raise ValueError(f"{key} must be a non-negative integer")
        return values

    def target(self, values):
        return str(values["kind"])

    def operators(self, values):
        return ()  # a count is about a kind of communication, not an operator

    def check(self, checker: Checker, e: Expectation) -> Outcome:
        v = e.values
        ops = checker.analysis(e).operators()
        lo, hi = v["min"], v.get("max")
        want = (f"{lo}" + (f"..{hi}" if hi is not None and hi != lo else "")
                + f" {v['kind']} on each of {ranks_text(e.ranks, word=True)}")
        have_ranks = set(ops["rank"].map(rank_of)) if not ops.empty else set()
        rows = ops[[kind_matches(o, n, v["kind"]) for o, n in zip(ops["op"], ops["name"])]] if not ops.empty else ops
        counts = {r: int((rows["rank"] == r).sum()) for r in e.ranks}
        bad = {r: n for r, n in counts.items() if r not in have_ranks or n < lo or (hi is not None and n > hi)}
        found = ", ".join(f"rank {r}: {n if r in have_ranks else 'absent'}" for r, n in counts.items())
        shown = rows[rows["rank"].isin(list(bad) or list(counts))]
        return Outcome(e, not bad, want, found, evidence_of(shown))
