"""Every communication and redistribution operator in a file: its kind, the real operators it sits
between, its group and the ranks in it, and the tensor it moves."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from msinspect.mindspore import comm_groups, infer_shapes, vocabulary
from msinspect.analysis.rank.context import RankContext, shapes_are_global
from msinspect.analysis.dataflow.cse import merged_into
from msinspect.analysis.dataflow.file_view import answer, keeps_answers, label
from msinspect.analysis.dataflow.flow import consumers, data_view, first_input, input_at, producer
from msinspect.mindspore.layouts import LAYOUT_KEEPING, call_of, divided, layout_of
from msinspect.analysis.dataflow.node_facts import as_shape, as_shapes, is_backward, is_plumbing, nbytes, scope_of
from msinspect.mindspore.dtypes import LONG_DTYPES, element_bytes
from msinspect.mindspore.comm_groups import WORLD_GROUPS
from msinspect.mindspore.vocabulary import PIPELINE_OPS, int_attr, is_comm
from msinspect.graph import RETURNED, node_id, to_networkx
from msinspect.model import IRFile, Node, NodeKind
from msinspect.rank_lists import compact
from msinspect.stages import WHOLE_STEP_STAGES

if TYPE_CHECKING:  # networkx loads where a graph is built and pandas where a table is: a run answered
    # from the cache loads no networkx, and `summary` no pandas
    import networkx as nx
    import pandas as pd

COMM_COLUMNS = [
    "rank", "stage", "file", "line", "name", "op", "kind", "moves_data", "producer", "consumers", "group",
    "group_ranks", "group_size", "peer", "shape", "out_shape", "dtype", "tensor_bytes", "wire_bytes", "scope",
    "micro", "graph", "producer_scope", "consumer_scopes", "merged_into",
]


def kind_of(node: Node, graph: nx.MultiDiGraph, key: str, planner: bool | None = None) -> str:
    """Why the operator is there: see :mod:`msinspect.mindspore.vocabulary` (from the primitive,
    its instance name and, for ``planner``, whether the parallel pass inserted communication into
    the file: :func:`~msinspect.mindspore.vocabulary.planner_ran`); an unnamed AllGather of a
    parameter (2.2 era) is optimizer parallel; a collective in a mirror's bprop scope is a
    gradient sum whatever its name (:data:`~msinspect.mindspore.vocabulary.MIRROR_BPROP_SCOPE`)."""
    kind = vocabulary.kind_of(node, is_backward(node), planner)
    if kind == "backward" and scope_of(node).rsplit("/", 1)[-1].startswith(vocabulary.MIRROR_BPROP_SCOPE):
        return "gradient"
    if kind in ("user", "unknown") and vocabulary.acting_as(node.op) == "AllGather":
        source = producer(graph, key)
        data = graph.nodes[source] if source is not None else {}
        if data.get("kind") == "parameter" and data.get("has_default"):
            return "optimizer"
    return kind


# ------------------------------------------------------------------ groups and peers
def _alone(node: Node) -> bool:
    """A ``_MicroStepAllGather`` of a weight that optimizer parallel does not cut: ``group: ""``,
    for which ``comm_ops.py`` sets ``rank_size = 1`` (its forward gathers the rank's own tensor
    only, its gradient is accumulated, nothing crosses the wire)."""
    return node.op == "_MicroStepAllGather" and node.primitive_attrs.get("group") == ""


def _size_of(node: Node) -> int | None:
    """The size the operator states of its group (``rank_size``, mirrors: ``dev_num``)."""
    return 1 if _alone(node) else vocabulary.stated_size(node)


def _listed(node: Node, ctx: RankContext) -> tuple[int, ...] | None:
    """The rank list the operator's attributes write for its group (``group_rank_ids``,
    ``rank_list``, ``group_ranks: "4-5-6-7"``; the world for the world group), whether or not it
    can be the group's (:func:`_group_list` checks)."""
    attrs = node.primitive_attrs
    for key in ("group_rank_ids", "rank_list"):
        value = attrs.get(key)
        if isinstance(value, tuple) and value and all(isinstance(v, int) for v in value):
            return value
    text = attrs.get("group_ranks")
    if isinstance(text, str) and text:
        if text in WORLD_GROUPS:
            # MindSpore writes "WORLD_GROUP" for the world group, and for a group name it does not
            # know (``DeviceManager::FindRankListNameByHashName``): an optimizer gather of a weight
            # it does not cut has ``group: ""``, ``group_ranks: "WORLD_GROUP"``
            return ctx.world if attrs.get("group") in WORLD_GROUPS else None
        try:
            return tuple(int(v) for v in text.split("-"))
        except ValueError:
            pass
    if attrs.get("group") in WORLD_GROUPS:
        return ctx.world
    return None


def grouped_nodes(ir: IRFile, graph: nx.MultiDiGraph | None = None) -> list[Node]:
    """The file's nodes that name a group (a ``group`` or ``group_ranks`` attribute), in file
    order; kept with ``graph`` where it is read for many ranks (which nodes they are is the
    program's: ranks differ in the names, not in whether there is one)."""
    def find():
        return [n for n in ir.nodes() if n.primitive_attrs and ("group" in n.primitive_attrs
                                                                  or "group_ranks" in n.primitive_attrs)]
    return answer(graph, ("grouped_nodes",), find) if graph is not None else find()


def known_groups(ir: IRFile, ctx: RankContext, graph: nx.MultiDiGraph | None = None) -> dict[str, tuple[int, ...]]:
    """Group name -> rank list, from every operator of the file that writes its group's ranks in
    a list that can be the group's (its size, the rank itself, a sha256 name: :func:`comm_groups.fits`).
    Within one rank a name stands for one group; a name written with two different lists tells
    neither."""
    found: dict[str, set[tuple[int, ...]]] = {}
    told: set = set()  # operators alike in what this reads (_group_key) tell the same
    for node in grouped_nodes(ir, graph):
        name = node.primitive_attrs.get("group") if node.primitive_attrs else None
        if not isinstance(name, str) or not name or name in WORLD_GROUPS:
            continue
        key = _group_key(node)
        if key is not None:
            if key in told:
                continue
            told.add(key)
        ranks = _listed(node, ctx)
        if ranks is not None and comm_groups.fits(ranks, size=_size_of(node), rank=ctx.rank, name=name):
            found.setdefault(name, set()).add(tuple(ranks))
    return {name: lists.pop() for name, lists in found.items() if len(lists) == 1}


