"""Walking the data-flow graph past plumbing: which real operator feeds a node, which ones use it.

"Real" means neither plumbing (``Load``, ``Depend`` ...) nor communication or redistribution:
a communication operator sits *between* real operators, and so does a chain of them (the
``AllGather -> Reshape -> StridedSlice -> Reshape`` of one redistribution).

Every walk here goes along *data edges* only (:func:`is_data_edge`, :func:`data_view`): the one
definition of which edges carry a value. Calls to the file's subgraphs are walked into
(:mod:`msinspect.graph` binds each argument to the callee's parameter and each callee's
``Return`` to the call): a call's arguments reach the callee, its output comes from the callee's
``Return`` (:func:`passes_through`).

The walks marked :func:`~msinspect.analysis.dataflow.file_view.remembered` keep their answers with the
graph where it was asked to; that store belongs to the file's view
(:mod:`msinspect.analysis.dataflow.file_view`).
"""
from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Callable, Iterator

from msinspect.analysis.dataflow.file_view import remembered
from msinspect.analysis.dataflow.node_facts import is_plumbing
from msinspect.mindspore.vocabulary import is_comm, moves_data, stands_in
from msinspect.graph import RETURNED
from msinspect.model import Node, NodeKind

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx


def _node(graph: nx.MultiDiGraph, key: str) -> Node | None:
    return graph.nodes[key].get("node")


def is_through(node: Node | None) -> bool:
    """A node data passes through on its way between operators: plumbing (``Load``, ``Depend``
    ...) and communication, never a source such as ``Receive``."""
    return node is not None and not is_source(node) and (is_plumbing(node) or is_comm(node))


def passes_through(graph: nx.MultiDiGraph, key: str) -> bool:
    """Whether data passes through the graph node ``key`` on its way between operators:
    :func:`is_through`, or a call bound to its callees, a callee's ``Return``, a subgraph
    parameter bound at calls (``bound`` in :mod:`msinspect.graph`), or an operator of a
    replacement graph that moves a collective's parts (:func:`around_collective`)."""
    data = graph.nodes[key]
    return bool(data.get("bound")) or is_through(data.get("node")) or around_collective(graph, key)


#: The operators a replacement graph puts around its collective to work on another dimension than
#: MindSpore's collectives do (dimension 0).
_AROUND = frozenset({"Split", "Concat", "Transpose"})


def around_collective(graph: nx.MultiDiGraph, key: str) -> bool:
    """Whether ``key`` is an operator of a replacement graph (:func:`~msinspect.mindspore.vocabulary.
    stands_in`) that only moves a collective's parts: the Split of an AllGather's output and the
    Concat of its parts (a gather along dimension k: MindSpore's AllGather concatenates along
    dimension 0), the Transposes before and after a ReduceScatter (a scatter along dimension k).
    ``enable_nd_tp``'s MatMuls are replaced so (``matmul_info.cc``; zoo 20)."""
    node = _node(graph, key)
    if node is None or node.op not in _AROUND or not stands_in(node):
        return False
    upstream = input_past_plumbing(graph, key)
    if upstream is not None and (_is(moves_data, graph, upstream) or around_collective(graph, upstream)):
        return True
    users = [user for user in graph.successors(key) if is_data_edge(graph, key, user)]
    return node.op == "Transpose" and bool(users) and all(_is(moves_data, graph, user) for user in users)


def input_past_plumbing(graph: nx.MultiDiGraph, key: str) -> str | None:
    """The first input of ``key`` past plumbing (``TupleGetItem``, ``MakeTuple``, ``Load`` ...)
    only, communication not passed: a Concat's Split behind its ``MakeTuple``."""
    upstream = first_input(graph, key)
    while upstream is not None and _is(is_plumbing, graph, upstream):
        upstream = first_input(graph, upstream)
    return upstream


def _is(test: Callable[[Node], bool], graph: nx.MultiDiGraph, key: str) -> bool:
    """``test`` of the node ``key``; False for a key with no node (a parameter)."""
    node = _node(graph, key)
    return node is not None and test(node)


