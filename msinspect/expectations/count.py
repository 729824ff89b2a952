"""``[[expect.count]]``: how many operators each rank has: of a communication ``kind``
(``AllReduce``, the mirror operators that become one), or any operators a selector ``op`` names
(``type:Cast``: the line counts of a validate dump MindSpore's tests take). ``count`` is exact;
``min`` / ``max`` bound it. Without ``ranks``, every rank read."""
from __future__ import annotations

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import evidence_of, in_graph, kind_matches, rank_of, select_in
from msinspect.expectations.values import is_int
from msinspect.ranks_text import ranks_text


@register
class Count(ExpectationKind):
    name = "count"
    required = frozenset()
    optional = frozenset({"kind", "op", "count", "min", "max"})
    text_keys = ("kind", "op")

    def validate(self, values):
        if ("kind" in values) == ("op" in values):
            raise ValueError("give exactly one of kind (a communication kind) and op (a selector)")
        if "op" in values:
            from msinspect.analysis.dataflow.spec_selector import parse_selector

            parse_selector(values["op"])
        if "count" in values and ("min" in values or "max" in values):
            raise ValueError("give count, or min and / or max, not both")
        if not any(k in values for k in ("count", "min", "max")):
            raise ValueError("missing key(s) count (or min / max)")
        for key in ("count", "min", "max"):
            if key in values and (not is_int(values[key]) or values[key] < 0):
                raise ValueError(f"{key} must be a non-negative integer")
        return values

    def target(self, values):
        return str(values.get("kind") or values["op"])

    def operators(self, values):
        return ()  # a count is about a kind of operator, not one operator

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        v = e.values
        analysis = checker.analysis(e)
        ops = analysis.operators()
        lo, hi = (v["count"], v["count"]) if "count" in v else (v.get("min", 0), v.get("max"))
        have_ranks = set(ops["rank"].map(rank_of)) if not ops.empty else set()
        ranks = list(e.ranks) if e.ranks is not None else sorted(r for r in have_ranks if r is not None)
        what = v.get("kind") or v["op"]
        bound = (f"{lo}" if lo == hi else f"at least {lo}" if hi is None else f"at most {hi}" if lo == 0
                 else f"{lo}..{hi}")
        want = f"{bound} {what} on each of {ranks_text(ranks, word=True)}"
        if not ranks:
            return Outcome(e, False, want, "cannot tell: no rank was read")
        if ops.empty:
            rows = ops
        elif "kind" in v:
            rows = ops[[kind_matches(o, n, v["kind"]) for o, n in zip(ops["op"], ops["name"])]]
            if e.graph is not None and not rows.empty:
                rows = rows[[in_graph(f, g, e.graph) for f, g in zip(rows["file"], rows["graph"])]]
        else:
            rows = select_in(analysis, ops, v["op"], None, e.graph)
        counts = {r: int((rows["rank"] == r).sum()) if not rows.empty else 0 for r in ranks}
        bad = {r: n for r, n in counts.items() if r not in have_ranks or n < lo or (hi is not None and n > hi)}
        found = ", ".join(f"rank {r}: {n if r in have_ranks else 'not read'}" for r, n in counts.items())
        shown = rows[rows["rank"].isin(list(bad) or list(counts))] if not rows.empty else rows
        return Outcome(e, not bad, want, found, evidence_of(shown))
