"""Activation memory per rank, an estimate: the forward outputs the backward reads, at the rank's
shapes, times the micro-batches the pipeline keeps in flight; and whether a rank's static memory
(:mod:`msinspect.analysis.rank.memory`) plus that estimate fits a device memory the user states.

What is counted, from one rank's file holding the whole step (``validate``: per-rank shapes, the
gradient graph built, recompute applied):

- a *saved* tensor is the output of a forward CNode (not under ``Gradients/``, not a recomputed
  copy) that a backward node reads: a node under ``Gradients/``, a node of a bprop graph (``◂`` in
  its name, below), or a copy the recompute pass made (``cnode_attrs: {duplicated: Bool(1)}``,
  scope ``recompute_...``), which runs in the backward.
- a cell whose forward is a graph of its own (``@lazy_inline``: MindFormers' ``LlamaForCausalLM``,
  zoo 11's blocks) has its backward in another graph, which MindSpore marks ``◂`` (its forward
  ``▸``: ``TraceGradBprop`` / ``TraceGradFprop`` in ``mindspore/core/utils/trace_info.h``); the
  forward returns ``Partial(@◂, v1, ..., vn)``, the closure of what the backward reads, and the
  caller calls it with the sensitivity. Each ``vi`` is read by the backward: saved. A ``vi`` that
  is a parameter of the forward graph is the value its call binds (:mod:`msinspect.graph`). A
  forward graph called several times (micro-batches) makes one closure a call, of the call's
  micro-batch and chunk (below); a value bound at every call (a weight gathered once a step
  before the calls) is one tensor, ``shared``. Where such calls carry no micro-batch, the estimate
  cannot tell which micro-batch each closure belongs to, and says so. The output of a call of a
  bprop graph is the backward's (a gradient), never a saved tensor.
  A value read through ``Depend`` / ``Load`` is its producer's; an item of a tuple
  (``TupleGetItem``) is that item alone. Weights and graph inputs (parameters) are not saved
  tensors: :mod:`~msinspect.analysis.rank.memory` counts the weights; the inputs are ``inputs`` here.
  Its bytes are the reading node's input abstract (dtype and shape at the rank).
- a saved tensor of no known size (a dimension printed -1, known at run time only: the tokens
  an ``AlltoAllV`` dispatches to a rank's experts; no abstract printed; not a tensor) leaves its
  sum unknown: the estimate says how many, why, with a node of the file, and what the others hold.
- recompute is the file's own: once the recompute pass has run, the backward reads the copies
  and no longer the recomputed cells' forward outputs, so those are not saved; only what the
  copies read (a cell's inputs, the gathered weights) is.
- micro-batches (``cnode_primal_attrs: {micro: I64(i)}``, as MindSpore unrolls them; on the calls of
  an interleaved pipeline's chunk graphs ``cnode_attrs: {micro: I64(i), chunk: I64(c)}``; else the
  micro-batch :func:`micro_of_order` reads from ``order``): the saved bytes of one micro-batch are
  the most any micro index has, all chunks together; tensors with no micro index are counted once
  (``shared``).
- in flight: under a pipeline of ``p`` stages, stage ``s`` (from 0) keeps ``min(p - s, m)`` of its
  ``m`` micro-batches' activations at once: MindSpore's default scheduler, 1F1B
  (``AutoParallel.pipeline(scheduler="1f1b")``), orders ``p - s`` forwards before the first
  backward (``ReorderForForward`` in ``frontend/parallel/graph_util/pipeline_split_utils.cc``:
  a Depend from forward ``i - 1``'s end to forward ``i``'s start for ``i < stage_num - stage_id``),
  then one forward per backward. The file does not state the scheduler: under ``gpipe`` all ``m``
  are in flight. Without a pipeline, micro-batches (gradient accumulation) run one at a time.
- interleaved (the file shows more than one chunk, ``pipeline_interleave``): each (chunk,
  micro-batch) forward pass keeps its own closure until its backward ends, and the passes run as
  ``InterleavedScheduler::Reorder`` orders them (``pipeline_transformer/pipeline_scheduler.cc``,
  MindSpore 2.10): ``bias = (p + m mod p)(v - 1) + 2 (p - s - 1)`` forward passes of warm-up, then
  forward ``i`` before backward ``i - bias`` and that backward before forward ``i + 1``; forward
  passes sorted by (micro-batch // p, chunk, micro-batch), backward passes by (micro-batch // p,
  chunk descending, micro-batch) (``SortFuncBetweenMicro``). :func:`interleaved_peak` walks that
  order: ``in_flight`` is ``bias + 1`` chunk passes, and the saved bytes are the most the passes
  alive at once hold (chunks differ: a first stage's chunk 0 holds the embedding's, a last stage's
  last chunk the loss's), not ``per_micro x in_flight``. The ``ENABLE_LESS_MEM_VPP`` variant
  (``MemoryOptimizedReorder``, ``bias = (p + m mod p)(v - 1) + p - s - 1``) is not in the file.

``activations = per_micro x in_flight + shared + inputs`` (interleaved: the peak of the schedule +
shared + inputs). What it leaves out (:data:`LEAVES_OUT`):
the operators' workspace, the allocator's fragmentation and alignment, communication buffers,
temporaries that live only while the next operator runs, the backward's own peak (gradients in
flight before they are summed), and the framework's own memory.
"""
from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING, Iterator

