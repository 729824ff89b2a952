"""Choosing what a picture shows: which nodes are drawn, which are walked through (collapsed
plumbing), which are left out (the gradient graph unless asked), and the neighbourhood of the
selected operators."""
from __future__ import annotations

import difflib
from collections import deque

import networkx as nx

from msinspect.analysis.dataflow.flow import is_data_edge
from msinspect.analysis.dataflow.node_facts import is_backward, is_plumbing, matches
from msinspect.mindspore.vocabulary import is_comm
from msinspect.errors import MsInspectError
from msinspect.graph import node_id
from msinspect.model import IRFile, Node


# The lead points this at the analysis package's one definition of a data edge after merging.
class View:
    """The file's graph as the picture sees it: which nodes are shown, which are walked through
    (collapsed plumbing), which are left out (the gradient graph unless asked)."""

    def __init__(self, graph: nx.MultiDiGraph, include_backward: bool, include_plumbing: bool):
        self.graph = graph
        self.include_backward = include_backward
        self.include_plumbing = include_plumbing

    def node(self, key: str) -> Node | None:
        return self.graph.nodes[key].get("node")

    def is_param(self, key: str) -> bool:
        return self.graph.nodes[key].get("kind") == "parameter"

    def excluded(self, key: str) -> bool:
        node = self.node(key)
        return node is not None and not self.include_backward and is_backward(node)

    def hidden(self, key: str) -> bool:
        """Collapsed into the edges: plumbing, unless plumbing is drawn."""
        node = self.node(key)
        return node is not None and not self.include_plumbing and is_plumbing(node)

    def carries_data(self, source: str, target: str, position: int | None) -> bool:
        """Whether the edge carries data rather than only ordering side effects (monads)."""
        return is_data_edge(self.graph, source, target)

    def free(self, key: str) -> bool:
        """Walking onto it costs no hop: communication sits between real operators, and parameters
        and (drawn) plumbing only carry values."""
        node = self.node(key)
        return node is None or is_comm(node) or is_plumbing(node)

    def inputs(self, key: str, *, data_only: bool = True) -> list[tuple[str, str, int]]:
        """Shown nodes feeding ``key`` through collapsed plumbing, as ``(source, first_hop_target,
        position)``: the last edge of the way, whose target input type names the tensor. Ordering
        edges (monads) are followed only when ``data_only`` is False and plumbing is drawn."""
        return self._walk(key, upstream=True, data_only=data_only or not self.include_plumbing)

    def outputs(self, key: str) -> list[str]:
        """Shown nodes fed with data by ``key`` through collapsed plumbing."""
        return [target for target, _, _ in self._walk(key, upstream=False, data_only=True)]

    def _walk(self, start: str, upstream: bool, data_only: bool) -> list[tuple[str, str, int]]:
        # Each queued node carries the element it stands for when it is a collapsed tuple
        # (MakeTuple, _VirtualDataset) reached through a TupleGetItem, so that only that element's
        # producer is followed upstream, and only that element's TupleGetItem downstream.
        found: dict[tuple[str, str, int], None] = {}
        seen = {(start, None)}
        queue: deque[tuple[str, int | None]] = deque([(start, None)])
        while queue:
            current, element = queue.popleft()
            edges = (self.graph.in_edges(current, data=True) if upstream
                     else self.graph.out_edges(current, data=True))
            for source, target, data in edges:
                other = source if upstream else target
                position = data.get("position")
                if element is not None and element != (position if upstream else _item_index(self.graph, target)):
                    continue
                if self.excluded(other) or (data_only and not is_data_edge(self.graph, source, target)):
                    continue
                if not self.hidden(other):
                    found[(other, target, position)] = None
                    continue
                picked = None
                if _is_tuple_maker(self.graph, other):
                    picked = _item_index(self.graph, current) if upstream else position
                if (other, picked) not in seen:
                    seen.add((other, picked))
                    queue.append((other, picked))
        return list(found)


def _is_tuple_maker(graph: nx.MultiDiGraph, key: str) -> bool:
    return graph.nodes[key].get("op") in ("MakeTuple", "_VirtualDataset")


def _item_index(graph: nx.MultiDiGraph, key: str) -> int | None:
    """The constant index of a ``TupleGetItem``; None for any other node."""
    node = graph.nodes[key].get("node")
    if node is None or node.op != "TupleGetItem" or len(node.inputs) < 2:
        return None
    index = node.inputs[1]
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def neighbourhood(view: View, seeds: list[str], depth: int) -> set[str]:
    """The seeds and every shown node within ``depth`` real-operator hops upstream or downstream."""
    keep = set(seeds)
    for upstream in (True, False):
        best = {key: 0 for key in seeds}
        queue = deque((key, 0) for key in seeds)
        while queue:
            key, dist = queue.popleft()
            if dist > best.get(key, dist):
                continue
            step = ([source for source, _, _ in view.inputs(key)] if upstream else view.outputs(key))
            for other in step:
                cost = 0 if view.free(other) else 1
                if dist + cost > depth or best.get(other, depth + 1) <= dist + cost:
                    continue
                best[other] = dist + cost
                keep.add(other)
                if cost:
                    queue.append((other, dist + cost))
                else:
                    queue.appendleft((other, dist))
    return keep


def with_parameters(view: View, keys: set[str]) -> set[str]:
    """Add the parameters read by the drawn operators, with the ``Load`` reading them when
    plumbing is drawn."""
    extra: set[str] = set()
    for key in keys:
        for source, _, _ in view.inputs(key):
            node = view.node(source)
            if view.is_param(source):
                extra.add(source)
            elif node is not None and node.op == "Load" and source not in keys:
                params = [s for s, _, _ in view.inputs(source) if view.is_param(s)]
                if params:
                    extra.update([source, *params])
    return keys | extra


def pick_seeds(ir: IRFile, view: View, around: str | None, graph_name: str | None) -> list[Node]:
    nodes = [n for n in ir.nodes() if n.index is not None]
    if graph_name is not None:
        name = graph_name.lstrip("@")
        names = [g.name for g in ir.subgraphs]
        if name not in names:
            close = difflib.get_close_matches(name, names, n=3, cutoff=0.3)
            hint = f"; did you mean {', '.join('@' + c for c in close)}?" if close else f" (it has {len(names)})"
            raise MsInspectError(f"{ir.path}: no subgraph @{name}{hint}")
        nodes = [n for n in nodes if n.graph == name]
    if around is None:
        return nodes
    found = [n for n in nodes if matches(n, around)]
    if not found:
        named = sorted({n.instance_name for n in nodes if n.instance_name})
        close = difflib.get_close_matches(around, named, n=5, cutoff=0.5)
        hint = f"; close names: {', '.join(close)}" if close else ""
        where = f" in subgraph @{graph_name.lstrip('@')}" if graph_name else ""
        raise MsInspectError(f"{ir.path}: no operator matching {around!r}{where}{hint}")
    shown = [n for n in found if not view.excluded(node_id(n))]
    if not shown:
        raise MsInspectError(
            f"{ir.path}: the {len(found)} operator(s) matching {around!r} are all in the gradient graph; "
            "draw it with include_backward=True (--backward)")
    return shown
