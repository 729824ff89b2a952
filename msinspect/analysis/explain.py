"""Why an operator has its strategy, and why a collective or redistribution step is where it is:
``msinspect explain DUMP OP`` (docs/explain.md).

For a strategy: set by the user (``shard()``: the primitive carries the user's attribute; the IR
records where the network calls it, not the ``shard()`` line); else, under ``auto_parallel``, the
nearest user-set operator whose layout reaches it with no redistribution on the way (a networkx
shortest path over data edges of the forward graph, communication operators left out): a
*reconstruction*, since the IR records neither the propagation nor the search mode; else "cannot
tell". Under ``semi_auto_parallel`` an operator without ``shard()`` has MindSpore's default.

For a communication or redistribution operator: the layout its producer gives (its in_strategy
through MindSpore's rule for the operator: :mod:`msinspect.analysis.explain_layouts`), the layout
its consumer needs (the consumer's in_strategy for that input), the step between them (which
dimension is summed, gathered, split or exchanged, in how many parts) and over which ranks (the
group the comm rows resolved); the ranks the producer's device matrix predicts are set beside
them. A mirror operator: the replicas of its weight. A collective of the gradient graph: the
forward collective whose bprop it is (MindSpore records its ``unique_id`` on it), and what that
bprop does to the gradient (:data:`BPROP`). What the IR does not say is labelled
``reconstruction`` or ``cannot tell: <reason>``.
"""
from __future__ import annotations

import re
from math import prod
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from msinspect.analysis.explain_layouts import (COMBINED_BY, OutputLayout, cut_through_reshape, input_layout,
                                                output_layout, ranks_along, reduced_parts)
from msinspect.analysis.flow import (consumers, first_input, is_data_edge, is_source, label, passes_through,
                                     path_between, producer)
from msinspect.analysis.ops import PIPELINE_OPS, is_backward, is_comm, is_plumbing, stable_name
from msinspect.analysis.params import params_at_end
from msinspect.analysis.vocabulary import MIRROR_OPS, int_attr, moves_data, stated_size
from msinspect.graph import node_id
from msinspect.mindspore.layouts import BATCH_MATMUL_OPS, MATMUL_OPS, call_of, layout_of, map_axes
from msinspect.model import Node, NodeKind
from msinspect.ranks_text import ranks_text

if TYPE_CHECKING:
    import networkx as nx

    from msinspect.analysis.collect import Analysis

#: The flag ``StepAutoParallel`` sets on the graph once the strategy search ran (auto_parallel
#: only): its absence in a file the parallel pass ran in means semi_auto_parallel.
AUTO_FLAG = "auto_parallel_run_once_only"
#: One-input operators that, given no strategy by the parallel pass, pass their input's layout on.
_LAYOUT_KEEPING = frozenset({"Cast", "TensorMove"})
#: Operators a propagation path never goes through: they join values that do not share a layout.
_NOT_A_LINK = frozenset({"MakeTuple", "UpdateState", "Depend", "Return", "make_tuple"})


@dataclass
class Explanation:
    """Why one operator (or several equal ones: ``lines``) of one rank is as it is."""

    rank: int | None
    file: str
    line: int
    name: str
    op: str
    subject: str
    """``strategy``, ``communication`` or ``other`` (neither: nothing the planner decided)."""
    verdict: str
    """A strategy: ``user``, or how the planner set it (``set_by`` ``planner``, docs/cli.md's
    vocabulary): ``propagated``, ``planner`` (its search), ``default``; or ``cannot tell``; a
    communication operator: its kind (:mod:`msinspect.analysis.vocabulary`)."""
    headline: str
    facts: list[str] = field(default_factory=list)
    """What the IR says."""
    reconstruction: list[str] = field(default_factory=list)
    """What msinspect worked out from MindSpore's rules: not recorded in the IR."""
    cannot_tell: list[str] = field(default_factory=list)
    """What the IR does not tell, with why."""
    lines: tuple[int, ...] = ()
    """Every line of the file with this same answer (one operator per block or micro-batch)."""
    in_strategy: tuple | None = None
    set_by: str | None = None
    source: str | None = None
    """Where the network calls the operator: ``gpt.py:123: q = ...`` (the IR's innermost ``# In file``)."""
    origin: str | None = None
    """A propagated strategy: the user-set operator it was reached from (reconstruction)."""
    path: tuple[str, ...] = ()
    """From ``origin`` to the operator, the operators on the way (reconstruction)."""
    kind: str | None = None
    group_ranks: tuple[int, ...] | None = None
    predicted_group: tuple[int, ...] | None = None
    """The ranks the producer's (or the weight's) device matrix gives for this step (reconstruction)."""
    producer: str | None = None
    consumer: str | None = None
    producer_layout: tuple[int, ...] | None = None
    """Parts per dimension of the tensor as the producer gives it."""
    consumer_layout: tuple[int, ...] | None = None
    """Parts per dimension of the tensor as the consumer takes it (its in_strategy for that input)."""
    action: str | None = None
    """``sum``, ``max`` / ``min`` / ``prod`` (a reduction that does not sum, combined over the
    ranks), ``gather``, ``split``, ``exchange``, ``replicas``, ``send``, ``receive``, ``none``;
    None: cannot tell."""
    dims: tuple[int, ...] = ()
    """The dimensions the step gathers (``gather``, ``exchange``), splits (``split``) or sums over."""
    parts: int | None = None
    own_shapes: tuple | None = None
    """Where ``dims`` count the dimensions of the tensor as it reaches the collective (one of a
    redistribution's per-rank Reshapes before it), not the producer's: that tensor's per-rank
    shape before and after the collective (a bprop: its forward collective's), from the file
    (:func:`_own_step`); None: the producer's."""
    reshaped: tuple[int, ...] | None = None
    """Where a Reshape between producer and consumer changes the tensor's rank: the producer's cut
    read in the consumer's shape (reconstruction, :func:`~msinspect.analysis.explain_layouts.
    cut_through_reshape`); ``dims`` then count the consumer's dimensions."""
    chain: tuple[str, ...] = ()
    """The communication and redistribution operators between producer and consumer, in order."""
    kept: tuple | None = None
    """A StridedSlice: ``(begin, end)`` per dimension the rank keeps."""
    chain_lines: tuple[int, ...] = ()
    """The file lines of ``chain``."""
    chain_groups: tuple = ()
    """The ranks of each collective of ``chain`` that moves data, in order."""
    forward: str | None = None
    """A collective of the gradient graph: the forward collective whose bprop it is, in words
    (``the AllReduce after out_matmul, line 1990``), from the ``forward_unique_id`` MindSpore
    records on it."""
    readers: tuple[str, ...] = ()
    """The gradient's AllReduce of a forward sum: the nearest forward matrix products reading the
    sum with their weight cut along its output dimension, whose input gradients it adds up
    (reconstruction)."""

    def to_dict(self) -> dict:
        """Plain values only (lists, not tuples), for JSON and the report."""
        return _plain(asdict(self))

    def text_lines(self) -> list[str]:
        """The answer for a person, unwrapped: headline, then facts, reconstruction, cannot tell."""
        out = [self.headline]
        out += [f"fact: {t}" for t in self.facts]
        out += [f"reconstruction: {t}" for t in self.reconstruction]
        out += [f"cannot tell: {t}" for t in self.cannot_tell]
        return out


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


# ------------------------------------------------------------------ one rank's file
class _File:
    """One rank's file: its graph, its rows (strategies, comm) by line, its context."""

    def __init__(self, analysis: Analysis, result):
        from msinspect.graph import to_networkx
        from msinspect.parser import parse_file

        self.result = result
        self.analysis = analysis
        self.ir = parse_file(result.file, lenient=True)
        self.graph = to_networkx(self.ir)
        self.by_line = {n.line: n for n in self.ir.nodes() if n.index is not None}
        self.strategies = {row["line"]: row for row in result.strategies}
        self.comm = {row["line"]: row for row in result.comm}
        self.ctx = analysis.context(result.rank)
        self.auto = AUTO_FLAG in self.ir.attrs
        self.pipelined = bool(result.pipelined)
        self.user_keys = {node_id(self.by_line[line]) for line, row in self.strategies.items()
                          if row.get("set_by") == "user" and line in self.by_line
                          and not is_backward(self.by_line[line])}
        self._links = None
        self._at_end = None
        #: The file's collectives by the ``unique_id`` MindSpore gives a forward node: a gradient
        #: collective names its forward one by it (``forward_unique_id``).
        self.by_unique_id = {str(n.cnode_primal_attrs["unique_id"]): n for n in self.by_line.values()
                             if "unique_id" in n.cnode_primal_attrs and is_comm(n) and not is_backward(n)}
        self._reference = None
        self._weights = None
        self._peers: dict = {}
        self.remote = False
        """Whether this is another rank's file read for a Receive of the rank explained."""

    def peer(self, result) -> _File:
        """The file of another rank the analysis read (a pipeline Receive's sender), read once."""
        found = self._peers.get(result.file)
        if found is None:
            found = self._peers[result.file] = _File(self.analysis, result)
            found.remote = True
        return found

    def weight(self, key: str | None) -> dict | None:
        """The row of the weight at graph key ``key`` as the analysis lays it out
        (:meth:`~msinspect.analysis.collect.Analysis.params_of`, with its slice:
        :func:`~msinspect.analysis.params.with_slices`): its layout, the slice the rank holds;
        None where ``key`` is no weight of the file or the analysis states none for it."""
        data = self.graph.nodes[key] if key is not None and key in self.graph else {}
        if data.get("node") is not None or not data.get("has_default"):
            return None
        if self._weights is None:
            from msinspect.analysis.params import weights_of, with_slices

            rows = with_slices(weights_of(self.analysis.params_of(self.result)), self.ctx)
            self._weights = {row["param"]: row for row in rows}
        return self._weights.get(data.get("name"))

    def replaced(self, key: str | None) -> Node | None:
        """The operator of the rank's pre-parallel file (its reference, step_parallel_begin) that
        the hash-named operator ``key`` of a replacement graph stands for (``GenerateGraph`` names
        them ``HashName(instance) + index``: ``enable_nd_tp``'s MatMuls), with its strategy; None
        where ``key`` is no such operator or the reference does not hold it."""
        from msinspect.analysis.params import _original
        from msinspect.analysis.strategies import REPLACEMENT_NAME

        node = self.node(key)
        name = str(node.instance_name or "") if node is not None else ""
        if not REPLACEMENT_NAME.match(name.removeprefix("forward_op")) or not self.result.reference:
            return None
        if self._reference is None:
            from msinspect.parser import parse_file

            self._reference = (parse_file(self.result.reference, lenient=True), {})
        reference, known = self._reference
        return _original(replace(node, instance_name=name.removeprefix("forward_op")), self.ir, reference, known)

    def user_layout(self, weight: str) -> tuple[tuple[int, ...], tuple, str] | None:
        """(device matrix, tensor map, in words) of the ``Layout`` the user gave ``weight``: in
        this file's weight rows, else (at a later pass, where MindSpore has expanded the operator
        that read it with it) in those of the rank's step_parallel_end file, read as the analyses
        read it. None where neither gives one."""
        found = _layout_row(self.result.params, weight)
        if found is None and self.ir.stage != "step_parallel_end":
            if self._at_end is None:
                self._at_end = params_at_end(self.result.file, self.ctx) or []
            found = _layout_row(self._at_end, weight)
            where = "the step_parallel_end file beside it"
        else:
            where = "this file"
        if found is None:
            return None
        row, laid = found
        said = (f"{weight} is laid out by the user's Layout {_shape_text(laid['device_matrix'])}, tensor map "
                f"{_shape_text(laid['tensor_map'])}, as input {row.get('input_index', '?')} of {row.get('consumer')} "
                f"({row.get('op')}) in {where}")
        return tuple(laid["device_matrix"]), tuple(laid["tensor_map"]), said

    # the ranks of the stage, where they can be told
    @property
    def stage_ranks(self) -> tuple[int, ...] | None:
        if self.ctx.stage_ranks:
            return tuple(self.ctx.stage_ranks)
        return None if self.pipelined else (tuple(self.ctx.world) if self.ctx.world else None)

    @property
    def devices(self) -> int | None:
        ranks = self.stage_ranks
        return len(ranks) if ranks else None

    def node(self, key: str | None) -> Node | None:
        return self.graph.nodes[key].get("node") if key is not None and key in self.graph else None

    def strategy_of(self, key: str | None):
        node = self.node(key)
        row = self.strategies.get(node.line) if node is not None else None
        return row["in_strategy"] if row else None

    def name(self, key: str | None) -> str | None:
        return label(self.graph, key)

    def group(self, matrix, axes) -> tuple[int, ...] | None:
        ranks, local = self.stage_ranks, self.ctx.local_rank
        if not ranks or local is None or self.ctx.rank is None or not axes:
            return None
        return ranks_along(tuple(matrix), tuple(axes), local, ranks)

    # the forward graph without communication: where a strategy can travel unchanged
    def links(self) -> nx.Graph:
        if self._links is None:
            import networkx as nx

            graph = self.graph

            def keep(key: str) -> bool:
                data = graph.nodes[key]
                node = data.get("node")
                if node is None:
                    return bool(data.get("bound"))  # a subgraph's parameter bound at its call
                moves_cut = is_comm(node) and node.op.removeprefix("PrimFunc_") != "Reshape"
                return not (moves_cut or is_backward(node) or node.op in _NOT_A_LINK
                            or node.kind == NodeKind.RETURN and not data.get("bound"))

            view = nx.subgraph_view(graph, filter_node=keep, filter_edge=partial(is_data_edge, graph))
            self._links = nx.Graph(view.to_undirected(as_view=True))
        return self._links


