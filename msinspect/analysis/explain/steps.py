"""The step of a redistribution, for ``explain``: between the layout its producer gives and the
layout its consumer needs, which dimensions are gathered, split or exchanged and in how many parts
(:func:`redistribution_step`), through the redistribution's own per-rank operators (Reshape,
StridedSlice, Split, Concat: :func:`before_steps`, :func:`after_steps`), a Reshape that changes
the tensor's rank (:func:`whole_shapes`), a collective's own shapes (:func:`own_step`) or
MindSpore's definition of it (:func:`by_definition`), and the ranks the producer's device matrix
puts along the cut beside those MindSpore wrote (:func:`compare_group`).
"""
from __future__ import annotations

from dataclasses import replace
from math import prod
from typing import TYPE_CHECKING

from msinspect.analysis.explain.rank_file import Explanation, dims_text, node_is, shape_text
from msinspect.analysis.explain.layouts import OutputLayout, cut_through_reshape
from msinspect.analysis.dataflow.flow import consumers, first_input, is_data_edge, passes_through
from msinspect.analysis.dataflow.node_facts import is_backward
from msinspect.mindspore.vocabulary import acting_as, stands_in, stated_size
from msinspect.graph import node_id
from msinspect.mindspore.layouts import LAYOUT_KEEPING
from msinspect.model import Node, NodeKind
from msinspect.ranks_text import ranks_text

if TYPE_CHECKING:
    from msinspect.analysis.explain.rank_file import RankFile

#: Local operators of a redistribution that a later pass leaves with no strategy and a name of
#: their own (at validate comm reuse renames the per-rank Reshapes ``Reshape-op1``): a chain goes
#: through them to the operators with strategies at its ends.
_STEP_OPS = frozenset({"Reshape", "StridedSlice", "Split", "Concat", "TupleGetItem", "MakeTuple"})


def _is_step(f: RankFile, key: str | None) -> bool:
    node = f.node(key)
    return node is not None and f.strategy_of(key) is None and not is_backward(node) \
        and (node.op in _STEP_OPS or passes_through(f.graph, key))


def before_steps(f: RankFile, key: str) -> tuple[str, list[str]] | None:
    """(the nearest operator with a strategy upstream of ``key`` through redistribution steps
    with none, or the graph input they start from, those steps from ``key`` on) where ``key`` is
    such a step; None elsewhere."""
    steps, current = [], key
    while current is not None and _is_step(f, current) and current not in steps:
        steps.append(current)
        current = first_input(f.graph, current)
    if not steps or current is None:
        return None
    data = f.graph.nodes[current]
    graph_input = data.get("node") is None and data.get("kind") == NodeKind.PARAMETER and not data.get("has_default")
    if f.strategy_of(current) is None and not graph_input:
        return None
    return current, steps[::-1]


#: How far past an operator without a strategy :func:`laid_after` looks.
_AFTER_LIMIT = 64


def laid_after(f: RankFile, key: str) -> bool:
    """Whether a forward operator with a strategy reads what ``key`` (an operator without one)
    gives, through others without one: as MindSpore's ``FindNextLayout`` (step_parallel.cc) looks
    for a Reshape's next layout, past operators that are no parallel operator, in the forward graph
    (the parallel pass runs before the backward is built)."""
    import networkx as nx

    def laid(k: str) -> bool:  # one of a replacement graph stands for an operator with a layout
        return f.strategy_of(k) is not None or stands_in(f.node(k))

    def onward(k: str) -> list[str]:
        if k != key and laid(k):
            return []
        return [u for u in consumers(f.graph, k) if not node_is(is_backward, f.node(u))]

    for reached, (_, user) in enumerate(nx.generic_bfs_edges(f.graph, key, onward), 1):
        if laid(user) or reached >= _AFTER_LIMIT:  # stopped before the end: do not claim there is none
            return True
    return False