def _group_list(node: Node, ctx: RankContext, known: dict[str, tuple[int, ...]] | None = None
                ) -> tuple[int, ...] | None:
    """The ranks of the operator's communication group: the list its attributes write when it
    can be the group's (:func:`comm_groups.fits`); else the list another operator of the file
    writes for the same group name (``known``: :func:`known_groups`); else the one candidate the
    group's name hashes to (the file's other groups, and the strided rank lists of the world
    holding the rank: :func:`comm_groups.resolve`); else None ("cannot tell")."""
    name = node.primitive_attrs.get("group")
    size = _size_of(node)
    if _alone(node):
        return (ctx.rank,) if ctx.rank is not None else None
    ranks = _listed(node, ctx)
    if ranks is not None and comm_groups.fits(ranks, size=size, rank=ctx.rank, name=name):
        return tuple(ranks)
    if not isinstance(name, str) or not name or name in WORLD_GROUPS:
        return None
    ranks = (known or {}).get(name)
    if ranks is not None and comm_groups.fits(ranks, size=size, rank=ctx.rank, name=name):
        return ranks
    size = size or comm_groups.stated_size(name)
    found = comm_groups.resolve(name, (known or {}).values(), size=size, rank=ctx.rank)
    if found is None and ctx.rank is not None and ctx.world and size:
        found = comm_groups.resolve_strided(name, size, ctx.rank, ctx.world)
    return found


def _group_key(node: Node) -> tuple | None:
    """Everything :func:`_group_list` reads of an operator: operators alike in it have one group;
    None where a value cannot be a key (a list): the operator is read on its own."""
    attrs = node.primitive_attrs
    key = (node.op, attrs.get("group"), attrs.get("group_ranks"), attrs.get("group_rank_ids"),
           attrs.get("rank_list"), attrs.get("rank_size"), attrs.get("dev_num"))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def group_lists(nodes: list[Node], ctx: RankContext, known: dict[str, tuple[int, ...]] | None = None) -> list:
    """:func:`_group_list` of each of ``nodes``, once for the operators alike in what it reads
    (a rank's mirror operators of one data-parallel group)."""
    found: dict[tuple, tuple[int, ...] | None] = {}
    out = []
    for node in nodes:
        key = _group_key(node)
        if key is None:
            out.append(_group_list(node, ctx, known))
            continue
        if key not in found:
            found[key] = _group_list(node, ctx, known)
        out.append(found[key])
    return out


def peer_of(node: Node, ranks: tuple[int, ...] | None) -> int | None:
    """The other rank of a Send (its destination) or a Receive (its source).

    MindSpore writes the global rank as ``dst_global_rank`` / ``src_global_rank`` where the pass
    knows it (``PipelineInterleave::InsertSendReceive``). ``dest_rank`` / ``src_rank`` is the
    peer's rank *within the operator's group* (the Send and Receive primitives of ``comm_ops.py``):
    in the world group that is the global rank (``PipelineTransformer::InsertSend`` writes
    ``global_rank_ + (user_stage - stage) * per_stage_rank_num_``); in the pipeline-interleave
    pass's stage group it is the peer's stage, its index in the group's rank list (``ranks``,
    sorted: ``DeviceManager::GetDeviceListBetweenStage`` lists the ranks stage by stage). None
    where neither tells (a stage-relative rank whose group's ranks are unknown)."""
    if node.op not in PIPELINE_OPS:
        return None
    send = node.op == "Send"
    found = int_attr(node, "dst_global_rank" if send else "src_global_rank")
    if found is not None:
        return found
    within = int_attr(node, "dest_rank" if send else "src_rank")
    group = node.primitive_attrs.get("group")
    if within is None or not isinstance(group, str):
        return None
    if group in WORLD_GROUPS:
        return within
    if ranks and 0 <= within < len(ranks):
        return sorted(ranks)[within]
    return None


def group_ranks(node: Node, ctx: RankContext, known: dict[str, tuple[int, ...]] | None = None
                ) -> tuple[int, ...] | None:
    """The ranks that take part in the operator: for a Send / Receive the rank and its peer, for
    the others their communication group's ranks (:func:`_group_list`); None: cannot tell."""
    if node.op in PIPELINE_OPS:
        peer = peer_of(node, _group_list(node, ctx, known))
        return tuple(sorted({ctx.rank, peer})) if peer is not None and ctx.rank is not None else None
    return _group_list(node, ctx, known)


# ------------------------------------------------------------------ the tensor at the rank
def _dtype_text(value) -> str | None:
    """A Send / Receive ``dtype`` attribute (``F32``, or ``Tensor(F32)`` as backward Sends write
    it) in the abstracts' spelling: ``Float32``."""
    if not isinstance(value, str):
        return None
    if value.startswith("Tensor(") and value.endswith(")"):
        value = value[len("Tensor("):-1]
    return LONG_DTYPES.get(value, value) or None


