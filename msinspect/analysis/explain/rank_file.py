"""One rank's file as ``explain`` reads it (:class:`RankFile`: its view, its rows by line, its
context), the answer ``explain`` gives (:class:`Explanation`), and how both write shapes and
strategies. Shared by :mod:`msinspect.analysis.explain.answers` and :mod:`msinspect.analysis.explain.steps`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from msinspect.analysis.explain.layouts import ranks_along
from msinspect.analysis.dataflow.file_view import view_of
from msinspect.analysis.dataflow.flow import is_data_edge
from msinspect.analysis.dataflow.node_facts import is_backward
from msinspect.mindspore.vocabulary import is_comm, stands_in
from msinspect.analysis.rank.params import params_at_end
from msinspect.graph import node_id
from msinspect.model import Node, NodeKind

if TYPE_CHECKING:
    import networkx as nx

    from msinspect.analysis.job.collect import Analysis

#: The flag ``StepAutoParallel`` sets on the graph once the strategy search ran (auto_parallel
#: only): its absence in a file the parallel pass ran in means semi_auto_parallel.
AUTO_FLAG = "auto_parallel_run_once_only"


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
    communication operator: its kind (:mod:`msinspect.mindspore.vocabulary`)."""
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
    (:func:`own_step`); None: the producer's."""
    reshaped: tuple[int, ...] | None = None
    """Where a Reshape between producer and consumer changes the tensor's rank: the producer's cut
    read in the consumer's shape (reconstruction, :func:`~msinspect.analysis.explain.layouts.
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


class RankFile:
    """One rank's file as ``explain`` reads it: its view (:class:`~msinspect.analysis.dataflow.file_view.
    FileView`: the parsed file, its graph, its nodes by line), its rows (strategies, comm) by line,
    its context."""

    def __init__(self, analysis: Analysis, result):
        self.result = result
        self.analysis = analysis
        self.view = view_of(result.file)
        self.ir = self.view.ir
        self.graph = self.view.graph
        self.by_line = self.view.by_line
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

    def peer(self, rank: int) -> RankFile | None:
        """The file of another rank (a pipeline Receive's sender), read once: the analysis' where
        it read that rank, else the dump's file of it at this file's stage, analysed by itself
        (``explain`` reads the rank it explains alone); None where the dump holds no file of that
        rank or it cannot be read."""
        if rank in self._peers:
            return self._peers[rank]
        analysis = self.analysis
        result = next((r for r in analysis.results if r.rank == rank), None)
        if result is None and rank in {r.rank for r in analysis.dump.ranks}:
            from msinspect.analysis.job.collect import analyse
            from msinspect.errors import MsInspectError

            try:
                analysis = analyse(analysis.dump, self.result.stage, only=[rank], jobs=1,
                                   world=len(analysis.world) if analysis.world else None)
            except MsInspectError:
                analysis = None
            result = next((r for r in analysis.results if r.rank == rank), None) if analysis else None
        found = None
        if result is not None:
            found = RankFile(analysis, result)
            found.remote = True
        self._peers[rank] = found
        return found

    def weight(self, key: str | None) -> dict | None:
        """The row of the weight at graph key ``key`` as the analysis lays it out
        (:meth:`~msinspect.analysis.job.collect.Analysis.params_of`, with its slice:
        :func:`~msinspect.analysis.rank.params.with_slices`): its layout, the slice the rank holds;
        None where ``key`` is no weight of the file or the analysis states none for it."""
        data = self.graph.nodes[key] if key is not None and key in self.graph else {}
        if data.get("node") is not None or not data.get("has_default"):
            return None
        if self._weights is None:
            from msinspect.analysis.rank.params import weights_of, with_slices

            rows = with_slices(weights_of(self.analysis.params_of(self.result)), self.ctx)
            self._weights = {row["param"]: row for row in rows}
        return self._weights.get(data.get("name"))

    def replaced(self, key: str | None) -> Node | None:
        """The operator of the rank's pre-parallel file (its reference, step_parallel_begin) that
        the hash-named operator ``key`` of a replacement graph stands for (``GenerateGraph`` names
        them ``HashName(instance) + index``: ``enable_nd_tp``'s MatMuls), with its strategy; None
        where ``key`` is no such operator or the reference does not hold it."""
        from msinspect.analysis.rank.params import replaced_operator

        node = self.node(key)
        if not stands_in(node) or not self.result.reference:
            return None
        name = str(node.instance_name or "")
        if self._reference is None:
            self._reference = (view_of(self.result.reference).ir, {})
        reference, known = self._reference
        unmarked = replace(node, instance_name=name.removeprefix("forward_op"))
        return replaced_operator(unmarked, self.ir, reference, known)

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
        said = (f"{weight} is laid out by the user's Layout {shape_text(laid['device_matrix'])}, tensor map "
                f"{shape_text(laid['tensor_map'])}, as input {row.get('input_index', '?')} of {row.get('consumer')} "
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
        return self.view.node(key)

    def strategy_of(self, key: str | None):
        node = self.node(key)
        row = self.strategies.get(node.line) if node is not None else None
        return row["in_strategy"] if row else None

    def label(self, key: str | None) -> str | None:
        return self.view.label(key)

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
                moves_cut = is_comm(node) and node.op != "Reshape"
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


def shape_text(shape) -> str:
    """``(8, 64)``, ``(8,)``; ``?`` for None."""
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")" if shape is not None else "?"


def strategy_text(strategy) -> str:
    """``((2, 1), (1, 4))``; ``?`` for None."""
    if strategy is None:
        return "?"
    return "(" + ", ".join(shape_text(s) for s in strategy) + ("," if len(strategy) == 1 else "") + ")"


def node_is(test, node: Node | None) -> bool:
    """``test(node)`` for a node; False for a graph key with no node (a parameter)."""
    return node is not None and test(node)


def dims_text(dims) -> str:
    """``dimension 0``, ``dimensions 0, 1``."""
    return ("dimension " if len(dims) == 1 else "dimensions ") + ", ".join(map(str, dims))
