"""Which slice of each parameter a rank holds: the parameter's first consumer with a strategy gives
the layout (device matrix and tensor map, as MindSpore's ``parameter_layout_dict`` states them, by
the consumer's rule in :mod:`msinspect.mindspore.layouts`), the rank's place in its stage gives the
slice; an optimizer-parallel AllGather of the weight gives its optimizer-shard group, and the
rank's place in that group the part of the slice it stores."""
from __future__ import annotations

import re
from dataclasses import replace
from math import prod
from pathlib import Path
from typing import TYPE_CHECKING

from msinspect.analysis.rank.context import RankContext, shapes_are_global
from msinspect.analysis.dataflow.file_view import remembered
from msinspect.analysis.dataflow.flow import consumers, data_view, path_between, reaches_back
from msinspect.analysis.dataflow.node_facts import as_shapes
from msinspect.mindspore.vocabulary import stands_in
from msinspect.analysis.rank.strategies import strategy_of
from msinspect.graph import to_networkx
from msinspect.mindspore.layouts import (LAYOUT_KEEPING, Call, call_of, divided, layout_of, shard_of, slice_by_map,
                                         standard)
from msinspect.model import IRFile, Node
from msinspect.stages import files_of_stage, later_pass, stage_of

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx

PARAM_COLUMNS = [
    "rank", "param", "kind", "global_shape", "rank_shape", "op", "consumer", "in_strategy", "device_matrix",
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
    from msinspect.analysis.rank.comm import group_ranks
    from msinspect.analysis.dataflow.flow import first_input

    found = {}
    for node in ir.nodes():
        if node.op not in _OPT_GATHERS or not (node.instance_name or "").startswith("parallel_optimizer_allgather"):
            continue
        group = node.primitive_attrs.get("group")
        source = first_input(graph, f"{node.graph}/{node.ref}")
        while source in graph and getattr(graph.nodes[source].get("node"), "op", None) in LAYOUT_KEEPING:
            source = first_input(graph, source)  # MindFormers gathers the float16 cast of the weight
        if source is not None and source.startswith("param:"):
            found[source[len("param:"):]] = (group, group_ranks(node, ctx))
    return found


def consumer_reads(node: Node) -> tuple:
    """What :func:`param_rows` reads of an operator beyond the graph's walks and its strategy:
    its original input shapes, what its layout rule reads of it and the user's layouts."""
    return (node.cnode_primal_attrs.get("origin_input_shapes"), call_of(node), node.primitive_attrs.get("in_layout"))




@remembered
def _consumer_with_strategy(graph: nx.MultiDiGraph, param_key: str, data: nx.MultiDiGraph
                            ) -> tuple[Node, int, bool] | None:
    """The first operator (in file order) with a strategy that reads the parameter, past casts
    and copies without a strategy, which of its tensor inputs the parameter is (``data``: the
    graph's data view), and False; where none has a strategy, the first operator of a replacement
    graph that reads it (a new primitive the parallel pass made in place of the user's: the
    MatMuls of ``enable_nd_tp``), its input, and True. A walk of the graph that reads its
    operators' strategies and the kinds of their inputs, which ranks read alike share
    (:func:`~msinspect.analysis.dataflow.file_view.remember`)."""
    carriers, found, replaced, todo = [param_key], [], [], consumers(graph, param_key, data)
    while todo:
        target = todo.pop(0)
        node = graph.nodes[target]["node"]
        strategy = strategy_of(node)
        if strategy is None or not strategy.in_strategy:
            if node.op in LAYOUT_KEEPING and target not in carriers:
                carriers.append(target)
                todo += consumers(graph, target, data)
            elif stands_in(node):
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
    """Which tensor input of ``target`` the weight (one of its ``carriers``) is, not through a
    Reshape; None where it is past the ``count`` inputs a strategy cuts, or reaches ``target`` only
    through a Reshape, whose strategy cuts another shape (:func:`_cut_by_shapes` may then tell the
    weight's own layout)."""
    node = graph.nodes[target]["node"]
    edges = sorted((d["position"], u) for u, _, d in data.in_edges(target, data=True))
    tensor_index = 0
    for position, source in edges:
        # a tensor input; ``<null>`` is what step_parallel_end prints for a mirror operator's output
        if position >= len(node.input_types) or node.input_types[position].kind not in ("Tensor", "Ref", "null"):
            continue
        carrier = next((c for c in carriers if reaches_back(graph, source, c, data)), None)
        if carrier is not None and (count is None or tensor_index < count) and not _reshapes(graph, carrier, source, data):
            return tensor_index
        tensor_index += 1
    return None


def _reshaped_only(graph: nx.MultiDiGraph, key: str, data: nx.MultiDiGraph) -> bool:
    """Whether every operator that reads the weight reads it through a Reshape (and one does)."""
    found = False
    for target in consumers(graph, key, data):
        for source, _, _ in data.in_edges(target, data=True):
            if reaches_back(graph, source, key, data):
                if not _reshapes(graph, key, source, data):
                    return False
                found = True
    return found


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
            row = _input_row(param, ctx, ir.path, is_global)
            if row is not None:
                rows.append(row)
            continue
        key = f"param:{param.name}"
        if key not in graph:
            continue
        hit = _consumer_with_strategy(graph, key, data)
        own = param.abstract.shape if param.abstract else None
        if hit is None and not is_global and _reshaped_only(graph, key, data):  # its own shapes may tell
            row = _cut_by_shapes(param, own, ref_shapes.get(param.name), ctx, optimizer, ir.path)
            if row is not None:
                rows.append(row)
            continue
        if hit is None:
            continue
        node, index, by_replacement = hit
        # an operator of a replacement graph: read the one it replaced, or at least its attributes
        replaced = (replaced_operator(node, ir, reference, stand_ins)
                    if stands_in(node) else None)
        if by_replacement:
            if replaced is None or replaced.op != node.op or index >= len(strategy_of(replaced).in_strategy):
                continue
            node, replaced = replaced, None
        call = call_of(node, strategy_of(node).in_strategy)
        if replaced is not None and replaced.op == node.op:  # a Gather's manual_split is the replaced one's
            call = replace(call, attrs=call_of(replaced).attrs or call.attrs)
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
            "rank": ctx.rank, "param": param.short_name, "kind": "weight", "global_shape": global_shape,
            "rank_shape": rank_shape, "op": node.op, "consumer": node.name,
            "in_strategy": strategy_of(node).in_strategy[index], "call": call,
            "input_index": index, "user_layout": _user_layout(node, index),
            "opt_shard_group": optimizer.get(param.name, ("", None))[0],
            "opt_shard_ranks": optimizer.get(param.name, ("", None))[1], "file": ir.path, "line": param.line,
        })
    return rows


