"""Every communication and redistribution operator in a file: its kind, the real operators it sits
between, its group and the ranks in it, and the tensor it moves."""
from __future__ import annotations

import networkx as nx

from msinspect.analysis.context import RankContext, shapes_are_global
from msinspect.analysis.flow import consumers, label, producer
from msinspect.analysis.ops import (MIRROR_OPS, PIPELINE_OPS, WORLD_GROUPS, int_attr, is_backward, is_comm,
                                    is_redistribution, nbytes, scope_of, tensor_inputs)
from msinspect.graph import node_id, to_networkx
from msinspect.model import IRFile, Node

COMM_COLUMNS = [
    "rank", "stage", "file", "line", "name", "op", "kind", "producer", "consumers", "group",
    "group_ranks", "peer", "shape", "out_shape", "dtype", "bytes", "scope", "micro", "graph", "producer_scope",
    "consumer_scopes",
]

#: The kinds, in the order summaries list them.
KINDS = ("forward", "redistribution", "backward", "gradient", "optimizer", "pipeline", "user")


def kind_of(node: Node, graph: nx.MultiDiGraph, key: str) -> str:
    """Why the operator is there.

    - ``pipeline``: Send / Receive between pipeline stages;
    - ``redistribution``: reshaping a tensor between two layouts (``redistribution_op_*``);
    - ``gradient``: gradient aggregation across the ranks holding the same parameter slice
      (mirror operators, and the AllReduce they become);
    - ``optimizer``: optimizer parallel: gathering a parameter's slices (or scattering its gradient);
    - ``forward``: the operator's own communication (``forward_op_*``, e.g. partial sums);
    - ``backward``: any other communication in the gradient graph (e.g. the gradient of a
      forward AllReduce);
    - ``user``: communication the user's code calls (no parallel-pass name).
    """
    name = node.instance_name or ""
    if node.op in PIPELINE_OPS:
        return "pipeline"
    if is_redistribution(node):
        return "redistribution"
    if node.op in MIRROR_OPS or "mirror" in name.lower() or node.op == "_VirtualDiv":
        return "gradient"
    if "optimizer" in name.lower() or "opt_shard" in name.lower():
        return "optimizer"
    if node.op == "AllGather":
        source = producer(graph, key)
        data = graph.nodes[source] if source is not None else {}
        if data.get("kind") == "parameter" and data.get("has_default"):
            return "optimizer"
    if node.op == "ReduceScatter" and is_backward(node):
        return "optimizer"
    if name.startswith("forward_op_"):
        return "forward"
    if is_backward(node):
        return "backward"
    return "user"


def group_ranks(node: Node, ctx: RankContext) -> tuple[int, ...] | None:
    """The ranks in the operator's group, from its attributes (``group_rank_ids``, ``rank_list``,
    ``group_ranks: "4-5-6-7"``), or the world when the group is the world group."""
    attrs = node.primitive_attrs
    if node.op in PIPELINE_OPS:
        peer = _peer(node)
        if peer is not None and ctx.rank is not None:
            return tuple(sorted({ctx.rank, peer}))
    for key in ("group_rank_ids", "rank_list"):
        value = attrs.get(key)
        if isinstance(value, tuple) and value and all(isinstance(v, int) for v in value):
            return value
    text = attrs.get("group_ranks")
    if isinstance(text, str) and text:
        if text in WORLD_GROUPS:
            return ctx.world
        try:
            return tuple(int(v) for v in text.split("-"))
        except ValueError:
            pass
    if attrs.get("group") in WORLD_GROUPS:
        return ctx.world
    return None


def _peer(node: Node) -> int | None:
    return int_attr(node, "dest_rank") if node.op == "Send" else int_attr(node, "src_rank")


def _moved(node: Node) -> tuple[tuple[int, ...] | None, str | None]:
    """Shape and dtype of the tensor the operator sends (Receive: the one it receives)."""
    if node.op == "Receive":
        shape = node.primitive_attrs.get("shape")
        dtype = node.primitive_attrs.get("dtype")
        if node.output_types and node.output_types[0].shape is not None:
            return node.output_types[0].shape, node.output_types[0].dtype
        if isinstance(shape, (list, tuple)):
            return tuple(shape), dtype if isinstance(dtype, str) else None
        return None, None
    inputs = tensor_inputs(node)
    if inputs:
        return inputs[0].shape, inputs[0].dtype
    return None, None


def _scope(graph: nx.MultiDiGraph, key: str | None) -> str | None:
    node = graph.nodes[key].get("node") if key is not None else None
    return scope_of(node) if node is not None else None


def _forward_first(graph: nx.MultiDiGraph, node: Node, keys: list[str]) -> list[str]:
    """A forward operator's consumers in the forward graph only, when it has any there (the
    gradient graph re-reads forward values, which is not where the communication sits)."""
    if is_backward(node):
        return keys
    forward = [k for k in keys if not (graph.nodes[k].get("node") and is_backward(graph.nodes[k]["node"]))]
    return forward or keys


def comm_rows(ir: IRFile, ctx: RankContext = RankContext(), graph: nx.MultiDiGraph | None = None) -> list[dict]:
    """Every communication or redistribution operator of ``ir``, in file order."""
    graph = graph if graph is not None else to_networkx(ir)
    is_global = shapes_are_global(ir.path)
    rows = []
    for node in ir.nodes():
        if node.index is None or not is_comm(node):
            continue
        key = node_id(node)
        peer = _peer(node) if node.op in PIPELINE_OPS else None
        source_key = producer(graph, key)
        source = label(graph, source_key)
        user_keys = _forward_first(graph, node, consumers(graph, key))
        users = [label(graph, k) for k in user_keys]
        if node.op == "Receive" and peer is not None:
            source = f"rank {peer}"
        if node.op == "Send" and peer is not None:
            users = [f"rank {peer}"]
        shape, dtype = _moved(node)
        rows.append({
            "rank": ctx.rank, "stage": ir.stage, "file": ir.path, "line": node.line, "name": node.name,
            "op": node.op, "kind": kind_of(node, graph, key), "producer": source,
            "consumers": tuple(users), "group": node.primitive_attrs.get("group"),
            "group_ranks": group_ranks(node, ctx), "peer": peer, "shape": shape, "out_shape": node.output_shape, "dtype": dtype,
            "bytes": None if is_global and node.op not in PIPELINE_OPS else nbytes(shape, dtype),
            "producer_scope": _scope(graph, source_key),
            "consumer_scopes": tuple(_scope(graph, k) for k in user_keys),
            "scope": scope_of(node), "micro": node.cnode_primal_attrs.get("micro"), "graph": node.graph,
        })
    return rows
