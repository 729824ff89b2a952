"""An :class:`~msinspect.model.IRFile` as a networkx ``MultiDiGraph``: the only module that builds
networkx graphs from the model.

One graph node per IR node (CNodes, ``Return`` nodes, and the parameters they read), keyed
``"<subgraph>/%3"``, ``"<subgraph>/Return"`` or ``"param:<name>"``; one edge per input, from the
producer to the consumer, with the input's ``position``.
"""
from __future__ import annotations

from typing import Iterator

import networkx as nx

from msinspect.model import FreeVarRef, IRFile, Node, NodeRef, ParamRef


def node_id(node: Node) -> str:
    """The graph key of an IR node."""
    return f"{node.graph}/{node.ref}"


def _attrs(node: Node) -> dict:
    strategy = node.strategy
    return {
        "kind": "return" if node.index is None else "cnode",
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


def to_networkx(ir: IRFile) -> nx.MultiDiGraph:
    """Build the data-flow graph of one parsed file."""
    graph = nx.MultiDiGraph(path=ir.path, stage=ir.stage, entry=ir.entry)
    for param in ir.params:
        graph.add_node(f"param:{param.name}", kind="parameter", name=param.short_name, has_default=param.has_default,
                       op="Parameter", graph=None, line=param.line,
                       output_shapes=(param.abstract.shape,) if param.abstract else (),
                       dtypes=(param.abstract.dtype,) if param.abstract else ())
    by_debug: dict[tuple[str, str], str] = {}
    for node in ir.nodes():
        key = node_id(node)
        graph.add_node(key, **_attrs(node))
        by_debug[(node.graph, node.debug_name)] = key
    for node in ir.nodes():
        target = node_id(node)
        for position, value in enumerate(node.inputs):
            source = _source_of(value, node, by_debug)
            if source is None:
                continue
            if source not in graph:
                graph.add_node(source, kind="parameter", name=source.split("_", 1)[-1], op="Parameter",
                               graph=None, line=0, output_shapes=(), dtypes=())
            graph.add_edge(source, target, position=position)
    return graph


def _source_of(value, node: Node, by_debug: dict) -> str | None:
    if isinstance(value, NodeRef):
        return f"{node.graph}/%{value.index}"
    if isinstance(value, ParamRef):
        return f"param:{value.name}"
    if isinstance(value, FreeVarRef):
        if value.name.startswith("para"):
            return f"param:{value.name}"
        return by_debug.get((value.graph, value.name))
    return None


def find_nodes(graph: nx.MultiDiGraph, *, name: str | None = None, op: str | None = None,
               scope: str | None = None) -> Iterator[str]:
    """Keys of the IR nodes matching every criterion given: instance (or best) name, op type
    (``MatMul``; a ``PrimFunc_`` prefix is ignored), and scope prefix."""
    for key, data in graph.nodes(data=True):
        if data.get("kind") == "parameter":
            continue
        if name is not None and name not in (data.get("instance_name"), data.get("name"), data.get("debug_name")):
            continue
        if op is not None and data.get("op") != op.removeprefix("PrimFunc_"):
            continue
        if scope is not None and not (data.get("scope") or "").startswith(scope):
            continue
        yield key