def replaced_operator(node: Node, ir: IRFile, reference: IRFile | None, known: dict) -> Node | None:
    """The operator of the pre-parallel ``reference`` file that ``node``, an operator of its
    replacement graph, stands for: the one whose instance name hashes to ``node``'s name's prefix
    (``HashName(instance)``, :func:`~msinspect.mindspore.comm_groups.std_hash`; the index after it
    has no mark, so each length is tried, longest first), with a strategy. None where the
    reference has none, or where ``node``'s name is not its own: at validate operators that share
    a primitive print one of their names (two replaced MatMuls both as
    ``622579306631221945MatMul6``). ``known``: the reference's operators by hash and the names
    ``ir`` prints more than once, made once per file."""
    from collections import Counter

    from msinspect.mindspore.comm_groups import std_hash

    if reference is None:
        return None
    if not known:
        known["by_hash"] = {str(std_hash(n.instance_name)): n for n in reference.nodes()
                            if n.instance_name and strategy_of(n) is not None and strategy_of(n).in_strategy}
        known["shared"] = {name for name, n in Counter(n.instance_name for n in ir.nodes() if n.instance_name).items()
                           if n > 1}
    if node.instance_name in known["shared"]:
        return None
    digits = re.search(r"\d+", node.instance_name or "").group(0)  # after any "grad"
    return next((known["by_hash"][digits[:k]] for k in range(len(digits), 9, -1) if digits[:k] in known["by_hash"]),
                None)


