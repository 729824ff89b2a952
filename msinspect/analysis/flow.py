"""Walking the data-flow graph past plumbing: which real operator feeds a node, which ones use it.

"Real" means neither plumbing (``Load``, ``Depend`` ...) nor communication or redistribution:
a communication operator sits *between* real operators, and so does a chain of them (the
``AllGather -> Reshape -> StridedSlice -> Reshape`` of one redistribution).
"""
from __future__ import annotations

from collections import deque

import networkx as nx

from msinspect.analysis.ops import is_comm, is_plumbing
from msinspect.model import Node


def _node(graph: nx.MultiDiGraph, key: str) -> Node | None:
    return graph.nodes[key].get("node")


def _is_through(node: Node | None) -> bool:
    return node is not None and not is_source(node) and (is_plumbing(node) or is_comm(node))


def is_source(node: Node | None) -> bool:
    """A node whose output does not come from its inputs: a ``Receive`` reads its data from
    another rank (its input only orders it)."""
    return node is not None and node.op == "Receive"


def first_input(graph: nx.MultiDiGraph, key: str) -> str | None:
    """The graph key of the node's first (position 0) data input, if it is a node or parameter."""
    for source, _, data in graph.in_edges(key, data=True):
        if data.get("position") == 0:
            return source
    return None


def producer(graph: nx.MultiDiGraph, key: str) -> str | None:
    """The nearest real operator (or parameter) upstream of ``key`` along first inputs."""
    seen = {key}
    current = first_input(graph, key)
    while current is not None and current not in seen:
        seen.add(current)
        if not _is_through(_node(graph, current)):
            return current
        current = first_input(graph, current)
    return None


def consumers(graph: nx.MultiDiGraph, key: str) -> list[str]:
    """The nearest real operators downstream of ``key``, in file order.

    Ordering edges are not data: ``UpdateState`` is skipped, and a ``Depend`` passes on only its
    first input.
    """
    found: list[str] = []
    seen = {key}
    queue = deque([key])
    while queue:
        current = queue.popleft()
        for _, target, data in graph.out_edges(current, data=True):
            if target in seen:
                continue
            node = _node(graph, target)
            if node is None:
                continue
            if (node.op == "UpdateState" or is_source(node)
                    or (node.op == "Depend" and data.get("position") != 0)):
                continue
            seen.add(target)
            if _is_through(node):
                queue.append(target)
            else:
                found.append(target)
    return sorted(found, key=lambda k: graph.nodes[k].get("line", 0))


def path_between(graph: nx.MultiDiGraph, source: str, target: str) -> list[str] | None:
    """Walk back from ``target`` through plumbing and communication until ``source``.

    Returns the keys passed on the way (nearest to ``target`` first; empty when ``source`` feeds
    ``target`` directly), or None when ``source`` is not reached that way.
    """
    seen = {target}
    queue = deque([(target, [])])
    while queue:
        current, trail = queue.popleft()
        for upstream, _, _ in graph.in_edges(current, data=True):
            if upstream == source:
                return trail
            if upstream in seen:
                continue
            seen.add(upstream)
            if _is_through(_node(graph, upstream)):
                queue.append((upstream, trail + [upstream]))
    return None


def label(graph: nx.MultiDiGraph, key: str | None) -> str | None:
    """The user-facing name of a graph node: instance name, parameter name, or debug name."""
    if key is None:
        return None
    data = graph.nodes[key]
    return data.get("name") or key
