"""One row per CNode of a file: the flat operator table that counts, shape checks and diffs use."""
from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Iterable

from msinspect.analysis.rank.context import RankContext
from msinspect.analysis.dataflow.flow import first_input
from msinspect.analysis.dataflow.node_facts import bprop_graph, is_backward, is_plumbing, scope_of, tensor_inputs
from msinspect.mindspore.vocabulary import is_comm
from msinspect.mindspore.naming import validator_type
from msinspect.analysis.rank.strategies import strategy_of
from msinspect.graph import node_id
from msinspect.model import IRFile, Node

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx

OP_COLUMNS = [
    "rank", "name", "op", "scope", "line", "inputs", "output", "in_strategy", "backward", "comm",
    "plumbing", "micro", "file", "param", "graph", "type",
]


def parameter_read(graph: nx.MultiDiGraph, key: str) -> str | None:
    """The parameter an operator is about: the one it takes as its first input (directly or
    through ``Load`` / ``Depend``), else the ``mirror_user_id`` (the weight's name) MindSpore
    writes on it or on the operators its first input passes through. What an ``Assign``,
    ``ZerosLike`` or optimizer update is about, whatever its debug name."""
    current = key
    for _ in range(8):
        data = graph.nodes[current]
        if data.get("kind") == "parameter":
            return data.get("name") or current
        node = data.get("node")
        if node is None:
            return None
        named = node.primitive_attrs.get("mirror_user_id") or node.cnode_primal_attrs.get("mirror_user_id")
        if isinstance(named, str) and named:
            return named
        if current != key and node.op not in ("Load", "Depend", "Muls", "Cast", "Reshape"):
            return None
        current = first_input(graph, current)
        if current is None:
            return None
    return None


def operator_reads(node: Node) -> tuple:
    """What :func:`operator_rows` reads of a node beyond the graph's walks and the weight names
    MindSpore writes on it (:func:`parameter_read`): its number, names, operator, kind, callee and
    the graphs it may call, scope, types, micro batch and strategy."""
    return (node.index, node.instance_name, node.fullname, node.debug_name, node.op, node.kind, node.callee,
            node.callee_graphs, node.scope, node.input_types, node.output_types, node.cnode_primal_attrs.get("micro"),
            node.strategy)


def graph_called(node: Node) -> str | None:
    """The subgraph a call runs each time it runs: the one of :attr:`~msinspect.model.Node.callee_graphs`
    (``call @g``, ``@g``, a value known to be ``@g``: ``%5[@g]``, or a closure of it:
    ``%34[@Partial(@g)]``, zoo 13's backward chunks); None for no call, and for a call of a value
    that may be one of several (``[@FuncUnion(@g1, @g2)]``: control flow, which of them runs is
    not in the file)."""
    graphs = node.callee_graphs
    return graphs[0] if len(graphs) == 1 else None


def operator_rows(ir: IRFile, ctx: RankContext = RankContext(), graph: nx.MultiDiGraph | None = None,
                  only: Collection[Node] | None = None) -> list[dict]:
    """Every CNode except ``Return``, in file order; ``param``: the parameter it takes as its
    first input, when ``graph`` is given; ``calls``, not a column: the subgraph it runs
    (:func:`graph_called`). ``only``: these nodes only (in file order)."""
    rows = []
    for node in ir.nodes() if only is None else only:
        if node.index is None:
            continue
        strategy = strategy_of(node)
        rows.append({
            "rank": ctx.rank, "name": node.instance_name or node.name, "op": node.op,
            "scope": scope_of(node), "line": node.line,
            "inputs": tuple(a.shape for a in tensor_inputs(node)),
            "output": node.output_shape, "in_strategy": strategy.in_strategy if strategy else None,
            "backward": is_backward(node), "comm": is_comm(node), "plumbing": is_plumbing(node),
            "micro": node.cnode_primal_attrs.get("micro"), "file": ir.path,
            "param": parameter_read(graph, node_id(node)) if graph is not None else None,
            "graph": node.graph, "type": validator_type(node),
            "calls": graph_called(node),  # hidden: the run counts' input (job.cost_tables.runs_per_graph)
        })
    return rows


def gradient_pending(ops: Iterable[dict]) -> bool:
    """Whether a file's operator rows hold a ``J`` node: automatic differentiation not yet
    expanded, so no gradient graph in the file."""
    return any(row["op"] == "J" for row in ops)


def forward_only(ops: Iterable[dict]) -> bool:
    """Whether a file's step computes no gradient at all: no operator of a gradient graph (under
    ``Gradients/``, or in a bprop graph) and none pending (``J``): a network compiled for its
    forward alone (zoo 06, zoo 20)."""
    return not any(row["backward"] or row["op"] == "J" or bprop_graph(row["graph"] or "") for row in ops)
