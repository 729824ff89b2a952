"""``[[expect.attrs]]``: an operator's primitive attributes hold these values
(``ParallelValidator.check_node_attrs``). Values compare as MindSpore wrote them: a number or bool
with its value, anything else with its text."""
from __future__ import annotations

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import Evidence, no_match, nodes_of, rank_cells_text, select_in


@register
class Attrs(ExpectationKind):
    name = "attrs"
    required = frozenset({"op", "attrs"})
    text_keys = ("op",)

    def validate(self, values):
        if not isinstance(values["attrs"], dict) or not values["attrs"]:
            raise ValueError("attrs must be a table of attribute values, like {begin_mask = 0}")
        return values

    def target(self, values):
        return f"{values['op']} {', '.join(f'{k}={v!r}' for k, v in values['attrs'].items())}"

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        want_attrs = e.values["attrs"]
        want = ", ".join(f"{k} = {v!r}" for k, v in want_attrs.items())
        analysis = checker.analysis(e)
        ops = analysis.operators()
        rows = select_in(analysis, ops, e.values["op"], e.ranks, e.graph)
        if rows.empty:
            return Outcome(e, False, want, no_match(ops, e.values["op"]))
        bad, seen = [], set()
        for row, _, node in nodes_of(rows):
            attrs = {**node.primitive_attrs, **node.cnode_attrs}
            have = {k: attrs.get(k, _ABSENT) for k in want_attrs}
            seen.add(", ".join(f"{k} = {'absent' if h is _ABSENT else repr(h)}" for k, h in have.items()))
            if any(not _equal(want_attrs[k], h) for k, h in have.items()):
                bad.append(Evidence.of_node(row.rank, str(row.file), node))
        return Outcome(e, not bad, want, f"{' | '.join(sorted(seen))} on {rank_cells_text(rows['rank'])}",
                       bad or [Evidence.of_node(r.rank, str(r.file), n) for r, _, n in nodes_of(rows.head(1))])


_ABSENT = object()


def _equal(want, have) -> bool:
    if have is _ABSENT:
        return False
    if isinstance(want, bool) or isinstance(have, bool):
        return isinstance(want, bool) and isinstance(have, bool) and want == have
    if isinstance(want, (int, float)) and isinstance(have, (int, float)):
        return want == have
    if isinstance(want, list):
        return _plain(have) == _plain(want)
    return str(want) == str(have)


def _plain(value):
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value
