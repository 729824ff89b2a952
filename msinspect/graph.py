"""An :class:`~msinspect.model.IRFile` as a networkx ``MultiDiGraph``: the only module that builds
networkx graphs from the model, and :func:`lint`, the references that name nothing.

One graph node per IR node (CNodes, ``Return`` nodes, and the parameters of the file and of its
subgraphs), keyed ``"<subgraph>/%3"``, ``"<subgraph>/Return"`` or ``"param:<name>"``, its
``kind`` a :class:`~msinspect.model.NodeKind`; one edge per input that names a node or a
parameter of the file, from the producer to the consumer, with the input's ``position``. An
input that names nothing gets no edge and no made-up node: :func:`lint` reports it.

Calls are followed the way MindSpore binds them (:func:`_bind_calls`): a call of a subgraph of
the file (``call @g(a, b)``, ``@g(a, b)``, a call of a value that may be ``@g`` or one of a
``FuncUnion``, a ``Partial(@g, a)`` and the later call of what it made) gets an edge from each
argument to the callee's parameter it binds (``binds``: the call's key), and an edge from each
callee's ``Return`` to the call (position :data:`RETURNED`). Such a call (a ``Partial`` too),
those ``Return`` nodes and those parameters are marked ``bound``: data passes through them
(``analysis.dataflow.flow``), so a weight given to a ``@lazy_inline`` model body as an argument reaches
the operators inside it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from msinspect.model import (FreeVarRef, GraphRef, IRFile, Node, NodeKind, NodeRef, ParamRef, describe_node,
                             where)

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx


def is_cnode(data: dict) -> bool:
    """Whether a graph node's data is one of the file's CNodes (``%N = ...``): not a parameter,
    not a subgraph's ``Return``."""
    node = data.get("node")
    return node is not None and node.index is not None


def node_id(node: Node) -> str:
    """The graph key of an IR node."""
    return f"{node.graph}/{node.ref}"


def _attrs(node: Node) -> dict:
    strategy = node.strategy
    return {
        "kind": node.kind,
        "graph": node.graph,
        "op": node.op,
        "name": node.name,
        "instance_name": node.instance_name,
        "debug_name": node.debug_name,
        "scope": node.scope or (node.fullname.rsplit("/", 1)[0] if node.fullname else None),
        "fullname": node.fullname,
        "line": node.line,
        "in_strategy": strategy.in_strategy if strategy else None,
        "out_strategy": strategy.out_strategy if strategy else None,
        "strategy_source": strategy.source if strategy else None,
        "input_shapes": tuple(a.shape for a in node.input_types),
        "output_shapes": tuple(a.shape for a in node.output_types),
        "dtypes": tuple(a.dtype for a in node.output_types),
        "node": node,
    }


@dataclass(frozen=True)
class Finding:
    """Something :func:`lint` found wrong in a file that parsed: where, and what."""

    path: str
    line: int
    what: str
    target: str | None = None
    """The graph key of the node whose operand it is."""
    position: int | None = None
    """Which operand."""
    operand: str | None = None
    """The graph key the operand would have (``g/%1``, ``param:para4_w``), None for a free
    variable that names no parameter."""

    def format(self) -> str:
        return f"{where(self.path, self.line)}: {self.what}"


class _Names:
    """Every name an operand of one file may take: node keys, parameters, debug names."""

    def __init__(self, ir: IRFile):
        self.keys = {f"{n.graph}/{n.ref}" for n in ir.nodes()}
        self.file_params = {p.name for p in ir.params}
        self.graph_params = {g.name: set(g.params) for g in ir.subgraphs}
        self.by_debug = {(n.graph, n.debug_name): f"{n.graph}/{n.ref}" for n in ir.nodes()}

    def source_of(self, value, node: Node) -> str | None:
        """The graph key an operand names, ``None`` when it names nothing."""
        if isinstance(value, NodeRef):
            key = f"{node.graph}/%{value.index}"
            return key if key in self.keys else None
        if isinstance(value, ParamRef):
            return self._param(value.name, node.graph)
        if isinstance(value, FreeVarRef):
            return self._param(value.name, value.graph) or self.by_debug.get((value.graph, value.name))
        return None

    def _param(self, name: str, graph: str) -> str | None:
        if name in self.file_params or name in self.graph_params.get(graph, ()):
            return f"param:{name}"
        return None


def _is_reference(value) -> bool:
    return isinstance(value, (NodeRef, ParamRef, FreeVarRef))


def _shown(value) -> str:
    if isinstance(value, NodeRef):
        return f"%{value.index}"
    if isinstance(value, ParamRef):
        return f"%{value.name}"
    return f"$(@{value.graph}:{value.name})"


def _key(value, node: Node) -> str | None:
    if isinstance(value, NodeRef):
        return f"{node.graph}/%{value.index}"
    if isinstance(value, ParamRef) or value.name.startswith("para"):
        return f"param:{value.name}"
    return None


