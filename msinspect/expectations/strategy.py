"""``[[expect.strategy]]``: the operator's ``in_strategy`` (and ``out_strategy``, and who set it)."""
from __future__ import annotations

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import evidence_of, layout_text, no_match, rank_cells_text, select_in
from msinspect.expectations.values import shape_list


@register
class Strategy(ExpectationKind):
    name = "strategy"
    required = frozenset({"op", "in_strategy"})
    optional = frozenset({"out_strategy", "set_by", "source"})
    text_keys = ("op", "set_by", "source")

    def validate(self, values):
        values["in_strategy"] = shape_list(values["in_strategy"], "in_strategy")
        if "out_strategy" in values:
            values["out_strategy"] = shape_list(values["out_strategy"], "out_strategy")
        if "source" in values:  # the older name of set_by, still read
            if "set_by" in values:
                raise ValueError("set_by and source are one key (source is its older name): give set_by only")
            values["set_by"] = values["source"]
        if values.get("set_by") not in (None, "user", "planner"):
            raise ValueError(f'{"source" if "source" in values else "set_by"} must be "user" or "planner"')
        return values

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        v = e.values
        want = layout_text(v["in_strategy"]) + (f", set by {v['set_by']}" if "set_by" in v else "")
        analysis = checker.analysis(e)
        strategies = analysis.strategies()
        rows = select_in(analysis, strategies, v["op"], e.ranks, e.graph)
        if rows.empty:
            return Outcome(e, False, want, no_match(strategies, v["op"], " has a strategy"))
        bad = [(v["in_strategy"] != r.in_strategy
                or ("set_by" in v and v["set_by"] != r.set_by)
                or ("out_strategy" in v and v["out_strategy"] != r.out_strategy)) for r in rows.itertuples()]
        found = sorted({f"{layout_text(r.in_strategy)}, set by {r.set_by}" for r in rows.itertuples()})
        shown = rows[bad] if any(bad) else rows
        return Outcome(e, not any(bad), want,
                       f"{' | '.join(found)} on {rank_cells_text(rows['rank'])} ({len(rows)} operator(s))",
                       evidence_of(shown))