def _cut_by_shapes(param, own, whole, ctx: RankContext, optimizer: dict, path: str) -> dict | None:
    """The row of a weight no operator with a strategy reads (a Reshape without one, before an
    AllGather): where its shape at the rank is its whole shape (from the reference) cut along one
    dimension, that cut is the weight's layout (:func:`with_slices` lays it over the stage when the
    parts are one a device); None where nothing is cut, or the shapes do not tell it."""
    if own is None or whole is None or len(own) != len(whole) or param.name in optimizer \
            or any(o <= 0 or w % o for o, w in zip(own, whole)):
        return None
    parts = tuple(w // o for o, w in zip(own, whole))
    if sum(p > 1 for p in parts) != 1:
        return None
    return {"rank": ctx.rank, "param": param.short_name, "kind": "weight", "global_shape": tuple(whole),
            "rank_shape": tuple(own),
            "op": None, "consumer": None, "in_strategy": parts, "call": None, "input_index": 0, "user_layout": None,
            "opt_shard_group": "", "opt_shard_ranks": None, "file": path, "line": param.line}


#: A graph input's whole shape, which 2.10 prints after its abstract (``%para1_x: <Tensor[Float32],
#: (32, 1, 28, 28)> : [256, 1, 28, 28]``); a dynamic dimension is a symbol (``s3<[1,inf]>``).
_WHOLE = re.compile(r"\[((?:-?\d+|s\d+<[^>]*>)(?:, (?:-?\d+|s\d+<[^>]*>))*)?\]")


def _input_row(param, ctx: RankContext, path: str, is_global: bool) -> dict | None:
    """The row of a graph input (a parameter of the file without a value: the dataset's tensors).
    Its layout is the ``_VirtualDataset``'s, whose strategy the file does not keep past
    step_parallel_end: read off its shapes instead, the whole one (printed after the abstract) by
    the rank's, one part count per dimension (a dynamic dimension counted whole where both are
    dynamic). Where the file's shapes are global (before the parallel pass cuts them) the rank's
    part is not known: no cut, no slice."""
    own = param.abstract.shape if param.abstract and param.abstract.kind == "Tensor" else None
    found = _WHOLE.fullmatch(param.tail.strip()) if own is not None else None
    if found is None:
        return None
    whole = tuple(int(v) if not v.startswith("s") else -1 for v in (found.group(1) or "").split(", ") if v)
    parts = None
    if not is_global and len(whole) == len(own):
        dims = [(w, o) for w, o in zip(whole, own)]
        if all((w == o == -1) or (w > 0 and o > 0 and w % o == 0) for w, o in dims):
            parts = tuple(1 if w == o else w // o for w, o in dims)
    return {"rank": ctx.rank, "param": param.short_name, "kind": "input", "global_shape": whole,
            "rank_shape": None if is_global else tuple(own), "op": None, "consumer": None, "in_strategy": parts,
            "call": Call("_VirtualDataset", (parts,)) if parts is not None else None, "input_index": 0,
            "user_layout": None, "opt_shard_group": "", "opt_shard_ranks": None, "file": path, "line": param.line}


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
    stage's devices or the rank's place unknown, an optimizer-shard group whose ranks are not told.
    A scalar weight is whole on every rank (its map is empty); a weight no operator with a strategy
    reads, cut along one dimension in as many parts as its stage has devices, is laid over them in
    rank order (MindSpore's layout of a weight read only by a Reshape: ``[n]``, ``[0]``)."""
    out = []
    for row in rows:
        row = dict(row)
        call, index = row.pop("call"), row.pop("input_index")
        user = row.pop("user_layout", None)
        shape = row["global_shape"]
        matrix = tensor_map = bounds = None
        if user is not None and isinstance(user.get("device_matrix"), (tuple, list)):
            matrix, tensor_map = standard(tuple(user["device_matrix"]), tuple(user["tensor_map"]))
            raw = tuple(user["device_matrix"])  # the user's Layout is the weight's: its own matrix places the rank
            if ctx.local_rank is not None and prod(raw) == ctx.stage_devices and len(user["tensor_map"]) == len(shape or ()):
                bounds = slice_by_map(raw, tuple(user["tensor_map"]), shape, ctx.local_rank)
        elif call is None and shape is not None and row["in_strategy"] is not None \
                and ctx.stage_devices == max(row["in_strategy"], default=0):
            matrix, tensor_map = (ctx.stage_devices,), tuple(0 if p > 1 else -1 for p in row["in_strategy"])
            if ctx.local_rank is not None:
                bounds = slice_by_map(matrix, tensor_map, shape, ctx.local_rank)
        elif call is not None and ctx.stage_devices and shape is not None:
            layout = layout_of(call, ctx.stage_devices)
            if layout is not None and index < len(layout.tensor_maps) and shape == ():
                matrix, tensor_map = standard(layout.device_matrix, ())  # a scalar: nothing to cut
                bounds = () if ctx.local_rank is not None else None
            elif layout is not None and index < len(layout.tensor_maps) and len(layout.tensor_maps[index]) == len(shape):
                matrix, tensor_map = standard(layout.device_matrix, layout.tensor_maps[index])
                if ctx.local_rank is not None:
                    bounds = layout.slice_of(index, shape, ctx.local_rank)
            # else no rule, or the consumer reads the weight reshaped: its map is of another shape
        if shape is not None and any(d < 0 for d in shape):
            bounds = None  # a dynamic dimension: its extent is not known before the run
        row["device_matrix"], row["tensor_map"] = matrix, tensor_map
        uneven = call is not None and call.attr("manual_split") is not None
        row["slice_shape"] = (tuple(b - a for a, b in bounds) if (uneven or shape == ()) and bounds is not None else
                              divided(shape, row["in_strategy"]) if shape is not None and matrix is not None else None)
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


def weights_of(rows: list[dict]) -> list[dict]:
    """The rows of weights among a rank's parameter rows (not its graph inputs)."""
    return [row for row in rows if row.get("kind", "weight") == "weight"]


def params_at_end(path, ctx: RankContext) -> list[dict] | None:
    """The weights' parameter rows (:func:`param_rows`, no slices yet) of the rank's
    step_parallel_end beside ``path`` (the same rank's folder), where ``path`` is a later pass
    (validate, execute ...): the parallel pass's output, whose layouts later passes keep, for a file
    that states none itself (under ``enable_nd_tp`` validate's MatMuls print no strategy: zoo 20).
    Its weights are laid out against its step_parallel_begin, as the analysis of that pass reads
    them. None where ``path`` is itself a parallel pass, there is no one such file beside it, or it
    cannot be read. Which files read take them is the analysis' to say
    (:attr:`~msinspect.analysis.job.collect.Analysis.weights_at_end`)."""
    from msinspect.errors import MsInspectError
    from msinspect.parser import parse_file

    if not later_pass(path):  # their own layouts, or none yet
        return None
    folder = Path(path).parent
    end, begin = files_of_stage(folder, "step_parallel_end"), files_of_stage(folder, "step_parallel_begin")
    if len(end) != 1:
        return None
    try:
        ir = parse_file(end[0])
        reference = parse_file(begin[0]) if len(begin) == 1 else None
    except MsInspectError:
        return None
    return weights_of(param_rows(ir, ctx, reference))


def at_end_note(stages, at_end: dict[str, list[dict]], untold: dict[str, list[str]],
                stated: bool) -> list[str]:
    """What ``shapes --params`` and the report say where the files read (at ``stages``) leave a
    weight they train unlaid: whose rows are the step_parallel_end's beside them (``at_end``, by
    file: :attr:`~msinspect.analysis.job.collect.Analysis.weights_at_end`) and whose slices cannot be
    told (``untold``); ``stated``: whether a file read states any weight's layout itself."""
    from msinspect.analysis.job.op_rows import listing

    where = f"at {', '.join(sorted(set(stages))) or 'none'}"
    notes = []
    if at_end and not stated:
        notes.append(f"the files read ({where}) state no weight's layout: the weights as the "
                     "step_parallel_end beside each states them (later passes keep the parallel pass's layouts)")
    elif at_end:
        names = sorted({row["param"] for rows in at_end.values() for row in rows})
        notes.append(f"the files read ({where}) state no layout of {len(names)} weight(s) they train or accumulate "
                     f"gradients in ({listing(names)}): those as the step_parallel_end beside each states them "
                     "(later passes keep the parallel pass's layouts)")
    if untold:
        names = sorted({name for left in untold.values() for name in left})
        notes.append(f"cannot tell the slices of {len(names)} weight(s) the files read train ({listing(names)}): "
                     f"neither the files read ({where}) nor a step_parallel_end beside them states their layout")
    return notes


def slice_text(bounds) -> str:
    """``[8:16, 0:16]`` for ``((8, 16), (0, 16))``; ``[]`` for a scalar's ``()``."""
    if bounds is None:
        return "-"
    return "[" + ", ".join(f"{a}:{b}" for a, b in bounds) + "]"  # [] for a scalar: whole
