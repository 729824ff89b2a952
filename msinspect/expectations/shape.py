"""``[[expect.shape]]``: per-rank shapes of the operator's tensor inputs and / or its output."""
from __future__ import annotations

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import evidence_of, layout_text, no_match, rank_cells_text, select
from msinspect.expectations.values import shape_list


@register
class Shape(ExpectationKind):
    name = "shape"
    required = frozenset({"op"})
    optional = frozenset({"inputs", "output"})
    text_keys = ("op",)

    def validate(self, values):
        if "inputs" not in values and "output" not in values:
            raise ValueError("give inputs, output or both")
        if "inputs" in values:
            values["inputs"] = shape_list(values["inputs"], "inputs", least=0)
        if "output" in values:
            values["output"] = shape_list([values["output"]], "output", least=0)[0]
        return values

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        v = e.values
        ops = checker.analysis(e).operators()
        forward = ops[~ops["backward"]] if not ops.empty else ops
        rows = select(forward, v["op"], e.ranks, ops, e.graph)  # MatMul-0 counts every operator
        parts = []
        if "inputs" in v:
            parts.append(f"inputs {layout_text(v['inputs'])}")
        if "output" in v:
            parts.append(f"output {v['output']}")
        want = ", ".join(parts)
        if rows.empty:
            return Outcome(e, False, want, no_match(ops, v["op"]))

        def wrong(r) -> bool:
            if "inputs" in v and tuple(r.inputs[: len(v["inputs"])]) != v["inputs"]:
                return True
            return "output" in v and r.output != v["output"]

        bad = [wrong(r) for r in rows.itertuples()]
        found = sorted({f"inputs {layout_text(tuple(r.inputs))}, output {r.output}" for r in rows.itertuples()})
        return Outcome(e, not any(bad), want,
                       f"{' | '.join(found)} on {rank_cells_text(rows['rank'])} ({len(rows)} operator(s))",
                       evidence_of(rows[bad] if any(bad) else rows))