def made_whole(f: RankFile, key: str) -> bool:
    """Whether the operator ``key`` (with no strategy) takes what a Reshape's redistribution gives
    in MindSpore's default layout, whole on every device: no operator with a strategy reads it,
    directly or past others without one (:func:`laid_after`), and it is no graph's output."""
    node = f.node(key)
    return node is not None and node.kind != NodeKind.RETURN and not stands_in(node) and not laid_after(f, key)


def after_steps(f: RankFile, key: str) -> tuple[list[str], str] | None:
    """(the redistribution steps with no strategy from ``key`` on, the one forward operator they
    all reach, with a strategy or one a Reshape's default layout feeds, :func:`made_whole`) where
    ``key`` is such a step; None elsewhere, or where they reach
    anything else (a graph output, several operators)."""
    from msinspect.analysis.dataflow.flow import data_view

    data, steps, todo, found = data_view(f.graph), [], [key], set()
    while todo and len(steps) < 64:
        current = todo.pop()
        if current in steps or node_is(is_backward, f.node(current)):
            continue
        if not _is_step(f, current):
            if f.strategy_of(current) is None and not made_whole(f, current):
                return None
            found.add(current)
            continue
        steps.append(current)
        todo += list(data.successors(current))
    if todo or len(found) != 1 or not steps:
        return None
    return sorted(steps, key=lambda k: f.node(k).line if f.node(k) else 0), found.pop()


def input_position(f: RankFile, trail: list[str], start: str, consumer: str) -> int | None:
    """The input of ``consumer`` that ``start``, or the first of ``trail`` that feeds it, is."""
    for key in [start, *trail]:
        data = f.graph.get_edge_data(key, consumer)
        if data:
            return next(iter(data.values())).get("position")
    return None


#: The input kinds MindSpore's strategy has an entry for: tensors (``<null>``: a tensor whose
#: abstract the pass did not infer, as step_parallel_end prints a redistribution's output).
_CUT_KINDS = frozenset({"Tensor", "Ref", "null"})


def strategy_index(node: Node | None, position: int | None) -> int | None:
    """Which entry of ``node``'s in_strategy its operand at ``position`` is: MindSpore's strategy
    has one per tensor input, the scalars and tuples among them left out (GatherD's ``dim``
    between its input and its index). ``position`` itself where the file does not give that
    input's kind, or it is no tensor (a tuple of them, as Concat takes: there ``position`` is
    already the element's, as the caller finds it through the MakeTuple)."""
    types = node.input_types if node is not None else ()
    if position is None or position >= len(types) or types[position].kind not in _CUT_KINDS:
        return position
    return sum(1 for t in types[:position] if t.kind in _CUT_KINDS)


def compare_group(e: Explanation, layout: OutputLayout, span: tuple[int, ...] | None = None,
                  split: bool = False) -> None:
    """Set the ranks the device matrix gives beside those MindSpore wrote (``span``: those the
    chain's collectives reach together, where the step is one of several)."""
    if e.predicted_group is None:
        e.cannot_tell.append("which ranks the producer's device matrix gives: the stage's ranks or this rank's "
                             "place among them are not known")
        return
    how = "an axis split in two where only part of it is gathered; " if split else ""
    said = (f"the producer's device matrix {shape_text(layout.matrix)} ({how}repeated calculation on the right) "
            f"puts {ranks_text(e.predicted_group, word=True)} along the cut this step undoes")
    wrote = span if span is not None else e.group_ranks
    if span is not None:
        said += (f"; the chain's collectives ({' then '.join(ranks_text(g) for g in _chain_groups(e))}) reach "
                 f"{ranks_text(span, word=True)} together")
    if span is not None and set(e.predicted_group) < set(span):
        # the ranks holding the parts are among those the chain reaches: the others keep none
        # of them, so what they exchange is an intermediate layout of MindSpore's redistribution
        said += (", more than those: MindSpore's redistribution passes the parts through ranks that keep none "
                 "of them (intermediate layouts)")
    elif wrote is not None and tuple(e.predicted_group) != tuple(wrote):
        said += f", not the {ranks_text(wrote, word=True)} MindSpore wrote: the reconstruction is off here"
    elif wrote is not None:
        said += ", as MindSpore wrote"
    e.reconstruction.append(said)


