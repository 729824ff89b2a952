"""Which slice of each parameter a rank holds: the parameter's first consumer with a strategy gives
the layout (device matrix and tensor map, as MindSpore's ``parameter_layout_dict`` states them, by
the consumer's rule in :mod:`msinspect.mindspore.layouts`), the rank's place in its stage gives the
slice; an optimizer-parallel AllGather of the weight gives its optimizer-shard group, and the
rank's place in that group the part of the slice it stores."""
from __future__ import annotations

import re
from math import prod
from typing import TYPE_CHECKING

from msinspect.analysis.context import RankContext, shapes_are_global
from msinspect.analysis.flow import consumers, data_view, path_between, reaches_back, remembered
from msinspect.analysis.ops import as_shapes
from msinspect.analysis.vocabulary import replace_graph_operator
from msinspect.analysis.strategies import strategy_of
from msinspect.graph import to_networkx
from msinspect.mindspore.layouts import call_of, divided, layout_of, shard_of, slice_by_map, standard
from msinspect.model import IRFile, Node
from msinspect.stages import stage_of

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx

PARAM_COLUMNS = [
    "rank", "param", "global_shape", "rank_shape", "op", "consumer", "in_strategy", "device_matrix",
    "tensor_map", "slice_shape", "opt_shard_group", "opt_shard_ranks", "slice", "file", "line",
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


def optimizer_groups(ir: IRFile, graph: nx.MultiDiGraph, ctx: RankContext = RankContext()
                     ) -> dict[str, tuple[str, tuple[int, ...] | None]]:
    """The optimizer-shard group of each weight (its parameter's name): the group of the
    optimizer-parallel AllGather whose first input is the weight (or its cast), and its ranks where the
    AllGather's attributes tell them (None: they do not)."""
    from msinspect.analysis.comm import group_ranks
    from msinspect.analysis.flow import first_input

    found = {}
    for node in ir.nodes():
        if node.op not in _OPT_GATHERS or not (node.instance_name or "").startswith("parallel_optimizer_allgather"):
            continue
        group = node.primitive_attrs.get("group")
        source = first_input(graph, f"{node.graph}/{node.ref}")
        while source in graph and getattr(graph.nodes[source].get("node"), "op", None) in _HANDS_ON:
            source = first_input(graph, source)  # MindFormers gathers the float16 cast of the weight
        if source is not None and source.startswith("param:"):
            found[source[len("param:"):]] = (group, group_ranks(node, ctx))
    return found


def consumer_reads(node: Node) -> tuple:
    """What :func:`param_rows` reads of an operator beyond the graph's walks and its strategy:
    its original input shapes, what its layout rule reads of it and the user's layouts."""
    return (node.cnode_primal_attrs.get("origin_input_shapes"), call_of(node), node.primitive_attrs.get("in_layout"))


#: Operators that hand a weight on unchanged but for its dtype or its buffer: where one has no
#: strategy of its own (MindFormers casts every weight to float16 before its MatMul; a pipeline's
#: validate graph copies a weight with TensorMove), the weight's consumer is past it.
_HANDS_ON = frozenset({"Cast", "TensorMove"})


@remembered
def _consumer_with_strategy(graph: nx.MultiDiGraph, param_key: str, data: nx.MultiDiGraph
                            ) -> tuple[Node, int, bool] | None:
    """The first operator (in file order) with a strategy that reads the parameter, past casts
    and copies without a strategy, which of its tensor inputs the parameter is (``data``: the
    graph's data view), and False; where none has a strategy, the first operator of a replacement
    graph that reads it (a new primitive the parallel pass made in place of the user's: the
    MatMuls of ``enable_nd_tp``), its input, and True. A walk of the graph that reads its
    operators' strategies and the kinds of their inputs, which ranks read alike share
    (:func:`~msinspect.analysis.flow.remember`)."""
    carriers, found, replaced, todo = [param_key], [], [], consumers(graph, param_key, data)
    while todo:
        target = todo.pop(0)
        node = graph.nodes[target]["node"]
        strategy = strategy_of(node)
        if strategy is None or not strategy.in_strategy:
            if node.op in _HANDS_ON and target not in carriers:
                carriers.append(target)
                todo += consumers(graph, target, data)
            elif replace_graph_operator(node):
                replaced.append((node.line, target))
            continue
        found.append((node.line, target))
    for _, target in sorted(found):  # in file order
        hit = _input_of(graph, target, carriers, data, len(strategy_of(graph.nodes[target]["node"]).in_strategy))
        if hit is not None:
            return graph.nodes[target]["node"], hit, False
    for _, target in sorted(replaced):
        hit = _input_of(graph, target, carriers, data, None)
        if hit is not None:
            return graph.nodes[target]["node"], hit, True
    return None


def _input_of(graph: nx.MultiDiGraph, target: str, carriers: list[str], data: nx.MultiDiGraph,
              count: int | None) -> int | None:
    """Which tensor input of ``target`` the weight (one of its ``carriers``) is, a direct one before
    one through a Reshape; None where it is past the ``count`` inputs a strategy cuts."""
    node = graph.nodes[target]["node"]
    edges = sorted((d["position"], u) for u, _, d in data.in_edges(target, data=True))
    tensor_index, reshaped = 0, None
    for position, source in edges:
        # a tensor input; ``<null>`` is what step_parallel_end prints for a mirror operator's output
        if position >= len(node.input_types) or node.input_types[position].kind not in ("Tensor", "Ref", "null"):
            continue
        carrier = next((c for c in carriers if reaches_back(graph, source, c, data)), None)
        if carrier is not None and (count is None or tensor_index < count):
            if not _reshapes(graph, carrier, source, data):
                return tensor_index
            reshaped = reshaped if reshaped is not None else tensor_index
        tensor_index += 1
    return reshaped  # read only through a Reshape: that input's cut is not the weight's


def _reshapes(graph: nx.MultiDiGraph, carrier: str, source: str, data: nx.MultiDiGraph) -> bool:
    """Whether the weight reaches the consumer's input through a Reshape (of the user's, or of a
    redistribution): then that input's strategy cuts another shape."""
    on_the_way = [source, *(path_between(graph, carrier, source, data) or [])]
    return any(getattr(graph.nodes[key].get("node"), "op", None) == "Reshape" for key in on_the_way if key in graph)


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
    optimizer = optimizer_groups(ir, graph, ctx)
    stand_ins: dict = {}
    rows = []
    for param in ir.params:
        if not param.has_default:
            continue
        key = f"param:{param.name}"
        if key not in graph:
            continue
        hit = _consumer_with_strategy(graph, key, data)
        if hit is not None and hit[2]:  # a replacement graph's operator: read the one it replaced
            hit = _replaced(hit[0], hit[1], ir, reference, stand_ins)
        if hit is None:
            continue
        node, index = hit[:2]
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
            if global_shape is None and rank_shape is not None:
                global_shape = _whole(rank_shape, strategy_of(node).in_strategy[index], optimizer.get(param.name))
        rows.append({
            "rank": ctx.rank, "param": param.short_name, "global_shape": global_shape,
            "rank_shape": rank_shape, "op": node.op, "consumer": node.name,
            "in_strategy": strategy_of(node).in_strategy[index], "call": call_of(node, strategy_of(node).in_strategy),
            "input_index": index, "user_layout": _user_layout(node, index),
            "opt_shard_group": optimizer.get(param.name, ("", None))[0],
            "opt_shard_ranks": optimizer.get(param.name, ("", None))[1], "file": ir.path, "line": param.line,
        })
    return rows


def _replaced(node: Node, index: int, ir: IRFile, reference: IRFile | None, known: dict) -> tuple[Node, int] | None:
    """The operator of the pre-parallel ``reference`` file that ``node``, an operator of its
    replacement graph, stands for: the one whose instance name hashes to ``node``'s name's prefix
    (``HashName(instance)``, :func:`~msinspect.analysis.comm_groups.std_hash`), of the same
    primitive and with a strategy; with the weight's input. None where the reference has none, or
    where ``node``'s name is not its own: at validate operators that share a primitive print one
    of their names (two replaced MatMuls both as ``622579306631221945MatMul6``). ``known``: the
    reference's operators by hash and the names ``ir`` prints more than once, made once per file."""
    from collections import Counter

    from msinspect.analysis.comm_groups import std_hash

    if reference is None:
        return None
    if not known:
        known["by_hash"] = {str(std_hash(n.instance_name)): n for n in reference.nodes()
                            if n.instance_name and strategy_of(n) is not None and strategy_of(n).in_strategy}
        known["shared"] = {name for name, n in Counter(n.instance_name for n in ir.nodes() if n.instance_name).items()
                           if n > 1}
    if node.instance_name in known["shared"]:
        return None
    prefix = re.match(r"\d+", node.instance_name or "")
    original = known["by_hash"].get(prefix.group(0)) if prefix else None
    if original is None or original.op != node.op or index >= len(strategy_of(original).in_strategy):
        return None
    return original, index


def _whole(rank_shape, strategy, shard) -> tuple[int, ...] | None:
    """The whole shape of a weight the file holds cut: its shape at the rank times its consumer's
    cut, the first dimension times the optimizer-shard group's size where it is sharded (None
    where that group's ranks are not told, or the cut is not of the weight's own dimensions)."""
    strategy = (strategy,) if isinstance(strategy, int) else tuple(strategy)
    if len(strategy) != len(rank_shape) or (shard is not None and not shard[1]):
        return None
    whole = [d * s for d, s in zip(rank_shape, strategy)]
    if shard is not None and whole:
        whole[0] *= len(shard[1])
    return tuple(whole)


def with_slices(rows: list[dict], ctx: RankContext) -> list[dict]:
    """Add ``device_matrix`` and ``tensor_map`` (MindSpore's parameter layout: the user's
    ``Layout`` where one was given, else the consumer's, each in MindSpore's standard form, see
    :func:`~msinspect.mindspore.layouts.standard`), ``slice_shape`` (the slice of that layout,
    before any optimizer shard, as MindSpore's layout states it) and ``slice`` (``(start, stop)``
    per dimension: what the rank stores, its part of the layout's slice under an optimizer shard)
    to parameter rows of one rank. ``slice`` is None where it cannot be told: no layout rule, the
    stage's devices or the rank's place unknown, an optimizer-shard group whose ranks are not told."""
    out = []
    for row in rows:
        row = dict(row)
        call, index = row.pop("call"), row.pop("input_index")
        user = row.pop("user_layout", None)
        layout = None
        if ctx.stage_devices and row["global_shape"] is not None:
            layout = layout_of(call, ctx.stage_devices)
        if user is not None and isinstance(user.get("device_matrix"), (tuple, list)):
            matrix, tensor_map = standard(tuple(user["device_matrix"]), tuple(user["tensor_map"]))
        elif (layout is not None and index < len(layout.tensor_maps)
              and len(layout.tensor_maps[index]) == len(row["global_shape"])):
            matrix, tensor_map = standard(layout.device_matrix, layout.tensor_maps[index])
        else:  # no rule, or the consumer reads the weight reshaped: its map is of another shape
            matrix = tensor_map = layout = None
        row["device_matrix"], row["tensor_map"] = matrix, tensor_map
        row["slice_shape"] = (divided(row["global_shape"], row["in_strategy"])
                              if row["global_shape"] is not None and matrix is not None else None)
        bounds = None
        if ctx.local_rank is not None and user is not None and matrix is not None:
            raw = tuple(user["device_matrix"])  # the user's Layout is the weight's: its own matrix places the rank
            if prod(raw) == ctx.stage_devices and len(user["tensor_map"]) == len(row["global_shape"]):
                bounds = slice_by_map(raw, tuple(user["tensor_map"]), row["global_shape"], ctx.local_rank)
        elif ctx.local_rank is not None and layout is not None:
            bounds = layout.slice_of(index, row["global_shape"], ctx.local_rank)
        row["slice"] = _stored(bounds, row, ctx) if bounds is not None else None
        out.append(row)
    return out


def _stored(bounds, row: dict, ctx: RankContext):
    """The part of the layout's slice the rank stores: all of it, or under an optimizer shard its
    part by its place in the shard group; None where the group's ranks are not told."""
    if not row.get("opt_shard_group"):
        return bounds
    ranks = row.get("opt_shard_ranks")
    if not ranks or ctx.rank not in ranks:
        return None
    return shard_of(bounds, len(ranks), sorted(ranks).index(ctx.rank))


def slice_text(bounds) -> str:
    """``[8:16, 0:16]`` for ``((8, 16), (0, 16))``."""
    return "[" + ", ".join(f"{a}:{b}" for a, b in bounds) + "]" if bounds else "-"
