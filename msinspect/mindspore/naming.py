"""How MindSpore names the operators of a dump, in one place: the ``Type-N`` names its
``ParallelValidator`` gives (``MatMul-0``: the first MatMul of its graph), and what of a generated
name differs between ranks and runs (the hash of ``forward_op_7137408040802222932``, the ``-opN``
ordinal of ``MatMul-op3``).

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