def rank_input(f: RankFile, key: str | None, position: int | None) -> tuple[int, ...] | None:
    """The shape input ``position`` of the operator ``key`` has at the rank by its strategy (its
    whole shape cut as the strategy says); None where the file does not tell it."""
    node = f.node(key)
    row = f.strategies.get(node.line) if node is not None else None
    expected = (row or {}).get("expected_rank_inputs") or ()
    shape = expected[position] if position is not None and position < len(expected) else None
    return tuple(shape) if shape else None


def whole_shapes(f: RankFile, source: str | None, target: str | None, position: int | None, wanted,
                 e: Explanation) -> tuple:
    """(the producer's output, the consumer's input) as whole shapes, each None where the file does
    not tell it (:func:`told` says whether both are known extents): the producer's from its row
    (through a Cast or TensorMove the parallel pass gave no strategy, which keeps the shape), a
    weight's from its layout, an operator of a replacement graph's from the operator it replaces
    (read in the rank's step_parallel_begin, whose shapes are whole); the consumer's from its
    row, else from the last per-rank Reshape before it (its shape times the consumer's cut)."""
    made = f.node(source)
    while made is not None and f.strategy_of(source) is None and made.op in LAYOUT_KEEPING:
        source = first_input(f.graph, source)
        while source is not None and passes_through(f.graph, source):
            source = first_input(f.graph, source)
        made = f.node(source)
    row = f.strategies.get(made.line) if made is not None else None
    produced = (row or {}).get("global_output")
    if made is None and (weight := f.weight(source)) is not None:  # a weight: its whole shape
        produced = weight["global_shape"]
    elif row is None and (original := f.replaced(source)) is not None:
        produced = original.output_shape  # of a replacement graph: the output of what it replaces
    taking = f.node(target)
    row = f.strategies.get(taking.line) if taking is not None else None
    inputs = (row or {}).get("global_inputs") or ()
    # one shape per input of its strategy, else the row left out an input it has no shape for
    # (a <null> abstract) and its positions are not the inputs'
    aligned = len(inputs) == len((row or {}).get("in_strategy") or ())
    taken = inputs[position] if aligned and position is not None and position < len(inputs) else None
    steps = [f.by_line[line] for line in e.chain_lines if line in f.by_line]
    if taken is None and produced and _known(produced) and steps:  # a Squeeze's or ExpandDims' constant axes
        taken = _squeezed(tuple(produced), steps)
    if taken is None and wanted is not None:
        last = next((f.by_line[line] for line in reversed(e.chain_lines) if line in f.by_line
                     and f.by_line[line].op == "Reshape"), None)
        shape = last.inputs[1] if last is not None and len(last.inputs) > 1 else None
        if isinstance(shape, tuple) and len(shape) == len(wanted) and all(type(v) is int and v > 0 for v in shape):
            taken = tuple(v * w for v, w in zip(shape, wanted))
    return (tuple(produced) if produced else None), (tuple(taken) if taken else None)


def _known(shape) -> bool:
    return bool(shape) and all(type(v) is int and v > 0 for v in shape)


def told(whole: tuple | None) -> bool:
    """Whether both shapes of :func:`whole_shapes` are told, every extent known (none dynamic)."""
    return whole is not None and all(_known(shape) for shape in whole)


def _untold(e: Explanation, whole: tuple | None) -> str:
    """Why :func:`whole_shapes` does not tell both ends, in words: which end the file lacks, or
    which is dynamic."""
    produced, taken = whole if whole is not None else (None, None)
    ends = ((f"{e.producer}'s output", produced), (f"{e.consumer}'s input", taken))
    missing = [what for what, shape in ends if not shape]
    dynamic = [f"{what} {shape_text(shape)}" for what, shape in ends if shape and not _known(shape)]
    said = []
    if dynamic:
        said.append(f"{' and '.join(dynamic)} {'have' if len(dynamic) > 1 else 'has'} dynamic dimensions (-1), "
                    "whose extents are not known before the run: which dimensions the Reshape groups is not told")
    if missing:
        said.append(f"the file gives no whole shape of {' nor of '.join(missing)}")
    return "; ".join(said)