#: The position of the edge from a callee's ``Return`` to the call: the call's output.
RETURNED = -1


def _first_bound(sub, argument_count: int, partial: bool) -> int | None:
    """The position of the first parameter of ``sub`` that ``argument_count`` arguments bind: the
    first for a ``Partial``, else the one that leaves the last ones to the arguments (a ``Partial``
    bound those before); None where the arguments outnumber the parameters (not a binding this
    reading understands)."""
    if argument_count > len(sub.params):
        return None
    return 0 if partial else len(sub.params) - argument_count


def _bind_calls(ir: IRFile, graph: nx.MultiDiGraph, names: _Names) -> None:
    """Add the edges of calls to the file's subgraphs (see the module's docstring)."""
    subgraphs = {sub.name: sub for sub in ir.subgraphs}
    for node in ir.nodes():
        partial = node.op == "Partial" and node.inputs and isinstance(node.inputs[0], GraphRef)
        if partial:
            callees, arguments = (node.inputs[0].name,), node.inputs[1:]
        elif node.kind in (NodeKind.CALL_GRAPH, NodeKind.CALL_VALUE) and node.callee_graphs:
            callees, arguments = node.callee_graphs, node.inputs
        else:
            continue
        call = node_id(node)
        for name in callees:
            sub = subgraphs.get(name)
            first = _first_bound(sub, len(arguments), partial) if sub is not None else None
            if first is None:
                continue
            for position, value in enumerate(arguments, first):
                source = names.source_of(value, node)
                if source is not None:
                    param = f"param:{sub.params[position]}"
                    graph.add_edge(source, param, position=position, binds=call)
                    graph.nodes[param]["bound"] = True
            if partial:
                graph.nodes[call]["bound"] = True
            returned = f"{name}/Return"
            if not partial and returned in graph:
                graph.add_edge(returned, call, position=RETURNED)
                graph.nodes[returned]["bound"] = graph.nodes[call]["bound"] = True


def to_networkx(ir: IRFile) -> nx.MultiDiGraph:
    """Build the data-flow graph of one parsed file."""
    import networkx as nx

    graph = nx.MultiDiGraph(path=ir.path, stage=ir.stage, entry=ir.entry)
    for param in ir.params:
        graph.add_node(f"param:{param.name}", kind=NodeKind.PARAMETER, name=param.short_name,
                       has_default=param.has_default, op="Parameter", graph=None, line=param.line,
                       output_shapes=(param.abstract.shape,) if param.abstract else (),
                       dtypes=(param.abstract.dtype,) if param.abstract else ())
    for sub in ir.subgraphs:
        for name in sub.params:
            if f"param:{name}" not in graph:
                graph.add_node(f"param:{name}", kind=NodeKind.PARAMETER, name=ParamRef(name).short_name,
                               has_default=False, op="Parameter", graph=sub.name, line=sub.line,
                               output_shapes=(), dtypes=())
    for node in ir.nodes():
        graph.add_node(node_id(node), **_attrs(node))
    names = _Names(ir)
    for node in ir.nodes():
        target = node_id(node)
        for position, value in enumerate(node.inputs):
            source = names.source_of(value, node)
            if source is not None:
                graph.add_edge(source, target, position=position)
    _bind_calls(ir, graph, names)
    return graph


def lint(ir: IRFile) -> list[Finding]:
    """What a file that parsed still gets wrong: every operand that names no node of its
    subgraph, no parameter of the file or of its subgraph, no node or parameter of the graph a
    free variable names. One finding per operand, in file order. An excerpt (headerless
    documentation text) names nodes it leaves out, so its findings say what was left out."""
    names = _Names(ir)
    found = []
    for node in ir.nodes():
        for position, value in enumerate(node.inputs):
            if _is_reference(value) and names.source_of(value, node) is None:
                found.append(Finding(ir.path, node.line,
                                     f"operand {position} of {describe_node(node)}: "
                                     f"{_shown(value)} names nothing in this file",
                                     node_id(node), position, _key(value, node)))
    return found


def find_nodes(graph: nx.MultiDiGraph, *, name: str | None = None, op: str | None = None,
               scope: str | None = None) -> Iterator[str]:
    """Keys of the IR nodes matching every criterion given: instance (or best) name, op type
    (``MatMul``; a ``PrimFunc_`` prefix is ignored), and scope prefix."""
    for key, data in graph.nodes(data=True):
        if data.get("kind") == NodeKind.PARAMETER:
            continue
        if name is not None and name not in (data.get("instance_name"), data.get("name"), data.get("debug_name")):
            continue
        if op is not None and data.get("op") != op.removeprefix("PrimFunc_"):
            continue
        if scope is not None and not (data.get("scope") or "").startswith(scope):
            continue
        yield key