def _layout_row(rows, weight: str):
    """(row, user Layout) of the weight row of ``weight`` that carries the user's Layout; None."""
    for row in rows or ():
        laid = row.get("user_layout")
        if row.get("param") == weight and isinstance(laid, dict) and laid.get("device_matrix") is not None:
            return row, laid
    return None


def _source(node: Node) -> str | None:
    """``gpt.py:123: q = self.reshape(...)`` from the node's innermost ``# In file`` line."""
    text = node.source_line
    if not text:
        return None
    text = text.split("/<~~", 1)[0]  # MindSpore's note that the line may serve several nodes
    found = re.match(r"^(?P<file>.+?):(?P<line>\d+)(?:~\d+)?(?:, [\d~]+)?/(?P<code>.*?)/?$", text)
    if not found:
        return text
    return f"{Path(found['file']).name}:{found['line']}: {found['code'].strip()}"


def _shape_text(shape) -> str:
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")" if shape is not None else "?"


def _strategy_text(strategy) -> str:
    if strategy is None:
        return "?"
    return "(" + ", ".join(_shape_text(s) for s in strategy) + ("," if len(strategy) == 1 else "") + ")"


# ------------------------------------------------------------------ strategies
def _explain_strategy(f: _File, node: Node, row: dict) -> Explanation:
    key = node_id(node)
    strategy, set_by = row["in_strategy"], row.get("set_by")
    e = Explanation(f.ctx.rank, f.result.file, node.line, node.name, node.op, "strategy", "cannot tell", "",
                    in_strategy=strategy, set_by=set_by, source=_source(node))
    shapes = row.get("global_inputs") or ()
    for i, part in enumerate(strategy or ()):
        g = shapes[i] if i < len(shapes) else None
        expected = (row.get("expected_rank_inputs") or ())
        r = expected[i] if i < len(expected) else None
        if g is not None:
            e.facts.append(f"input {i}: {_shape_text(g)} cut {_shape_text(part)}"
                           + (f" -> {_shape_text(r)} per rank" if r is not None else ""))
    where = f" (the network calls it at {e.source}; the shard() line itself is not in the IR)" if e.source else ""
    if set_by == "user":
        e.verdict = "user"
        e.headline = f"{node.name}: {_strategy_text(strategy)} set by the user with shard(){where}"
        e.facts.insert(0, "the primitive carries the user's in_strategy attribute")
        return e
    if set_by != "planner":
        e.headline = f"{node.name}: {_strategy_text(strategy)}, set by whom the file cannot tell"
        e.cannot_tell.append(f"the {f.ir.stage} file does not keep the user's shard() attribute; "
                             "read step_parallel_end (--stage)")
        return e
    if node.op.startswith("_Virtual"):
        e.verdict = "planner"
        e.headline = f"{node.name}: {_strategy_text(strategy)}, set by the planner: the parallel pass's own operator"
        return e
    if not f.auto:
        e.verdict = "default"
        e.headline = (f"{node.name}: {_strategy_text(strategy)}, set by the planner: no shard() on it, so "
                      "semi_auto_parallel's default for such an operator")
        e.reconstruction.append("under semi_auto_parallel MindSpore gives an operator without shard() a strategy of "
                                "its own (step_parallel.cc, GenerateBatchParallelStrategy: the batch dimension cut "
                                "over the devices where it divides, or the operator's own rule)")
        return e
    e.verdict = "planner"
    origin = _origin(f, key)
    if origin is None:
        if f.user_keys:
            e.headline = f"{node.name}: {_strategy_text(strategy)}, set by the planner: chosen by its search"
            e.cannot_tell.append("no user-set operator reaches it without a redistribution on the way: which "
                                 "cost drove the choice is not in the IR")
        else:
            e.headline = (f"{node.name}: {_strategy_text(strategy)}, set by the planner: chosen by its search (no "
                          "shard() in the graph: the recursive search or sharding propagation's cost model)")
            e.cannot_tell.append("which cost drove it: the IR records the result only")
        return e
    user, path, also = origin
    e.verdict = "propagated"
    e.origin = f.name(user)
    e.path = tuple(_path_name(f, k) for k in path)
    user_node = f.node(user)
    e.headline = (f"{node.name}: {_strategy_text(strategy)}, set by the planner: reached from the user's {e.origin} "
                  f"{_strategy_text(f.strategy_of(user))} by sharding propagation (reconstruction)")
    e.reconstruction.append(f"path {' -> '.join(e.path)}: no communication and no change of cut on the way (a "
                            "per-rank Reshape at most), so each operator takes its input as its neighbour gives it")
    if user_node is not None and _source(user_node):
        e.reconstruction.append(f"{e.origin} is called at {_source(user_node)}")
    if also:
        e.reconstruction.append(f"as near: {', '.join(also)}")
    e.cannot_tell.append("the IR records neither the propagation nor the search mode (sharding_propagation or "
                         "recursive_programming): the path is the nearest user-set operator that agrees")
    return e


def _real(f: _File, key: str) -> bool:
    """An operator a path counts: not plumbing, not a bound call; a per-rank Reshape counts."""
    node = f.node(key)
    if node is None or is_plumbing(node):
        return False
    return node.op.removeprefix("PrimFunc_") == "Reshape" or not passes_through(f.graph, key)


def _path_name(f: _File, key: str) -> str:
    """An operator on a propagation path by its instance name; a redistribution step (the per-rank
    Reshape MindSpore puts in place of the network's) by its op."""
    node = f.node(key)
    if node is not None and is_comm(node):
        return node.op.removeprefix("PrimFunc_")
    return f.name(key)


def _origin(f: _File, key: str):
    """(user-set operator, path of real operators from it to ``key``, others as near) or None."""
    import networkx as nx

    links = f.links()
    if key not in links or not f.user_keys:
        return None

    def cost(u, v, d):  # count real operators only: plumbing and bound calls are free
        return 1 if _real(f, v) else 0

    lengths, paths = nx.single_source_dijkstra(links, key, weight=cost)
    here = f.node(key).line
    found = sorted(((lengths[u], f.node(u).line > here, abs(f.node(u).line - here), u)
                    for u in f.user_keys if u in lengths and u != key))
    if not found:
        return None
    best = found[0][0]
    user = found[0][3]
    path = [k for k in reversed(paths[user]) if _real(f, k)]
    also = [f.name(u) for length, _, _, u in found[1:] if length == best]
    return user, path, list(dict.fromkeys(a for a in also if a != f.name(user)))


def _is(test, node: Node | None) -> bool:
    """``test(node)`` for a node; False for a graph key with no node (a parameter)."""
    return node is not None and test(node)


# ------------------------------------------------------------------ communication
def _producer(f: _File, key: str) -> str | None:
    """The real operator or parameter whose value reaches ``key``'s first input
    (:func:`~msinspect.analysis.flow.producer`), where a ``TupleGetItem`` of a ``_VirtualDataset``
    or ``MakeTuple`` is followed to the input it picks (the labels, not the ids)."""
    graph, seen = f.graph, {key}
    current = first_input(graph, key)
    while current is not None and current not in seen:
        seen.add(current)
        node = f.node(current)
        if node is not None and node.op == "TupleGetItem" and len(node.inputs) > 1 and isinstance(node.inputs[1], int):
            tuple_key = first_input(graph, current)
            made = f.node(tuple_key)
            if made is not None and made.op in ("_VirtualDataset", "MakeTuple"):
                picked = [u for u, edges in graph.pred[tuple_key].items()
                          if any(d.get("position") == node.inputs[1] for d in edges.values())]
                if len(picked) == 1:
                    current = picked[0]
                    if not passes_through(graph, current):
                        return current
                    current = first_input(graph, current)
                    continue
        if not passes_through(graph, current):
            return current
        current = first_input(graph, current)
    return producer(graph, key) if current is None else None


def _unmatched(f: _File, key: str | None) -> str:
    """Why a hash-named operator of a replacement graph (:meth:`_File.replaced`) is not matched
    to the operator it stands for, or a graph's ``Return`` says no cut, in words after a colon; ""
    for any other operator."""
    from msinspect.analysis.strategies import REPLACEMENT_NAME

    node = f.node(key)
    if node is not None and node.kind == NodeKind.RETURN:
        return (": it is the graph's output, whose cut the parallel pass's _VirtualOutput states; no _VirtualOutput "
                "with a strategy is in this file (a later pass drops it: step_parallel_end holds it)")
    if node is None or not REPLACEMENT_NAME.match(str(node.instance_name or "").removeprefix("forward_op")):
        return ""
    if not f.result.reference:
        return (": it is of the graph MindSpore put in place of another operator, and no step_parallel_begin file "
                "is read")
    return (": it is of the graph MindSpore put in place of another operator, and which one this file does not tell "
            "(at validate the operators of such graphs that share a primitive print one name; step_parallel_end "
            "tells)")


def _virtual_output(f: _File, key: str) -> str | None:
    """The ``_VirtualOutput`` with a strategy that ``key``'s value reaches through plumbing and
    communication: the parallel pass's marker of the graph's output, whose strategy is the cut the
    output must have (``virtual_output_info.cc``); None where there is none."""
    from msinspect.analysis.flow import data_view

    data, todo, seen = data_view(f.graph), [key], {key}
    while todo:
        for user in data.successors(todo.pop()):
            node = f.node(user)
            if user in seen or node is None:
                continue
            seen.add(user)
            if node.op == "_VirtualOutput" and f.strategy_of(user) is not None:
                return user
            if passes_through(f.graph, user) and not is_backward(node):
                todo.append(user)
    return None


#: Local operators of a redistribution that a later pass leaves with no strategy and a name of
#: their own (at validate comm reuse renames the per-rank Reshapes ``Reshape-op1``): a chain goes
#: through them to the operators with strategies at its ends.
_STEP_OPS = frozenset({"Reshape", "StridedSlice", "Split", "Concat", "TupleGetItem", "MakeTuple"})


def _is_step(f: _File, key: str | None) -> bool:
    node = f.node(key)
    return node is not None and f.strategy_of(key) is None and not is_backward(node) \
        and (node.op.removeprefix("PrimFunc_") in _STEP_OPS or passes_through(f.graph, key))


def _before_steps(f: _File, key: str) -> tuple[str, list[str]] | None:
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


def _after_steps(f: _File, key: str) -> tuple[list[str], str] | None:
    """(the redistribution steps with no strategy from ``key`` on, the one forward operator with a
    strategy they all reach) where ``key`` is such a step; None elsewhere, or where they reach
    anything else (a graph output, several operators)."""
    from msinspect.analysis.flow import data_view

    data, steps, todo, found = data_view(f.graph), [], [key], set()
    while todo and len(steps) < 64:
        current = todo.pop()
        if current in steps or _is(is_backward, f.node(current)):
            continue
        if not _is_step(f, current):
            if f.strategy_of(current) is None:
                return None
            found.add(current)
            continue
        steps.append(current)
        todo += list(data.successors(current))
    if todo or len(found) != 1 or not steps:
        return None
    return sorted(steps, key=lambda k: f.node(k).line if f.node(k) else 0), found.pop()


def _position(f: _File, trail: list[str], start: str, consumer: str) -> int | None:
    for key in [start, *trail]:
        data = f.graph.get_edge_data(key, consumer)
        if data:
            return next(iter(data.values())).get("position")
    return None