from msinspect.analysis.dataflow.node_facts import PLUMBING_OPS, bprop_graph, is_backward, nbytes
from msinspect.model import GraphRef, NodeRef, ParamRef
from msinspect.schema import is_missing
from msinspect.stages import stage_of

if TYPE_CHECKING:
    import pandas as pd

    from msinspect.model import IRFile, Node

ACTIVATION_COLUMNS = ["rank", "stage", "micro_batches", "in_flight", "per_micro", "shared", "inputs", "saved",
                      "recomputed", "activations", "why"]
#: What the estimate leaves out, said wherever it is shown.
LEAVES_OUT = ("an estimate: saved forward outputs at the rank's shapes times the micro-batches in flight "
              "(1F1B: stage s of p keeps min(p - s, micro-batches); interleaved, v chunks: the peak over MindSpore's "
              "order of (p + m mod p)(v - 1) + 2(p - s - 1) + 1 chunk passes); it leaves out operator workspace, "
              "allocator fragmentation, communication buffers, short-lived temporaries, the backward's own peak "
              "and the framework's memory")
#: Nodes whose output is their first input's (a value read through them is its producer's).
_PASS_THROUGH = frozenset({"Depend", "Load"})
#: Units of ``--device-memory``: decimal (KB, MB, GB, TB) and binary (KiB, MiB, GiB, TiB).
_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*$")
#: ``order`` = cut x MAX_MICRO_BATCH_NUM x MAX_INTERLEAVE_NUM + interleave index x MAX_INTERLEAVE_NUM
#: + micro (``CalSrTag``, ``frontend/parallel/pipeline_transformer/pipeline_interleave.cc``; the
#: constants 4096 and 128 of ``frontend/parallel/ops_info/ops_utils.h``).
MAX_INTERLEAVE_NUM = 128


def parse_size(text: str) -> int:
    """``"32GiB"`` -> 34359738368, ``"80 GB"`` -> 80000000000: a number and a unit of
    :data:`_UNITS` (case-insensitive); ValueError naming what is expected otherwise."""
    match = _SIZE.match(str(text))
    unit = match.group(2).upper() if match else None
    if not match or unit not in _UNITS:
        raise ValueError(f"{text!r} is not a size: give a number and a unit, e.g. 32GiB, 64GB, 16000MiB "
                         "(units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)")
    value = float(match.group(1)) * _UNITS[unit]
    if value <= 0:
        raise ValueError(f"{text!r}: a device memory must be more than 0")
    return int(value)


def recomputed_copy(node: Node) -> bool:
    """A node the recompute pass made to recompute a forward output in the backward."""
    return node.cnode_attrs.get("duplicated") is True


def _backward_side(node: Node) -> bool:
    return is_backward(node) or recomputed_copy(node) or bprop_graph(node.graph or "")


def _backward_value(node: Node) -> bool:
    """Whether a node's output is the backward's: a backward-side node's, or a call of a bprop
    graph's (the gradients it returns; its argument, the sensitivity, is not a saved tensor)."""
    bprop_call = node.op == "call" and bool(node.callee_graphs) and all(map(bprop_graph, node.callee_graphs))
    return bprop_call or _backward_side(node)