def _bound_call(graph: nx.MultiDiGraph, key: str) -> bool:
    """A call (or ``Partial``) whose arguments were bound to a callee's parameters: its value is
    the callee's (a ``Partial``'s: a function, no data)."""
    data = graph.nodes[key]
    return bool(data.get("bound")) and (data.get("kind") in (NodeKind.CALL_GRAPH, NodeKind.CALL_VALUE)
                                        or data.get("op") == "Partial")


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
    if _bound_call(graph, target):  # its arguments go to the callee's parameters; its value comes back
        return RETURNED in _positions(graph, source, target, key)
    if node.op == "UpdateState" or is_source(node):
        return False
    if node.op in ("Depend", "Load"):
        return 0 in _positions(graph, source, target, key)
    return True


def _positions(graph: nx.MultiDiGraph, source: str, target: str, key=None) -> list:
    """The input positions of the edge ``key`` from ``source`` to ``target`` (every such edge
    where ``key`` is None)."""
    if key is not None:
        return [graph.edges[source, target, key].get("position")]
    return [d.get("position") for d in graph.get_edge_data(source, target, default={}).values()]


def data_view(graph: nx.MultiDiGraph) -> nx.MultiDiGraph:
    """The graph with its data edges only (a read-only networkx view, no copy)."""
    import networkx as nx

    return nx.subgraph_view(graph, filter_edge=partial(is_data_edge, graph))


@remembered
def first_input(graph: nx.MultiDiGraph, key: str) -> str | None:
    """The graph key of the node's first (position 0) data input, if it is a node or parameter;
    for a bound call, the ``Return`` of the one graph it calls; for a subgraph parameter, the
    argument of its one call (None where several graphs or calls could give it)."""
    if graph.nodes[key].get("kind") == NodeKind.PARAMETER:
        sources = list(graph.pred[key])
        return sources[0] if len(sources) == 1 else None
    return input_at(graph, key, RETURNED if _bound_call(graph, key) else 0)


def input_at(graph: nx.MultiDiGraph, key: str, position: int) -> str | None:
    """The graph key of the node or parameter at input ``position`` of ``key`` (``RETURNED``: the
    ``Return`` a bound call's value comes from); None where none is, or several."""
    found = [source for source, edges in graph.pred[key].items()
             if any(data.get("position") == position for data in edges.values())]
    return found[0] if len(found) == 1 else None


@remembered
def producer(graph: nx.MultiDiGraph, key: str) -> str | None:
    """The nearest real operator (or parameter) upstream of ``key`` along first inputs, through
    calls into their callees; a subgraph parameter where its callers differ, a call where the
    graphs it may call differ."""
    seen = {key}
    current = first_input(graph, key)
    while current is not None and current not in seen:
        seen.add(current)
        if not passes_through(graph, current):
            return current
        upstream = first_input(graph, current)
        if upstream is None and graph.nodes[current].get("bound") and graph.nodes[current].get("kind") != NodeKind.RETURN:
            return current  # a parameter of several callers, a call of several graphs: itself
        current = upstream
    return None


def _walk(graph: nx.MultiDiGraph, start: str, step, also: Callable[[str], bool] | None = None
          ) -> Iterator[tuple[str, str]]:
    """``(from, to)`` for every node reached from ``start``, breadth first, going on from ``start``
    and from the nodes data passes through (:func:`is_through`) only, and those ``also`` accepts;
    ``step`` gives a node's neighbours (successors or predecessors in the data view). ``graph`` is
    the full graph: networkx asks its walk's graph for its size, which a filtered view counts node
    by node."""
    import networkx as nx

    def onward(key: str):
        go = key == start or passes_through(graph, key) or (also is not None and also(key))
        return step(key) if go else ()

    return nx.generic_bfs_edges(graph, start, onward)


#: How many tuples deep :func:`consumers` follows an element (a tuple of tuples of ...): past
#: that, every element of the innermost tuple is taken for it.
_DEEPEST = 4


