"""How MindSpore names the operators and parameters of a dump, in one place: the ``Type-N`` names
its ``ParallelValidator`` gives (``MatMul-0``: the first MatMul of its graph), what of a generated
name differs between ranks and runs (the hash of ``forward_op_7137408040802222932``, the ``-opN``
ordinal of ``MatMul-op3``), the parameters an optimizer or gradient accumulation makes of a weight
(``adam_m.w``, ``accu_grads.w``) and the scope of the optimizer cell (``optimizer-AdamW``).

``ParallelValidator`` is MindSpore's test helper (``tests/ut/python/parallel/utils/utils.py``): it
lists a graph's operators per primitive in file order and names each by its primitive and its
count among those before it, a call of a subgraph by the subgraph's name.
"""
from __future__ import annotations

import re
from typing import Hashable, Iterable

from msinspect.model import GraphRef, Node, NodeKind

#: MindSpore's ordinal in the names of operators without an instance name (``MatMul-op3``): it
#: counts within the file and says nothing about the operator.
_ORDINAL = re.compile(r"-op\d+$")
#: The hash MindSpore puts in generated instance names (``forward_op_7137408040802222932``,
#: ``redistribution_op_2668879223615121903AllGather_``): differs between ranks and runs.
_HASH = re.compile(r"\d{6,}")
#: What MindSpore puts before a weight's name for its accumulated gradient under pipeline or
#: gradient accumulation (``accu_grads.layer2.bias``).
ACCUMULATED = ("accu_grads.", "accu_grad.")
#: The names MindSpore's and MindFormers' optimizers clone their per-weight states under
#: (``ParameterTuple.clone(prefix=...)``, MindFormers' ``AdamW.clone_state(prefix=...)``), each
#: state named ``<prefix>.<weight>``, under the optimizer cell's name too
#: (``optimizer.adam_m.<weight>``).
STATE_PREFIXES = ("adam_m", "adam_v", "moments", "accum", "stat")
#: The scope of the optimizer's cell: a cell's scope is ``<attribute>-<Class>``, and MindSpore's
#: and MindFormers' training wrappers hold theirs as ``self.optimizer`` (``nn.TrainOneStepCell``,
#: ``MFTrainOneStepCell``): ``Default/optimizer-AdamW/Assign-op2``.
_OPTIMIZER_CELL = re.compile(r"(?:^|/)optimizer-(\w+)(?:/|$)")


def stable_name(name):
    """A generated name (or a tuple of them) less what differs between ranks and runs: hash
    digits and the ``-opN`` ordinal; anything else as it is."""
    if isinstance(name, tuple):
        return tuple(stable_name(n) for n in name)
    return _HASH.sub("#", _ORDINAL.sub("", name)) if isinstance(name, str) else name


def type_ordinals(keys: Iterable[Hashable]) -> list[int]:
    """The N of each ``Type-N`` name, for operators in file order keyed by (where they are
    counted, what they count as): each one's count among those of its key before it.
    ``ParallelValidator`` counts per graph (the key holds the graph, the rank's file and
    :func:`validator_type`); the one definition of the numbering, for a parsed file
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
    """What ``ParallelValidator`` counts a node as in its ``Type-N`` names: the primitive, or for
    a call of a subgraph the subgraph's name (its full name with scope ends so)."""
    if node.kind == NodeKind.CALL_GRAPH and isinstance(node.callee, GraphRef):
        return node.callee.name
    return str(node.op)


def weight_in(name: str, weights) -> str | None:
    """The weight (of ``weights``) whose name ``name`` is with a prefix before it: ``w`` of
    ``adam_m.w``, ``optimizer.adam_m.w`` and ``accu_grads.w``; None: none."""
    parts = name.split(".")
    return next((".".join(parts[i:]) for i in range(1, len(parts)) if ".".join(parts[i:]) in weights), None)


def state_of(name: str, weights) -> str | None:
    """The weight (of ``weights``) that the parameter ``name`` is an optimizer's state of
    (:data:`STATE_PREFIXES`: ``adam_m.w``, ``optimizer.adam_v.w``); None: it is none's."""
    weight = weight_in(name, weights)
    if weight is None:
        return None
    prefix = name[:-len(weight) - 1].rsplit(".", 1)[-1]
    return weight if prefix in STATE_PREFIXES else None


def with_states(shapes: dict) -> set[str]:
    """Of parameters by name -> shape, the weights an optimizer cloned states of: another of them
    is named as its state (:func:`state_of`: ``adam_m.<weight>``) and has its shape."""
    found = ((name, state_of(name, shapes)) for name in shapes)
    return {weight for name, weight in found if weight is not None and shapes[name] == shapes[weight]}


def optimizer_cell(scope: str) -> str | None:
    """The class of the optimizer cell whose scope ``scope`` is in (``AdamW`` of
    ``Default/optimizer-AdamW``); None: it is in none."""
    found = _OPTIMIZER_CELL.search(scope or "")
    return found.group(1) if found else None
