"""``[[expect.inputs]]``: what an operator takes, as MindSpore's tests say it
(``ParallelValidator.check_node_inputs_has`` / ``check_node_inputs`` / ``..._fuzzy_match``).

The inputs are listed as ParallelValidator lists them: another node by its ``Type-N`` name, a
parameter by its name (``w``), a constant as its value. ``include``: each item is among the
inputs (a string matches an input that contains it, as the tests match; a number or bool an
equal constant; a list a tuple constant, ``[-1, 2]`` for ``(-1, 2)``); ``exact``: the inputs are these, in this order, and no more."""
from __future__ import annotations

from typing import Any

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import Evidence, no_match, nodes_of, rank_cells_text, select_in
from msinspect.model import TensorValue


@register
class Inputs(ExpectationKind):
    name = "inputs"
    required = frozenset({"op", "include"})
    optional = frozenset({"exact"})
    text_keys = ("op",)

    def validate(self, values):
        include = values["include"]
        if not isinstance(include, list) or not include or not all(_constant(v) for v in include):
            raise ValueError("include must be a non-empty list of names, selectors or constants, like "
                             '["w", "AllGather-0", 0, [-1, 2]]')
        if not isinstance(values.get("exact", False), bool):
            raise ValueError("exact must be true or false")
        values["include"] = tuple(include)
        return values

    def target(self, values):
        return f"{values['op']} takes {', '.join(map(repr, values['include']))}"

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        v = e.values
        exact = v.get("exact", False)
        want = ("inputs exactly " if exact else "inputs include ") + ", ".join(map(repr, v["include"]))
        analysis = checker.analysis(e)
        ops = analysis.operators()
        rows = select_in(analysis, ops, v["op"], e.ranks, e.graph)
        if rows.empty:
            return Outcome(e, False, want, no_match(ops, v["op"]))
        bad, seen = [], set()
        for row, view, node in nodes_of(rows):
            have = view.validator_inputs(node)
            ok = _exactly(have, v["include"]) if exact else all(_among(item, have) for item in v["include"])
            text = f"{view.type_name(node)}({', '.join(map(repr, have))})"
            seen.add(text)
            if not ok:
                bad.append(Evidence.of_node(row.rank, str(row.file), node))
        return Outcome(e, not bad, want, f"{' | '.join(sorted(seen))} on {rank_cells_text(rows['rank'])}",
                       bad or [Evidence.of_node(r.rank, str(r.file), n) for r, _, n in nodes_of(rows.head(1))])


def _same(item: Any, have: Any) -> bool:
    """One expected item against one input: a string is contained in the input's name, a
    constant equals it (a bool only a bool; a number also a scalar tensor of that value,
    ``Tensor(shape=[], value=0.9)``)."""
    if isinstance(item, str):
        return isinstance(have, str) and item in have
    if isinstance(item, list):  # a tuple constant, (-1, 2): element by element
        return isinstance(have, (tuple, list)) and len(have) == len(item) and all(map(_same, item, have))
    if isinstance(have, TensorValue) and not isinstance(item, bool):
        return have.shape == () and _number(have.value_text) == item
    if isinstance(item, bool) or isinstance(have, bool):
        return isinstance(item, bool) and isinstance(have, bool) and item == have
    return isinstance(have, (int, float)) and have == item


def _constant(value) -> bool:
    """A name, a selector, a scalar, or a list of scalars (a tuple constant), nested."""
    if isinstance(value, list):
        return all(_constant(v) for v in value)
    return isinstance(value, (str, int, float, bool))


def _number(text) -> float | None:
    try:
        return float(str(text).strip("[] "))
    except ValueError:
        return None


def _among(item: Any, have: list[Any]) -> bool:
    return any(_same(item, h) for h in have)


def _exactly(have: list[Any], want: tuple[Any, ...]) -> bool:
    return len(have) == len(want) and all(_same(w, h) for w, h in zip(want, have))
