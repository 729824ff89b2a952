"""``[[expect.absent]]``: no operator the selector names is on the ranks (a UT's "no AllGather
was inserted"). Where the dump holds one, each is shown with its IR line."""
from __future__ import annotations

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import evidence_of, rank_cells_text, select_in


@register
class Absent(ExpectationKind):
    name = "absent"
    required = frozenset({"op"})
    text_keys = ("op",)

    def validate(self, values):
        from msinspect.analysis.dataflow.spec_selector import parse_selector

        parse_selector(values["op"])
        return values

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        analysis = checker.analysis(e)
        ops = analysis.operators()
        where = rank_cells_text(sorted(set(ops["rank"]))) if not ops.empty else "no rank read"
        want = f"no {e.values['op']} on {rank_cells_text(e.ranks) if e.ranks else 'any rank'}"
        if ops.empty:
            return Outcome(e, False, want, "cannot tell: no operator was read")
        rows = select_in(analysis, ops, e.values["op"], e.ranks, e.graph)
        if rows.empty:
            return Outcome(e, True, want, f"none on {where}")
        return Outcome(e, False, want, f"{len(rows)} on {rank_cells_text(rows['rank'])}", evidence_of(rows))
