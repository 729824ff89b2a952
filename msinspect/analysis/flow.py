"""Walking the data-flow graph past plumbing: which real operator feeds a node, which ones use it.

"Real" means neither plumbing (``Load``, ``Depend`` ...) nor communication or redistribution:
a communication operator sits *between* real operators, and so does a chain of them (the
``AllGather -> Reshape -> StridedSlice -> Reshape`` of one redistribution).

Every walk here goes along *data edges* only (:func:`is_data_edge`, :func:`data_view`): the one
definition of which edges carry a value.
"""
from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Iterator

from msinspect.analysis.ops import is_comm, is_plumbing
from msinspect.model import Node

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx


def _node(graph: nx.MultiDiGraph, key: str) -> Node | None:
    return graph.nodes[key].get("node")


def is_through(node: Node | None) -> bool:
    """A node data passes through on its way between operators: plumbing (``Load``, ``Depend``
    ...) and communication, never a source such as ``Receive``."""
    return node is not None and not is_source(node) and (is_plumbing(node) or is_comm(node))


def is_source(node: Node | None) -> bool:
    """A node whose output does not come from its inputs: a ``Receive`` reads its data from
    another rank (its input only orders it)."""
    return node is not None and node.op == "Receive"


def is_data_edge(graph: nx.MultiDiGraph, source: str, target: str, key=None) -> bool:
    """Whether the edge ``source -> target`` carries a value, not only an order: an input of an
    ``UpdateState`` orders side effects, a ``Depend`` passes on its first input only (the others
    order it), and a ``Receive`` takes its data from another rank (its input only orders it).
    Takes networkx's ``filter_edge`` arguments (``key`` of a multigraph edge is ignored: every
    edge between two nodes is the same input kind)."""
    node = _node(graph, target)
    if node is None:
        return True
    if node.op == "UpdateState" or is_source(node):
        return False
    if node.op in ("Depend", "Load"):
        positions = [d.get("position") for d in graph.get_edge_data(source, target, default={}).values()] \
            if key is None else [graph.edges[source, target, key].get("position")]
        return 0 in positions
    return True


def data_view(graph: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """The graph with its data edges only (a read-only networkx view, no copy)."""
    import networkx as nx

    return nx.subgraph_view(graph, filter_edge=partial(is_data_edge, graph))


def first_input(graph: nx.MultiDiGraph, key: str) -> str | None:
    """The graph key of the node's first (position 0) data input, if it is a node or parameter."""
    for source, edges in graph.pred[key].items():
        if any(data.get("position") == 0 for data in edges.values()):
            return source
    return None


def producer(graph: nx.MultiDiGraph, key: str) -> str | None:
    """The nearest real operator (or parameter) upstream of ``key`` along first inputs."""
    seen = {key}
    current = first_input(graph, key)
    while current is not None and current not in seen:
        seen.add(current)
        if not is_through(_node(graph, current)):
            return current
        current = first_input(graph, current)
    return None


def _walk(graph: nx.MultiDiGraph, start: str, step) -> Iterator[tuple[str, str]]:
    """``(from, to)`` for every node reached from ``start``, breadth first, going on from ``start``
    and from the nodes data passes through (:func:`is_through`) only; ``step`` gives a node's
    neighbours (successors or predecessors in the data view). ``graph`` is the full graph:
    networkx asks its walk's graph for its size, which a filtered view counts node by node."""
    import networkx as nx

    def onward(key: str):
        return step(key) if key == start or is_through(_node(graph, key)) else ()

    return nx.generic_bfs_edges(graph, start, onward)


def consumers(graph: nx.MultiDiGraph, key: str, data: nx.MultiDiGraph | None = None) -> list[str]:
    """The nearest real operators downstream of ``key`` along data edges, in file order
    (``data``: the graph's :func:`data_view`, where the caller made it once for many calls)."""
    data = data if data is not None else data_view(graph)
    found = []
    for _, target in _walk(graph, key, data.successors):
        node = _node(graph, target)
        if node is not None and not is_through(node):
            found.append((node.line, target))
    return [target for _, target in sorted(found)]


def reaches_back(graph: nx.MultiDiGraph, start: str, target: str, data: nx.MultiDiGraph | None = None) -> bool:
    """Whether ``start`` is ``target`` or reaches back to it along data edges through plumbing
    and communication (``data``: as for :func:`consumers`)."""
    if start == target:
        return True
    if not is_through(_node(graph, start)):
        return False
    return path_between(graph, target, start, data) is not None


def path_between(graph: nx.MultiDiGraph, source: str, target: str,
                 data: nx.MultiDiGraph | None = None) -> list[str] | None:
    """Walk back from ``target`` along data edges through plumbing and communication until
    ``source``.

    Returns the keys passed on the way (nearest to ``target`` first; empty when ``source`` feeds
    ``target`` directly), or None when ``source`` is not reached that way. ``data``: as for
    :func:`consumers`.
    """
    data = data if data is not None else data_view(graph)
    came_from = {}
    for nearer, upstream in _walk(graph, target, data.predecessors):
        if upstream == source:
            trail = []
            while nearer != target:
                trail.append(nearer)
                nearer = came_from[nearer]
            return trail[::-1]
        came_from[upstream] = nearer
    return None


def label(graph: nx.MultiDiGraph, key: str | None) -> str | None:
    """The user-facing name of a graph node: instance name, parameter name, or debug name."""
    if key is None:
        return None
    data = graph.nodes[key]
    return data.get("name") or key
