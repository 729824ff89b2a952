"""Which operators an expectation is about: a selector (docs/spec-language.md).

``matmul`` (an instance name, a scope-qualified name or a scope: :func:`~msinspect.analysis.dataflow.node_facts.
selector_matches`), ``MatMul-0`` (MindSpore's ``ParallelValidator`` name: the N-th operator of that
primitive in its graph, counted from 0 in the order the file writes the graph's nodes),
``type:MatMul`` (every operator of that primitive), ``scope:GLOB`` (a glob over scopes) and
``re:PATTERN`` (a regular expression over instance names). Primitive names match as MindSpore
writes them, else without case (``AllToAll`` is ``AlltoAll``).

A selector applies to the operator table (:data:`~msinspect.analysis.rank.operators.OP_COLUMNS`: one
row per operator, in file order per rank), so every kind selects the same way.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from typing import TYPE_CHECKING

from msinspect.analysis.dataflow.node_facts import selector_matches
from msinspect.mindspore.naming import type_ordinals

if TYPE_CHECKING:  # the frames come from the analysis: reading a spec loads no pandas
    import pandas as pd

#: ``MatMul-0``: a primitive's name (as MindSpore names primitives: a letter first) and a count.
_TYPE_N = re.compile(r"^(?P<type>[A-Za-z_][A-Za-z0-9_]*)-(?P<n>\d+)$")
PREFIXES = ("type:", "scope:", "re:")


@dataclass(frozen=True)
class Selector:
    """A parsed selector: its ``form`` (``name``, ``type_n``, ``type``, ``scope``, ``re``), its text
    and, for ``type_n``, the primitive and the count."""

    text: str
    form: str
    value: str
    count: int | None = None

    def rows(self, frame: pd.DataFrame) -> pd.Series:
        """A boolean mask over ``frame`` (the operator table) of the operators selected."""
        if frame.empty:
            return frame.index.to_series().map(bool)
        if self.form == "type":
            return _op_is(frame["op"], self.value)
        if self.form == "scope":
            return frame["scope"].map(lambda s: isinstance(s, str) and fnmatch.fnmatchcase(s, self.value))
        if self.form == "re":
            pattern = re.compile(self.value)
            return frame["name"].map(lambda n: isinstance(n, str) and pattern.search(n) is not None)
        if self.form == "type_n":
            for by in ("type", "op"):  # a call counts as its subgraph, or as "call"
                same = _op_is(frame[by] if by in frame.columns else frame["op"], self.value)
                if same.any():
                    return same & (type_numbers(frame, by) == self.count)
            # not a primitive of the table: an instance name that looks like one (``dense-1``)
        import pandas as pd  # loaded already: the frame is one

        # an instance name, a scope-qualified one or a scope; without case where nothing has the case
        pairs = list(zip(frame["name"], frame["scope"]))
        exact = [selector_matches(n, s, self.text) for n, s in pairs]
        if not any(exact) and not (frame["op"] == self.text).any():  # "MatMul": an op type, not matmul
            exact = [selector_matches(n, s, self.text, fold=True) for n, s in pairs]
        return pd.Series(exact, index=frame.index, dtype=bool)


def parse_selector(text: str) -> Selector:
    """The selector ``text`` stands for; ValueError for an empty one or a bad pattern."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("a selector must be a non-empty string")
    for prefix in PREFIXES:
        if text.startswith(prefix):
            value = text[len(prefix):]
            if not value:
                raise ValueError(f"selector {text!r}: nothing after {prefix!r}")
            if prefix == "re:":
                try:
                    re.compile(value)
                except re.error as exc:
                    raise ValueError(f"selector {text!r}: not a regular expression ({exc})") from None
            return Selector(text, prefix[:-1], value)
    found = _TYPE_N.match(text)
    if found:
        return Selector(text, "type_n", found["type"], int(found["n"]))
    return Selector(text, "name", text)


def type_numbers(frame: pd.DataFrame, by: str = "type") -> pd.Series:
    """Each operator's N of ``Type-N``: its count among the operators of its primitive (a call:
    of its subgraph; ``by="op"``: among the calls) in its graph, in file order (per rank and file)."""
    import pandas as pd

    keys = [c for c in ("rank", "file", "graph") if c in frame.columns]
    ordered = frame.sort_values([*keys, "line"], kind="stable") if "line" in frame.columns else frame
    kinds = ordered[by] if by in ordered.columns else ordered["op"]
    where = zip(*(ordered[k].astype(str) for k in keys), kinds.astype(str))
    return pd.Series(type_ordinals(where), index=ordered.index).reindex(frame.index)


def _types(frame: pd.DataFrame) -> pd.Series:
    """What ``Type-N`` counts each operator as (the ``type`` column: a call counts as its
    subgraph), else its primitive."""
    return frame["type"] if "type" in frame.columns else frame["op"]


def type_name(frame: pd.DataFrame) -> pd.Series:
    """Each operator's ``Type-N`` name."""
    return _types(frame).astype(str) + "-" + type_numbers(frame).astype(str)


def _op_is(ops: pd.Series, name: str) -> pd.Series:
    exact = ops == name
    if exact.any():
        return exact
    folded = name.casefold()
    return ops.map(lambda o: isinstance(o, str) and o.casefold() == folded)