def _producer_layout(f: _File, key: str | None) -> tuple[OutputLayout | None, str]:
    """How the producer gives its output, and in words where that comes from."""
    data = f.graph.nodes[key] if key is not None else {}
    node = data.get("node")
    if key is None:
        return None, "no producer found"
    if node is None:
        shapes = data.get("output_shapes") or ()
        dataset = _dataset_cut(f, key)
        if dataset is not None:
            cut, vd = dataset
            found = input_layout(cut, f.devices)
            text = f"the dataset input {data.get('name')} cut {_shape_text(cut)} by {vd.name} " \
                   f"{_strategy_text(f.strategy_of(node_id(vd)))}"
            return found or OutputLayout(tuple(cut), (), tuple(None for _ in cut), rule="the dataset's cut"), text
        if data.get("kind") == NodeKind.PARAMETER and shapes and shapes[0] is not None and not data.get("has_default"):
            shape = shapes[0]
            return OutputLayout(tuple(1 for _ in shape), (), tuple(None for _ in shape),
                                rule="a graph input: the rank holds it as the file shows it"), \
                f"the graph input {data.get('name')} {_shape_text(shape)}, held whole as the rank reads it"
        if data.get("has_default"):
            return _weight_layout(f, key)
        if data.get("bound") and data.get("kind") == NodeKind.PARAMETER:
            return _argument_layout(f, key)
        return None, f"{label(f.graph, key)} is a weight or a subgraph's parameter: its cut is not its consumer's"
    if node.op == "Receive":
        return _received_layout(f, node)
    strategy = f.strategy_of(key)
    row = f.strategies.get(node.line)
    out = row.get("out_strategy") if row else None
    found = output_layout(node, strategy, f.devices) if strategy is not None else None
    if out:
        # out_strategy says how the output leaves the operator once its own communication ran;
        # the in_strategy's rule still says which axes hold partial sums before it
        first = tuple(out[0])
        said = f"{node.name} ({node.op}) in_strategy {_strategy_text(strategy)}, out_strategy {_strategy_text(out)}"
        if found is not None and found.factors == first:
            return replace(found, rule=f"{found.rule}; its out_strategy the same"), said
        return OutputLayout(first, found.matrix if found else (), tuple(None for _ in first),
                            found.partial if found else (), rule="its out_strategy"), said
    if strategy is None and node.op.removeprefix("PrimFunc_") in _LAYOUT_KEEPING:
        # the parallel pass gave it no operator info: redistribution takes the layout of the
        # nearest operator before it that has one (step_parallel.cc, FindPrevLayout)
        inner = _producer(f, key)
        before, said = _producer_layout(f, inner)
        summed = _after_lookup(f, inner, key) if before is None and inner is not None else None
        if summed is not None:
            before, said = summed
        if before is not None:
            return before, f"{said}, through {node.name} ({node.op}, no strategy: its input's layout)"
        return None, f"{node.name} ({node.op}) carries no strategy and passes its input's layout on: {said}"
    if strategy is None:
        original = f.replaced(key)
        if original is not None:  # an operator of another's replacement graph: that one's output
            strategy = original.strategy.in_strategy
            found = output_layout(original, strategy, f.devices)
            said = (f"{node.name} ({node.op}) is of the graph MindSpore put in place of {original.name} "
                    f"({original.op.removeprefix('PrimFunc_')}) {_strategy_text(strategy)} (read in the rank's "
                    "step_parallel_begin file)")
            if found is not None:
                return found, said
            return None, f"{said}, and no rule here gives that operator's output for this strategy"
        return None, f"{node.name} ({node.op}) carries no strategy{_unmatched(f, key)}"
    if found is None and f.devices is None and strategy and all(set(s) <= {1} for s in strategy):
        # every input whole on every rank: so is the output, whatever the stage's devices
        found = output_layout(node, strategy, 1)
        if found is not None:
            found = replace(found, rule=f"{found.rule}; every input whole, so the output is, on any number of "
                                        "devices (the stage's are not told)")
    if found is None and f.devices is None:
        return None, (f"how {node.op} {_strategy_text(strategy)} cuts its output over the stage: the stage's "
                      "devices are not known (a pipeline whose stages the files read do not tell)")
    if found is None:
        return None, f"no rule for how {node.op} cuts its output (in_strategy {_strategy_text(strategy)})"
    return found, f"{node.name} ({node.op}) in_strategy {_strategy_text(strategy)}"


def _weight_layout(f: _File, key: str) -> tuple[OutputLayout | None, str]:
    """How a weight is cut at the rank: its layout (device matrix, tensor map) as the analysis
    states it (:meth:`_File.weight`), each dimension in as many parts as the matrix axes its map
    names make (the slice the rank holds). A weight the optimizer shard cuts again is not taken:
    the rank holds a part of its slice, which MindSpore gathers before any other step."""
    name = label(f.graph, key)
    row = f.weight(key)
    if row is None or row.get("device_matrix") is None or row.get("tensor_map") is None:
        return None, (f"{name} is a weight whose layout the files read do not state (no operator with a "
                      "strategy reads it, and its shapes do not tell its cut)")
    if row.get("opt_shard_group"):
        return None, (f"{name} is a weight the optimizer shard cuts again over {row['opt_shard_group']}: the rank "
                      "holds a part of its layout's slice")
    matrix, tensor_map = tuple(row["device_matrix"]), tuple(row["tensor_map"])
    width = len(matrix)
    factors, axes = [], []
    for entry in tensor_map:
        named = [width - 1 - a for a in map_axes(entry)]
        parts = prod(matrix[a] for a in named)
        factors.append(parts)
        axes.append(named[0] if len(named) == 1 and parts > 1 else None)
    said = (f"the weight {name} {_shape_text(row['global_shape'])}, laid out by device matrix {_shape_text(matrix)}, "
            f"tensor map {_shape_text(tensor_map)}"
            + (f" (as {row['consumer']} ({row['op']}) reads it)" if row.get("consumer") else
               f" (its shape at the rank, {_shape_text(row['rank_shape'])}, is its cut)"))
    return OutputLayout(tuple(factors), matrix, tuple(axes), rule="the weight's layout"), said


def _received_layout(f: _File, node: Node) -> tuple[OutputLayout | None, str]:
    """How a pipeline Receive's output is cut: as the sender's Send sends it, the output of the
    operator before that Send in the sender rank's file (MindSpore gives the Receive that
    operator's strategy, ``pipeline_transformer.cc``, but not its kind, so the strategy alone
    does not tell the cut). The Send is the one of the peer's file sending to this rank with the
    same ``sr_tag``; where that file is not read, the reason names the rank."""
    peer = (f.comm.get(node.line) or {}).get("peer")
    strategy = f.strategy_of(node_id(node))
    carried = f" (it carries the sender's strategy {_strategy_text(strategy)})" if strategy else ""
    if peer is None:
        return None, f"the Receive's data comes from another rank's Send{carried}, and which rank the file does not tell"
    sender = next((r for r in f.analysis.results if r.rank == peer and r.rank != f.ctx.rank), None)
    if f.remote and sender is not None:  # one hop only: a sender's own Receive is not followed further
        return None, (f"the Receive's data is what rank {peer}'s Send sends{carried}, itself received in rank "
                      f"{f.ctx.rank}'s file from rank {peer}: not followed a second hop")
    if sender is None:
        return None, (f"the Receive's data is what rank {peer}'s Send sends{carried}: the operator before that Send "
                      f"is in rank {peer}'s file, which was not read")
    other = f.peer(sender)
    tag = node.primitive_attrs.get("sr_tag")
    sends = [n for n in other.by_line.values() if n.op == "Send" and n.primitive_attrs.get("sr_tag") == tag
             and (other.comm.get(n.line) or {}).get("peer") == f.ctx.rank]
    if len(sends) != 1:
        return None, (f"the Receive's data is what rank {peer}'s Send sends{carried}: rank {peer}'s file holds "
                      f"{len(sends)} Sends to rank {f.ctx.rank} with sr_tag {tag}, not one")
    layout, said = _producer_layout(other, _producer(other, node_id(sends[0])))
    where = f"rank {peer}'s Send (line {sends[0].line}, sr_tag {tag}) sends it"
    return layout, f"{where}: {said}"


def _argument_layout(f: _File, key: str) -> tuple[OutputLayout | None, str]:
    """How a subgraph's parameter bound at several calls (one per micro-batch under a pipeline)
    is cut: as the argument each call passes is, where they are all cut alike; None where one is
    not told or they differ."""
    name = label(f.graph, key)
    args = [u for u in f.graph.predecessors(key) if u != key]
    found = [_producer_layout(f, u) if f.node(u) is not None else (None, "") for u in args]
    cuts = {layout.factors for layout, _ in found if layout is not None}
    if not args or len(cuts) != 1 or any(layout is None for layout, _ in found):
        said = "; ".join(dict.fromkeys(why for layout, why in found if layout is None and why))
        return None, (f"{name} is a subgraph's parameter bound at {len(args)} calls, whose arguments are not told "
                      f"cut alike" + (f" ({said})" if said else ""))
    layout, said = found[0]
    names = ", ".join(dict.fromkeys(f.name(u) for u in args))
    return layout, (f"{name}, the subgraph's parameter, is what each of its {len(args)} calls passes ({names}), "
                    f"each cut alike: {said}")


def _dataset_cut(f: _File, key: str):
    """(cut, the _VirtualDataset node) of a graph input the parallel pass's ``_VirtualDataset``
    takes: its strategy for that input (how the dataset gives each rank its part); None elsewhere."""
    for vd_key, data in f.graph.nodes(data=True):
        vd = data.get("node")
        if vd is None or vd.op != "_VirtualDataset":
            continue
        strategy = f.strategy_of(vd_key) or (vd.strategy.in_strategy if vd.strategy else None)
        for source, edges in f.graph.pred[vd_key].items():
            for edge in edges.values():
                position, current, seen = edge.get("position"), source, set()
                while current is not None and current not in seen and current != key:
                    seen.add(current)
                    current = first_input(f.graph, current) if f.graph.nodes[current].get("bound") else None
                if current == key and strategy and position is not None and position < len(strategy):
                    return tuple(strategy[position]), vd
    return None


