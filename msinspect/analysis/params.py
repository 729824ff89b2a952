"""Which slice of each parameter a rank holds: the parameter's first consumer with a strategy gives
the layout (device matrix and tensor map, as MindSpore's ``parameter_layout_dict`` states them),
the rank's place in its stage gives the slice; an optimizer-parallel AllGather of the weight gives
its optimizer-shard group."""
from __future__ import annotations

from typing import TYPE_CHECKING

from msinspect.analysis.context import RankContext, shapes_are_global
from msinspect.analysis.flow import consumers, data_view, reaches_back, remembered
from msinspect.analysis.layout import MATMUL_OPS, divided, layout_of, standard
from msinspect.analysis.ops import as_shapes
from msinspect.analysis.strategies import strategy_of
from msinspect.graph import to_networkx
from msinspect.model import IRFile, Node
from msinspect.stages import stage_of

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx

PARAM_COLUMNS = [
    "rank", "param", "global_shape", "rank_shape", "op", "consumer", "in_strategy", "device_matrix",
    "tensor_map", "slice_shape", "opt_shard_group", "slice", "file", "line",
]
#: The gathers of an optimizer-parallel weight (MindSpore names them
#: ``parallel_optimizer_allgather`` / ``..._not_recompute``), and of its micro and mini steps.
_OPT_GATHERS = ("AllGather", "_MicroStepAllGather", "_MiniStepAllGather")


def _user_layout(node: Node, index: int) -> dict | None:
    """The ``mindspore.parallel.Layout`` the user gave input ``index`` (``in_layout``), if any."""
    layouts = node.primitive_attrs.get("in_layout")
    if isinstance(layouts, dict):
        layouts = (layouts,)
    if isinstance(layouts, (tuple, list)) and index < len(layouts) and isinstance(layouts[index], dict):
        return layouts[index]
    return None


def optimizer_groups(ir: IRFile, graph: nx.MultiDiGraph) -> dict[str, str]:
    """The optimizer-shard group of each weight (its parameter's name): the group of the
    optimizer-parallel AllGather whose first input is the weight."""
    from msinspect.analysis.flow import first_input

    found = {}
    for node in ir.nodes():
        if node.op not in _OPT_GATHERS or not (node.instance_name or "").startswith("parallel_optimizer_allgather"):
            continue
        group = node.primitive_attrs.get("group")
        source = first_input(graph, f"{node.graph}/{node.ref}")
        if source is not None and source.startswith("param:"):
            found[source[len("param:"):]] = group
    return found


def consumer_reads(node: Node) -> tuple:
    """What :func:`param_rows` reads of an operator beyond the graph's walks and its strategy:
    its original input shapes, its transpose flags and the user's layouts."""
    return (node.cnode_primal_attrs.get("origin_input_shapes"), _transpose(node), node.primitive_attrs.get("in_layout"))


def _transpose(node: Node) -> tuple[bool, bool]:
    if node.op not in MATMUL_OPS:
        return (False, False)
    flags = [v for v in node.inputs[2:4] if isinstance(v, bool)]
    if len(flags) == 2:  # 2.10: MatMul(x, w, transpose_a, transpose_b)
        return (flags[0], flags[1])
    attrs = node.primitive_attrs
    return (bool(attrs.get("transpose_a", attrs.get("transpose_x1", False))),
            bool(attrs.get("transpose_b", attrs.get("transpose_x2", False))))


#: Operators that hand a weight on unchanged but for its dtype: where one has no strategy of its own
#: (MindFormers casts every weight to float16 before its MatMul), the weight's consumer is past it.
_DTYPE_ONLY = frozenset({"Cast"})


@remembered
def _consumer_with_strategy(graph: nx.MultiDiGraph, param_key: str, data: nx.MultiDiGraph) -> tuple[Node, int] | None:
    """The first operator (in file order) with a strategy that reads the parameter, past casts
    without a strategy, and which of its tensor inputs the parameter is (``data``: the graph's
    data view). A walk of the graph that reads its operators' strategies and the kinds of their
    inputs, which ranks read alike share (:func:`~msinspect.analysis.flow.remember`)."""
    carriers, found, todo = [param_key], [], consumers(graph, param_key, data)
    while todo:
        target = todo.pop(0)
        node = graph.nodes[target]["node"]
        strategy = strategy_of(node)
        if strategy is None or not strategy.in_strategy:
            if node.op in _DTYPE_ONLY and target not in carriers:
                carriers.append(target)
                todo += consumers(graph, target, data)
            continue
        found.append((node.line, target))
    for _, target in sorted(found):  # in file order
        node = graph.nodes[target]["node"]
        strategy = strategy_of(node)
        edges = sorted((d["position"], u) for u, _, d in data.in_edges(target, data=True))
        tensor_index = 0
        for position, source in edges:
            # a tensor input; ``<null>`` is what step_parallel_end prints for a mirror operator's output
            if position >= len(node.input_types) or node.input_types[position].kind not in ("Tensor", "Ref", "null"):
                continue
            if any(reaches_back(graph, source, carrier, data) for carrier in carriers):
                if tensor_index < len(strategy.in_strategy):
                    return node, tensor_index
                break
            tensor_index += 1
    return None


