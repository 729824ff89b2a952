"""Rows of an analysis table chosen by an operator selector (``--op``): the same answer from the
CLI, a notebook or a script. A selector is what :func:`~msinspect.analysis.dataflow.node_facts.selector_matches`
takes: an instance name, an op type, ``scope/name`` or a scope. It matches as written where it
matches anything (``matmul``: the instance, not every ``MatMul``), else without case
(``Matmul``, ``AllToAll`` for MindSpore's ``AlltoAll``).

And the one wording of a selector that names nothing (:func:`no_match`): ``no rank 9 (ranks:
0-7)``, ``no weight named 'ww' with a strategy (weights: w, w2)``, with the close names
(``did you mean matmul?``), raised as :class:`~msinspect.errors.NoMatchError` (exit 2)."""
from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Iterable

from msinspect.analysis.dataflow.node_facts import ELIDED, selector_matches
from msinspect.errors import NoMatchError
from msinspect.ranks_text import ranks_text

if TYPE_CHECKING:  # the frames come from the caller: nothing here makes one
    import pandas as pd

#: The most names a message lists (then ``... (N in all)``).
LISTED = 12


def rows_of(frame: pd.DataFrame, selector: str | None, column: str = "name") -> pd.DataFrame:
    """The rows of ``frame`` (strategies, shapes ...: ``column``, ``scope`` and ``op``) whose
    operator ``selector`` names (as written, else without case); every row when there is no selector."""
    if not selector or frame.empty:
        return frame
    for fold in (False, True):
        keep = [selector_matches(n, s, selector, o, fold=fold)
                for n, s, o in zip(frame[column], frame["scope"], frame["op"])]
        if any(keep):
            break
    return frame[keep]


def comm_of(frame: pd.DataFrame, selector: str | None) -> pd.DataFrame:
    """The communication operators (rows of ``comm()``) that ``selector`` names, or that sit next
    to an operator it names (their producer or one of their consumers); as written, else without case."""
    if not selector or frame.empty:
        return frame
    for fold in (False, True):
        keep = [selector_matches(n, s, selector, o, fold=fold) or selector_matches(p, ps, selector, fold=fold)
                or any(selector_matches(c, cs, selector, fold=fold) for c, cs in zip(cc, ccs))
                for n, s, o, p, ps, cc, ccs in zip(frame["name"], frame["scope"], frame["op"], frame["producer"],
                                                   frame["producer_scope"], frame["consumers"],
                                                   frame["consumer_scopes"])]
        if any(keep):
            break
    return frame[keep]


# ---- a selector that names nothing ----

def listing(names: Iterable[str], limit: int = LISTED) -> str:
    """``a, b, c`` (each once, in order), at most ``limit`` of them, then ``... (N in all)``; ``none``."""
    names = list(dict.fromkeys(str(n) for n in names))
    if len(names) <= limit:
        return ", ".join(names) or "none"
    return ", ".join(names[:limit]) + f" ... ({len(names)} in all)"


def close_names(given: str, names: Iterable[str], n: int = 3) -> list[str]:
    """The names closest to ``given``, without case (:func:`difflib.get_close_matches`)."""
    by_fold: dict[str, str] = {}
    for name in names:
        if isinstance(name, str) and name:
            by_fold.setdefault(name.casefold(), name)
    return [by_fold[m] for m in difflib.get_close_matches(given.casefold(), list(by_fold), n=n, cutoff=0.6)]


def no_match(missing: str, what: str, there: str, close: Iterable[str] = ()) -> NoMatchError:
    """The error of a selector that names nothing, worded once for every command:
    ``{missing} ({what}: {there})``, then ``; did you mean A or B?`` for the ``close`` names."""
    close = list(close)
    text = f"{missing} ({what}: {there or 'none'})"
    if close:
        text += f"; did you mean {' or '.join(close)}?"
    return NoMatchError(text)


def check_ranks(wanted: Iterable[int], present: Iterable[int]) -> None:
    """:class:`~msinspect.errors.NoMatchError` ``no rank 9 (ranks: 0-7)`` when a rank of
    ``wanted`` is not one of ``present``."""
    present = sorted(set(present))
    missing = sorted(set(wanted) - set(present))
    if missing:
        raise no_match(f"no {ranks_text(missing, word=True)}", "ranks", ranks_text(present))


def no_weight(param: str, names: Iterable[str], inputs: Iterable[str] = ()) -> NoMatchError:
    """``no weight named 'ww' with a strategy (weights: w, w2); did you mean w?``; ``inputs``: the
    graph inputs, which ``--param`` names too (listed after the weights)."""
    names = sorted({n for n in names if isinstance(n, str)})
    inputs = sorted({n for n in inputs if isinstance(n, str)} - set(names))
    listed = listing(names) + (f"; graph inputs: {listing(inputs)}" if inputs else "")
    return no_match(f"no weight named {param!r} with a strategy", "weights", listed,
                    close_names(param, names + inputs))


def not_on_ranks(thing: str, ranks: Iterable[int], its_ranks: Iterable[int]) -> NoMatchError:
    """``rank 3 holds no part of w (its ranks: 4-7)``: ``thing`` is there, on other ranks."""
    ranks = sorted(set(ranks))
    verb = "holds" if len(ranks) == 1 else "hold"
    return no_match(f"{ranks_text(ranks, word=True)} {verb} no part of {thing}", "its ranks", ranks_text(its_ranks))


def no_operator(selector: str, frame: pd.DataFrame, what: str, column: str = "name") -> NoMatchError:
    """``no strategies match --op 'matmull' (op types: MatMul, ReLU); did you mean matmul?``:
    ``frame`` the rows the selector was tried on (``column``, ``op``, ``scope``); the close names
    are its instance names and op types, else (none close: a scope misspelt) its scope parts
    (``Grad_AllReduce`` is a scope, no operator: not offered for ``AllReduc``). A selector with a
    scope (``fc2-Dense/matmull``) is offered the same form first: a name under as many scope
    parts (``fc2-Dense/matmul``)."""
    if frame.empty:
        return NoMatchError(f"no {what} match --op {selector!r}: the ranks read have no {what}")
    names = [n for n in frame[column] if isinstance(n, str)]
    ops = sorted({o for o in frame["op"] if isinstance(o, str)})
    parts = {p for s in frame["scope"] if isinstance(s, str) for p in s.split("/") if p}
    wanted = selector.strip("/").split("/")[-1] or selector
    return no_match(f"no {what} match --op {selector!r}", "op types", listing(ops),
                    close_names(selector.strip("/"), _qualified(frame, column, selector))
                    or close_names(wanted, [*names, *ops]) or close_names(wanted, sorted(parts)))


def _qualified(frame: pd.DataFrame, column: str, selector: str) -> list[str]:
    """What a scope-qualified ``selector`` could have meant, in its own form: each row's name (and
    op type) after as many last parts of its scope (``fc2-Dense/matmul``), or after each part of
    its scope and ``...`` (``0-Block/.../q_matmul``) where the selector elides parts."""
    given = selector.strip("/").split("/")[:-1]
    if not given:
        return []
    found = {}
    for name, op, scope in zip(frame[column], frame["op"], frame["scope"]):
        have = scope.split("/") if isinstance(scope, str) else []
        heads = ([f"{part}/{ELIDED}" for part in have] if ELIDED in given
                 else ["/".join(have[-len(given):])] if len(have) >= len(given) else [])
        for head in heads:
            for last in (name, op):
                if isinstance(last, str):
                    found[f"{head}/{last}"] = None
    return list(found)