def _explain_comm(f: _File, node: Node, row: dict) -> Explanation:
    key = node_id(node)
    kind = row.get("kind")
    group = tuple(row["group_ranks"]) if row.get("group_ranks") else None
    e = Explanation(f.ctx.rank, f.result.file, node.line, node.name, node.op, "communication", kind or "unknown", "",
                    kind=kind, group_ranks=group)
    over = f"over {ranks_text(group, word=True)}" if group else ("on the rank's own data" if not row.get("moves_data")
                                                               else "over ranks the file does not tell")
    if group is None and row.get("moves_data"):
        e.cannot_tell.append("the group's ranks: the file names the group by a name it gives no ranks for")
    # a Receive's data comes from another rank's Send: its input only orders it (a parameter or
    # the monad MindSpore hangs it on), never its producer
    source = None if is_source(node) else _producer(f, key)
    users = consumers(f.graph, key)
    forward = [u for u in users if not is_backward(f.node(u) or node)] if not is_backward(node) else users
    users = forward or users
    with_strategy = [u for u in users if f.strategy_of(u) is not None]
    target = (with_strategy or users or [None])[0]
    if not with_strategy and not is_backward(node):  # the graph's output: its _VirtualOutput tells the cut
        target = _virtual_output(f, key) or target
    reshape = _plain_reshape(f, target) if not is_backward(node) else None
    if reshape is not None:  # a Reshape with no strategy: the operator beyond it says what it needs
        target = reshape
        reshape = (with_strategy or users)[0]
    before = _before_steps(f, source) if source is not None and not is_backward(node) else None
    after = _after_steps(f, target) if target is not None and reshape is None and not is_backward(node) else None
    ends = (source, target)
    if before is not None:  # the redistribution's own operators, renamed and given no strategy
        source = before[0]
    if after is not None:
        target = after[1]
    e.producer, e.consumer = f.name(source), f.name(target)
    if before is not None or after is not None:
        passed = [*(before[1] if before else ()), *(after[0] if after else ())]
        names = ", ".join(dict.fromkeys(f.name(k) for k in passed))
        e.facts.append(f"between {e.producer} and {e.consumer} through {names}: local steps and plumbing with no "
                       "strategy (at validate comm reuse renames a redistribution's own)")
    if len(users) > 1:
        e.facts.append(f"feeds {', '.join(f.name(u) for u in users)}")
    if reshape is not None:
        e.facts.append(f"reaches {e.consumer} through {f.name(reshape)} (a Reshape the file gives no strategy)")
    trail = path_between(f.graph, source, target) if source is not None and target is not None else None
    if trail is not None and key not in trail:  # another way round it (a weight read twice): the one through it
        ahead, beyond = path_between(f.graph, source, key), path_between(f.graph, key, target)
        trail = [*ahead, key, *beyond] if ahead is not None and beyond is not None else trail
    if before is not None or after is not None:
        middle = path_between(f.graph, *ends) if None not in ends else None
        trail = [*(before[1] if before else ()), *(middle if middle is not None else [key]),
                 *(after[0] if after else ())]
    chain_keys = sorted((k for k in (trail or [key]) if _is(is_comm, f.node(k)) or k == key),
                        key=lambda k: f.node(k).line)
    e.chain = tuple(f.node(k).op.removeprefix("PrimFunc_") for k in chain_keys)
    e.chain_lines = tuple(f.node(k).line for k in chain_keys)
    e.chain_groups = tuple(tuple(f.comm[ln]["group_ranks"]) for ln in e.chain_lines
                           if ln in f.comm and f.comm[ln].get("moves_data") and f.comm[ln].get("group_ranks"))
    if len(chain_keys) > 1:
        e.facts.append(f"one step of {' -> '.join(e.chain)} between {e.producer or 'no producer found'} and "
                       f"{e.consumer or 'no consumer found'}")
    if node.op in PIPELINE_OPS:
        return _pipeline(f, node, row, e)
    if kind == "gradient" or _mirror_gradient(node):
        return _mirror(f, node, row, e, target)
    ahead, fop = _forward_of(f, node) if kind not in ("optimizer", "virtual") else (None, None)
    if fop is not None:
        return _bprop(f, node, e, ahead, fop, over)
    if kind == "local" and is_backward(node) and node.cnode_primal_attrs.get("forward_node_name"):
        return _in_gradient(f, node, e)
    if kind == "optimizer":
        return _optimizer(f, node, e, over)
    lookup = _masked_lookup(f, source) if kind == "unknown" and node.op in ("AllReduce", "ReduceScatter") else None
    if lookup is not None:  # renamed (comm reuse), yet it follows the Gather's replacement graph
        e.facts.append(f"its name ({node.instance_name}) does not say who inserted it; it adds what the graph "
                       "MindSpore puts in place of the Gather gives, so it is that graph's")
        return _lookup_sum(f, node, e, *lookup, over)
    if kind == "loss-scale":
        return _loss_scale(node, e, over)
    if kind in ("virtual", "user", "unknown"):
        e.headline = {"virtual": f"{node.op}: the parallel pass's bookkeeping operator; nothing on the wire",
                      "user": f"{node.op} {over}: the job's own collective (in the graph before the parallel pass)",
                      "unknown": f"{node.op} {over}: who inserted it is not recorded"}[kind]
        if kind == "unknown":
            e.cannot_tell.append("nothing in the file tells whether the parallel pass or the job put it there")
        return e
    layout, said = _producer_layout(f, source)
    summed = _after_lookup(f, source, key) if layout is None and source is not None else None
    if summed is not None:
        layout, said = summed
    position = _position(f, trail or [], key, target) if target is not None else None
    if reshape is not None:
        position = _position(f, path_between(f.graph, reshape, target) or [], reshape, target)
    need = f.strategy_of(target)
    wanted = tuple(need[position]) if need is not None and position is not None and position < len(need) else None
    original = f.replaced(target) if need is None and target is not None else None
    if original is not None and original.op.removeprefix("PrimFunc_") in _PRODUCTS:
        # the graph MindSpore put in place of a matrix product takes its activation, input 0, from
        # outside (its weight is a parameter): cut as the replaced product's in_strategy says
        need, position = original.strategy.in_strategy, 0
        wanted = tuple(need[0])
        e.facts.append(f"{e.consumer} is of the graph MindSpore put in place of {original.name} ({original.op}) "
                       f"{_strategy_text(need)} (read in the rank's step_parallel_begin file): it takes "
                       f"{original.name}'s input 0 cut {_shape_text(wanted)}")
    e.producer_layout = layout.factors if layout is not None else None
    e.consumer_layout = wanted
    if layout is not None:
        e.facts.append(f"producer: {said}")
        if layout.matrix:
            e.reconstruction.append(f"{e.producer} gives its output cut {_shape_text(layout.factors)} ({layout.rule})")
    else:
        e.cannot_tell.append(f"how the producer gives its output: {said}")
    if wanted is not None and original is None:
        e.facts.append(f"consumer: {e.consumer} ({f.node(target).op}) in_strategy {_strategy_text(need)}: "
                       f"input {position} cut {_shape_text(wanted)}")
    elif target is not None and wanted is None:
        why = (f"is of the graph MindSpore put in place of {original.name} ({original.op}), and which of its inputs "
               "it takes the file does not tell" if original is not None
               else f"carries no strategy for that input{_unmatched(f, target)}")
        e.cannot_tell.append(f"what the consumer needs: {e.consumer} {why}")
    if layout is not None and layout.partial and node.op in ("AllReduce", "ReduceScatter"):
        return _partial_sum(f, node, e, _need_not_matter(node, e, layout), over)
    made = f.node(source)
    combined = reduced_parts(made, f.strategy_of(source), f.devices) if made is not None else None
    if combined is not None and combined.partial and node.op == "AllReduce":
        return _partial_sum(f, node, e, _need_not_matter(node, e, combined), over,
                            COMBINED_BY[made.op.removeprefix("PrimFunc_")])
    if kind == "forward" and str(node.instance_name or "").startswith(GLOBAL_NORM):
        return _global_norm(node, e, over)
    lookup = _masked_lookup(f, source) if kind == "forward" and node.op in ("AllReduce", "ReduceScatter") else None
    if lookup is not None:
        return _lookup_sum(f, node, e, *lookup, over)
    if kind == "forward" and node.op in ("AllReduce", "ReduceScatter", "AllGather"):
        e.headline = f"{node.op} {over}: {e.producer}'s own communication (its replacement graph or its rule)"
        own = _own_step(f, node)
        defined = _by_definition(f, node) if own is None else None
        if defined is not None:  # no shapes printed: what MindSpore's collective does by definition
            e.action = "gather" if node.op == "AllGather" else node.primitive_attrs.get("op", "sum")
            e.dims, e.parts = defined[0], defined[1]
            did = "gathered" if node.op == "AllGather" else f"combined ({e.action}) and scattered"
            e.headline += f": {_dims_text(e.dims)} of the tensor as it reaches it is {did} ({e.parts} parts)"
            e.facts.append(defined[2])
            return e
        if own is None:
            e.cannot_tell.append(f"which dimension: no rule here for {f.node(source).op if f.node(source) else '?'}, "
                                 "and the file prints no shapes for it")
            return e
        # no rule says what the operator's own graph needs; the collective's shapes say what it does
        e.action = "gather" if node.op == "AllGather" else node.primitive_attrs.get("op", "sum")
        e.dims, e.parts, e.own_shapes = own[0], own[1], own[3]
        did = "gathered" if node.op == "AllGather" else f"combined ({e.action}) and scattered"
        e.headline += f": {_dims_text(e.dims)} of the tensor as it reaches it is {did} ({e.parts} parts)"
        e.facts.append(f"its own shapes, {own[2]}: MindSpore's {node.op} works on dimension 0"
                       + (", the Split and Concat after it move the parts" if e.dims != (0,) else ""))
        return e
    needed = _rank_input(f, target, position)
    return _step(f, node, e, layout, wanted, over, needed, _whole_shapes(f, source, target, position, wanted, e))


#: The instance names MindSpore's parallel pass gives the AllReduces it adds to gradient clipping's
#: global norm (``PARALLEL_GLOBALNORM_IN_STAGES``, ``..._BETWEEN_STAGES``).
GLOBAL_NORM = "PARALLEL_GLOBALNORM"


def _need_not_matter(node: Node, e: Explanation, layout: OutputLayout | None = None) -> OutputLayout | None:
    """An AllReduce of partial sums gives every rank the whole sum whatever its consumer's cut:
    where the consumer carries no strategy (a ReduceMean's own RealDiv), that is no gap.
    Returns ``layout`` (for the caller's convenience)."""
    if node.op == "AllReduce":
        e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith("what the consumer needs")]
    return layout


def _global_norm(node: Node, e: Explanation, over: str) -> Explanation:
    """The AllReduce MindSpore's parallel pass adds to gradient clipping's global norm
    (``ClipByGlobalNorm`` / MindFormers' ``ClipGradNorm``): each rank's sum of the squares of the
    gradient slices it holds, a scalar, summed over the stage (``_IN_STAGES``) or over the ranks at
    one place of every pipeline stage (``_BETWEEN_STAGES``), before the square root."""
    between = "BETWEEN_STAGES" in str(node.instance_name)
    e.action, e.dims = "sum", ()
    e.parts = len(e.group_ranks) if e.group_ranks else None
    where = "the pipeline stages (the ranks at this place of each)" if between else "the ranks of the stage"
    e.headline = (f"{node.op} {over}: gradient clipping's global norm: {e.producer or 'the rank'} sums the squares "
                  f"of the gradient slices the rank holds (a scalar); the parallel pass adds them over {where} "
                  f"before {e.consumer or 'the square root'}")
    e.facts.append(f"MindSpore's parallel pass names it {node.instance_name}")
    e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith(("how the producer", "what the consumer"))]
    return e


def _loss_scale(node: Node, e: Explanation, over: str) -> Explanation:
    """The AllReduce of a loss-scaled training step's overflow check
    (:func:`~msinspect.analysis.vocabulary.loss_scale_check`: ``self.allreduce(flag_sum)`` in
    MindSpore's ``nn/wrap/loss_scale.py``): each rank's overflow flag, the sum of its own
    gradients' overflow status, added over the group, so that every rank skips the update or none
    does. A flag per rank, no tensor layout: its producer's and consumer's cuts do not apply."""
    e.action, e.dims = "sum", ()
    e.parts = len(e.group_ranks) if e.group_ranks else None
    e.headline = (f"{node.op} {over}: the loss-scaled step's overflow check: each rank's overflow flag "
                  f"({e.producer or 'its own'}) summed over the ranks, so that all skip the update or all take it")
    e.facts.append(f"called at {_source(node)} (MindSpore's loss-scale cells, nn/wrap/loss_scale.py)")
    e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith(("how the producer", "what the consumer"))]
    return e


def _masked_lookup(f: _File, source: str | None):
    """(the Gather, its layout) where ``source`` is the last operator of the graph MindSpore puts
    in place of a Gather that cuts its table along the gathered axis (``gather_info.cc``: each
    rank looks up the ids its part of the table holds and masks the rest to zero; a Mul by the
    mask, operators with no strategy, between); None elsewhere."""
    current, hops = source, 0
    while current is not None and hops < 4 and f.strategy_of(current) is None:
        node = f.node(current)
        if node is None or is_comm(node):
            return None
        current, hops = first_input(f.graph, current), hops + 1
    node, strategy = f.node(current), f.strategy_of(current)
    if node is None or strategy is None or node.op.removeprefix("PrimFunc_") not in ("Gather", "GatherV2"):
        return None
    call = call_of(node, strategy)
    axis = next((v for v in call.operands[2:3] if isinstance(v, int) and not isinstance(v, bool)), None)
    layout = layout_of(call, f.devices)
    table = strategy[0] if strategy else ()
    if axis is None or layout is None or not table or table[axis % len(table)] == 1:
        return None
    width = len(layout.device_matrix)
    partial = tuple(width - 1 - v for v in map_axes(layout.tensor_maps[0][axis % len(table)]))
    return current, OutputLayout((), layout.device_matrix, (), partial, layout.rule)


def _after_lookup(f: _File, source: str, upto: str) -> tuple[OutputLayout, str] | None:
    """How a masked lookup's output (``source``: the last operator of the graph MindSpore puts in
    place of a Gather that cuts its table along the axis it gathers, :func:`_masked_lookup`) is cut
    once the one collective between it and ``upto`` has added the ranks' parts: as a Gather's
    output, ``table[:axis] + indices + table[axis + 1:]``, the gathered axis summed away; a
    ReduceScatter also cuts dimension 0 by its group. None where ``source`` is no such operator or
    not one summing collective lies between."""
    found = _masked_lookup(f, source)
    if found is None:
        return None
    sums = [f.node(k) for k in path_between(f.graph, source, upto) or []
            if _is(lambda n: n.op in ("AllReduce", "ReduceScatter") and not is_backward(n), f.node(k))]
    if len(sums) != 1:
        return None
    gather, strategy = found[0], f.strategy_of(found[0])
    call = call_of(f.node(gather), strategy)
    axis = call.operands[2] % len(strategy[0])
    table, indices = tuple(strategy[0]), tuple(strategy[1])
    factors = [*table[:axis], *indices, *table[axis + 1:]]
    added, how = sums[0], "adds the ranks' parts"
    if added.op == "ReduceScatter":
        size = len((f.comm.get(added.line) or {}).get("group_ranks") or ()) or stated_size(added)
        if not size or not factors:
            return None
        factors[0] *= size
        how += f" and leaves each its part of dimension 0 ({size} parts)"
    said = (f"the masked lookup of {f.name(gather)} ({f.node(gather).op.removeprefix('PrimFunc_')}) "
            f"{_strategy_text(strategy)}, whose {added.op} (line {added.line}) {how}: a Gather's output, its "
            "indices' cut then the table's other dimensions'")
    return OutputLayout(tuple(factors), (), tuple(None for _ in factors), rule="the summed lookup"), said


def _lookup_sum(f: _File, node: Node, e: Explanation, gather: str, layout: OutputLayout, over: str) -> Explanation:
    """The collective that adds the masked lookups of a Gather whose table is cut along the axis
    it gathers: a ReduceScatter also leaves each rank its part of dimension 0."""
    e.action = "sum"
    e.parts = prod(layout.matrix[a] for a in layout.partial)
    e.predicted_group = f.group(layout.matrix, layout.partial)
    name, strategy = f.name(gather), f.strategy_of(gather)
    e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith("how the producer")]
    _need_not_matter(node, e)
    e.facts.append(f"the lookup: {name} ({f.node(gather).op}) in_strategy {_strategy_text(strategy)}, "
                   f"{e.producer} after it in the graph MindSpore puts in its place")
    e.headline = (f"{node.op} {over}: the {f.node(gather).op.removeprefix('PrimFunc_')} {name} cuts its table along "
                  f"the axis it gathers {e.parts} ways: each rank "
                  "looks up only the ids its part holds, the rest masked to zero, so each holds a partial sum; "
                  "the ranks add them")
    own = _own_step(f, node) if node.op == "ReduceScatter" else None
    if own is not None:
        e.dims, e.own_shapes = own[0], own[3]
        e.headline += f", each keeping its part of {_dims_text(e.dims)} ({own[2]})"
    elif node.op == "ReduceScatter":  # no shapes in the file: MindSpore's ReduceScatter scatters dimension 0
        e.dims = (0,)
        e.headline += ", each keeping its part of dimension 0 (a ReduceScatter's; the file prints no shapes here)"
    e.reconstruction.append(f"{layout.rule}: MindSpore's GatherInfo replaces the lookup with a masked one and "
                            "adds the parts (gather_info.cc)")
    _compare_group(e, layout)
    return e


