"""Interpret the bracket structure the grammar reads for an abstract (``<Tensor[Float32], (16, 32)>``)
as kind, dtype and shape. Pure functions over the transformer's parts; no Lark here.

Parts are: text tokens, :data:`COMMA`, ``(opener, parts)`` for ``()``, ``[]``, ``{}`` groups, and
nested :class:`~msinspect.model.Abstract` objects.
"""
from __future__ import annotations

from msinspect.model import Abstract, Shape

COMMA = ","
_CLOSE = {"(": ")", "[": "]", "{": "}"}
_SHORT_DTYPES = {
    "F16": "Float16", "F32": "Float32", "F64": "Float64", "BF16": "BFloat16",
    "I8": "Int8", "I16": "Int16", "I32": "Int32", "I64": "Int64",
    "U8": "UInt8", "U16": "UInt16", "U32": "UInt32", "U64": "UInt64",
}


def render(parts) -> str:
    """The parts as text, spaced the way MindSpore prints them."""
    out = []
    for part in parts:
        if part is COMMA:
            out.append(", ")
        elif isinstance(part, tuple):
            out.append(part[0] + render(part[1]) + _CLOSE[part[0]])
        elif isinstance(part, Abstract):
            out.append(part.text)
        else:
            out.append(str(part).strip())
    return "".join(out)


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
        if len(field) != 1 or isinstance(field[0], tuple):
            return None
        try:
            dims.append(int(str(field[0])))
        except ValueError:
            return None
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
    if inner and str(inner[0]).strip() == "Tensor" and len(inner) > 1 and isinstance(inner[1], tuple):
        inner = inner[1][1]
    if len(inner) == 1 and not isinstance(inner[0], tuple):
        text = str(inner[0]).strip()
        return _SHORT_DTYPES.get(text, text)
    return None


def make_abstract(parts) -> Abstract:
    """Build an :class:`Abstract` from the parts between ``<`` and ``>``."""
    text = "<" + render(parts) + ">"
    fields = _fields(parts)
    head = fields[0]
    kind = str(head[0]).strip() if head and not isinstance(head[0], tuple) else "null"
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
        if len(field) == 1 and not isinstance(field[0], tuple):
            item = str(field[0]).strip()
            if item.startswith("ref_key="):
                ref_key = item[len("ref_key="):].lstrip(":")
        elif len(field) == 2 and str(field[0]).strip() == "TupleShape" and isinstance(field[1], tuple):
            elements = tuple(
                _ints(f[0][1]) if f and isinstance(f[0], tuple) else None
                for f in _fields(field[1][1])
            )
    return Abstract(kind=kind, dtype=dtype, shape=shape, text=text, elements=elements, ref_key=ref_key)