def param_rows(ir: IRFile, ctx: RankContext = RankContext(), reference: IRFile | None = None,
               graph: nx.MultiDiGraph | None = None) -> list[dict]:
    """One row per weight (a parameter with a value) of ``ir`` that a strategy-carrying operator
    reads; the slice is left to :func:`with_slices`, which needs the stage's ranks."""
    graph = graph if graph is not None else to_networkx(ir)
    # 2.10 cuts parameters in place at step_parallel_end (their abstracts show the rank's slice)
    # while its activations stay global: there a parameter's own shape is the rank's
    is_global = shapes_are_global(ir.path) and stage_of(ir.path) != "step_parallel_end"
    ref_shapes = {p.name: p.abstract.shape for p in reference.params if p.abstract} if reference else {}
    data = data_view(graph)  # one view for every parameter's walk
    optimizer = optimizer_groups(ir, graph)
    rows = []
    for param in ir.params:
        if not param.has_default:
            continue
        key = f"param:{param.name}"
        if key not in graph:
            continue
        hit = _consumer_with_strategy(graph, key, data)
        if hit is None:
            continue
        node, index = hit
        own = param.abstract.shape if param.abstract else None
        origin = as_shapes(node.cnode_primal_attrs.get("origin_input_shapes"))
        original = origin[index] if origin and index < len(origin) else None
        # the consumer's origin_input_shapes say the whole, else the rank's step_parallel_begin does
        # (a consumer the parallel pass made, a graph without a backward pass, has none)
        if original is not None:
            global_shape, rank_shape = original, own
        else:
            global_shape = own if is_global else ref_shapes.get(param.name)
            rank_shape = None if is_global else own
        rows.append({
            "rank": ctx.rank, "param": param.short_name, "global_shape": global_shape,
            "rank_shape": rank_shape, "op": node.op, "consumer": node.name,
            "in_strategy": strategy_of(node).in_strategy[index], "strategy": strategy_of(node).in_strategy,
            "input_index": index, "transpose": _transpose(node), "user_layout": _user_layout(node, index),
            "opt_shard_group": optimizer.get(param.name, ""), "file": ir.path, "line": param.line,
        })
    return rows


def with_slices(rows: list[dict], ctx: RankContext) -> list[dict]:
    """Add ``device_matrix`` and ``tensor_map`` (MindSpore's parameter layout: the user's
    ``Layout`` where one was given, else the consumer's, each in MindSpore's standard form, see
    :func:`~msinspect.analysis.layout.standard`), ``slice_shape`` (the slice of that layout, before
    any optimizer shard) and ``slice`` (``(start, stop)`` per dimension) to parameter rows of one
    rank."""
    out = []
    for row in rows:
        row = dict(row)
        strategy, transpose, index = row.pop("strategy"), row.pop("transpose"), row.pop("input_index")
        user = row.pop("user_layout", None)
        layout = None
        if ctx.stage_devices and row["global_shape"] is not None:
            layout = layout_of(row["op"], strategy, ctx.stage_devices, transpose)
        if user is not None and isinstance(user.get("device_matrix"), (tuple, list)):
            matrix, tensor_map = standard(tuple(user["device_matrix"]), tuple(user["tensor_map"]))
        elif layout is not None:
            matrix, tensor_map = standard(layout.device_matrix, layout.tensor_maps[index])
        else:
            matrix = tensor_map = None
        row["device_matrix"], row["tensor_map"] = matrix, tensor_map
        row["slice_shape"] = (divided(row["global_shape"], row["in_strategy"])
                              if row["global_shape"] is not None and matrix is not None else None)
        row["slice"] = (layout.slice_of(index, row["global_shape"], ctx.local_rank)
                        if layout and ctx.local_rank is not None else None)
        out.append(row)
    return out


def slice_text(bounds) -> str:
    """``[8:16, 0:16]`` for ``((8, 16), (0, 16))``."""
    return "[" + ", ".join(f"{a}:{b}" for a, b in bounds) + "]" if bounds else "-"
