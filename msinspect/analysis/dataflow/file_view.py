"""One IR file as the analyses read it (:class:`FileView`): the parsed file, its networkx graph,
its nodes by graph key, by line and by (subgraph, index), the names MindSpore prints for them
(the user-facing :func:`label`, ParallelValidator's ``Type-N``), each input's producer, and the
answers of walks kept with the graph (:func:`remember`, :func:`answer`).

``explain`` (:class:`msinspect.analysis.explain.rank_file.RankFile`), the expectation kinds and the
graph walks (:mod:`msinspect.analysis.dataflow.flow`) read a file through it; :func:`view_of` reads a
file once per process.
"""
from __future__ import annotations

import os
from functools import lru_cache, wraps
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping

from msinspect.mindspore.naming import type_ordinals, validator_type
from msinspect.model import FreeVarRef, Node, NodeKind, NodeRef, ParamRef, unnumbered

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx

    from msinspect.model import IRFile

#: MindSpore's parameter names in a dump (``%para3_w``) name the weight after the prefix.


class FileView:
    """One parsed IR file: its graph (:func:`msinspect.graph.to_networkx`, built on first use),
    its nodes by graph key (:meth:`node`), by line (:attr:`by_line`) and by
    (subgraph, index) (:attr:`by_index`), their names (:meth:`label`, :meth:`type_name`) and the
    node each input comes from (:meth:`input_nodes`)."""

    def __init__(self, ir: IRFile) -> None:
        self.ir = ir
        """The parsed file."""
        self.by_line: dict[int, Node] = {n.line: n for n in ir.nodes() if n.index is not None}
        """The file's operators (nodes with an index) by line, in file order."""
        self._graph: nx.MultiDiGraph | None = None
        self._by_index: dict[tuple[str, int], Node] | None = None
        self._type_names: dict[tuple[str, int], str] | None = None

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The file's graph (:func:`msinspect.graph.to_networkx`)."""
        if self._graph is None:
            from msinspect.graph import to_networkx

            self._graph = to_networkx(self.ir)
        return self._graph

    @property
    def by_index(self) -> dict[tuple[str, int], Node]:
        """The file's operators by (subgraph name, index): what a ``%N`` operand of a node of that
        subgraph names."""
        if self._by_index is None:
            self._by_index = {(n.graph, n.index): n for n in self.by_line.values()}
        return self._by_index

    def node(self, key: str | None) -> Node | None:
        """The IR node at graph key ``key``; None for a key with no node (a parameter) or none."""
        graph = self.graph
        return graph.nodes[key].get("node") if key is not None and key in graph else None

    def label(self, key: str | None) -> str | None:
        """The user-facing name of the graph node ``key`` (:func:`label`)."""
        return label(self.graph, key)

    def type_name(self, node: Node) -> str:
        """The node's ``Type-N`` name as MindSpore's ``ParallelValidator`` prints it: its
        :func:`~msinspect.mindspore.naming.validator_type`, then its count among those of that type
        before it in its graph (:func:`~msinspect.mindspore.naming.type_ordinals`); its operator for a
        node that is no operator of the file."""
        if self._type_names is None:
            nodes = list(self.by_line.values())
            types = [validator_type(n) for n in nodes]
            ordinals = type_ordinals(zip((n.graph for n in nodes), types))
            self._type_names = {(n.graph, n.index): f"{t}-{k}" for n, t, k in zip(nodes, types, ordinals)}
        return self._type_names.get((node.graph, node.index), str(node.op))

    def input_nodes(self, node: Node) -> list[Node | None]:
        """For each input of ``node``, in order, the operator of its graph that gives it; None for
        an input that is no operator of the file (a parameter, a constant, a ``%N`` not read)."""
        return [self.by_index.get((node.graph, o.index)) if isinstance(o, NodeRef) else None for o in node.inputs]

    def validator_inputs(self, node: Node) -> list[Any]:
        """The node's inputs as MindSpore's ``ParallelValidator`` lists them: another node by its
        ``Type-N`` name (``%N`` where the file does not hold it), a parameter by its name less
        MindSpore's ``paraN_`` (``w``), a constant as its value."""
        out = []
        for operand, made in zip(node.inputs, self.input_nodes(node)):
            if isinstance(operand, NodeRef):
                out.append(self.type_name(made) if made is not None else f"%{operand.index}")
            elif isinstance(operand, (ParamRef, FreeVarRef)):
                out.append(unnumbered(str(operand.name)))
            else:
                out.append(operand)
        return out