class RankShapes:
    """The tensor each communication operator of one file takes and gives *at the rank*.

    Where the file is written after the parallel pass re-inferred the shapes (``validate`` on) the
    abstracts say it. Before (``step_parallel_end``) they show the global tensor, and the
    operators the pass inserted print ``<null>``; then the tensor at the rank is only what is
    certain:

    - a parameter's value (through ``Load`` / ``Depend``): parameters are cut in place, so the
      file's parameter list shows the rank's slice (the mirror operators, optimizer gathers);
    - the output of another communication operator whose input at the rank is known, by the
      operator's rule (:func:`~msinspect.mindspore.vocabulary.output_of`): a mirror after an
      optimizer gather;
    - what a redistribution's step states (a ``Reshape``'s or ``StridedSlice``'s literal
      arguments, also past a ``Cast`` without strategy) or infers from the slice it takes (its
      ``Split`` and ``Concat``), and the output of a graph put in place of an operator, by its
      operators' infer rules from their inputs at the rank (:meth:`_replaced`);
    - a scalar (nothing to cut);
    - what its consumers take: an operator with a strategy fed by the collective directly (through
      plumbing only) takes its global input divided by its strategy (MindSpore inserts the
      communication so that each operator gets its input in the layout its strategy asks for); the
      input then follows by the rule undone (:func:`~msinspect.mindspore.vocabulary.input_of`). The
      global input is the consumer's ``origin_input_shapes``, or, for a collective that keeps the
      logical tensor (the partial-sum AllReduce, a redistribution step), the global input it
      prints; every consumer must agree.

    Anything else is None: "cannot tell"."""

    def __init__(self, ir: IRFile, graph: nx.MultiDiGraph, ctx: RankContext,
                 known: dict[str, tuple[int, ...]] | None = None):
        self.graph = graph
        self.ctx = ctx
        self.known = known
        self.is_global = shapes_are_global(ir.path)
        # the file's weights by ref_key: their slice at the rank (cut in place); a subgraph's
        # parameter bound to one (a @lazy_inline body's) still prints the whole weight
        self.weights = {(p.abstract.ref_key or p.short_name): (p.abstract.shape, p.abstract.dtype)
                        for p in ir.params if p.has_default and p.abstract is not None
                        and p.abstract.shape is not None}
        self._inputs: dict[str, tuple] = {}
        self._outputs: dict[str, tuple] = {}
        self._busy: set[str] = set()
        #: each operator's comm row but what names the rank (:func:`_shared_row`), by its place
        #: in the file's comm operators, with what it read of the node besides its attributes
        self.rows: dict[int, tuple[tuple, dict]] = {}

    def _node(self, key: str | None) -> Node | None:
        return self.graph.nodes[key].get("node") if key is not None else None

    def group_size(self, node: Node) -> int | None:
        return _group_size(node, _group_list(node, self.ctx, self.known))

    def _source(self, key: str) -> str | None:
        """The node whose value the operator's first input is, past ``Load`` / ``Depend`` and
        the parameters of a called subgraph bound to one caller's argument (a ``@lazy_inline``
        body's weights: :mod:`msinspect.graph`)."""
        current = first_input(self.graph, key)
        seen = {key}
        while current is not None and current not in seen:
            seen.add(current)
            data = self.graph.nodes[current]
            node = data.get("node")
            if node is None:
                if not (data.get("bound") and not data.get("output_shapes")):
                    return current
            elif node.op not in ("Load", "Depend"):
                return current
            current = first_input(self.graph, current)
        return None

    def moved(self, key: str) -> tuple[tuple[int, ...] | None, str | None, bool]:
        """(shape, dtype, at the rank) of the tensor the operator sends (Receive: receives)."""
        node = self._node(key)
        if node.op in PIPELINE_OPS:
            shape = as_shape(node.primitive_attrs.get("shape"))
            dtype = _dtype_text(node.primitive_attrs.get("dtype"))
            if shape is not None and element_bytes(dtype) is not None:
                return shape, dtype, True
            if node.op == "Receive" and node.output_types and node.output_types[0].shape is not None:
                return node.output_types[0].shape, node.output_types[0].dtype, not self.is_global
        found = self.rank_input(key)
        if found is not None:
            return found[0], found[1], True
        first = node.input_types[0] if node.input_types else None  # position 0, not the first that prints
        if first is not None and first.kind in ("Tensor", "Ref") and first.shape is not None:
            return first.shape, first.dtype, False
        return None, None, False

    def rank_input(self, key: str) -> tuple[tuple[int, ...], str | None] | None:
        """(shape, dtype) of the operator's first input at the rank; None: cannot tell."""
        if key not in self._inputs:
            if key in self._busy:
                return None
            self._busy.add(key)
            try:
                self._inputs[key] = self._rank_input(key)
            finally:
                self._busy.discard(key)
        return self._inputs[key]

    def rank_output(self, key: str) -> tuple[tuple[int, ...], str | None] | None:
        """(shape, dtype) of the operator's output at the rank; None: cannot tell."""
        if key not in self._outputs:
            node = self._node(key)
            out = node.output_types[0] if len(node.output_types) == 1 else None
            typed = out is not None and out.kind in ("Tensor", "Ref") and out.shape is not None
            if typed and not self.is_global:
                self._outputs[key] = (out.shape, out.dtype)
            elif _replacing(node):  # a redistribution's Split or Concat: by its infer rule
                return self._replaced(key)
            else:
                found = self.rank_input(key)
                shape = vocabulary.output_of(node, found[0], self.group_size(node)) if found else None
                self._outputs[key] = (shape, found[1]) if shape is not None else None
        return self._outputs[key]

    def _rank_input(self, key: str) -> tuple[tuple[int, ...], str | None] | None:
        node = self._node(key)
        accumulator = node.input_types[1] if node.op in vocabulary.ACCUMULATING_MIRRORS and len(node.input_types) > 1 else None
        if accumulator is not None and accumulator.kind == "Ref" and accumulator.shape is not None:
            return accumulator.shape, accumulator.dtype  # cut in place, as a weight is
        first = node.input_types[0] if node.input_types else None
        printed = first is not None and first.kind in ("Tensor", "Ref") and first.shape is not None
        if printed and (not self.is_global or first.shape == () or _one_norm(node, first.shape)):
            return first.shape, first.dtype
        if printed and first.kind == "Ref" and first.ref_key in self.weights:
            return self.weights[first.ref_key]
        source = self._source(key)
        data = self.graph.nodes[source] if source is not None else {}
        if data.get("kind") == "parameter":
            shapes, dtypes = data.get("output_shapes") or (), data.get("dtypes") or ()
            if shapes and shapes[0] is not None:
                return shapes[0], dtypes[0] if dtypes else None
            return None
        upstream = self._node(source)
        weight = _weight_kept(upstream)
        if weight is not None:
            return weight
        if upstream is not None and is_comm(upstream) and upstream.op in vocabulary.SHAPE_RULES:
            found = self.rank_output(source)
            if found is not None:
                return found
        laid = self._laid_out_by(source)
        if laid is not None and vocabulary.is_redistribution_step(laid):
            # the step itself, or past a Cast with no strategy (zoo 15: MoEV3's ``astype`` of the
            # router's input, between the redistribution's StridedSlice and its AllGather)
            shape = _stated_at_rank(laid)
            dtype = (self._kept_dtype(source) if laid is upstream else first.dtype if printed else None) \
                if shape is not None else None
            if dtype is not None:
                return shape, dtype
        if _replacing(upstream):
            found = self._replaced(source)
            if found is not None:
                return found
        if upstream is not None and printed:
            found = self._from_producer(self._laid_out_by(source), first.shape)
            if found is not None:
                return found, first.dtype
        out = self._from_consumers(key, node, first.shape if printed else None)
        if out is None:
            return None
        shape = vocabulary.input_of(node, out, self.group_size(node))
        return (shape, first.dtype if printed else None) if shape is not None else None

    def _kept_dtype(self, key: str | None) -> str | None:
        """The element type of a node's output, read back through the operators that keep it (a
        redistribution's steps, collectives) to the first that prints it."""
        seen = set()
        while key is not None and key not in seen:
            seen.add(key)
            node = self._node(key)
            if node is None:
                return None
            first = node.input_types[0] if node.input_types else None
            if first is not None and first.dtype is not None:
                return first.dtype
            if _replacing(node):
                found = self._replaced(key)
                if found is not None or not vocabulary.is_redistribution_step(node):
                    return found[1] if found is not None else None
            if not (vocabulary.is_redistribution_step(node) or is_comm(node)):
                return None
            key = first_input(self.graph, key)
        return None

    def _laid_out_by(self, key: str) -> Node | None:
        """The operator whose layout the output of ``key`` has: ``key`` itself, or, past operators
        that keep their input's layout when they have no strategy (:data:`LAYOUT_KEEPING`: zoo 16's
        loss mask, a ``Cast`` of ``NotEqual`` ((32, 1), ()), gathered at step_parallel_end), the
        first with one. Nothing stands between them: MindSpore inserts a redistribution where two
        layouts differ."""
        node, seen = self._node(key), set()
        while node is not None and node.strategy is None and node.op in LAYOUT_KEEPING and key not in seen:
            seen.add(key)
            key = first_input(self.graph, key)
            node = self._node(key)
        return node

    def _from_producer(self, upstream: Node | None, whole: tuple[int, ...]) -> tuple[int, ...] | None:
        """The output at the rank of an operator with a strategy whose global output (``whole``,
        as this file prints it before the parallel pass re-infers shapes) the collective takes:
        ``whole`` cut by the output's tensor map in the layout MindSpore derives for the
        operator's strategy (:mod:`msinspect.mindspore.layouts`; a partial sum keeps its
        shape). The loss's AllGather at step_parallel_end prints ``-> (<null>)``: this tells it."""
        strategy = upstream.strategy if upstream is not None else None
        if strategy is None or not strategy.in_strategy:
            return None
        layout = layout_of(call_of(upstream, strategy.in_strategy), self.ctx.stage_devices)
        if layout is None or layout.output_map is None or len(layout.output_map) != len(whole):
            return None
        return divided(whole, tuple(layout.parts(entry) for entry in layout.output_map))

    def _from_consumers(self, key: str, node: Node, printed: tuple[int, ...] | None) -> tuple[int, ...] | None:
        """The operator's output at the rank as its consumers' strategies cut it (see the class)."""
        if node.op not in vocabulary.SHAPE_RULES:
            return None
        keeps = vocabulary.SHAPE_RULES[node.op] == "same" or vocabulary.is_redistribution_step(node)
        found = set()
        for target, position in self._users(key):
            consumer = self._node(target)
            strategy = consumer.strategy if consumer is not None else None
            rows = strategy.in_strategy if strategy is not None else None
            if not rows or position >= len(rows):
                return None
            origin = as_shapes(consumer.cnode_primal_attrs.get("origin_input_shapes"))
            whole = origin[position] if origin is not None and position < len(origin) else None
            if whole is None and keeps:
                whole = printed
            elif whole is not None and keeps and printed is not None and printed != whole:
                return None
            part = divided(whole, rows[position]) if whole is not None else None
            if part is None:
                return None
            found.add(part)
        return found.pop() if len(found) == 1 else None

    def _replaced(self, key: str) -> tuple[tuple[int, ...], str | None] | None:
        """(shape, dtype) at the rank of the output of an operator of a replacement graph
        (:func:`_replacing`), by its infer rule (:mod:`msinspect.mindspore.infer_shapes`) from its
        inputs at the rank (:meth:`_value`). ``enable_nd_tp``'s MatMul multiplies the activation
        its AllGather, Split and Concat gathered by the weight's slice, its partial sums reach the
        ReduceScatter through a Transpose (zoo 20: (8192, 128) @ (128, 128), transposed (128,
        8192)); a row-split Gather looks the rank's ids up in its slice of the table, masked
        (zoo 16: (1, 64) ids in a (128, 512) slice, (1, 64, 512) to the AllReduce). None where an
        input cannot tell."""
        if key not in self._outputs:
            self._outputs[key] = None  # a loop through the graph tells nothing
            node = self._node(key)
            source = self._node(input_at(self.graph, key, 0))
            if node.op == "TupleGetItem" and (source is None or source.op != "Split"):
                return None  # a part of a Split only
            reader, whose = node, key  # whose inputs the rule reads: a Concat's parts are its MakeTuple's
            if node.op == "Concat" and source is not None and source.op == "MakeTuple":
                reader, whose = source, input_at(self.graph, key, 0)
            found = []
            for i in infer_shapes.tensor_inputs(node.op, len(reader.inputs)):
                given = input_at(self.graph, whose, i)
                found.append(self._value(given) if given is not None else _constant(reader, i))
            shapes, dtypes = ([f[k] if f is not None else None for f in found] for k in (0, 1))
            shape = infer_shapes.output_shape(node.op, node.inputs, shapes)
            if shape is not None:
                self._outputs[key] = (shape, infer_shapes.output_dtype(node.op, node.inputs, dtypes))
        return self._outputs[key]

    def _value(self, key: str | None) -> tuple[tuple[int, ...], str | None] | None:
        """(shape, dtype) at the rank of the value ``key`` gives an operator of a replacement
        graph: a parameter's as the file prints it (weights are cut in place), through ``Load`` /
        ``Depend``; a communication operator's output (:meth:`rank_output`); another replacing
        operator's (:meth:`_replaced`); an operator's with a strategy, its printed output cut by
        its layout (:meth:`_from_producer`: zoo 16's tokens, ``slice``'s (32, 64) cut (32, 1)).
        None for anything else."""
        data = self.graph.nodes[key] if key is not None else {}
        node = data.get("node")
        if node is None:
            shapes, dtypes = data.get("output_shapes") or (), data.get("dtypes") or ()
            told = data.get("kind") == "parameter" and shapes and shapes[0] is not None
            if not told and data.get("bound"):  # a called graph's parameter: its caller's argument
                return self._value(first_input(self.graph, key))
            return (shapes[0], dtypes[0] if dtypes else None) if told else None
        if node.op in ("Load", "Depend"):
            return self._value(first_input(self.graph, key))
        if is_comm(node):
            return self.rank_output(key)
        if _replacing(node) or (node.op == "TupleGetItem" and _replacing(self._node(first_input(self.graph, key)))):
            return self._replaced(key)
        out = node.output_types[0] if len(node.output_types) == 1 else None
        if out is None or out.kind not in ("Tensor", "Ref") or out.shape is None:
            return None
        if not self.is_global:
            return out.shape, out.dtype
        if node.op == "TupleGetItem":
            found = self._dataset_part(key, node, out.shape)
            return (found, out.dtype) if found is not None else None
        found = self._from_producer(self._laid_out_by(key), out.shape)
        return (found, out.dtype) if found is not None else None

    def _dataset_part(self, key: str, node: Node, whole: tuple[int, ...]) -> tuple[int, ...] | None:
        """The rank's part of a graph input a ``_VirtualDataset`` gives out (``TupleGetItem(dataset,
        i)``, printed ``whole``): cut as the dataset's input i, whose tensor map its outputs keep
        (``virtual_dataset_info.cc``, ``InferTensorMap``; under ``full_batch`` every part is whole:
        zoo 05's (1024) token ids, ``in_strategy: ((1))``). None for another item."""
        dataset = self._node(first_input(self.graph, key))
        index = node.inputs[1] if len(node.inputs) > 1 else None
        strategy = dataset.strategy if dataset is not None and dataset.op == "_VirtualDataset" else None
        if strategy is None or not strategy.in_strategy or type(index) is not int:
            return None
        layout = layout_of(call_of(dataset, strategy.in_strategy), self.ctx.stage_devices)
        if layout is None or not 0 <= index < len(layout.tensor_maps) or len(layout.tensor_maps[index]) != len(whole):
            return None
        return divided(whole, tuple(layout.parts(entry) for entry in layout.tensor_maps[index]))

    def _users(self, key: str) -> list[tuple[str, int]]:
        """(operator, input position) of every real operator the collective's output reaches
        through plumbing alone (``Load`` / ``Depend``'s first input) and through calls of the
        file's subgraphs (an argument to the parameter it binds, a callee's ``Return`` to the
        call: :mod:`msinspect.graph`); an output that reaches anything else (another
        communication operator, a ``MakeTuple``, an unbound call or ``Return``) gives []: its
        consumers cannot tell."""
        found, todo, seen = [], [key], {key}
        while todo:
            current = todo.pop()
            for target, edges in self.graph.succ[current].items():
                data = self.graph.nodes[target]
                node = data.get("node")
                for edge in edges.values():
                    position = edge.get("position")
                    if data.get("bound"):
                        called = data.get("kind") in (NodeKind.CALL_GRAPH, NodeKind.CALL_VALUE)
                        if called and position != RETURNED:
                            continue  # an argument: its value goes on to the parameter it binds
                        if data.get("op") == "Partial":
                            return []
                        if target not in seen:
                            seen.add(target)
                            todo.append(target)
                        continue
                    if node is None or node.index is None:
                        return []
                    if node.op in ("Load", "Depend"):
                        if position == 0 and target not in seen:
                            seen.add(target)
                            todo.append(target)
                        continue
                    if node.op == "UpdateState":
                        continue
                    if is_comm(node) or is_plumbing(node) or node.kind != "call_primitive":
                        return []
                    found.append((target, position))
        return found


