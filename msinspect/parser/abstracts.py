"""Interpret the bracket structure the grammar reads for an abstract (``<Tensor[Float32], (16, 32)>``)
as kind, dtype and shape. Pure functions over the transformer's parts; no Lark here.

Parts are: text tokens, :data:`COMMA`, ``(opener, parts)`` for ``()``, ``[]``, ``{}`` groups, and
nested :class:`~msinspect.model.Abstract` objects.
"""
from __future__ import annotations

from msinspect.model import Abstract, Shape
from msinspect.mindspore.dtypes import LONG_DTYPES

COMMA = ","
_CLOSE = {"(": ")", "[": "]", "{": "}"}
_END = object()
#: Longest text of a nested abstract kept whole in the text of the abstract around it.
NESTED_TEXT_MAX = 4096


def render(parts) -> str:
    """The parts as text, spaced the way MindSpore prints them.

    Iterative (an explicit stack), so any depth of brackets renders in time and memory linear in
    the text, never a RecursionError."""
    out: list[str] = []
    stack = [iter(parts)]
    closers: list[str] = []
    while stack:
        part = next(stack[-1], _END)
        if part is _END:
            stack.pop()
            if closers:
                out.append(closers.pop())
        elif part is COMMA:
            out.append(", ")
        elif isinstance(part, tuple):
            out.append(part[0])
            closers.append(_CLOSE[part[0]])
            stack.append(iter(part[1]))
        elif isinstance(part, Abstract):
            out.append(_nested_text(part))
        else:
            out.append(str(part).strip())
    return "".join(out)


def _nested_text(abstract: Abstract) -> str:
    """A nested abstract's text, shortened to ``<kind ...>`` past :data:`NESTED_TEXT_MAX`
    characters, so that abstracts nested N deep cost time and memory linear in N, not N^2."""
    if len(abstract.text) <= NESTED_TEXT_MAX:
        return abstract.text
    return f"<{abstract.kind[:80]} ...>"


def _word(part) -> str | None:
    """The text of a plain token part; None for a group, a comma or a nested abstract."""
    if part is COMMA or isinstance(part, (tuple, Abstract)):
        return None
    return str(part).strip()


def _fields(parts) -> list[list]:
    fields: list[list] = [[]]
    for part in parts:
        if part is COMMA:
            fields.append([])
        else:
            fields[-1].append(part)
    return fields


def _ints(parts) -> Shape | None:
    dims = []
    for field in _fields(parts):
        if not field:
            continue
        word = _word(field[0]) if len(field) == 1 else None
        digits = word.removeprefix("-") if word is not None else ""
        if not (0 < len(digits) <= 20 and digits.isascii() and digits.isdigit()):
            return None  # not a dimension (a 5,000-digit "number" is not one either)
        dims.append(int(word))
    return tuple(dims)


def _group(parts, opener: str):
    for part in parts:
        if isinstance(part, tuple) and part[0] == opener:
            return part[1]
    return None


def _dtype(head) -> str | None:
    """``Float32`` from ``Tensor[Float32]``, ``Ref[Tensor[Float32]]`` or ``Ref[Tensor(F32)]``."""
    inner = _group(head, "[")
    if inner is None:
        return None
    if inner and _word(inner[0]) == "Tensor" and len(inner) > 1 and isinstance(inner[1], tuple):
        inner = inner[1][1]
    text = _word(inner[0]) if len(inner) == 1 else None
    if text is not None:
        return LONG_DTYPES.get(text, text)
    return None


def make_abstract(parts) -> Abstract:
    """Build an :class:`Abstract` from the parts between ``<`` and ``>``."""
    text = "<" + render(parts) + ">"
    fields = _fields(parts)
    head = fields[0]
    kind = (_word(head[0]) if head else None) or "null"
    dtype = shape = ref_key = None
    elements: tuple = ()
    if kind in ("Tensor", "Ref"):
        dtype = _dtype(head)
        old_style = [i for i, p in enumerate(head) if isinstance(p, str) or hasattr(p, "type")]
        if len(fields) > 1 and fields[1] and isinstance(fields[1][0], tuple) and fields[1][0][0] == "(":
            shape = _ints(fields[1][0][1])                  # 2.x: <Tensor[Float32], (16, 32)>
        elif len(old_style) > 1 and isinstance(head[-1], tuple):
            shape = _ints(head[-1][1])                      # 2.0: <Tensor[Float32]x[const vector][16, 32]>
    elif len(head) == 1 and len(fields) > 1:
        dtype = kind                                        # scalar: <Int64, NoShape>
    for field in fields[1:]:
        item = _word(field[0]) if len(field) == 1 else None
        if item is not None:
            if item.startswith("ref_key="):
                ref_key = item[len("ref_key="):].lstrip(":")
        elif len(field) == 2 and _word(field[0]) == "TupleShape" and isinstance(field[1], tuple):
            elements = tuple(
                _ints(f[0][1]) if f and isinstance(f[0], tuple) else None
                for f in _fields(field[1][1])
            )
    return Abstract(kind=kind, dtype=dtype, shape=shape, text=text, elements=elements, ref_key=ref_key)