def _origin(ref, nodes: dict[int, Node]) -> tuple[Node, int | None] | None:
    """The CNode (and tuple item) whose output a value is, through Depend / Load / TupleGetItem;
    None for a parameter or a constant."""
    item = None
    for _ in range(64):
        if not isinstance(ref, NodeRef) or ref.index not in nodes:
            return None
        node = nodes[ref.index]
        if node.op in _PASS_THROUGH and node.inputs:
            ref = node.inputs[0]
        elif node.op == "TupleGetItem" and item is None and len(node.inputs) == 2 and isinstance(node.inputs[1], int):
            ref, item = node.inputs
        else:
            return node, item
    return None


def micro_of_order(order: int) -> int:
    """The micro-batch an ``order`` names: its last digits below :data:`MAX_INTERLEAVE_NUM`."""
    return order % MAX_INTERLEAVE_NUM


def _int_attr(node: Node, name: str) -> int | None:
    for attrs in (node.cnode_primal_attrs, node.cnode_attrs):
        value = attrs.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _micro(node: Node | None) -> int | None:
    """A node's micro-batch: ``micro`` (primal, else the call's ``cnode_attrs``), else read from
    ``order`` (not where a sequence chunk, ``seq_chunk``, shares its digits)."""
    if node is None:
        return None
    micro = _int_attr(node, "micro")
    order = _int_attr(node, "order")
    if micro is None and order is not None and _int_attr(node, "seq_chunk") is None:
        return micro_of_order(order)
    return micro


def _slot(node: Node | None) -> tuple[int | None, int] | None:
    """``(chunk, micro)`` of a node of a micro-batch (chunk None where not told), None otherwise."""
    micro = _micro(node)
    return None if micro is None else (_int_attr(node, "chunk"), micro)


def _size(abstract) -> int | None:
    return nbytes(abstract.shape, abstract.dtype) if abstract is not None and abstract.is_tensor else None


def _direct_reads(ir: IRFile, counts: dict) -> Iterator[tuple]:
    """``(key, abstract, producer, slot)`` of each forward value a backward-side node reads in its
    own graph; ``counts`` gets how many nodes are backward-side and how many recomputed copies."""
    for sub in ir.subgraphs:
        nodes = {n.index: n for n in sub.nodes if n.index is not None}
        for node in sub.nodes:
            if not _backward_side(node):
                continue
            counts["backward"] += 1
            counts["recomputed"] += recomputed_copy(node)
            if node.op in _PASS_THROUGH or node.op == "TupleGetItem":
                continue  # what it passes on is counted where it is read (:func:`_origin` sees through it)
            for position, value in enumerate(node.inputs):
                found = _origin(value, nodes)
                if found is not None:
                    producer, item = found
                    abstract = node.input_types[position] if position < len(node.input_types) else None
                    yield (producer.graph, producer.index, item, None), abstract, producer, _slot(producer)


