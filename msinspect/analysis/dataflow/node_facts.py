"""The small per-node facts analyses share: the "plumbing" nodes (``Load``, ``Depend`` ...) that
carry a value without computing anything, the gradient graph's scope, a node's scope and the
selectors that name it, shapes read off attributes and a tensor's bytes.

MindSpore's communication vocabulary is :mod:`msinspect.mindspore.vocabulary`, its operator names
:mod:`msinspect.mindspore.naming`, its element types :mod:`msinspect.mindspore.dtypes`.
"""
from __future__ import annotations

from typing import Any

from msinspect.mindspore.dtypes import element_bytes
from msinspect.model import Abstract, Node, Shape

#: Nodes that pass a value along (or only order side effects) without computing.
PLUMBING_OPS = frozenset({"Load", "Depend", "UpdateState", "TupleGetItem", "MakeTuple", "_VirtualDataset",
                          "_VirtualOutput", "StopGradient", "stop_gradient"})

def is_plumbing(node: Node) -> bool:
    """A node that carries a value without computing it."""
    return node.op in PLUMBING_OPS


#: MindSpore's mark of a bprop graph in its name (``TraceGradBprop``'s symbol, ``trace_info.h``).
BPROP_MARK = "\u25c2"


def is_backward(node: Node) -> bool:
    """Whether the node belongs to the gradient graph (MindSpore scopes it under ``Gradients/``)."""
    where = node.fullname or node.scope or ""
    return where.startswith("Gradients/")


def bprop_graph(name: str) -> bool:
    """Whether a subgraph is a bprop graph, the backward of a cell whose forward is a graph of its
    own (:data:`BPROP_MARK` in its name)."""
    return BPROP_MARK in name


def scope_of(node: Node) -> str:
    """The node's scope: ``# Scope:`` if written, else its full name without the last part."""
    if node.scope:
        return node.scope
    if node.fullname and "/" in node.fullname:
        return node.fullname.rsplit("/", 1)[0]
    return ""


def matches(node: Node, selector: str) -> bool:
    """Whether ``selector`` names this node (see :func:`selector_matches`)."""
    return selector_matches(node.instance_name or node.name, scope_of(node), selector)


def selector_matches(name: str | None, scope: str | None, selector: str, op: str | None = None,
                     *, fold: bool = False) -> bool:
    """Whether ``selector`` names the operator ``name`` in ``scope`` (of type ``op``, if given).

    A selector is an instance name (``matmul``), an op type when ``op`` is given (``MatMul``), a
    scope-qualified name whose scope ends with the given parts (``layer1-Dense/matmul``, or
    ``layer1-Dense/MatMul``), a name under a scope part with ``...`` for the parts between
    (``0-Block/.../q_matmul`` for ``.../0-Block/attention-Attention``: ``...`` is no part of a
    scope), or a scope alone (``loss-CrossEntropyLoss``: any operator in that scope or below).
    ``fold``: compare without case (``Matmul``, ``AllToAll`` for ``AlltoAll``).
    """
    scope = scope if isinstance(scope, str) else ""  # None, or NaN from a DataFrame
    name = name if isinstance(name, str) else None
    op = op if isinstance(op, str) else None
    if fold:
        scope, selector = scope.casefold(), selector.casefold()
        name = name.casefold() if name is not None else None
        op = op.casefold() if op is not None else None
    parts = selector.strip("/").split("/")
    if len(parts) == 1 and (name == selector or (op is not None and op == selector)):
        return True
    if len(parts) > 1 and parts[-1] in (name, op):
        if ELIDED in parts[:-1]:
            return _scope_has_around(scope, parts[:-1])
        if _scope_endswith(scope, parts[:-1]):
            return True
    return _scope_contains(scope, parts)


#: The parts of a scope left out of a selector: ``0-Block/.../q_matmul``.
ELIDED = "..."


def _scope_endswith(scope: str, parts: list[str]) -> bool:
    have = scope.split("/") if scope else []
    return len(have) >= len(parts) and have[len(have) - len(parts):] == parts


def _scope_has_around(scope: str, parts: list[str]) -> bool:
    """Whether ``scope`` holds ``parts`` before the ``...`` in a row and ends with those after it."""
    cut = parts.index(ELIDED)
    before, after = parts[:cut], parts[cut + 1:]
    have = scope.split("/") if scope else []
    end = len(have) - len(after)
    if end < 0 or have[end:] != after:
        return False
    return any(have[i:i + len(before)] == before for i in range(end - len(before) + 1))


def _scope_contains(scope: str, parts: list[str]) -> bool:
    have = scope.split("/") if scope else []
    n = len(parts)
    return any(have[i:i + n] == parts for i in range(len(have) - n + 1))


def tensor_inputs(node: Node) -> list[Abstract]:
    """Abstracts of the inputs that are tensors, in order (scalars and tuples left out)."""
    return [a for a in node.input_types if a.kind in ("Tensor", "Ref")]


def as_shapes(value: Any) -> tuple[Shape, ...] | None:
    """``((16, 32), (32, 16))`` from an attribute; a lone ``(16, 16)`` becomes one shape."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        return (tuple(value),)
    if isinstance(value, (tuple, list)):
        return tuple(tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in value)
    return None


def as_shape(value: Any) -> Shape | None:
    """``(16, 16)`` from an attribute; None when it is not a flat tuple of ints."""
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        return tuple(value)
    return None


def nbytes(shape: Shape | None, dtype: str | None) -> int | None:
    """Size of a tensor in bytes; None when its shape or element size is unknown."""
    if shape is None or dtype is None or any(d < 0 for d in shape):
        return None
    size = element_bytes(dtype)
    if size is None:
        return None
    count = 1
    for d in shape:
        count *= d
    return count * size