def view_of(path) -> FileView:
    """The view of the IR file at ``path``, read past what does not parse (as the analyses read
    it), once per process while the file is unchanged."""
    path = str(path)
    stat = os.stat(path)
    return _view(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=16)
def _view(path: str, mtime_ns: int, size: int) -> FileView:
    from msinspect.parser import parse_file  # Lark is loaded when something is parsed

    return FileView(parse_file(path, lenient=True))


def label(graph: nx.MultiDiGraph, key: str | None) -> str | None:
    """The user-facing name of a graph node: instance name, parameter name, or debug name; a call
    of subgraphs without an instance name by what it calls (``call @g``, ``call @g1 | @g2``)."""
    if key is None:
        return None
    data = graph.nodes[key]
    node = data.get("node")
    if node is not None and not node.instance_name and node.callee_graphs and \
            data.get("kind") in (NodeKind.CALL_GRAPH, NodeKind.CALL_VALUE):
        return "call " + " | ".join(f"@{g}" for g in node.callee_graphs)
    return data.get("name") or key


# answers kept with a graph

#: Where :func:`remember` keeps the walks' answers: in the graph's own attributes, so they go
#: with it.
_ANSWERS = "flow_answers"


def remember(graph: nx.MultiDiGraph) -> None:
    """Keep the answers of the walks marked :func:`remembered` on ``graph`` (the walks of
    :mod:`msinspect.analysis.dataflow.flow` and others) and give them again when asked again: for a graph
    that will not change while it is kept, read for many ranks (ranks read alike,
    :mod:`msinspect.analysis.engine.alike`). The walks read the graph's edges and what of each node the
    ranks read against one graph share (its operator, kind, instance name, strategy, the kinds
    and shapes of its values): the values that differ between them (group names, constants) are
    never read by a remembered walk."""
    graph.graph[_ANSWERS] = {}


def keeps_answers(graph: nx.MultiDiGraph) -> bool:
    """Whether :func:`remember` asked ``graph`` to keep its answers (:func:`answer`)."""
    return _ANSWERS in graph.graph


def kept_answers(graph: nx.MultiDiGraph) -> Mapping:
    """The answers ``graph`` keeps (:func:`remember`), read only: empty where it keeps none."""
    return MappingProxyType(graph.graph.get(_ANSWERS) or {})


def remembered(walk: Callable) -> Callable:
    """``walk(graph, *keys[, data])`` (graph keys, then the graph's data view or None), its answer
    kept where :func:`remember` asked for it: ``data`` is the same for every call on one graph, so
    the keys name the answer. A list is given as a copy, so a caller may change it."""
    @wraps(walk)
    def kept(graph, *args):
        keys = args if not args or isinstance(args[-1], str) else args[:-1]
        found = answer(graph, (walk.__name__, *keys), lambda: walk(graph, *args))
        return list(found) if isinstance(found, list) else found
    return kept


def answer(graph: nx.MultiDiGraph, name: tuple, compute: Callable):
    """``compute()``, kept under ``name`` where :func:`remember` asked for it and given again
    when asked again: ``name`` holds everything the answer reads that ranks read against one
    graph may not share (their values), the rest being the graph's."""
    memo = graph.graph.get(_ANSWERS)
    if memo is None:
        return compute()
    found = memo.get(name, _NONE)  # hashed once: a name can be long
    if found is _NONE:
        found = memo[name] = compute()
    return found


_NONE = object()