def _plain_reshape(f: _File, key: str | None) -> str | None:
    """The first forward operator with a strategy that reads the Reshape ``key`` the file gives
    no strategy (at validate the parallel pass's per-rank Reshape is one such); None where ``key``
    is not one, or nothing with a strategy reads it."""
    node = f.node(key)
    if node is None or node.op.removeprefix("PrimFunc_") != "Reshape" or f.strategy_of(key) is not None:
        return None
    beyond = [u for u in consumers(f.graph, key) if f.strategy_of(u) is not None and not _is(is_backward, f.node(u))]
    return beyond[0] if beyond else None


def _partial_sum(f: _File, node: Node, e: Explanation, layout: OutputLayout, over: str,
                 combine: str = "sum") -> Explanation:
    """The collective that combines each rank's partial result over the matrix axes
    ``layout.partial``: a sum, or (``combine``) the max, min or product of a reduction that does
    not sum."""
    e.action = combine
    e.parts = 1
    for axis in layout.partial:
        e.parts *= layout.matrix[axis]
    e.predicted_group = f.group(layout.matrix, layout.partial)
    made = f.node(producer(f.graph, node_id(node)))
    what = "its contracted dimension" if made is not None and "MatMul" in made.op else "the dimension it reduces"
    held = "a partial sum" if combine == "sum" else f"the {combine} of its part only"
    whole = "the whole sum" if combine == "sum" else f"the {combine} over every part"
    e.headline = (f"{node.op} {over}: {e.producer} cuts {what} {e.parts} ways, so each rank holds {held}; "
                  f"{e.consumer or 'its consumer'} needs {whole}")
    if combine != "sum":
        told = node.primitive_attrs.get("op")
        if told is not None and told != combine:
            e.cannot_tell.append(f"the AllReduce's op is {told!r}, not the {combine!r} {made.op} needs: "
                                 "the reconstruction is off here")
    rule = output_layout(made, f.strategy_of(node_id(made)), f.devices) if made is not None else None
    if node.op == "ReduceScatter" and rule is not None and len(rule.factors) == len(layout.factors):
        # the sum leaves cut where the out_strategy cuts further than the in_strategy's rule
        e.dims = tuple(i for i, (a, b) in enumerate(zip(rule.factors, layout.factors)) if b > a)
        if e.dims:
            cuts = ", ".join(f"dimension {i} {layout.factors[i] // rule.factors[i]} ways" for i in e.dims)
            e.headline = (f"{node.op} {over}: {e.producer} cuts {what} {e.parts} ways, so each rank holds a partial "
                          f"sum; the ranks add them and each keeps its part of the sum ({cuts}: its out_strategy "
                          f"{_shape_text(layout.factors)})")
    _compare_group(e, layout)
    return e