def _bound_values(graph, param: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """``(graph key of the value, key of the call that binds it)`` for each value bound to the
    subgraph parameter ``param`` (a graph key ``param:...``) at a call (:mod:`msinspect.graph`)."""
    for source, edges in graph.pred[param].items():
        for data in edges.values():
            if data.get("binds") is None:
                continue
            if source.startswith("param:") and depth < 16:
                yield from ((value, data["binds"]) for value, _ in _bound_values(graph, source, depth + 1))
            else:
                yield source, data["binds"]


def _closure_reads(ir: IRFile) -> Iterator[tuple]:
    """``(key, abstract, producer, slot)`` of each forward value a ``Partial`` of a bprop graph
    binds (the closure the backward reads, see the module's docstring), once per call of the
    graph that makes it; a str where the calls' micro-batches cannot be told."""
    partials = [node for node in ir.nodes() if node.op == "Partial" and node.inputs
                and isinstance(node.inputs[0], GraphRef) and bprop_graph(node.inputs[0].name)]
    if not partials:
        return
    from msinspect.graph import RETURNED, to_networkx

    graph = to_networkx(ir)
    nodes_of = {sub.name: {n.index: n for n in sub.nodes if n.index is not None} for sub in ir.subgraphs}
    for partial in partials:
        returned = f"{partial.graph}/Return"
        calls = [call for call, edges in (graph.succ[returned].items() if returned in graph else ())
                 if any(data.get("position") == RETURNED for data in edges.values())]
        slots = {call: _slot(graph.nodes[call].get("node")) for call in calls}
        many = len(calls) > 1
        if many and None in slots.values():
            yield (f"cannot tell: the forward graph {partial.graph} that makes the backward's closure is called "
                   f"{len(calls)} times, not all with a micro-batch index: how many of its closures are alive at "
                   "once (a loop's iterations run a number of times known at run time, or an order that is no "
                   "micro-batch) the file does not say")
            continue
        own = nodes_of[partial.graph]
        for position, value in enumerate(partial.inputs[1:], 1):
            abstract = partial.input_types[position] if position < len(partial.input_types) else None
            while isinstance(value, NodeRef) and value.index in own and own[value.index].op in _PASS_THROUGH \
                    and own[value.index].inputs:
                value = own[value.index].inputs[0]  # a Load of a bound parameter is the bound value
            if isinstance(value, NodeRef):
                for call in calls or [None]:
                    origin = _origin(value, own)
                    if origin is not None:
                        producer, item = origin
                        yield ((producer.graph, producer.index, item, call if many else None), abstract, producer,
                               slots[call] if many else _slot(producer))
            elif isinstance(value, ParamRef) and f"param:{value.name}" in graph:
                yield from _bound_reads(graph, nodes_of, f"param:{value.name}", abstract, slots)


def _bound_reads(graph, nodes_of: dict, param: str, abstract, slots: dict) -> Iterator[tuple]:
    """The values bound to a forward graph's parameter a closure keeps: a value bound at one call
    of several is that call's micro-batch's; one bound at several calls is one tensor (shared,
    unless it is itself of a micro-batch)."""
    bound: dict = defaultdict(set)
    for key, call in _bound_values(graph, param):
        if call in slots or not slots:
            bound[key].add(call)
    for key, calls in bound.items():
        node = graph.nodes[key].get("node")
        origin = _origin(NodeRef(node.index), nodes_of[node.graph]) if node is not None else None
        if origin is None:
            continue  # a weight or a graph input: not an activation
        producer, item = origin
        slot = _slot(producer)
        if slot is None and len(calls) == 1 and len(slots) > 1:
            slot = slots[next(iter(calls))]
        yield (producer.graph, producer.index, item, None), abstract, producer, slot


def _run_time_shape(abstract) -> bool:
    """Whether an abstract (a tensor, or a tuple's elements) has a dimension the IR prints as -1."""
    shapes = (abstract.shape, *abstract.elements) if abstract is not None else ()
    return any(shape is not None and any(d < 0 for d in shape) for shape in shapes)


def _run_time_origin(node: Node, nodes: dict[int, Node]) -> tuple[Node, ParamRef | None, object]:
    """Where a run-time dimension comes from, up the inputs that have one: ``(node, None, None)``,
    the first node whose inputs have none (its output's size is set by the values it reads: an
    AlltoAllV's lists), or ``(reader, parameter, its abstract)``, a parameter that has one (a
    graph input declared with a ``None`` dimension) and a node reading it."""
    seen = {node.index}
    while True:
        up = None
        for position, ref in enumerate(node.inputs):
            given = node.input_types[position] if position < len(node.input_types) else None
            if isinstance(ref, ParamRef) and _run_time_shape(given):
                return node, ref, given
            if isinstance(ref, NodeRef) and ref.index in nodes and ref.index not in seen and (
                    _run_time_shape(given) or any(map(_run_time_shape, nodes[ref.index].output_types))):
                up = up or nodes[ref.index]
        if up is None:
            return node, None, None
        node = up
        seen.add(node.index)


def _unsized_why(ir: IRFile, unsized: list, saved: int, known: int) -> str:
    """Why ``unsized`` (``(producer, abstract)`` of saved tensors of no known bytes) have none, by
    cause, each with one node of the file as an example; and what the others hold."""
    from msinspect.mindspore.dtypes import element_bytes
    from msinspect.model import format_node

    nodes_of = {sub.name: {n.index: n for n in sub.nodes if n.index is not None} for sub in ir.subgraphs}
    causes: dict = defaultdict(list)
    for producer, abstract in unsized:
        if abstract is None or abstract.kind == "null":
            causes["print no abstract (<null>)"].append(producer)
        elif _run_time_shape(abstract):
            origin, param, given = _run_time_origin(producer, nodes_of.get(producer.graph, {}))
            runtime = "have a dimension known at run time only (-1), each downstream of "
            causes[runtime + (f"the input {param.short_name} {given.text}" if param is not None else
                              f"an output of {origin.op}, whose size is set at run time by the values it "
                              "reads")].append(origin)
        elif not abstract.is_tensor:
            causes[f"are {abstract.kind} values, not tensors"].append(producer)
        else:
            causes[f"have a dtype of no known size ({abstract.dtype})" if element_bytes(abstract.dtype or "") is None
                   else "have no size the IR tells"].append(producer)
    parts = []
    for cause, examples in causes.items():
        example = examples[0]
        output = example.output_types[0].text if example.output_types else "no abstract"
        parts.append(f"{len(examples)} {cause} (e.g. {format_node(example, ir.path)} -> {output})")
    others = saved - len(unsized)
    return (f"cannot tell: {len(unsized)} of {saved} saved tensors have no known size; {'; '.join(parts)}"
            + (f"; the other {others} hold {known:,} bytes" if others else ""))


def saved_of_file(ir: IRFile) -> dict:
    """One file's saved forward outputs (see the module's docstring): ``per_micro`` ({micro index:
    bytes}, all chunks), ``slots`` ({(chunk, micro): bytes}, chunk None where not told), ``shared``
    (bytes of those with no micro index), ``inputs`` (the graph inputs' bytes), ``saved`` (how
    many), ``unknown`` (how many have no known bytes), ``unsized_why`` (why not, by cause, with an
    example node; "" where none), ``untold`` (which of ``per_micro`` and ``shared`` they leave
    unknown), ``recomputed`` (copies the recompute pass made), ``backward``
    (nodes of the gradient graph), ``why`` (why it cannot tell, else "")."""
    per_micro: dict = defaultdict(int)
    slots: dict = defaultdict(int)
    shared = 0
    unsized: list = []
    counts = {"backward": 0, "recomputed": 0}
    seen: set = set()
    untold: set = set()
    why = ""
    for read in (*_direct_reads(ir, counts), *_closure_reads(ir)):
        if isinstance(read, str):
            why = why or read
            continue
        key, abstract, producer, slot = read
        if _backward_value(producer) or producer.op in PLUMBING_OPS:  # the inputs: `inputs`
            continue
        if key in seen:
            continue
        seen.add(key)
        size = _size(abstract)
        if size is None:
            unsized.append((producer, abstract))
            untold.add("per_micro" if slot is not None else "shared")
        elif slot is not None:
            per_micro[slot[1]] += size
            slots[slot] += size
        else:
            shared += size
    inputs = [nbytes(p.abstract.shape, p.abstract.dtype) if p.abstract is not None else None
              for p in ir.params if not p.has_default]
    known = shared + sum(per_micro.values())
    return {"per_micro": dict(per_micro), "slots": dict(slots), "shared": shared, "saved": len(seen),
            "unknown": len(unsized), "untold": untold, **counts, "why": why,
            "unsized_why": _unsized_why(ir, unsized, len(seen), known) if unsized else "",
            "inputs": None if any(v is None for v in inputs) else sum(inputs)}


def pipeline_place(analysis, result) -> tuple[int, int] | None | str:
    """``(s, p)``: the rank's pipeline stage (from 0) and the number of stages; None without a
    pipeline; a reason (str) where the job is pipelined but the stage cannot be told."""
    if not analysis.pipelined:
        return None
    ctx = analysis.context(result.rank)
    world = analysis.world or ctx.world
    if not ctx.stage_ranks or not world or len(world) % len(ctx.stage_ranks):
        return "cannot tell: the rank's pipeline stage is not known" + (
            f" ({analysis.stages_note})" if analysis.stages_note else "")
    per_stage = len(ctx.stage_ranks)
    stated = result.stage_facts.stage if result.stage_facts is not None else -1
    stage = stated if stated >= 0 else min(ctx.stage_ranks) // per_stage  # MindSpore: blocks of consecutive ranks
    return stage, len(world) // per_stage


def in_flight(micro_batches: int, place: tuple[int, int] | None) -> int:
    """Micro-batches whose activations a rank holds at once: ``min(p - s, m)`` at stage ``s`` of
    ``p`` under 1F1B, one without a pipeline (see the module's docstring)."""
    if place is None:
        return 1
    stage, stages = place
    return max(1, min(stages - stage, micro_batches))


def interleaved_peak(slots: dict, stage: int, stages: int) -> tuple[int, int]:
    """``(bytes, passes)``: the most saved bytes the (chunk, micro-batch) forward passes of stage
    ``stage`` of ``stages`` hold at once under MindSpore's interleaved 1F1B, and how many passes
    are then in flight (see the module's docstring, ``InterleavedScheduler::Reorder``). ``slots``:
    {(chunk, micro): bytes}; bytes of a micro-batch whose chunk is not told live while any pass of
    that micro-batch does."""
    chunks = sorted({chunk for chunk, _ in slots if chunk is not None})
    micros = sorted({micro for _, micro in slots})
    offset = len(micros) % stages
    bias = (stages + offset) * (len(chunks) - 1) + 2 * (stages - stage - 1)

    def loop(micro: int) -> int:  # SortFuncBetweenMicro's loop index
        return 0 if micro // (stages + offset) == 0 else (micro - offset) // stages

    passes = [(chunk, micro) for chunk in chunks for micro in micros]
    forward = sorted(passes, key=lambda p: (loop(p[1]), p[0], p[1]))
    backward = sorted(passes, key=lambda p: (loop(p[1]), -p[0], p[1]))
    peak = 0
    for i in range(min(bias, len(passes) - 1), len(passes)):
        alive = set(forward[:i + 1]) - set(backward[:max(0, i - bias)])
        held = sum(slots.get(p, 0) for p in alive) + sum(slots.get((None, m), 0) for m in {m for _, m in alive})
        peak = max(peak, held)
    return peak, min(bias + 1, len(passes))


def _why_not(result) -> str | None:
    """Why a rank's file cannot give its saved activations, before parsing it."""
    from msinspect.analysis.rank.context import shapes_are_global

    if result.error:
        return f"cannot tell: the rank's file could not be read ({result.error})"
    if shapes_are_global(result.file):
        return (f"cannot tell: {stage_of(result.file)} shows global shapes and no gradient graph "
                "(read the step's whole graph: --stage validate)")
    return None


def _saved(result, memo: dict) -> dict | str:
    """:func:`saved_of_file` of the rank's file, or why not. Ranks whose graphs are the same but
    for their rank-specific values (their signatures' every part but the groups, and the weights
    they hold) share one reading."""
    why = _why_not(result)
    if why:
        return why
    signature = result.signature
    key = (tuple(p for p in signature.parts if p[0] != "comm"), signature.holds) if signature else result.file
    if key not in memo:
        from msinspect.errors import MsInspectError
        from msinspect.parser import parse_file

        try:
            memo[key] = saved_of_file(parse_file(result.file, lenient=not result.complete))
        except (MsInspectError, OSError) as error:
            memo[key] = f"cannot tell: {error}"
    return memo[key]


def activations_of_rank(rank, saved: dict | str, place) -> dict:
    """One rank's row of :func:`activations_per_rank` from its file's :func:`saved_of_file` (or why
    not) and its :func:`pipeline_place`."""
    row = dict.fromkeys(ACTIVATION_COLUMNS)
    row["rank"] = rank
    row["stage"] = "-" if place is None else place if isinstance(place, str) else f"{place[0]} of {place[1]}"
    if isinstance(saved, str):
        row["why"] = saved
        return row
    micro = len(saved["per_micro"]) or 1
    per = max(saved["per_micro"].values(), default=0)
    untold = saved.get("untold", ())  # a sum that leaves out tensors of unknown size is no answer
    row.update(micro_batches=micro, per_micro=None if "per_micro" in untold else per,
               shared=None if "shared" in untold else saved["shared"], inputs=saved["inputs"],
               saved=saved["saved"], recomputed=saved["recomputed"])
    if saved.get("why"):  # closures of unknown micro-batches: no count of micro-batches, no sums
        row.update(micro_batches=None, per_micro=None, shared=None, why=saved["why"])
    elif not saved["backward"]:
        row["why"] = "cannot tell: the file holds no gradient graph (nothing under Gradients/)"
    elif saved["unknown"]:
        row["why"] = saved.get("unsized_why") or f"cannot tell: {saved['unknown']} saved tensor(s) of unknown size"
        if not isinstance(place, str) and len({chunk for chunk, _ in saved.get("slots", {}) if chunk is not None}) < 2:
            row["in_flight"] = in_flight(micro, place)  # the schedule's, whatever the sizes
    elif isinstance(place, str):
        row["why"] = place
    elif saved["inputs"] is None:
        row["why"] = "cannot tell: a graph input of unknown shape or dtype"
    elif place is not None and len({chunk for chunk, _ in saved.get("slots", {}) if chunk is not None}) > 1:
        peak, row["in_flight"] = interleaved_peak(saved["slots"], *place)
        row["activations"] = peak + saved["shared"] + saved["inputs"]
        row["why"] = ""
    else:
        row["in_flight"] = in_flight(micro, place)
        row["activations"] = per * row["in_flight"] + saved["shared"] + saved["inputs"]
        row["why"] = ""
    return row


def activations_per_rank(analysis) -> pd.DataFrame:
    """One row per rank read (:data:`ACTIVATION_COLUMNS`), bytes at the rank: ``per_micro`` (one
    micro-batch's saved forward outputs), ``in_flight`` micro-batches, ``shared`` (saved outputs
    of no micro-batch), ``inputs`` (the graph inputs), ``activations`` (per_micro x in_flight +
    shared + inputs: an estimate, :data:`LEAVES_OUT`); ``saved`` tensors, ``recomputed`` copies;
    ``why`` where it cannot tell (None in the numbers it cannot tell)."""
    import pandas as pd

    memo: dict = {}
    rows = [activations_of_rank(r.rank, _saved(r, memo), pipeline_place(analysis, r)) for r in analysis.results]
    frame = pd.DataFrame(rows, columns=ACTIVATION_COLUMNS)
    for column in ("micro_batches", "in_flight", "per_micro", "shared", "inputs", "saved", "recomputed",
                   "activations"):
        frame[column] = frame[column].astype(object)
    return frame


FIT_COLUMNS = ["rank", "static", "activations", "total", "device_memory", "headroom", "fits"]


def fit_of(static, activations, device_memory: int, why: str = "") -> dict:
    """Whether ``static + activations`` bytes fit ``device_memory``: ``total``, ``headroom``
    (device memory less total; negative: short by that much), ``fits`` ("fits", "does not fit",
    or "cannot tell: ..." naming what is not known)."""
    if is_missing(static):
        return {"total": None, "headroom": None, "fits": "cannot tell: static memory not known"}
    if is_missing(activations):
        # static alone past the device memory already does not fit, whatever the activations
        if int(static) > device_memory:
            return {"total": None, "headroom": device_memory - int(static),
                    "fits": "does not fit (static memory alone)"}
        return {"total": None, "headroom": None,
                "fits": why or "cannot tell: activation memory not known"}
    total = int(static) + int(activations)
    return {"total": total, "headroom": device_memory - total,
            "fits": "fits" if total <= device_memory else "does not fit"}


def fit_per_rank(static: pd.DataFrame, activations: pd.DataFrame, device_memory: int) -> pd.DataFrame:
    """One row per rank (:data:`FIT_COLUMNS`) from :func:`~msinspect.analysis.rank.memory.memory_per_rank`
    and :func:`activations_per_rank`."""
    import pandas as pd

    act = {row["rank"]: row for row in activations.to_dict("records")}
    rows = []
    for row in static.to_dict("records"):
        mine = act.get(row["rank"], {})
        rows.append({"rank": row["rank"], "static": row["total"], "activations": mine.get("activations"),
                     "device_memory": device_memory,
                     **fit_of(row["total"], mine.get("activations"), device_memory, mine.get("why") or "")})
    frame = pd.DataFrame(rows, columns=FIT_COLUMNS)
    for column in ("static", "activations", "total", "headroom"):
        frame[column] = frame[column].astype(object)
    return frame