def redistribution_step(f: RankFile, node: Node, e: Explanation, layout: OutputLayout | None, wanted, over: str,
                        needed: tuple[int, ...] | None = None, whole: tuple | None = None) -> Explanation:
    """The step between the producer's cut (``e.producer_layout``; ``layout`` its device matrix)
    and the cut ``wanted`` of the consumer's input: the dimensions gathered, split or exchanged,
    in how many parts, told in the consumer's shape where a Reshape between changes the tensor's
    rank (``whole``: both whole shapes, :func:`whole_shapes`), or the per-rank Reshapes alone
    (nothing moves); ``needed`` the consumer's input at the rank (:func:`rank_input`)."""
    have = e.producer_layout
    if have is not None and wanted is not None and set(have) == {1}:
        have = e.producer_layout = tuple(1 for _ in wanted)  # whole stays whole through any Reshape
    elif have is not None and wanted is not None and set(wanted) == {1} and len(have) != len(wanted):
        # the consumer takes it whole after a Reshape: every cut dimension is gathered, in the
        # producer's terms (the collective runs before the Reshape)
        wanted = tuple(1 for _ in have)
    if node.op == "StridedSlice":
        e.kept = _kept(node)
        if e.kept:
            e.facts.append("keeps " + "[" + ", ".join(f"{b}:{t}" for b, t in e.kept) + "] of its input")
    if node.op in ("AlltoAll", "AllToAll"):
        attrs = node.primitive_attrs
        if "split_dim" in attrs:
            e.facts.append(f"AlltoAll splits dimension {attrs.get('split_dim')} in {attrs.get('split_count')} parts, "
                           f"sends part i to the group's i-th rank and concatenates what it gets on dimension "
                           f"{attrs.get('concat_dim')}")
    through = None
    shapes, whole = whole, (whole if told(whole) else None)
    if have is not None and wanted is not None and len(have) != len(wanted):
        # a Reshape between: the producer's cut read in the consumer's shape, where it is a cut
        mapped = cut_through_reshape(whole[0], have, whole[1]) if whole is not None else None
        through = (mapped, whole[1]) if mapped is not None else None
        if _reshapes_only(f, e):
            return _local_reshape(f, node, e, have, wanted, needed, through)
        back = cut_through_reshape(whole[1], wanted, whole[0]) if whole is not None and through is None else None
        if back is not None:  # no cut in the consumer's shape, but the consumer's is one in the producer's
            e.reconstruction.append(f"a Reshape between: {e.producer}'s cut is no cut of whole blocks in "
                                    f"{e.consumer}'s shape {shape_text(whole[1])}, but in {e.producer}'s "
                                    f"{shape_text(whole[0])} {e.consumer}'s cut {shape_text(wanted)} is "
                                    f"{shape_text(back)}: the step in {e.producer}'s terms")
            wanted = back
    if through is None and (have is None or wanted is None or len(have) != len(wanted)):
        if have is not None and wanted is not None:
            why = (f"in {e.consumer}'s shape {shape_text(whole[1])}, {e.producer}'s {shape_text(whole[0])} cut "
                   f"{shape_text(have)} is no cut of whole blocks (the Reshape interleaves its parts)"
                   if whole is not None else _untold(e, shapes))
            e.cannot_tell.append(f"the step: the tensor changes rank on the way ({shape_text(have)} to "
                                 f"{shape_text(wanted)}: a Reshape between), and {why}")
        e.headline = (f"{node.op} {over}: between {e.producer or 'no producer found'} and "
                      f"{e.consumer or 'no consumer found'}; the step cannot be told")
        own = own_step(f, node)
        if own is not None:  # the step as a whole is not told, this collective's part of it is
            e.action = "gather" if acting_as(node.op) == "AllGather" else "sum"
            e.dims, e.parts, e.own_shapes = own[0], own[1], own[3]
            did = "gathered" if acting_as(node.op) == "AllGather" else "summed and scattered"
            e.headline = (f"{node.op} {over}: between {e.producer or 'no producer found'} and "
                          f"{e.consumer or 'no consumer found'}: {dims_text(e.dims)} of the tensor as it "
                          f"reaches it is {did} ({e.parts} parts)")
            e.facts.append(f"its own shapes, {own[2]}: MindSpore's {node.op} works on dimension 0"
                           + (", the Split and Concat after it move the parts" if e.dims != (0,) else ""))
        return e
    given = have
    if through is not None:
        have = e.reshaped = through[0]
        e.reconstruction.append(f"a Reshape between: in {e.consumer}'s shape {shape_text(through[1])}, "
                                f"{e.producer}'s cut {shape_text(given)} is {shape_text(have)} (row-major, a cut "
                                "dimension's parts are its outer digits)")
    gathered = tuple(i for i, (p, c) in enumerate(zip(have, wanted)) if p > c)
    split = tuple(i for i, (p, c) in enumerate(zip(have, wanted)) if p < c)
    ratio = 1
    for i in gathered:
        ratio *= have[i] // max(wanted[i], 1)
    cut = 1
    for i in split:
        cut *= wanted[i] // max(have[i], 1)
    taken = e.consumer_layout if e.consumer_layout is not None else wanted
    between = (f"{e.producer} gives {shape_text(given)}"
               + (f", {shape_text(have)} in {e.consumer}'s shape" if through is not None else "")
               + f", {e.consumer} needs {shape_text(taken)}"
               + (" (whole, after a Reshape)" if len(taken) != len(wanted) and set(wanted) == {1}
                  else f" ({shape_text(wanted)} in {e.producer}'s shape)" if len(taken) != len(wanted) else ""))
    moves = [f"dimension {i} is gathered ({have[i]} parts -> {_parts(wanted[i])})" for i in gathered]
    moves += [f"dimension {i} is cut {'further ' if have[i] > 1 else ''}({_parts(have[i])} -> {wanted[i]} parts)"
              for i in split]
    if gathered and split:
        e.action, e.dims, e.parts = "exchange", gathered + split, ratio
    elif gathered:
        e.action, e.dims, e.parts = "gather", gathered, ratio
    elif split:
        e.action, e.dims, e.parts = "split", split, cut
    else:
        e.action = "none"
        moves = ["the cut is the same on both sides (a step of a longer redistribution)"]
    e.headline = f"{node.op} {over}: {between}: {'; '.join(moves)}"
    own = own_step(f, node) if through is not None else None
    if own is not None:  # one collective of the step: its own shapes say its part, in its own terms
        e.action = "gather" if acting_as(node.op) == "AllGather" else "sum"
        e.dims, e.parts, e.own_shapes = own[0], own[1], own[3]
        did = "gathered" if acting_as(node.op) == "AllGather" else "summed and scattered"
        e.headline = (f"{node.op} {over}: {dims_text(e.dims)} of the tensor as it reaches it is {did} ({e.parts} "
                      f"parts), one collective of the step where {between}: {'; '.join(moves)}")
        e.facts.append(f"its own shapes, {own[2]}: MindSpore's {node.op} works on dimension 0"
                       + (", the Split and Concat after it move the parts" if e.dims != (0,) else ""))
        return e
    if through is not None:  # the producer's device matrix cuts its own dimensions, not these
        return e
    if acting_as(node.op) == "AllGather" and gathered and gathered != (0,):
        e.facts.append("AllGather concatenates on dimension 0: the Split and Concat after it move the parts to "
                       f"dimension {', '.join(map(str, gathered))}")
    if layout is not None and layout.matrix and gathered and _moves(e):
        axes = [layout.axes[i] for i in gathered]
        if None not in axes and len(set(axes)) == len(axes):
            # a dimension gathered from 8 parts to 2 gathers over the inner 4 of its axis
            matrix, inner = list(layout.matrix), []
            for axis, i in sorted(zip(axes, gathered), reverse=True):
                ratio = have[i] // max(wanted[i], 1)
                if matrix[axis] % ratio:
                    return e
                split_axis = ratio < matrix[axis]  # only part of it gathered: (outer, inner) in its place
                matrix[axis:axis + 1] = [matrix[axis] // ratio, ratio] if split_axis else [ratio]
                inner = [a + 1 for a in inner] + [axis + 1] if split_axis else inner + [axis]
            e.predicted_group = f.group(matrix, inner)
            compare_group(e, replace(layout, matrix=tuple(matrix)), _span(f, e), tuple(matrix) != layout.matrix)
    return e


#: Operators that change a tensor's shape and nothing else: a redistribution made of them alone
#: moves nothing.
_SHAPE_ONLY = frozenset({"Reshape", "Squeeze", "ExpandDims"})


def _reshapes_only(f: RankFile, e: Explanation) -> bool:
    """Whether the redistribution between producer and consumer is per-rank Reshapes (or Squeezes,
    ExpandDims) alone: no collective, nothing else, in its chain."""
    steps = [f.by_line.get(line) for line in e.chain_lines]
    return bool(steps) and all(n is not None and n.op in _SHAPE_ONLY for n in steps)


def _squeezed(shape: tuple[int, ...], steps: list[Node]) -> tuple[int, ...] | None:
    """``shape`` through Squeezes and ExpandDims of constant axes, in order; None where another
    operator is among ``steps`` or an axis does not fit."""
    shape = list(shape)
    for node in steps:
        op = node.op
        axes = node.inputs[1] if len(node.inputs) > 1 else None
        axes = (axes,) if type(axes) is int else axes
        if op not in ("Squeeze", "ExpandDims") or not isinstance(axes, tuple) or not axes \
                or not all(type(a) is int for a in axes):
            return None
        if op == "Squeeze":
            dropped = {a % len(shape) for a in axes}
            if any(shape[a] != 1 for a in dropped):
                return None
            shape = [v for i, v in enumerate(shape) if i not in dropped]
        else:
            shape.insert(axes[0] % (len(shape) + 1), 1)
    return tuple(shape)


def _local_reshape(f: RankFile, node: Node, e: Explanation, have, wanted, needed, through) -> Explanation:
    """A redistribution that is per-rank Reshapes alone (the parallel pass's in place of the
    network's Reshape): MindSpore found the rank's part of the producer's output to be the part
    the consumer reads, in another shape, so each rank reshapes its own part and nothing moves.
    The producer's and the consumer's cuts must then make as many parts; the last Reshape's shape
    is checked against the consumer's input cut by its strategy where the file gives both."""
    e.headline = (f"{node.op} on the rank's own data: {e.producer} gives {shape_text(have)}, {e.consumer} needs "
                  f"{shape_text(wanted)}, the same part in another shape")
    if prod(have) != prod(wanted) or through is not None and through[0] != tuple(wanted):
        found = (f"in {e.consumer}'s shape {shape_text(through[1])} {shape_text(have)} is "
                 f"{shape_text(through[0])}" if through is not None and through[0] != tuple(wanted)
                 else f"{shape_text(have)} and {shape_text(wanted)} make {prod(have)} and {prod(wanted)} parts")
        e.cannot_tell.append(f"the step: MindSpore reshapes each rank's part alone, yet {found}: the layouts read "
                             "here are off")
        return e
    e.action, e.dims = "none", ()
    e.facts.append(f"no collective between {e.producer} and {e.consumer}: the redistribution is per-rank "
                   f"{' then '.join(e.chain)} alone")
    last = f.by_line.get(e.chain_lines[-1])
    shape = last.inputs[1] if last is not None and len(last.inputs) > 1 else None
    if needed is not None and isinstance(shape, tuple) and tuple(shape) == needed:
        e.reconstruction.append(f"the last Reshape gives each rank {shape_text(needed)}, {e.consumer}'s input cut "
                                f"{shape_text(wanted)}: each rank's part, {prod(wanted)} parts on both sides, "
                                "reshaped in place")
    elif through is not None:
        e.reconstruction.append(f"in {e.consumer}'s shape {shape_text(through[1])}, {e.producer}'s cut "
                                f"{shape_text(have)} is {shape_text(wanted)}, the cut {e.consumer} takes: each "
                                "rank's part, reshaped in place")
    else:
        e.reconstruction.append(f"{shape_text(have)} and {shape_text(wanted)} both make {prod(wanted)} parts: each "
                                "rank's part, reshaped in place")
    return e


def own_step(f: RankFile, node: Node) -> tuple[tuple[int, ...], int, str, tuple] | None:
    """(dimensions, parts, in words, (shape before, shape after)) of what an AllGather or
    ReduceScatter does to the tensor as it reaches it, from its own per-rank shapes: MindSpore's
    AllGather concatenates the group's parts on dimension 0 (its output's dimension 0 is its
    input's times the group's size), a ReduceScatter sums and leaves each rank its part of
    dimension 0; an AllGather read by a Split on dimension 0 then a Concat (tensor
    redistribution's way of gathering another dimension) gathers the dimension the Concat's
    output grows on, or (no shapes printed) the Concat's axis. Where the file does not print both
    shapes (step_parallel_end), the shape the per-rank Reshape before it gives and the group's
    size. None where neither shows it."""
    op = acting_as(node.op)
    if op not in ("AllGather", "ReduceScatter"):
        return None
    before = node.input_types[0].shape if node.input_types and node.input_types[0].is_tensor else None
    after = node.output_shape
    if not before or not after:
        # a pass that did not infer the collective's output (step_parallel_end) may print its
        # input as the network had it, not per rank: the per-rank Reshape before it tells
        before, after = _reshaped_to(f, node), None
    if not before or not before[0]:
        return None
    size = stated_size(node) or len((f.comm.get(node.line) or {}).get("group_ranks") or ())
    if not after and size > 1 and (op == "AllGather" or before[0] % size == 0):
        after = (before[0] * size if op == "AllGather" else before[0] // size, *before[1:])
    if not after or len(before) != len(after):
        return None
    small, big = (before, after) if op == "AllGather" else (after, before)
    if small[1:] != big[1:] or not small[0] or big[0] % small[0] or big[0] == small[0]:
        return None
    parts, dims = big[0] // small[0], (0,)
    concat = _concat_after(f, node_id(node)) if op == "AllGather" else None
    axis = concat.inputs[1] if concat is not None and len(concat.inputs) > 1 else None
    known = concat is not None and concat.output_shape and all(d >= 0 for d in concat.output_shape)
    if known and len(concat.output_shape) == len(before):
        grown = tuple(i for i, (a, b) in enumerate(zip(before, concat.output_shape)) if b == a * parts and a != b)
        if len(grown) != 1:
            return None
        dims = grown
        after = concat.output_shape
    elif concat is not None and type(axis) is int and -len(before) <= axis < len(before):
        # the Concat's axis; a dynamic dimension (-1) stays unknown
        dims = (axis % len(before),)
        after = tuple(b * parts if i == dims[0] and b >= 0 else b for i, b in enumerate(before))
    elif concat is not None:
        return None
    return dims, parts, f"per rank {shape_text(before)} -> {shape_text(after)}", (tuple(before), tuple(after))


def by_definition(f: RankFile, node: Node) -> tuple[tuple[int, ...], int, str] | None:
    """(dimensions, parts, in words) of what a collective does by MindSpore's definition of it,
    where the file prints no shapes (step_parallel_end): a ReduceScatter sums and leaves each rank
    its part of dimension 0; an AllGather concatenates on dimension 0, or, read by a Split on
    dimension 0 then a Concat, on the Concat's axis; in the group's parts. None for another
    collective, or where the group's size or the Concat's axis is not told."""
    op = acting_as(node.op)
    size = stated_size(node) or len((f.comm.get(node.line) or {}).get("group_ranks") or ())
    if op not in ("AllGather", "ReduceScatter") or size < 2:
        return None
    if op == "ReduceScatter":
        return (0,), size, "MindSpore's ReduceScatter sums and leaves each rank its part of dimension 0"
    concat = _concat_after(f, node_id(node))
    axis = concat.inputs[1] if concat is not None and len(concat.inputs) > 1 else 0
    if type(axis) is not int or axis < 0:
        return None
    if concat is None:
        return (0,), size, "MindSpore's AllGather concatenates the group's parts on dimension 0"
    return (axis,), size, (f"MindSpore's AllGather concatenates on dimension 0; the Split and Concat after it move "
                           f"the parts to dimension {axis}")


def _reshaped_to(f: RankFile, node: Node) -> tuple[int, ...] | None:
    """The shape the Reshape that feeds ``node`` gives (its constant shape operand: a per-rank
    Reshape of a redistribution states the rank's shape); None where no such Reshape feeds it."""
    source = f.node(first_input(f.graph, node_id(node)))
    if source is None or source.op != "Reshape" or len(source.inputs) < 2:
        return None
    shape = source.inputs[1]
    if isinstance(shape, tuple) and shape and all(isinstance(v, int) and not isinstance(v, bool) for v in shape):
        return shape
    return None


def _concat_after(f: RankFile, key: str) -> Node | None:
    """The Concat of the Split -> TupleGetItem -> MakeTuple -> Concat tensor redistribution puts
    after an AllGather ``key`` (the Split on dimension 0); None where no such Split reads it."""
    split = [u for u in f.graph.successors(key)  # the Split itself may pass data on (flow.around_collective)
             if node_is(lambda n: n.op == "Split", f.node(u)) and is_data_edge(f.graph, key, u)]
    if len(split) != 1 or f.node(split[0]).inputs[1:2] != (0,):
        return None
    todo, seen = [split[0]], set()
    while todo:
        current = todo.pop()
        for user in f.graph.successors(current):
            node = f.node(user)
            if user in seen or node is None:
                continue
            seen.add(user)
            if node.op == "Concat":
                return node
            if node.op in ("TupleGetItem", "MakeTuple"):
                todo.append(user)
    return None


def _chain_groups(e: Explanation) -> list:
    return [g for g in e.chain_groups if g]


def _moves(e: Explanation) -> bool:
    return e.kind not in ("local", "virtual")


def _parts(n: int) -> str:
    return "whole" if n == 1 else f"{n} parts"


def _span(f: RankFile, e: Explanation) -> tuple[int, ...] | None:
    """The ranks the chain's collectives reach together: one AllGather over ranks 0-1 then one
    over 0, 2, 4, 6 reach 0-7 (each rank's offsets within each group, added up); None where a
    group of the chain is not known or the chain has one collective."""
    rank = f.ctx.rank
    groups = [tuple(row["group_ranks"]) if row.get("group_ranks") else None
              for row in (f.comm.get(line) for line in e.chain_lines) if row and row.get("moves_data")]
    if rank is None or len(groups) < 2 or any(g is None for g in groups):
        return None
    reach = {0}
    for group in groups:
        reach = {r + g - rank for r in reach for g in group}
    return tuple(sorted(rank + r for r in reach))


def _kept(node: Node):
    begin, end = (node.inputs[1:3] + (None, None))[:2]
    if not all(isinstance(v, tuple) and all(isinstance(i, int) for i in v) for v in (begin, end)):
        return None
    return tuple(zip(begin, end))
