"""Which operators of a file MindSpore's common-subexpression elimination will merge.

MindSpore's ``CSE`` pass (``frontend/optimizer/cse.cc``, run on the graphs after the parallel
pass, before validate) replaces a CNode by an earlier one of the same graph whose inputs are the
same: input 0 the same primitive (its name and attributes), every other input the same value (a
node already merged counts as the one it merged into, so the rule applies bottom up). It merges
no node whose primitive has a side effect, and no two of a random effect made by different
primitives. A file written before it (step_parallel_end) can hold several copies of one
collective where the step runs one: three AllGathers of one norm's output for ``wq``, ``wk`` and
``wv`` (zoo 14), which validate holds once.

:func:`merged_into` gives, for each node of a file such a pass would remove, the node it keeps.
The file's order stands in for the pass's topological order (MindSpore's dumper prints a graph's
nodes in it). Attributes MindSpore keeps on the node rather than on its primitive (``cnode_attrs``)
are not compared, as the pass does not compare them. A constant tensor the dumper prints without
its values is taken to differ from every other: what cannot be compared is not merged.
"""
from __future__ import annotations

from typing import Callable, Hashable, Iterable

from msinspect.model import IRFile, Node, NodeRef, TensorValue

#: Primitive attributes that mark an effect CSE does not merge across (``GRAPH_FLAG_SIDE_EFFECT``
#: and ``GRAPH_FLAG_RANDOM_EFFECT`` of ``utils/flags.h``, and the memory and I/O side effects the
#: dumper prints).
_EFFECTS = ("side_effect", "_side_effect", "side_effect_mem", "side_effect_io", "side_effect_hidden",
            "side_effect_propagate", "_random_effect", "random_effect")


def _frozen(value) -> Hashable:
    """A value as a key: itself where it hashes, else its text; a constant tensor whose values the
    dumper leaves out (``[...]``) a key of its own (the pass compares the values: two such
    tensors may differ)."""
    if isinstance(value, TensorValue) and "..." in value.value_text:
        return object()
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _effect(node: Node) -> bool:
    """Whether the node's primitive marks an effect (the dumper prints ``Bool(1)`` or ``1``)."""
    return any(node.primitive_attrs.get(flag) in (True, 1) for flag in _EFFECTS)


def merged_into(ir: IRFile, among: Callable[[Node], bool] | None = None) -> dict[tuple[str, int], Node]:
    """``(graph, index)`` of each node CSE would replace -> the node that stays (the first of its
    graph with the same primitive, attributes and inputs). ``among``: only graphs holding two
    nodes it takes of the same primitive and group are numbered (what it takes is all that is
    asked of; a graph without such a pair has no merge among them)."""
    out: dict[tuple[str, int], Node] = {}
    for sub in ir.subgraphs:
        if among is not None and not _pair(node for node in sub.nodes if among(node)):
            continue
        number: dict[int, int] = {}  # node index -> its value number
        first: dict[tuple, list[Node]] = {}  # (primitive, inputs) -> the first nodes that make it
        for node in sub.nodes:
            if node.index is None:
                continue
            inputs = tuple(("node", number.get(v.index, -1 - v.index)) if isinstance(v, NodeRef) else _frozen(v)
                           for v in node.inputs)
            makers = first.setdefault((node.op, inputs), [])
            kept = next((k for k in makers if _same_attributes(k, node)), None) if makers else None
            if kept is not None and not _effect(node):
                out[(sub.name, node.index)] = kept
                number[node.index] = number[kept.index]
            else:
                if kept is None:
                    makers.append(node)
                number[node.index] = len(number)
    return out


def _same_attributes(kept: Node, node: Node) -> bool:
    """Whether two nodes' primitives have the same attributes (a constant tensor among them
    printed without its values compares to none)."""
    if kept.primitive_attrs != node.primitive_attrs:
        return False
    return not any(isinstance(v, TensorValue) and "..." in v.value_text for v in node.primitive_attrs.values())


def _pair(nodes: Iterable[Node]) -> bool:
    """Whether two of ``nodes`` have the same primitive and group (a necessary condition of the
    same primitive and attributes, cheap to test)."""
    seen = set()
    for node in nodes:
        if (key := (node.op, _frozen(node.primitive_attrs.get("group")))) in seen:
            return True
        seen.add(key)
    return False
