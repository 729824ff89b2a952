"""Rows of an analysis table chosen by an operator selector (``--op``): the same answer from the
CLI, a notebook or a script. A selector is what :func:`~msinspect.analysis.ops.selector_matches`
takes: an instance name, an op type, ``scope/name`` or a scope."""
from __future__ import annotations

from typing import TYPE_CHECKING

from msinspect.analysis.ops import selector_matches

if TYPE_CHECKING:  # the frames come from the caller: nothing here makes one
    import pandas as pd


def rows_of(frame: pd.DataFrame, selector: str | None, column: str = "name") -> pd.DataFrame:
    """The rows of ``frame`` (strategies, shapes ...: ``column``, ``scope`` and ``op``) whose
    operator ``selector`` names; every row when there is no selector."""
    if not selector or frame.empty:
        return frame
    return frame[[selector_matches(n, s, selector, o) for n, s, o in zip(frame[column], frame["scope"], frame["op"])]]


def comm_of(frame: pd.DataFrame, selector: str | None) -> pd.DataFrame:
    """The communication operators (rows of ``comm()``) that ``selector`` names, or that sit next
    to an operator it names (their producer or one of their consumers)."""
    if not selector or frame.empty:
        return frame
    keep = [selector_matches(n, s, selector, o) or selector_matches(p, ps, selector)
            or any(selector_matches(c, cs, selector) for c, cs in zip(cc, ccs))
            for n, s, o, p, ps, cc, ccs in zip(frame["name"], frame["scope"], frame["op"], frame["producer"],
                                               frame["producer_scope"], frame["consumers"], frame["consumer_scopes"])]
    return frame[keep]
