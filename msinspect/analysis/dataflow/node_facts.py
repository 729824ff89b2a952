"""The operator vocabulary of the parallel pass, and the small per-node facts analyses share.

Names follow MindSpore: the communication primitives the parallel pass inserts, the instance-name
prefixes it gives them (``forward_op_``, ``redistribution_op_``, ``grad_mirror_`` ...), and the
"plumbing" nodes (``Load``, ``Depend`` ...) that carry a value without computing anything.
"""
from __future__ import annotations

import re
from typing import Any, Hashable, Iterable

from msinspect.mindspore.vocabulary import VOCABULARY, is_listed, is_redistribution_step
from msinspect.model import Abstract, GraphRef, Node, NodeKind, Shape

#: MindSpore's ordinal in the names of operators without an instance name (``MatMul-op3``): it
#: counts within the file and says nothing about the operator.
_ORDINAL = re.compile(r"-op\d+$")
#: The hash MindSpore puts in generated instance names (``forward_op_7137408040802222932``,
#: ``redistribution_op_2668879223615121903AllGather_``): differs between ranks and runs.
_HASH = re.compile(r"\d{6,}")


def stable_name(name):
    """A generated name (or a tuple of them) less what differs between ranks and runs: hash
    digits and the ``-opN`` ordinal; anything else as it is."""
    if isinstance(name, tuple):
        return tuple(stable_name(n) for n in name)
    return _HASH.sub("#", _ORDINAL.sub("", name)) if isinstance(name, str) else name

#: Every primitive of the communication vocabulary (:mod:`msinspect.mindspore.vocabulary`).
COMM_OPS = frozenset(VOCABULARY)
#: Nodes that pass a value along (or only order side effects) without computing.
PLUMBING_OPS = frozenset({"Load", "Depend", "UpdateState", "TupleGetItem", "MakeTuple", "_VirtualDataset",
                          "_VirtualOutput", "StopGradient", "stop_gradient"})
#: Names of the world communication group per backend.
WORLD_GROUPS = frozenset({"nccl_world_group", "hccl_world_group", "mccl_world_group", "lccl_world_group",
                          "WORLD_GROUP"})

DTYPE_BYTES = {
    "Float64": 8, "Float32": 4, "Float16": 2, "BFloat16": 2, "Int64": 8, "Int32": 4, "Int16": 2,
    "Int8": 1, "UInt64": 8, "UInt32": 4, "UInt16": 2, "UInt8": 1, "Bool": 1, "Complex64": 8,
    "Complex128": 16, "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
    "U8": 1,
}


def is_redistribution(node: Node) -> bool:
    """An operator inserted to move a tensor between layouts (or the gradient of one)."""
    return is_redistribution_step(node)


def is_comm(node: Node) -> bool:
    """A communication or redistribution operator of the parallel pass (or the user's own): one
    of :data:`~msinspect.mindspore.vocabulary.VOCABULARY`, or a redistribution step."""
    return is_listed(node)


def is_plumbing(node: Node) -> bool:
    """A node that carries a value without computing it."""
    return node.op in PLUMBING_OPS


def is_backward(node: Node) -> bool:
    """Whether the node belongs to the gradient graph (MindSpore scopes it under ``Gradients/``)."""
    where = node.fullname or node.scope or ""
    return where.startswith("Gradients/")


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
    size = DTYPE_BYTES.get(dtype)
    if size is None:
        return None
    count = 1
    for d in shape:
        count *= d
    return count * size


def type_ordinals(keys: Iterable[Hashable]) -> list[int]:
    """The N of each ``Type-N`` name, for operators in file order keyed by (where they are
    counted, what they count as): each one's count among those of its key before it.
    MindSpore's ``ParallelValidator`` counts per graph (the key holds the graph, the rank's file
    and :func:`validator_type`); the one definition of the numbering, for a parsed file
    (:meth:`msinspect.analysis.dataflow.file_view.FileView.type_name`) and for operator rows
    (:func:`msinspect.analysis.dataflow.spec_selector.type_numbers`)."""
    counts: dict = {}
    out = []
    for key in keys:
        n = counts.get(key, 0)
        out.append(n)
        counts[key] = n + 1
    return out


def validator_type(node: Node) -> str:
    """What MindSpore's ``ParallelValidator`` counts a node as in its ``Type-N`` names: the
    primitive, or for a call of a subgraph the subgraph's name (its full name with scope ends so)."""
    if node.kind == NodeKind.CALL_GRAPH and isinstance(node.callee, GraphRef):
        return node.callee.name
    return str(node.op)
