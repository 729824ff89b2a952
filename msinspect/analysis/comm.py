"""Every communication and redistribution operator in a file: its kind, the real operators it sits
between, its group and the ranks in it, and the tensor it moves."""
from __future__ import annotations

from typing import TYPE_CHECKING

from msinspect.analysis.context import RankContext, shapes_are_global
from msinspect.analysis.flow import consumers, data_view, label, producer
from msinspect.analysis import vocabulary
from msinspect.analysis.ops import (PIPELINE_OPS, WORLD_GROUPS, as_shape, int_attr, is_backward, is_comm, nbytes,
                                    scope_of)
from msinspect.analysis.vocabulary import KINDS
from msinspect.graph import node_id, to_networkx
from msinspect.model import IRFile, Node

if TYPE_CHECKING:  # networkx loads where a graph is built and pandas where a table is: a run answered
    # from the cache loads no networkx, and `summary` no pandas
    import networkx as nx
    import pandas as pd

COMM_COLUMNS = [
    "rank", "stage", "file", "line", "name", "op", "kind", "moves_data", "producer", "consumers", "group",
    "group_ranks", "group_size", "peer", "shape", "out_shape", "dtype", "tensor_bytes", "wire_bytes", "scope",
    "micro", "graph", "producer_scope", "consumer_scopes",
]


def kind_of(node: Node, graph: nx.MultiDiGraph, key: str) -> str:
    """Why the operator is there: see :mod:`msinspect.analysis.vocabulary` (from the primitive and
    its instance name); an unnamed AllGather of a parameter (2.2 era) is optimizer parallel."""
    kind = vocabulary.kind_of(node, is_backward(node))
    if kind == "user" and node.op == "AllGather":
        source = producer(graph, key)
        data = graph.nodes[source] if source is not None else {}
        if data.get("kind") == "parameter" and data.get("has_default"):
            return "optimizer"
    return kind


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


def _moved(node: Node, is_global: bool) -> tuple[tuple[int, ...] | None, str | None, bool]:
    """Shape and dtype of the tensor the operator sends (Receive: the one it receives), and
    whether that is the tensor at the rank. Send / Receive carry it in their ``shape`` and
    ``dtype`` attributes (the abstracts of a pre-parallel stage show the global tensor); other
    operators take their first input, which before the parallel pass's re-inference is the
    rank's own only for a parameter (parameters are cut in place)."""
    if node.op in PIPELINE_OPS:
        shape = as_shape(node.primitive_attrs.get("shape"))
        dtype = node.primitive_attrs.get("dtype")
        if shape is not None and isinstance(dtype, str):
            return shape, dtype, True
        if node.op == "Receive" and node.output_types and node.output_types[0].shape is not None:
            return node.output_types[0].shape, node.output_types[0].dtype, not is_global
    first = node.input_types[0] if node.input_types else None  # position 0, not the first that prints
    if first is not None and first.kind in ("Tensor", "Ref") and first.shape is not None:
        return first.shape, first.dtype, not is_global or (first.kind == "Ref" and first.ref_key is not None)
    return None, None, False


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
    stage = ir.stage  # read off the path: once, not per row
    data = data_view(graph)
    rows = []
    for node in ir.nodes():
        if node.index is None or not is_comm(node):
            continue
        key = node_id(node)
        peer = _peer(node) if node.op in PIPELINE_OPS else None
        source_key = producer(graph, key)
        source = label(graph, source_key)
        user_keys = _forward_first(graph, node, consumers(graph, key, data))
        users = [label(graph, k) for k in user_keys]
        if node.op == "Receive" and peer is not None:
            source = f"rank {peer}"
        if node.op == "Send" and peer is not None:
            users = [f"rank {peer}"]
        shape, dtype, at_rank = _moved(node, is_global)
        ranks = group_ranks(node, ctx)
        size = vocabulary.group_size(node, ranks) if node.op not in PIPELINE_OPS else 2
        moving = vocabulary.moves_data(node)
        tensor = nbytes(shape, dtype) if at_rank else None
        rows.append({
            "rank": ctx.rank, "stage": stage, "file": ir.path, "line": node.line, "name": node.name,
            "op": node.op, "kind": kind_of(node, graph, key), "moves_data": moving, "producer": source,
            "consumers": tuple(users), "group": node.primitive_attrs.get("group"),
            "group_ranks": ranks, "group_size": size if moving else None, "peer": peer, "shape": shape,
            "out_shape": node.output_shape, "dtype": dtype, "tensor_bytes": tensor,
            "wire_bytes": vocabulary.wire_bytes(node, tensor, size),
            "producer_scope": _scope(graph, source_key),
            "consumer_scopes": tuple(_scope(graph, k) for k in user_keys),
            "scope": scope_of(node), "micro": node.cnode_primal_attrs.get("micro"), "graph": node.graph,
        })
    return rows