def _weight_kept(node: Node | None) -> tuple[tuple[int, ...], str | None] | None:
    """(shape, dtype) of a weight as an operator with no strategy that keeps its layout
    (:data:`LAYOUT_KEEPING`) gives it on: its input is the weight's ``Ref``, cut in place (the
    rank's slice, at any stage), its output the same slice, in a Cast's target type. At
    step_parallel_end MindSpore prints such a Cast's output ``(1)`` (zoo 13's micro-step
    optimizer gathers of each weight cast to float16); None for any other node."""
    if node is None or node.strategy is not None or node.op not in LAYOUT_KEEPING or not node.input_types:
        return None
    weight = node.input_types[0]
    if weight.kind != "Ref" or weight.shape is None:
        return None
    target = node.inputs[1] if node.op == "Cast" and len(node.inputs) > 1 else None
    dtype = LONG_DTYPES.get(target, target) if isinstance(target, str) else weight.dtype
    return (weight.shape, dtype) if element_bytes(dtype) is not None else None


def _replacing(node: Node | None) -> bool:
    """Whether ``node`` runs on the rank's slices and an infer rule of
    :mod:`msinspect.mindspore.infer_shapes` gives its output: an operator of a graph MindSpore put
    in place of another (:func:`~msinspect.mindspore.vocabulary.stands_in`; a strategy one of its
    operators prints is the replaced operator's, copied: zoo 16's Sub and Gather of the embedding
    print the Gather's ((8, 1), (32, 1))), or a redistribution's step (``redistribution_op_*``:
    ``tensor_redistribution.cc`` builds its Split and Concat for the slice; zoo 02's head gathers
    2, splits and concatenates the parts along another axis before its next AllGather)."""
    return node is not None and node.op in infer_shapes.INFERRED and (
        vocabulary.stands_in(node) or vocabulary.is_redistribution_step(node))