@remembered
def consumers(graph: nx.MultiDiGraph, key: str, data: nx.MultiDiGraph | None = None) -> list[str]:
    """The nearest real operators downstream of ``key`` along data edges, in file order
    (``data``: the graph's :func:`data_view`, where the caller made it once for many calls).

    A value put in a tuple (``MakeTuple``) reaches the ``TupleGetItem`` of its own place only,
    through any plumbing, call or ``Return`` between them (a ``@lazy_inline`` bprop returns each
    weight's gradient at its place of one tuple; the caller takes each out by its index); an
    operator that reads the whole tuple reads it too."""
    from collections import deque

    data = data if data is not None else data_view(graph)
    found: dict[str, int] = {}
    seen = {(key, ())}
    todo = deque(seen)
    while todo:
        current, places = todo.popleft()
        for target in data.successors(current):
            node = _node(graph, target)
            if node is not None and not passes_through(graph, target):
                found[target] = node.line
                continue
            for onward in _element_places(graph, current, target, node, places):
                if (target, onward) not in seen:
                    seen.add((target, onward))
                    todo.append((target, onward))
    return sorted(found, key=found.get)


def _element_places(graph: nx.MultiDiGraph, source: str, target: str, node: Node | None,
                    places: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Where in tuples the value :func:`consumers` follows is, once past ``target`` (reached from
    ``source``): the innermost place last; none where ``target`` takes out another element. A
    ``MakeTuple`` puts it at its place, a ``TupleGetItem`` takes it out; ``Load``, ``Depend``, a
    bound call, its callee's ``Return`` and parameters pass the tuple on as it is; any other
    operator data passes through (a collective, a redistribution's ``Concat``) makes a new value."""
    if node is not None and node.op == "MakeTuple":
        if len(places) >= _DEEPEST:
            return [places]
        return [places + (p,) for p in _positions(graph, source, target) if isinstance(p, int) and p >= 0]
    if node is not None and node.op == "TupleGetItem" and places:
        index = node.inputs[1] if len(node.inputs) > 1 else None
        if type(index) is int:
            return [places[:-1]] if index == places[-1] else []
        return [places[:-1]]
    if node is None or node.op in _CARRIERS or graph.nodes[target].get("bound"):
        return [places]
    return [()]


#: The operators that pass a tuple on as it is (besides calls, their callees' ``Return`` and
#: parameters: ``bound`` in :mod:`msinspect.graph`).
_CARRIERS = frozenset({"Load", "Depend"})


def reaches_back(graph: nx.MultiDiGraph, start: str, target: str, data: nx.MultiDiGraph | None = None) -> bool:
    """Whether ``start`` is ``target`` or reaches back to it along data edges through plumbing
    and communication (``data``: as for :func:`consumers`)."""
    if start == target:
        return True
    if not passes_through(graph, start):
        return False
    return path_between(graph, target, start, data) is not None


@remembered
def path_between(graph: nx.MultiDiGraph, source: str, target: str,
                 data: nx.MultiDiGraph | None = None) -> list[str] | None:
    """Walk back from ``target`` along data edges through plumbing and communication until
    ``source``.

    Returns the keys passed on the way (nearest to ``target`` first; empty when ``source`` feeds
    ``target`` directly), or None when ``source`` is not reached that way. ``data``: as for
    :func:`consumers`.
    """
    return trail_between(graph, source, target, data)


def trail_between(graph: nx.MultiDiGraph, source: str, target: str, data: nx.MultiDiGraph | None = None,
                  also: Callable[[str], bool] | None = None) -> list[str] | None:
    """:func:`path_between`, the walk going on through the nodes ``also`` accepts as well (a
    check's operators allowed on the way); not kept, the predicate being the caller's."""
    data = data if data is not None else data_view(graph)
    came_from = {}
    for nearer, upstream in _walk(graph, target, data.predecessors, also):
        if upstream == source:
            trail = []
            while nearer != target:
                trail.append(nearer)
                nearer = came_from[nearer]
            return trail[::-1]
        came_from[upstream] = nearer
    return None