def comm_totals(frame: pd.DataFrame, by: str) -> pd.DataFrame:
    """Totals over the whole job (every rank read) per ``kind`` or per group (``group_ranks``, its
    rank list, with ``moves_data``: a None group is either operators that move nothing, or, with
    ``moves_data`` true, a group that cannot be told): operator count, ``rank_count``, the op
    types, and the sums of ``tensor_bytes`` and ``wire_bytes``; a sum is None ("cannot tell") when
    any of its operators' bytes is unknown."""
    import pandas as pd

    keys = ["kind"] if by == "kind" else ["group_ranks", "moves_data"]
    columns = keys + ["operators", "rank_count", "ops", "tensor_bytes", "wire_bytes", "unknown_bytes"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    data = frame.assign(group_ranks=[tuple(g) if isinstance(g, (tuple, list)) else None for g in frame["group_ranks"]],
                        moves_data=frame["moves_data"].astype(bool))

    def total(values: pd.Series):
        return None if values.isna().any() else int(values.sum())

    out = (data.groupby(keys, dropna=False, sort=False)
           .agg(operators=("name", "size"), rank_count=("rank", "nunique"),
                ops=("op", lambda s: tuple(sorted(set(s)))),
                tensor_bytes=("tensor_bytes", total), wire_bytes=("wire_bytes", total),
                unknown_bytes=("wire_bytes", lambda b: int(b.isna().sum())))
           .reset_index())
    if by == "kind":
        order = {k: i for i, k in enumerate(KINDS)}
        out = out.sort_values("kind", key=lambda s: s.map(lambda k: order.get(k, len(order)))).reset_index(drop=True)
    for column in ("tensor_bytes", "wire_bytes"):
        out[column] = out[column].astype(object)
    return out[columns]


def stated_world(ir: IRFile) -> int | None:
    """The world size the file itself states: the ``dev_num`` / ``rank_size`` of an operator over
    the world group (a mirror operator of a weight repeated on every rank says ``group_ranks:
    "WORLD_GROUP", dev_num: I64(8)``), or the length of its rank list (``group: "nccl_world_group",
    group_rank_ids: (0, ..., 7)``). None when no operator states it, or two disagree."""
    sizes = set()
    for node in ir.nodes():
        attrs = node.primitive_attrs
        if attrs.get("group") in WORLD_GROUPS or attrs.get("group_ranks") in WORLD_GROUPS:
            for key in ("dev_num", "rank_size"):
                value = attrs.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    sizes.add(value)
            for key in ("group_rank_ids", "rank_list"):  # after the gradient graph: the world's rank list
                value = attrs.get(key)
                if isinstance(value, tuple) and value and all(isinstance(v, int) for v in value):
                    sizes.add(len(value))
    return sizes.pop() if len(sizes) == 1 else None


def ranks_named(ir: IRFile) -> set[int]:
    """Every rank an operator of the file names: its group's rank list, a Send's or Receive's peer."""
    named: set[int] = set()
    for node in ir.nodes():
        if node.index is None or not is_comm(node):
            continue
        ranks = group_ranks(node, RankContext())
        named.update(ranks or ())
        peer = _peer(node) if node.op in PIPELINE_OPS else None
        if peer is not None:
            named.add(peer)
    return named


def with_world(rows: list[dict], world: tuple[int, ...]) -> list[dict]:
    """Comm rows of a rank analysed before the world was known: the world group's ranks filled in."""
    for row in rows:
        if row["group_ranks"] is None and row["group"] in WORLD_GROUPS and row["op"] not in PIPELINE_OPS:
            row["group_ranks"] = world
            if row["moves_data"]:
                row["group_size"] = len(world)
    return rows