def _compare_group(e: Explanation, layout: OutputLayout, span: tuple[int, ...] | None = None,
                   split: bool = False) -> None:
    """Set the ranks the device matrix gives beside those MindSpore wrote (``span``: those the
    chain's collectives reach together, where the step is one of several)."""
    if e.predicted_group is None:
        e.cannot_tell.append("which ranks the producer's device matrix gives: the stage's ranks or this rank's "
                             "place among them are not known")
        return
    how = "an axis split in two where only part of it is gathered; " if split else ""
    said = (f"the producer's device matrix {_shape_text(layout.matrix)} ({how}repeated calculation on the right) "
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


def _rank_input(f: _File, key: str | None, position: int | None) -> tuple[int, ...] | None:
    """The shape input ``position`` of the operator ``key`` has at the rank by its strategy (its
    whole shape cut as the strategy says); None where the file does not tell it."""
    node = f.node(key)
    row = f.strategies.get(node.line) if node is not None else None
    expected = (row or {}).get("expected_rank_inputs") or ()
    shape = expected[position] if position is not None and position < len(expected) else None
    return tuple(shape) if shape else None


def _whole_shapes(f: _File, source: str | None, target: str | None, position: int | None, wanted,
                  e: Explanation) -> tuple | None:
    """(the producer's output, the consumer's input) as whole shapes, where the file tells both:
    the producer's from its row, the consumer's from its row, else from the last per-rank Reshape
    before it (its shape times the consumer's cut). None where either is not told."""
    made = f.node(source)
    row = f.strategies.get(made.line) if made is not None else None
    produced = (row or {}).get("global_output")
    if made is None and (weight := f.weight(source)) is not None:  # a weight: its whole shape
        produced = weight["global_shape"]
    taking = f.node(target)
    row = f.strategies.get(taking.line) if taking is not None else None
    inputs = (row or {}).get("global_inputs") or ()
    # one shape per input of its strategy, else the row left out an input it has no shape for
    # (a <null> abstract) and its positions are not the inputs'
    aligned = len(inputs) == len((row or {}).get("in_strategy") or ())
    taken = inputs[position] if aligned and position is not None and position < len(inputs) else None
    steps = [f.by_line[line] for line in e.chain_lines if line in f.by_line]
    if taken is None and produced and steps:  # a Squeeze's or ExpandDims' constant axes tell it
        taken = _squeezed(tuple(produced), steps)
    if taken is None and wanted is not None:
        last = next((f.by_line[line] for line in reversed(e.chain_lines) if line in f.by_line
                     and f.by_line[line].op.removeprefix("PrimFunc_") == "Reshape"), None)
        shape = last.inputs[1] if last is not None and len(last.inputs) > 1 else None
        if isinstance(shape, tuple) and len(shape) == len(wanted) and all(type(v) is int for v in shape):
            taken = tuple(v * w for v, w in zip(shape, wanted))
    if not produced or not taken or not all(type(v) is int and v > 0 for v in (*produced, *taken)):
        return None
    return tuple(produced), tuple(taken)


def _step(f: _File, node: Node, e: Explanation, layout: OutputLayout | None, wanted, over: str,
          needed: tuple[int, ...] | None = None, whole: tuple | None = None) -> Explanation:
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
    if have is not None and wanted is not None and len(have) != len(wanted):
        # a Reshape between: the producer's cut read in the consumer's shape, where it is a cut
        mapped = cut_through_reshape(whole[0], have, whole[1]) if whole is not None else None
        through = (mapped, whole[1]) if mapped is not None else None
        if _reshapes_only(f, e):
            return _local_reshape(f, node, e, have, wanted, needed, through)
        back = cut_through_reshape(whole[1], wanted, whole[0]) if whole is not None and through is None else None
        if back is not None:  # no cut in the consumer's shape, but the consumer's is one in the producer's
            e.reconstruction.append(f"a Reshape between: {e.producer}'s cut is no cut of whole blocks in "
                                    f"{e.consumer}'s shape {_shape_text(whole[1])}, but in {e.producer}'s "
                                    f"{_shape_text(whole[0])} {e.consumer}'s cut {_shape_text(wanted)} is "
                                    f"{_shape_text(back)}: the step in {e.producer}'s terms")
            wanted = back
    if through is None and (have is None or wanted is None or len(have) != len(wanted)):
        if have is not None and wanted is not None:
            why = (f"in {e.consumer}'s shape {_shape_text(whole[1])}, {e.producer}'s {_shape_text(whole[0])} cut "
                   f"{_shape_text(have)} is no cut of whole blocks (the Reshape interleaves its parts)"
                   if whole is not None else "the file gives the whole shapes of neither end, or of one only")
            e.cannot_tell.append(f"the step: the tensor changes rank on the way ({_shape_text(have)} to "
                                 f"{_shape_text(wanted)}: a Reshape between), and {why}")
        e.headline = (f"{node.op} {over}: between {e.producer or 'no producer found'} and "
                      f"{e.consumer or 'no consumer found'}; the step cannot be told")
        own = _own_step(f, node)
        if own is not None:  # the step as a whole is not told, this collective's part of it is
            e.action = "gather" if node.op == "AllGather" else "sum"
            e.dims, e.parts, e.own_shapes = own[0], own[1], own[3]
            did = "gathered" if node.op == "AllGather" else "summed and scattered"
            e.headline = (f"{node.op} {over}: between {e.producer or 'no producer found'} and "
                          f"{e.consumer or 'no consumer found'}: {_dims_text(e.dims)} of the tensor as it "
                          f"reaches it is {did} ({e.parts} parts)")
            e.facts.append(f"its own shapes, {own[2]}: MindSpore's {node.op} works on dimension 0"
                           + (", the Split and Concat after it move the parts" if e.dims != (0,) else ""))
        return e
    given = have
    if through is not None:
        have = e.reshaped = through[0]
        e.reconstruction.append(f"a Reshape between: in {e.consumer}'s shape {_shape_text(through[1])}, "
                                f"{e.producer}'s cut {_shape_text(given)} is {_shape_text(have)} (row-major, a cut "
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
    between = (f"{e.producer} gives {_shape_text(given)}"
               + (f", {_shape_text(have)} in {e.consumer}'s shape" if through is not None else "")
               + f", {e.consumer} needs {_shape_text(taken)}"
               + (" (whole, after a Reshape)" if len(taken) != len(wanted) and set(wanted) == {1}
                  else f" ({_shape_text(wanted)} in {e.producer}'s shape)" if len(taken) != len(wanted) else ""))
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
    own = _own_step(f, node) if through is not None else None
    if own is not None:  # one collective of the step: its own shapes say its part, in its own terms
        e.action = "gather" if node.op == "AllGather" else "sum"
        e.dims, e.parts, e.own_shapes = own[0], own[1], own[3]
        did = "gathered" if node.op == "AllGather" else "summed and scattered"
        e.headline = (f"{node.op} {over}: {_dims_text(e.dims)} of the tensor as it reaches it is {did} ({e.parts} "
                      f"parts), one collective of the step where {between}: {'; '.join(moves)}")
        e.facts.append(f"its own shapes, {own[2]}: MindSpore's {node.op} works on dimension 0"
                       + (", the Split and Concat after it move the parts" if e.dims != (0,) else ""))
        return e
    if through is not None:  # the producer's device matrix cuts its own dimensions, not these
        return e
    if node.op == "AllGather" and gathered and gathered != (0,):
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
            _compare_group(e, replace(layout, matrix=tuple(matrix)), _span(f, e), tuple(matrix) != layout.matrix)
    return e


#: Operators that change a tensor's shape and nothing else: a redistribution made of them alone
#: moves nothing.
_SHAPE_ONLY = frozenset({"Reshape", "Squeeze", "ExpandDims"})


def _reshapes_only(f: _File, e: Explanation) -> bool:
    """Whether the redistribution between producer and consumer is per-rank Reshapes (or Squeezes,
    ExpandDims) alone: no collective, nothing else, in its chain."""
    steps = [f.by_line.get(line) for line in e.chain_lines]
    return bool(steps) and all(n is not None and n.op.removeprefix("PrimFunc_") in _SHAPE_ONLY for n in steps)


def _squeezed(shape: tuple[int, ...], steps: list[Node]) -> tuple[int, ...] | None:
    """``shape`` through Squeezes and ExpandDims of constant axes, in order; None where another
    operator is among ``steps`` or an axis does not fit."""
    shape = list(shape)
    for node in steps:
        op = node.op.removeprefix("PrimFunc_")
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


def _local_reshape(f: _File, node: Node, e: Explanation, have, wanted, needed, through) -> Explanation:
    """A redistribution that is per-rank Reshapes alone (the parallel pass's in place of the
    network's Reshape): MindSpore found the rank's part of the producer's output to be the part
    the consumer reads, in another shape, so each rank reshapes its own part and nothing moves.
    The producer's and the consumer's cuts must then make as many parts; the last Reshape's shape
    is checked against the consumer's input cut by its strategy where the file gives both."""
    e.headline = (f"{node.op} on the rank's own data: {e.producer} gives {_shape_text(have)}, {e.consumer} needs "
                  f"{_shape_text(wanted)}, the same part in another shape")
    if prod(have) != prod(wanted) or through is not None and through[0] != tuple(wanted):
        found = (f"in {e.consumer}'s shape {_shape_text(through[1])} {_shape_text(have)} is "
                 f"{_shape_text(through[0])}" if through is not None and through[0] != tuple(wanted)
                 else f"{_shape_text(have)} and {_shape_text(wanted)} make {prod(have)} and {prod(wanted)} parts")
        e.cannot_tell.append(f"the step: MindSpore reshapes each rank's part alone, yet {found}: the layouts read "
                             "here are off")
        return e
    e.action, e.dims = "none", ()
    e.facts.append(f"no collective between {e.producer} and {e.consumer}: the redistribution is per-rank "
                   f"{' then '.join(e.chain)} alone")
    last = f.by_line.get(e.chain_lines[-1])
    shape = last.inputs[1] if last is not None and len(last.inputs) > 1 else None
    if needed is not None and isinstance(shape, tuple) and tuple(shape) == needed:
        e.reconstruction.append(f"the last Reshape gives each rank {_shape_text(needed)}, {e.consumer}'s input cut "
                                f"{_shape_text(wanted)}: each rank's part, {prod(wanted)} parts on both sides, "
                                "reshaped in place")
    elif through is not None:
        e.reconstruction.append(f"in {e.consumer}'s shape {_shape_text(through[1])}, {e.producer}'s cut "
                                f"{_shape_text(have)} is {_shape_text(wanted)}, the cut {e.consumer} takes: each "
                                "rank's part, reshaped in place")
    else:
        e.reconstruction.append(f"{_shape_text(have)} and {_shape_text(wanted)} both make {prod(wanted)} parts: each "
                                "rank's part, reshaped in place")
    return e


def _own_step(f: _File, node: Node) -> tuple[tuple[int, ...], int, str, tuple] | None:
    """(dimensions, parts, in words, (shape before, shape after)) of what an AllGather or
    ReduceScatter does to the tensor as it reaches it, from its own per-rank shapes: MindSpore's
    AllGather concatenates the group's parts on dimension 0 (its output's dimension 0 is its
    input's times the group's size), a ReduceScatter sums and leaves each rank its part of
    dimension 0; an AllGather read by a Split on dimension 0 then a Concat (tensor
    redistribution's way of gathering another dimension) gathers the dimension the Concat's
    output grows on, or (no shapes printed) the Concat's axis. Where the file does not print both
    shapes (step_parallel_end), the shape the per-rank Reshape before it gives and the group's
    size. None where neither shows it."""
    op = node.op.removeprefix("PrimFunc_")
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
    if concat is not None and concat.output_shape and len(concat.output_shape) == len(before):
        grown = tuple(i for i, (a, b) in enumerate(zip(before, concat.output_shape)) if b == a * parts and a != b)
        if len(grown) != 1:
            return None
        dims = grown
        after = concat.output_shape
    elif concat is not None and type(axis) is int and -len(before) <= axis < len(before):
        dims = (axis % len(before),)
        after = tuple(b * parts if i == dims[0] else b for i, b in enumerate(before))
    elif concat is not None:
        return None
    return dims, parts, f"per rank {_shape_text(before)} -> {_shape_text(after)}", (tuple(before), tuple(after))


def _by_definition(f: _File, node: Node) -> tuple[tuple[int, ...], int, str] | None:
    """(dimensions, parts, in words) of what a collective does by MindSpore's definition of it,
    where the file prints no shapes (step_parallel_end): a ReduceScatter sums and leaves each rank
    its part of dimension 0; an AllGather concatenates on dimension 0, or, read by a Split on
    dimension 0 then a Concat, on the Concat's axis; in the group's parts. None for another
    collective, or where the group's size or the Concat's axis is not told."""
    op = node.op.removeprefix("PrimFunc_")
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


def _reshaped_to(f: _File, node: Node) -> tuple[int, ...] | None:
    """The shape the Reshape that feeds ``node`` gives (its constant shape operand: a per-rank
    Reshape of a redistribution states the rank's shape); None where no such Reshape feeds it."""
    source = f.node(first_input(f.graph, node_id(node)))
    if source is None or source.op.removeprefix("PrimFunc_") != "Reshape" or len(source.inputs) < 2:
        return None
    shape = source.inputs[1]
    if isinstance(shape, tuple) and shape and all(isinstance(v, int) and not isinstance(v, bool) for v in shape):
        return shape
    return None


def _concat_after(f: _File, key: str) -> Node | None:
    """The Concat of the Split -> TupleGetItem -> MakeTuple -> Concat tensor redistribution puts
    after an AllGather ``key`` (the Split on dimension 0); None where no such Split reads it."""
    split = [u for u in consumers(f.graph, key) if _is(lambda n: n.op.removeprefix("PrimFunc_") == "Split", f.node(u))]
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
            if node.op.removeprefix("PrimFunc_") == "Concat":
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


def _span(f: _File, e: Explanation) -> tuple[int, ...] | None:
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


def _weight_user(f: _File, weight: str) -> tuple[str, int] | None:
    """(forward operator, input position) where the weight named ``weight`` is read with a
    strategy: the first in file order; None where no such operator is in the file."""
    keys = [k for k, d in f.graph.nodes(data=True) if d.get("node") is None and d.get("name") == weight]
    for key in keys:
        for user in consumers(f.graph, key):
            node = f.node(user)
            if node is None or is_backward(node):
                continue
            if f.strategy_of(user) is None and node.op.removeprefix("PrimFunc_") in _LAYOUT_KEEPING:
                # a Cast the parallel pass gave no strategy (MindFormers' fp16 compute of a fp32
                # weight) passes the weight's layout on: its reader with a strategy tells it
                later = [u for u in consumers(f.graph, user) if f.strategy_of(u) is not None
                         and not is_backward(f.node(u))]
                user, key = (later[0], user) if later else (user, key)
            if f.strategy_of(user) is not None:
                position = _position(f, path_between(f.graph, key, user) or [], key, user)
                if position is not None:
                    return user, position
    return None


def _mirror(f: _File, node: Node, row: dict, e: Explanation, target: str | None) -> Explanation:
    # the weight MindSpore names: on a mirror operator (step_parallel_end) its primitive, on the
    # gradient's AllReduce it becomes (validate) the node's primal attributes; its producer there
    # is the gradient's own operator (Grad_MatMul's MatMul-op2), not the weight
    weight = (node.primitive_attrs.get("mirror_user_id") or node.cnode_primal_attrs.get("mirror_user_id")
              or e.producer)
    over = f"over {ranks_text(e.group_ranks, word=True)}" if e.group_ranks else "over ranks the file does not tell"
    e.action = "replicas"
    e.headline = (f"{node.op} {over}: the ranks holding the same slice of {weight} (its replicas); its gradient "
                  "is summed over them in the backward pass")
    position = None
    if is_backward(node):  # the gradient's AllReduce: the weight's layout is its forward reader's
        found = _weight_user(f, weight) if weight else None
        if found is not None:
            target, position = found
            e.consumer = f.name(target)
    cast = f.node(target)
    if not is_backward(node) and f.strategy_of(target) is None \
            and _is(lambda n: n.op.removeprefix("PrimFunc_") in _LAYOUT_KEEPING, cast):
        # a Cast the parallel pass gave no strategy (MindFormers' fp16 compute of a fp32 weight)
        # passes the weight's layout on: its reader with a strategy tells it
        later = [u for u in consumers(f.graph, target) if f.strategy_of(u) is not None
                 and not _is(is_backward, f.node(u))]
        if later:
            position = _position(f, path_between(f.graph, target, later[0]) or [], target, later[0])
            e.facts.append(f"{weight} reaches {f.name(later[0])} through {cast.name} ({cast.op}, no strategy: it "
                           "passes its input's layout on)")
            target = later[0]
            e.consumer = f.name(target)
    consumer = f.node(target)
    strategy = f.strategy_of(target)
    if consumer is None or strategy is None:
        laid = f.user_layout(weight) if weight else None
        if laid is not None:  # the user's Layout of the weight (an expert weight read by a Morph)
            matrix, tensor_map, said = laid
            e.facts.append(said)
            return _replicas(f, e, weight, matrix, tensor_map)
        why = (f"no operator of the file that reads {weight} carries a strategy" if is_backward(node)
               else "its consumer carries no strategy")
        e.cannot_tell.append(f"the weight's layout: {why}, and no Layout of the user's lays it out (in this file "
                             "or the rank's step_parallel_end)")
        return e
    if position is None:
        trail = path_between(f.graph, node_id(node), target) or []
        position = _position(f, trail, node_id(node), target)
    devices = f.devices
    layout = layout_of(call_of(consumer, strategy), devices)
    if layout is None or position is None or position >= len(layout.tensor_maps):
        laid = f.user_layout(weight) if weight else None
        if laid is not None:  # no rule for the reader (a Morph): the user's Layout of the weight
            e.facts.append(laid[2])
            return _replicas(f, e, weight, laid[0], laid[1])
        why = ("the stage's devices are not known (a pipeline whose stages the files read do not tell)"
               if devices is None else f"which input of {e.consumer} it is, the file does not tell"
               if layout is not None else f"no layout rule for {consumer.op} here")
        e.cannot_tell.append(f"the weight's device matrix: {why}")
        return e
    e.facts.append(f"{weight} is input {position} of {e.consumer} {_strategy_text(strategy)}")
    return _replicas(f, e, weight, layout.device_matrix, layout.tensor_maps[position])


def _replicas(f: _File, e: Explanation, weight: str, matrix: tuple[int, ...], tensor_map: tuple) -> Explanation:
    """The ranks holding the same slice of ``weight`` laid out by ``tensor_map`` (entries count
    the axes of ``matrix`` from the right) over ``matrix``: those differing from the rank only
    along the axes that cut none of its dimensions."""
    width = len(matrix)
    used = {width - 1 - v for entry in tensor_map for v in map_axes(entry)}
    free = [i for i in range(width) if i not in used and matrix[i] > 1]
    e.reconstruction.append(f"device matrix {_shape_text(matrix)}, tensor map {_shape_text(tensor_map)}: "
                            f"axes {', '.join(map(str, free)) or 'none'} leave {weight} whole")
    e.predicted_group = f.group(matrix, free) if free else (f.ctx.rank,)
    e.parts = len(e.predicted_group) if e.predicted_group else None
    if e.predicted_group is not None:
        said = f"replicas by that layout: {ranks_text(e.predicted_group, word=True)}"
        if e.group_ranks is not None and tuple(e.group_ranks) != tuple(e.predicted_group):
            said += f", not the {ranks_text(e.group_ranks, word=True)} MindSpore wrote: the reconstruction is off here"
        e.reconstruction.append(said)
    return e


def _optimizer(f: _File, node: Node, e: Explanation, over: str) -> Explanation:
    """Optimizer parallel: a weight kept cut along dimension 0 over the ranks holding the same
    slice of it, gathered whole before use; its gradient's bprop, a ReduceScatter(sum) over the
    same ranks, sums the gradient and leaves each rank the part it updates. The weight is the one
    MindSpore records (``mirror_user_id``), else the producer (a gradient's is not the weight)."""
    weight = (node.primitive_attrs.get("mirror_user_id") or node.cnode_primal_attrs.get("mirror_user_id")
              or (None if is_backward(node) else e.producer))
    called = weight or "whose weight the file does not tell"
    e.parts = len(e.group_ranks) if e.group_ranks else stated_size(node)
    if "Gather" in node.op:
        e.action, e.dims = "gather", (0,)
        e.headline = (f"{node.op} {over}: optimizer parallel: the weight {called} is kept cut along dimension 0 over "
                      "these ranks and gathered whole before use (its gradient scattered back)")
    elif node.op == "ReduceScatter" and is_backward(node):
        e.action, e.dims = "sum", (0,)
        e.headline = (f"{node.op} {over}: optimizer parallel: the gradient of the weight {called} is summed over "
                      "the ranks that keep it cut, each keeping the part of dimension 0 it updates")
    else:
        e.headline = f"{node.op} {over}: optimizer parallel, for the weight {called}"
        e.cannot_tell.append(f"what a {node.op} does for optimizer parallel: no rule here")
    if weight is None:
        e.cannot_tell.append("the weight: the gradient's collective records no mirror_user_id")
    else:
        e.facts.append("optimizer parallel cuts a weight's slice again along its first dimension over the ranks "
                       "holding that slice")
    return e


# ------------------------------------------------------------------ a collective's gradient
#: MindSpore's bprop of each collective (``mindspore/ops/_grad_experimental/grad_comm_ops.py``):
#: the collective the gradient graph runs for it over the same group, and what that does.
#: AllReduce(sum) -> AllReduce(sum) of the output's gradient (``get_bprop_all_reduce``; max and
#: min mask it with ``x == out`` after); AllGather -> ReduceScatter(sum) (``get_bprop_all_gather``);
#: ReduceScatter -> AllGather; AlltoAll -> AlltoAll with split_dim and concat_dim swapped;
#: AlltoAllV -> AlltoAllV with the send and receive counts swapped.
BPROP = {"AllReduce": ("AllReduce", "sum"), "AllGather": ("ReduceScatter", "sum"),
         "ReduceScatter": ("AllGather", "gather"), "AlltoAll": ("AlltoAll", "exchange"),
         "AllToAll": ("AllToAll", "exchange"), "AlltoAllV": ("AlltoAllV", "exchange")}
#: The bprops of the per-rank operators a redistribution uses (``grad_array_ops.py``), nothing
#: on the wire: a Reshape's is a Reshape of the gradient back to its input's shape
#: (``get_bprop_reshape``), a Split's the Concat of its parts' gradients on its axis
#: (``get_bprop_split``).
LOCAL_BPROP = {"Reshape": ("Reshape", "the gradient reshaped back to the shape the forward Reshape read"),
               "Split": ("Concat", "the gradients of the parts concatenated on the axis the forward Split cut")}
#: Matrix products, whose input gradient dX = dY . W^T a column cut of W leaves partial.
_PRODUCTS = MATMUL_OPS | BATCH_MATMUL_OPS


def _forward_of(f: _File, node: Node) -> tuple[Node | None, str | None]:
    """(the forward collective whose bprop ``node`` is, its primitive): the one whose
    ``unique_id`` the gradient collective carries as ``forward_unique_id``; where the file lacks
    it (MindSpore dropped it after building the gradient), None and the primitive its
    ``forward_node_name`` (``AllGather_3308``) says, if one of :data:`BPROP`; (None, None) for
    any other node."""
    attrs = node.cnode_primal_attrs if is_backward(node) else {}
    found = f.by_unique_id.get(str(attrs.get("forward_unique_id")))
    if found is not None:
        return found, found.op.removeprefix("PrimFunc_")
    named = str(attrs.get("forward_node_name", "")).rsplit("_", 1)[0]
    local = LOCAL_BPROP.get(named, (None,))[0] == node.op.removeprefix("PrimFunc_")
    return None, (named if named in BPROP or local else None)


def _dims_text(dims) -> str:
    return ("dimension " if len(dims) == 1 else "dimensions ") + ", ".join(map(str, dims))


def _bprop(f: _File, node: Node, e: Explanation, ahead: Node | None, fop: str, over: str) -> Explanation:
    """A collective of the gradient graph that is MindSpore's bprop of the forward collective
    ``ahead`` (a ``fop``; None: not in the file) (:data:`BPROP`): what it does to the gradient
    follows from what ``ahead`` did to the data, explained as the forward is."""
    op = node.op.removeprefix("PrimFunc_")
    row = f.comm.get(ahead.line) if ahead is not None else None
    before = _explain_comm(f, ahead, row) if row is not None else None
    after = f" after {before.producer}" if before is not None and before.producer else ""
    local = LOCAL_BPROP.get(fop, (None,))[0] == op
    if ahead is None:
        e.forward = f"the {fop} {node.cnode_primal_attrs['forward_node_name']}"
        e.facts.append(f"MindSpore records on it forward_node_name {node.cnode_primal_attrs['forward_node_name']}: "
                       f"the forward {'step' if local else 'collective'} whose gradient it carries, no longer in this "
                       "file")
        if not local:  # a local bprop undoes the forward step on the rank's own data, whatever it was
            e.cannot_tell.append(f"what the forward {fop} did: it is not in this file (MindSpore dropped it after "
                                 "building the gradient)")
    else:
        e.forward = f"the {fop}{after} (line {ahead.line})"
        e.facts.append(f"MindSpore records on it forward_unique_id {ahead.cnode_primal_attrs['unique_id']}: the "
                       f"unique_id of {e.forward}, whose gradient it carries")
    if before is not None:
        e.facts.append(f"forward: {before.headline}")
    if local:
        e.action = "none"
        e.headline = f"{op} on the rank's own data: the backward of {e.forward}: {LOCAL_BPROP[fop][1]}"
        return e
    expected, action = BPROP.get(fop, (None, None))
    if expected != op:
        e.headline = f"{op} {over}: in the gradient of {e.forward}; the step cannot be told"
        e.cannot_tell.append(f"what it does: MindSpore's bprop of {fop} is {expected or 'not one msinspect knows'}"
                             f", not {op}")
        return e
    e.action = action
    if before is not None:
        e.dims, e.parts, e.own_shapes = before.dims, before.parts, before.own_shapes
        have, want = before.producer_layout, before.consumer_layout
        same_rank = bool(have) and bool(want) and len(have) == len(want)
        gathered = tuple(i for i in range(len(have)) if have[i] > want[i]) if same_rank else ()
        if fop == "AllGather" and before.action == "exchange" and same_rank:
            e.dims = gathered  # the AllGather of an exchange gathers; the StridedSlice after it cuts the rest
        told = before.predicted_group is not None and before.group_ranks is not None \
            and tuple(before.predicted_group) == tuple(before.group_ranks)
        if len(before.chain_groups) > 1 and fop == "AllGather" and _parts_of_one(f, before, gathered):
            # one dimension gathered by several AllGathers whose groups multiply to its parts:
            # each gathers part of it
            e.parts = len(before.group_ranks)
        elif len(before.chain_groups) > 1 and not told and fop != "AllReduce":
            # the forward's step takes several collectives: which of its dimensions this one moved
            # is not told by the step as a whole; its own shapes (or an AlltoAll's attributes) tell it
            e.dims, e.parts = (), None
            own = _own_step(f, ahead)
            if own is not None:
                e.dims, e.parts, e.own_shapes = own[0], own[1], own[3]
                e.facts.append(f"the forward {fop} is one of {len(before.chain_groups)} collectives of one "
                               f"redistribution; its own shapes, {own[2]}, say what it moved: "
                               f"{_dims_text(e.dims)} of the tensor as it reaches it, {e.parts} parts")
            elif not (fop in ("AlltoAll", "AllToAll") and "split_dim" in node.primitive_attrs):
                e.cannot_tell.append(f"which dimension: the forward {fop} is one of {len(before.chain_groups)} "
                                     "collectives of one redistribution, and neither the step nor its own "
                                     "shapes tell which part of it this one does")
    if not e.dims and fop in ("AllGather", "ReduceScatter") \
            and not any(t.startswith("which dimension") for t in e.cannot_tell):
        # the forward's explanation does not tell it (or the forward is gone): the shapes of the
        # forward collective, else of this one, tell what moved in the tensor as it reaches it
        own = next((found for found in (_own_step(f, n) for n in (ahead, node) if n is not None) if found), None)
        if own is not None:
            e.dims, e.parts, e.own_shapes = own[0], e.parts or own[1], own[3]
            whose = f"the forward {fop}'s" if ahead is not None and _own_step(f, ahead) else "its"
            e.facts.append(f"{whose} own shapes, {own[2]}: {_dims_text(e.dims)} of the tensor as it reaches it, "
                           f"{own[1]} parts")
    dims = e.dims
    if fop == "AllReduce":
        combine = ahead.primitive_attrs.get("op", "sum") if ahead is not None else "sum"
        e.headline = (f"{op} {over}: the backward of {e.forward}: the gradient of a sum over ranks is summed over "
                      "the same ranks, so each rank's partial result gets the whole gradient")
        if combine in ("max", "min"):
            e.headline = (f"{op} {over}: the backward of {e.forward}, a {combine} over ranks: the gradient is summed "
                          f"over the same ranks and kept where the rank's own part gave the {combine} (x == out)")
        elif combine == "prod":
            e.headline = (f"{op} {over}: the backward of {e.forward}, a product over ranks: the gradient times the "
                          "product is summed over the same ranks, then divided by the rank's own part")
        e.parts = e.parts or (len(e.group_ranks) if e.group_ranks else None)
        if combine == "sum" and ahead is not None:
            _column_cut_readers(f, ahead, e)
    elif fop == "AllGather":
        keeps = f" of {_dims_text(dims)}" if dims else ""
        which = f", which gathered {_dims_text(dims)}" if dims else ""
        e.headline = (f"{op} {over}: the backward of {e.forward}{which}: the gradient of the whole is summed over "
                      f"the same ranks and each keeps its own part{keeps}")
        if dims and dims != (0,):
            e.facts.append(f"ReduceScatter scatters dimension 0: the bprops of the Split and Concat after the "
                           f"AllGather move the parts from {_dims_text(dims)}")
        if ahead is not None and ahead.primitive_attrs.get("mean_flag") is True:
            e.facts.append("the AllGather's mean_flag: the bprop scales the gradient by 1 / the group's size")
    elif fop == "ReduceScatter":
        e.headline = (f"{op} {over}: the backward of {e.forward}: each rank's part of the gradient"
                      f"{' (' + _dims_text(dims) + ')' if dims else ''} is gathered whole over the same ranks")
    elif fop == "AlltoAllV":
        counts = [_operand(f, node_id(n), i) for n in (node, ahead) for i in (1, 2)] if ahead is not None else [None]
        swapped = None not in counts and counts[:2] == counts[:1:-1]
        e.headline = (f"{op} {over}: the backward of {e.forward}: the gradient goes back the way the data came, "
                      "each rank sending back what it received")
        if swapped:
            e.facts.append("its send and receive counts are the forward's, swapped")
        else:
            e.cannot_tell.append("whether its send and receive counts are the forward's swapped: the file does not "
                                 "show them coming from the same values")
    else:  # AlltoAll
        a, b = ahead.primitive_attrs if ahead is not None else {}, node.primitive_attrs
        e.headline = (f"{op} {over}: the backward of {e.forward}: the gradient goes back the way the data came, "
                      "split where the forward concatenated and concatenated where it split")
        if "split_dim" in a and "split_dim" in b:
            said = (f"forward split_dim {a['split_dim']}, concat_dim {a.get('concat_dim')}; this one split_dim "
                    f"{b['split_dim']}, concat_dim {b.get('concat_dim')}")
            if (b["split_dim"], b.get("concat_dim")) == (a.get("concat_dim"), a["split_dim"]):
                e.facts.append(said + ": swapped")
            else:
                e.cannot_tell.append(said + ": not swapped, the reconstruction is off here")
        split, concat = int_attr(node, "split_dim"), int_attr(node, "concat_dim")
        if not dims and split is not None and concat is not None:
            # the forward's step in its producer's terms is not told: the AlltoAll's own
            # attributes say it in the terms of the tensor it exchanges
            dims = e.dims = tuple(dict.fromkeys((concat, split)))
            e.parts = e.parts or int_attr(node, "split_count")
    if fop not in ("AllReduce", "AlltoAllV") and not dims and ahead is not None and not e.cannot_tell:
        # (an AlltoAllV moves blocks, not a dimension)
        e.cannot_tell.append(f"which dimension: the forward {fop}'s own explanation does not tell it")
    if ahead is not None:
        _same_group(f, e, ahead)
    return e


def _in_gradient(f: _File, node: Node, e: Explanation) -> Explanation:
    """A local step of the gradient graph that MindSpore records as part of a forward operator's
    gradient (``forward_node_name``), not of a collective's: a step of that operator's bprop on
    the rank's own data (``Grad_ReduceMean``'s Reshape of the output's gradient to the kept
    dimensions before its Tile), nothing on the wire. The gradient graph's operators carry no
    strategies: the cut it works on is the forward operator's."""
    attrs = node.cnode_primal_attrs
    named = str(attrs["forward_node_name"])
    found = next((n for n in f.by_line.values() if not is_backward(n) and "unique_id" in n.cnode_primal_attrs
                  and str(n.cnode_primal_attrs["unique_id"]) == str(attrs.get("forward_unique_id"))), None)
    e.forward = (f"{found.name} ({found.op.removeprefix('PrimFunc_')}, line {found.line})" if found is not None
                 else f"{named}, no longer in this file")
    e.action, e.dims = "none", ()
    e.headline = (f"{node.op} on the rank's own data: a step of the gradient of {e.forward}, as MindSpore's bprop "
                  "of that operator computes it; nothing on the wire")
    e.facts.append(f"MindSpore records on it forward_node_name {named}: the forward operator whose gradient it "
                   "computes, not a collective")
    e.cannot_tell[:] = [t for t in e.cannot_tell if not t.startswith(("how the producer", "what the consumer"))]
    e.reconstruction.append("the gradient graph's operators carry no strategies: it works on the rank's part of "
                            "the gradient, cut as the forward operator's output")
    return e


def _parts_of_one(f: _File, before: Explanation, gathered: tuple[int, ...]) -> bool:
    """Whether the forward step ``before`` gathers one dimension (``gathered``) and the
    AllGathers of its chain (their groups' sizes multiplied) gather exactly its parts."""
    if len(gathered) != 1 or not before.group_ranks:
        return False
    have, want = before.producer_layout[gathered[0]], before.consumer_layout[gathered[0]]
    rows = [f.comm.get(line) or {} for line in before.chain_lines
            if f.by_line.get(line) is not None and f.by_line[line].op == "AllGather"]
    sizes = [len(row["group_ranks"]) for row in rows if row.get("group_ranks")]
    return len(sizes) == len(rows) and prod(sizes) == have // max(want, 1)


def _mirror_gradient(node: Node) -> bool:
    """A gradient collective that is a mirror operator's bprop though its instance name does not
    say so (zoo 19's ``gradforward_op_...`` for ``layer1.bias``, renamed by comm reuse): its
    ``forward_node_name`` names the mirror."""
    return is_backward(node) and str(node.cnode_primal_attrs.get("forward_node_name", "")).startswith(
        tuple(f"{op}_" for op in MIRROR_OPS))


def _operand(f: _File, key: str, position: int) -> str | None:
    """The graph key of the value at input ``position`` of ``key``, followed through subgraph
    parameters to the argument bound at their one call; None where the file does not tell."""
    found = [source for source, edges in f.graph.pred[key].items()
             if any(d.get("position") == position for d in edges.values())]
    current, seen = (found[0] if len(found) == 1 else None), set()
    while current is not None and current not in seen and f.graph.nodes[current].get("bound") \
            and f.graph.nodes[current].get("kind") == NodeKind.PARAMETER:
        seen.add(current)
        current = first_input(f.graph, current)
    return current


def _same_group(f: _File, e: Explanation, ahead: Node) -> None:
    """The bprop runs over the forward collective's group: its ranks beside those of this one."""
    row = f.comm.get(ahead.line) or {}
    forward = tuple(row["group_ranks"]) if row.get("group_ranks") else None
    e.predicted_group = forward
    if forward is None or e.group_ranks is None:
        e.cannot_tell.append("whether it runs over the forward's ranks: the file names a group it gives no ranks for")
    elif tuple(e.group_ranks) == forward:
        e.reconstruction.append(f"the bprop runs over the forward's group, {ranks_text(forward, word=True)}, "
                                "as MindSpore wrote")
    else:
        e.reconstruction.append(f"the bprop runs over the forward's group, {ranks_text(forward, word=True)}, not "
                                f"the {ranks_text(e.group_ranks, word=True)} MindSpore wrote: the reconstruction "
                                "is off here")


def _column_cut_readers(f: _File, ahead: Node, e: Explanation) -> None:
    """The nearest forward matrix products reading the sum ``ahead`` makes with their weight cut
    along its output dimension: the input gradient dX = dY . W^T of each is a partial sum over the
    ranks holding the other columns, part of what the backward AllReduce adds up."""
    from collections import deque

    from msinspect.analysis.flow import data_view

    data, start = data_view(f.graph), node_id(ahead)
    hops, todo, found = {start: 0}, deque([start]), []
    while todo:
        key = todo.popleft()
        for user in data.successors(key):
            node = f.node(user)
            if user in hops or node is not None and (is_backward(node) or moves_data(node)):
                continue
            real = node is not None and not passes_through(f.graph, user)
            hops[user] = hops[key] + (1 if real else 0)
            if node is not None and node.op.removeprefix("PrimFunc_") in _PRODUCTS:
                cut = output_layout(node, f.strategy_of(user), f.devices)
                as_x = _position(f, [], key, user) == 0  # the sum is its X, not its weight
                if as_x and cut is not None and cut.factors and cut.factors[-1] > 1 and not cut.partial:
                    found.append((hops[user], node.line, user, cut.factors[-1]))
                continue
            todo.append(user)
    if not found:
        return
    nearest = [item for item in sorted(found) if item[0] == min(found)[0]]
    e.readers = tuple(f.name(k) for _, _, k, _ in nearest)
    names = ", ".join(f"{f.name(k)} {_strategy_text(f.strategy_of(k))}" for _, _, k, _ in nearest)
    ways = " or ".join(str(n) for n in sorted({n for *_, n in nearest}))
    e.reconstruction.append(
        f"the nearest matrix products reading the sum cut their weight along its output dimension: {names}; each "
        f"one's input gradient dX = dY . W^T over the rank's own columns of W is a partial sum over the {ways} "
        "ranks holding the others: this AllReduce is where they are added up")


def _pipeline(f: _File, node: Node, row: dict, e: Explanation) -> Explanation:
    peer = row.get("peer")
    shape = row.get("shape")
    rank = f.ctx.rank
    # MindSpore numbers a pipeline's stages in rank order (stage s holds ranks s*n .. s*n+n-1):
    # a peer of a higher rank is in a later stage, forward activations go there, gradients back
    stage = ("another pipeline stage" if peer is None or rank is None or peer == rank else
             "the next pipeline stage" if peer > rank else "the previous pipeline stage")
    if node.op == "Send":
        e.action = "send"
        e.headline = (f"Send to rank {peer if peer is not None else '?'}: {e.producer}'s output {_shape_text(shape)} "
                      f"goes to {stage}")
    else:
        e.action = "receive"
        e.headline = (f"Receive from rank {peer if peer is not None else '?'}: {_shape_text(shape)} from "
                      f"{stage} for {e.consumer}")
        e.facts.append(f"the data is what rank {peer if peer is not None else '?'}'s matching Send sends: "
                       "which operator produced it is in that rank's file, not this one")
    e.facts.append("pipeline parallel: the network is cut into stages where the user's pipeline_stage settings "
                   "say; each boundary crossing is a Send and a Receive")
    if peer is None:
        e.cannot_tell.append("the peer rank: the operator's group does not tell it")
    return e


# ------------------------------------------------------------------ entry point
def _other(f: _File, node: Node) -> Explanation:
    e = Explanation(f.ctx.rank, f.result.file, node.line, node.name, node.op, "other", "cannot tell", "",
                    source=_source(node))
    e.headline = f"{node.name} ({node.op}): no strategy and no communication: nothing the planner decided here"
    e.cannot_tell.append("the file gives it no strategy (a Reshape's layout follows its neighbours)")
    return e


def _same(a: Explanation) -> tuple:
    """What two answers must share to be one: all but their lines, and names less their hashes
    (each block's ``forward_op_<hash>``)."""
    values = asdict(a)
    for key in ("line", "lines", "chain_lines"):
        values.pop(key)
    values["name"] = stable_name(values["name"])
    return tuple(sorted((k, repr(v)) for k, v in values.items()))


def default_stage(dump, rank: int | None = None) -> str | None:
    """The stage ``explain`` reads by default: ``step_parallel_end`` where the rank has it (at
    ``validate`` MindSpore's comm-reuse pass renames instances), else the analyses' default."""
    ranks = [r for r in dump.ranks if rank is None or r.rank == rank]
    return "step_parallel_end" if ranks and ranks[0].stage_files("step_parallel_end") else None


def backward_stage(dump, rank: int | None, stage: str | None) -> str | None:
    """The stage whose file of ``rank`` holds the backward's communication, where ``stage`` (the
    one read, None: :func:`default_stage`) is step_parallel_end: MindSpore builds the gradient
    graph after it, so there its backward collectives are not yet there and a mirror is a
    ``_MirrorOperator``, not yet the gradient's AllReduce. None where no such file is there."""
    from msinspect.stages import WHOLE_STEP_STAGES

    if (stage or default_stage(dump, rank)) != "step_parallel_end":
        return None
    ranks = [r for r in dump.ranks if rank is None or r.rank == rank][:1]
    return next((s for s in WHOLE_STEP_STAGES if ranks and ranks[0].stage_files(s)), None)


def _frame(result):
    import pandas as pd

    from msinspect.analysis.operators import OP_COLUMNS

    return pd.DataFrame(result.ops, columns=OP_COLUMNS) if result.ops else pd.DataFrame(columns=OP_COLUMNS)


def _selected(frame, chosen):
    """The rows ``chosen`` selects, plumbing left out where anything else is selected."""
    hits = frame[chosen.rows(frame)] if not frame.empty else frame
    real = hits[~hits["plumbing"].astype(bool)] if not hits.empty else hits
    return real if not real.empty else hits


def explain(source, selector: str, rank: int | None = None, stage: str | None = None,
            backward=None) -> list[Explanation]:
    """Why the operators ``selector`` selects (:mod:`msinspect.analysis.selector`: ``matmul``,
    ``MatMul-0``, ``type:``, ``scope:``, ``re:``; a collective by its instance name) are as they
    are, on ``rank`` (default: the first rank read). ``source``: an
    :class:`~msinspect.analysis.collect.Analysis`, a :class:`~msinspect.dumps.Dump` or a path
    (read at ``stage``, default :func:`default_stage`, that rank only). ``backward``: an
    Analysis of the same rank at :func:`backward_stage`, whose backward communication the
    selector also selects from (read by itself when ``source`` is a dump or a path read at the
    default stage): the forward's answers keep step_parallel_end's names, the backward's
    collectives (and each mirror as the gradient's AllReduce) come from the file that has them.
    Operators with the same answer (one per block or micro-batch) are one :class:`Explanation`
    with every ``lines``. :class:`~msinspect.errors.NoMatchError` when the selector selects
    nothing, with the close names."""
    from msinspect.analysis.select import close_names, listing, no_match
    from msinspect.analysis.selector import parse_selector

    analysis, rank = _analysis_of(source, rank, stage)
    if backward is None and stage is None and not _is_analysis(source):
        backward = _backward_analysis(source, rank)
    results = [r for r in analysis.results if rank is None or r.rank == rank]
    if rank is not None and not results:
        raise no_match(f"rank {rank} was not read", "ranks read",
                       ranks_text(r.rank for r in analysis.results if r.rank is not None))
    results = results[:1]
    chosen = parse_selector(selector)
    later = [r for r in (backward.results if backward is not None else ()) if rank is None or r.rank == rank][:1]
    out: list[Explanation] = []
    for result in results:
        frame = _frame(result)
        hits = _selected(frame, chosen)
        extra = []
        for other in later:
            found = _selected(_frame(other), chosen)
            if not found.empty:
                found = found[found["backward"].astype(bool) & found["comm"].astype(bool)]
            extra += [(other, sorted(found["line"]))] if not found.empty else []
        if hits.empty and not extra:
            names = [n for n in frame["name"] if isinstance(n, str)]
            ops = sorted({o for o in frame["op"] if isinstance(o, str)})
            wanted = selector.split(":", 1)[-1].strip("/").split("/")[-1]
            where = f" on rank {result.rank}" if result.rank is not None else ""
            raise no_match(f"no operator matches {selector!r}{where}", "op types", listing(ops),
                           close_names(wanted, [*names, *ops]))
        out.extend(_answers(analysis, result, sorted(hits["line"])) if not hits.empty else [])
        for other, lines in extra:
            out.extend(_answers(backward, other, lines))
    return out


def _is_analysis(source) -> bool:
    from msinspect.analysis.collect import Analysis

    return isinstance(source, Analysis)


def _backward_analysis(source, rank: int | None):
    """The rank's :func:`backward_stage` read, for :func:`explain` of a dump or path; None where
    there is none."""
    from msinspect.analysis.collect import analyse
    from msinspect.dumps import Dump, load_dump

    dump = source if isinstance(source, Dump) else load_dump(source)
    later = backward_stage(dump, rank, None)
    return analyse(dump, later, only=[rank] if rank is not None else None) if later else None


def _answers(analysis, result, lines) -> list[Explanation]:
    """The explanations of the operators at ``lines`` of one rank's file, equal ones folded."""
    f = _File(analysis, result)
    answers: dict[tuple, Explanation] = {}
    for line in lines:
        node = f.by_line.get(line)
        if node is None:
            continue
        if is_comm(node) and line in f.comm:
            answer = _explain_comm(f, node, f.comm[line])
        elif line in f.strategies:
            answer = _explain_strategy(f, node, f.strategies[line])
        else:
            answer = _other(f, node)
        same = _same(answer)
        if same in answers:
            kept = answers[same]
            kept.lines = (*kept.lines, line)
        else:
            answers[same] = replace(answer, lines=(line,))
    return list(answers.values())


def _analysis_of(source, rank: int | None, stage: str | None):
    """(analysis, rank): ``source`` as it is when an Analysis, else its dump read at ``stage``
    (default :func:`default_stage`) for ``rank`` alone (default: the dump's first)."""
    from msinspect.analysis.collect import Analysis

    if isinstance(source, Analysis):
        return source, rank
    from msinspect.analysis.collect import analyse
    from msinspect.dumps import Dump, load_dump

    dump = source if isinstance(source, Dump) else load_dump(source)
    if rank is None:
        present = [r.rank for r in dump.ranks if r.rank is not None]
        rank = min(present) if present else None
    return analyse(dump, stage or default_stage(dump, rank), only=[rank] if rank is not None else None), rank


def explain_rank(source, rank: int | None = None, stage: str | None = None, *,
                 comm: bool = True, strategies: bool = True) -> list[dict]:
    """Every communication operator (``comm``) and every operator with a strategy
    (``strategies``) of one rank, explained: plain dicts (:meth:`Explanation.to_dict`), equal
    answers folded, in file order: what the report shows. ``source``, ``rank``, ``stage``: as
    for :func:`explain`."""
    analysis, rank = _analysis_of(source, rank, stage)
    results = [r for r in analysis.results if rank is None or r.rank == rank][:1]
    out = []
    for result in results:
        lines = set()
        if comm:
            lines |= {row["line"] for row in result.comm}
        if strategies:
            lines |= {row["line"] for row in result.strategies}
        out += [e.to_dict() for e in _answers(analysis, result, sorted(lines))]
    return sorted(out, key=lambda e: e["line"])