def _constant(node: Node, position: int) -> tuple[tuple[int, ...], str | None] | None:
    """(shape, dtype) of a constant tensor operand (``Tensor(shape=[], dtype=Int32, value=0)``),
    the same at every rank; None where the input at ``position`` is none."""
    typed = node.input_types[position] if position < len(node.input_types) else None
    if typed is None or typed.kind != "Tensor" or typed.shape is None:
        return None
    return typed.shape, typed.dtype


def _one_norm(node: Node, shape: tuple[int, ...]) -> bool:
    """Whether the operator is a global norm's sum (``PARALLEL_GLOBALNORM_*``) of one element: the
    parallel pass puts it on the sum of the squares the rank holds, one element at every rank,
    which step_parallel_end prints as (1,) (zoo 16: ``ExpandDims`` of each ``SumExt(..., ())``,
    ``AddN``), a shape it also writes for tensors it has not inferred (zoo 13's weight casts)."""
    return all(d == 1 for d in shape) and str(node.instance_name or "").startswith(vocabulary.GLOBAL_NORM_PREFIX)


def _stated_at_rank(node: Node) -> tuple[int, ...] | None:
    """The output shape at the rank a redistribution's Reshape or StridedSlice states in its literal
    arguments: the pass builds them for the slice (zoo 18, step_parallel_end: ``Reshape(%1, (I64(32),
    I64(28), I64(28)))`` of the (128, 1, 28, 28) input printed whole, before the AllGather of the
    micro-batch split; zoo 21: ``StridedSlice(%18, (0, 0, 0), (64, 4, 64), (1, 1, 1), 0, ...)``
    before an AlltoAll). None for anything else (a slice with a mask set)."""
    if node.op == "Reshape" and len(node.inputs) > 1:
        return as_shape(node.inputs[1])
    if node.op == "StridedSlice" and len(node.inputs) >= 4 and all(m == 0 for m in node.inputs[4:]):
        begin, end, strides = (as_shape(v) for v in node.inputs[1:4])
        if begin and end and strides and len(begin) == len(end) == len(strides) and min(strides) > 0:
            return tuple(max(0, -(-(e - b) // s)) for b, e, s in zip(begin, end, strides))
    return None


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


#: Attributes that name ranks or groups: on each rank of one program they hold its own, and of a
#: row they make only its group and peer (:func:`_shared`).
NAMING = frozenset({"group", "group_ranks", "group_rank_ids", "rank_list", "related_fusion_key", "sr_tag",
                    "dest_rank", "src_rank", "dst_global_rank", "src_global_rank"})


def _shared(node: Node) -> tuple:
    """A communication operator's attributes but those that name ranks and groups: what the
    ranks of one program share of it."""
    return (tuple((k, v) for k, v in node.primitive_attrs.items() if k not in NAMING),
            tuple((k, v) for k, v in node.cnode_primal_attrs.items() if k not in NAMING))


def comm_nodes(ir: IRFile, graph: nx.MultiDiGraph | None = None) -> list[Node]:
    """The file's communication and redistribution operators, in file order (kept with ``graph``
    where it is read for many ranks: which operators they are is the program's)."""
    def find():
        return [n for n in ir.nodes() if n.index is not None and is_comm(n)]
    return answer(graph, ("comm_nodes",), find) if graph is not None else find()


def _where(graph: nx.MultiDiGraph, node: Node, key: str, planner: bool | None, data) -> tuple:
    """What a communication row says of where the operator sits: its kind, the real operator
    feeding it and those it feeds (labels and scopes). The graph's, kept with it."""
    def where():
        source_key = producer(graph, key)
        user_keys = _forward_first(graph, node, consumers(graph, key, data))
        return (kind_of(node, graph, key, planner), label(graph, source_key), tuple(label(graph, k) for k in user_keys),
                _scope(graph, source_key), tuple(_scope(graph, k) for k in user_keys))
    return answer(graph, ("comm_where", key, planner), where)


def _rank_shapes(ir: IRFile, graph: nx.MultiDiGraph, ctx: RankContext, known: dict, nodes: list[Node],
                 groups: list, planner: bool | None) -> RankShapes:
    """The file's :class:`RankShapes`, kept with a graph read for many ranks while what it reads
    of their values holds: each operator's group size (``groups``: each one's rank list) and
    shared attributes (:func:`_shared`); a rank where one differs gets its own."""
    make = lambda: RankShapes(ir, graph, ctx, known)  # noqa: E731
    if not keeps_answers(graph):  # read for one rank only: nothing to name
        return make()
    sizes, differing = answer(graph, ("comm_attrs",), lambda: _Attrs(nodes)).told(nodes, groups)
    try:
        return answer(graph, ("rank_shapes", planner, ctx.world, sizes, differing), make)
    except TypeError:  # an attribute's value that cannot name an answer (a list): made anew
        return make()


def _group_size(node: Node, group: tuple[int, ...] | None) -> int | None:
    """How many ranks the operator's group holds: 1 for one alone (:func:`_alone`), else
    :func:`~msinspect.mindspore.vocabulary.group_size`."""
    return _size_of(node) if _alone(node) else vocabulary.group_size(node, group)


class _Attrs:
    """The attributes of a file's communication operators as first read (:func:`_shared`, and
    what they state of their groups' sizes), and the dicts they were read of: a rank read
    against the file (its nodes' values put in, each changed node given new dicts) is told by
    the operators whose attributes differ, not by all of them again."""

    def __init__(self, nodes: list[Node]):
        self.dicts = [(n.primitive_attrs, n.cnode_primal_attrs) for n in nodes]
        self.shared = [_shared(n) for n in nodes]
        self.alone = [_size_of(n) if _alone(n) else None for n in nodes]
        self.stated = [vocabulary.group_size(n, None) for n in nodes]

    def told(self, nodes: list[Node], groups: list) -> tuple[tuple, tuple]:
        """What :class:`RankShapes` reads of ``nodes`` (the same operators, in order) with their
        ``groups`` (rank lists): each one's group size, and ``(index, shared attributes)`` of
        each whose :func:`_shared` attributes are not the first read's."""
        sizes, differing = [], []
        for i, (node, group, (attrs, primal)) in enumerate(zip(nodes, groups, self.dicts)):
            if node.primitive_attrs is attrs and node.cnode_primal_attrs is primal:
                alone = self.alone[i]
                sizes.append(alone if alone is not None else len(group) if group else self.stated[i])
                continue
            sizes.append(_group_size(node, group))
            shared = _shared(node)
            if shared != self.shared[i]:
                differing.append((i, shared))
        return tuple(sizes), tuple(differing)


def comm_rows(ir: IRFile, ctx: RankContext = RankContext(), graph: nx.MultiDiGraph | None = None) -> list[dict]:
    """Every communication or redistribution operator of ``ir``, in file order."""
    graph = graph if graph is not None else to_networkx(ir)
    stage = ir.stage  # read off the path: once, not per row
    planner = vocabulary.planner_ran(stage, ir.attrs)
    known = known_groups(ir, ctx, graph)
    nodes = comm_nodes(ir, graph)
    groups = group_lists(nodes, ctx, known)
    shapes = _rank_shapes(ir, graph, ctx, known, nodes, groups, planner)
    data = data_view(graph)
    rank, path, kept = ctx.rank, ir.path, shapes.rows
    # a file of the whole step is written after MindSpore's CSE: it holds no copy left to merge
    merged = merged_into(ir, is_comm) if nodes and stage not in WHOLE_STEP_STAGES else {}
    rows = []
    for i, (node, group) in enumerate(zip(nodes, groups)):
        # what the shared part reads of the node besides its attributes (_rank_shapes holds those)
        mine = (node.op, node.instance_name, node.fullname, node.debug_name, node.scope, node.output_types, node.graph)
        part = kept.get(i)
        if part is None or part[0] != mine:
            part = kept[i] = (mine, _shared_row(graph, node, node_id(node), planner, data, shapes, group))
        pipeline = node.op in PIPELINE_OPS
        peer = peer_of(node, group) if pipeline else None
        if pipeline:  # the group: the rank and its peer
            group = tuple(sorted({rank, peer})) if peer is not None and rank is not None else None
        row = {**part[1], "rank": rank, "stage": stage, "file": path, "group": node.primitive_attrs.get("group"),
               "group_ranks": group, "peer": peer}
        if (node.graph, node.index) in merged:  # a copy MindSpore's CSE will merge into an earlier one
            row["merged_into"] = merged[(node.graph, node.index)].line
        if peer is not None:
            if node.op == "Receive":
                row["producer"] = f"rank {peer}"
            else:
                row["consumers"] = (f"rank {peer}",)
        rows.append(row)
    return rows


def _shared_row(graph: nx.MultiDiGraph, node: Node, key: str, planner: bool | None, data, shapes: RankShapes,
                group: tuple[int, ...] | None) -> dict:
    """The operator's comm row but what names the rank, its groups and peers (``rank``,
    ``stage``, ``file``, ``group``, ``group_ranks``, ``peer``; a Send's or Receive's other end):
    the same on every rank of one program, so kept with ``shapes`` (:attr:`RankShapes.rows`),
    which holds while the operators' group sizes and other attributes do (:func:`_rank_shapes`)."""
    kind, source, users, source_scope, user_scopes = _where(graph, node, key, planner, data)
    shape, dtype, at_rank = shapes.moved(key)
    size = 2 if node.op in PIPELINE_OPS else _group_size(node, group)
    moving = vocabulary.moves_data(node)
    tensor = nbytes(shape, dtype) if at_rank else None
    out = shapes.rank_output(key) if node.op not in PIPELINE_OPS else None
    return {
        "rank": None, "stage": None, "file": None, "line": node.line, "name": node.name,
        "op": node.op, "kind": kind, "moves_data": moving, "producer": source,
        "consumers": users, "group": None,
        "group_ranks": None, "group_size": size if moving else None, "peer": None, "shape": shape,
        "out_shape": out[0] if out is not None else None if shapes.is_global else node.output_shape,
        "dtype": dtype,
        "tensor_bytes": tensor, "wire_bytes": vocabulary.wire_bytes(node, tensor, size),
        "producer_scope": source_scope, "consumer_scopes": user_scopes,
        "scope": scope_of(node), "micro": node.cnode_primal_attrs.get("micro"), "graph": node.graph,
        "merged_into": None,
    }


def collectives_before(ir: IRFile) -> frozenset[tuple[str, str]]:
    """(op, instance name) of every collective of a file written before the parallel pass
    inserted any (:data:`~msinspect.mindspore.vocabulary.BEFORE_PLANNER`, e.g. the rank's
    ``step_parallel_begin``): those the job's own code put there; and ``("def", name)`` of each
    Python function a self-defined-shard ``Morph`` runs (its ``fn``, ``ffn_forward_func_488``:
    MindFormers' MoE experts), whose body MindSpore expands after the parallel passes: what it
    calls, the job's own code calls."""
    if ir.stage not in vocabulary.BEFORE_PLANNER:
        return frozenset()
    found = {(n.op, n.instance_name) for n in ir.nodes()
             if n.instance_name and vocabulary.moves_data(n) and n.op not in PIPELINE_OPS}
    found |= {("def", _MORPH_FN.sub("", n.primitive_attrs["fn"])) for n in ir.nodes()
              if n.op == "Morph" and n.primitive_attrs.get("self_define_shard") is True
              and isinstance(n.primitive_attrs.get("fn"), str)}
    return frozenset(found)


#: The number MindSpore appends to a Python function's name in the IR (``ffn_forward_func_488``).
_MORPH_FN = re.compile(r"_\d+$")


def _in_function(node: Node, names: set[str]) -> bool:
    """Whether the node's ``# In file`` lines place it in one of the Python functions ``names``."""
    return any(f"/def {name}(" in line for line in node.sources for name in names)


def mark_users(rows: list[dict], ir: IRFile, before: frozenset[tuple[str, str]]) -> None:
    """Rows of ``ir`` of kind ``unknown`` whose operator (op and instance name) was already in
    the rank's file from before the parallel pass (``before``: :func:`collectives_before`), or
    that a self-defined-shard Morph's function calls: the pass did not insert it, the job's own
    code did: ``user``. Not an operator whose primitive the
    comm-op reuse pass shared with another (``comm_reuse``: it prints that one's instance name:
    zoo 14's embedding AllReduce prints the loss-scale ``allreduce`` at validate). Changed in
    place."""
    if not before:
        return
    names = {n.line: n.instance_name for n in ir.nodes()
             if n.index is not None and is_comm(n) and not n.primitive_attrs.get("comm_reuse")}
    functions = {name for kind, name in before if kind == "def"}
    called = {n.line for n in ir.nodes() if n.index is not None and is_comm(n) and _in_function(n, functions)} \
        if functions else set()
    for row in rows:
        if row["kind"] == "unknown" and ((row["op"], names.get(row["line"])) in before or row["line"] in called):
            row["kind"] = "user"


def comm_totals(frame: pd.DataFrame, by: str) -> pd.DataFrame:
    """Totals over the comm rows of ``frame`` per ``kind`` or per group (``group_ranks``, its
    rank list, with ``moves_data``: a None group is either operators that move nothing, or, with
    ``moves_data`` true, a group that cannot be told): the table of
    :meth:`CommTotals.frame <msinspect.analysis.job.comm_totals.CommTotals.frame>`."""
    from msinspect.analysis.job.comm_totals import CommTotals

    return CommTotals(by).add(frame.to_dict("records")).frame()


def stated_world(ir: IRFile, graph: nx.MultiDiGraph | None = None) -> int | None:
    """The world size the file itself states: the ``dev_num`` / ``rank_size`` of an operator over
    the world group (a mirror operator of a weight repeated on every rank says ``group_ranks:
    "WORLD_GROUP", dev_num: I64(8)``), or the length of its rank list (``group: "nccl_world_group",
    group_rank_ids: (0, ..., 7)``). None when no operator states it, or two disagree."""
    sizes = set()
    for node in grouped_nodes(ir, graph):
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


def ranks_named(ir: IRFile, graph: nx.MultiDiGraph | None = None) -> set[int]:
    """Every rank an operator of the file names: its group's rank list, a Send's or Receive's peer."""
    named: set[int] = set()
    ctx = RankContext()
    known = known_groups(ir, ctx, graph)
    nodes = comm_nodes(ir, graph)
    for node, group in zip(nodes, group_lists(nodes, ctx, known)):
        if node.op in PIPELINE_OPS:  # group_ranks: the rank (unknown here) and its peer
            peer = peer_of(node, group)
            if peer is not None:
                named.add(peer)
        else:
            named.update(group or ())
    return named


def with_world(rows: list[dict], world: tuple[int, ...]) -> list[dict]:
    """Comm rows of a rank analysed before the world was known: the world group's ranks filled in."""
    for row in rows:
        if row["group_ranks"] is None and row["group"] in WORLD_GROUPS and row["op"] not in PIPELINE_OPS:
            row["group_ranks"] = world
            if row["moves_data"]:
                row["group_size"] = len(world)
    return rows


def shared_groups(results: list[list[dict]], world: tuple[int, ...] | None) -> None:
    """Fill in, across the ranks read, the group of every row that names its group by a name
    standing for one rank list on every rank (MindSpore's ``{size}-{hash}`` names, MindFormers'
    sha256 names: :mod:`msinspect.mindspore.comm_groups`) but whose own file does not tell its
    ranks: the list another rank's operators write for that name, where it holds the row's rank
    and has the row's group size; else the one list of the ranks' groups, or of the world's
    strided lists holding the rank, that the name hashes to. ``results``: each rank's comm rows,
    changed in place (``group_ranks``, ``group_size``, ``wire_bytes``). :class:`SharedGroups`
    does the same as ranks arrive."""
    groups = SharedGroups()
    for rows in results:
        groups.add(rows)
    for rows in results:
        groups.fill(rows, world)


#: How many ranks' :meth:`SharedGroups.seen` go in its log as one value.
LOGGED = 256


class SharedGroups:
    """:func:`shared_groups` over ranks as they arrive, holding only what the group names stand
    for (not the ranks' rows): :meth:`add` each rank's comm rows as they come, :meth:`world_found`
    when the world is learnt from the files afterwards (:func:`with_world` then gives the world
    group's rows their ranks), then :meth:`fill` the rows of each rank :meth:`unresolved` said
    has a group to find.

    With ``log`` (a :class:`~msinspect.analysis.engine.spool.Spool`), what the ranks tell waits there,
    :data:`LOGGED` ranks a value, until a group is to be filled or the world learnt: a job of
    10,000 ranks names some 7,500 groups (1 - 2 MB held for every name and rank list), and one
    whose files tell every group needs none of them."""

    def __init__(self, log=None):
        self._lists: dict[str, tuple[int, ...] | range | set] = {}
        # hash name -> the rank list the ranks' operators write for it (compact), a set where
        # they write several: one list a name, not a set of one (200 bytes each of 7,500 groups
        # at 10,000 ranks)
        self._others: set = set()  # the lists written under other names (compact)
        self._world_names: set = set()  # names of world-group rows waiting for the world
        self._log, self._logged, self._waiting = log, [], []  # with log: its values' indexes; the seen to put
        self._matching: dict[tuple, set] = {}  # (name, size) -> the lists of _every() it hashes to

    def _add_list(self, name: str, ranks: tuple[int, ...] | range) -> None:
        self._matching.clear()
        found = self._lists.get(name)
        if found is None:
            self._lists[name] = ranks
        elif isinstance(found, set):
            found.add(ranks)
        elif found != ranks:
            self._lists[name] = {found, ranks}

    def add(self, rows: list[dict]) -> None:
        """Learn what the groups of one rank's comm rows stand for."""
        self.add_seen(self.seen(rows))

    @staticmethod
    def seen(rows: list[dict]) -> tuple:
        """What :meth:`add` learns of one rank's comm rows, sent in their place by a worker that
        keeps the rows (:func:`~msinspect.analysis.engine.spool.shelve`): ``(group, ranks)`` of each row
        whose group's ranks are told, ``(group, None)`` of a world-group row waiting for the world."""
        found = set()
        for row in rows:
            if row["op"] in PIPELINE_OPS:
                continue
            ranks, name = row.get("group_ranks"), row.get("group")
            if ranks is not None:
                found.add((name, tuple(ranks)))
            elif name in WORLD_GROUPS:
                found.add((name, None))
        return tuple(found)

    def add_seen(self, seen: tuple) -> None:
        """Learn what :meth:`seen` of one rank's rows says."""
        self._world_names.update(name for name, ranks in seen if ranks is None)
        if self._log is None:
            self._learn(seen)
            return
        self._waiting.append(tuple((name, compact(ranks)) for name, ranks in seen if ranks is not None))
        if len(self._waiting) == LOGGED:
            self._logged.append(self._log.put(self._waiting))
            self._waiting = []

    def _learnt(self) -> None:
        """What the ranks told, learnt from the log (once: it is then held)."""
        if self._log is None:
            return
        for index in self._logged:
            for seen in self._log.get(index):
                self._learn(seen)
        for seen in self._waiting:
            self._learn(seen)
        self._log, self._logged, self._waiting = None, [], []

    def _learn(self, seen: tuple) -> None:
        for name, ranks in seen:
            if ranks is None:
                continue
            ranks = compact(ranks)
            if comm_groups.is_hash_name(name):
                self._add_list(name, ranks)
            else:
                self._others.add(ranks)

    def world_found(self, world: tuple[int, ...]) -> None:
        """The world, learnt after the ranks were added: the world group's rows name its ranks."""
        if not self._world_names:
            return
        self._learnt()
        world = compact(tuple(world))
        self._others.add(world)
        self._matching.clear()
        for name in self._world_names:
            if comm_groups.is_hash_name(name):
                self._add_list(name, world)

    def _every(self):
        """Every rank list an operator writes, the world's once learnt (compact)."""
        for ranks in self._lists.values():
            yield from ranks if isinstance(ranks, set) else (ranks,)
        yield from self._others

    @staticmethod
    def unresolved(rows: list[dict]) -> bool:
        """Whether one rank's comm rows have a group whose ranks its file does not tell: a name
        :meth:`fill` may resolve, or the world group's (:func:`with_world`)."""
        return any(row.get("group_ranks") is None and row["op"] not in PIPELINE_OPS
                   and (row["group"] in WORLD_GROUPS
                        or (row.get("moves_data") and comm_groups.is_hash_name(row.get("group"))))
                   for row in rows)

    def fill(self, rows: list[dict], world: tuple[int, ...] | None) -> None:
        """Fill in the groups of one rank's rows (see :func:`shared_groups`), in place."""
        self._learnt()
        for row in rows:
            name = row.get("group")
            if row.get("group_ranks") is not None or not row.get("moves_data") or row["op"] in PIPELINE_OPS:
                continue
            if not comm_groups.is_hash_name(name):
                continue
            size, rank = row.get("group_size"), row.get("rank")
            found = self._lists.get(name)
            if isinstance(found, set):
                found = next(iter(found)) if len(found) == 1 else None
            ranks = tuple(found) if found is not None else None
            if ranks is None or not comm_groups.fits(ranks, size=size, rank=rank, name=name):
                # the lists the ranks write, hashed once per name; else the world's strided
                # lists, searched once per name (comm_groups.StridedSearch)
                key = (name, size)
                if key not in self._matching:
                    self._matching[key] = comm_groups.matching(name, (tuple(r) for r in self._every()), size=size)
                ranks = comm_groups.resolve(name, self._matching[key], size=size, rank=rank)
                wanted = size or comm_groups.stated_size(name)
                if ranks is None and rank is not None and world and wanted:
                    ranks = comm_groups.resolve_strided(name, wanted, rank, tuple(world))
            if ranks is None:
                continue
            row["group_ranks"] = tuple(ranks)
            row["group_size"] = len(ranks)
            row["wire_bytes"] = vocabulary.wire_bytes_for(row["op"], row.get("tensor_bytes"), len(ranks))
