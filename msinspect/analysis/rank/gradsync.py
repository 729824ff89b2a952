"""Whether each trained weight's gradient is summed over the ranks that hold the same slice of it.

Ranks that hold the same values of a weight (its *replicas*) must apply the same update, else the
copies drift apart from the first step on. MindSpore's parallel pass sums the gradient over the
replicas itself (the mirror operator, whose gradient is an AllReduce; under optimizer parallel
the ReduceScatter of the gradient); a job that cuts its batch by hand, with no parallel mode, has
to do it in its own code (``nn.DistributedGradReducer``), or nothing does.

Per rank (:func:`weight_rows`, where the file is parsed):

- the weights the optimizer step updates: the update primitive (``SGD``, ``ApplyMomentum``,
  ``AdamWeightDecay`` ...: :data:`GRADIENT_INPUT`) whose first input is the weight, and which of
  its inputs is the gradient; or, for an optimizer written in Python (MindFormers' ``AdamW``),
  the ``Assign`` in the optimizer cell's scope that gives a weight its new value, where the file
  holds that optimizer's states of the weight (``adam_m.w``); and the optimizer cell's class
  (``AdamW``), where its scope tells it;
- the collectives that sum a weight's gradient: those MindSpore records for it
  (``mirror_user_id: "w"`` on the gradient's AllReduce or ReduceScatter; a mirror operator or an
  optimizer-parallel gather of the weight or of its accumulated gradient ``accu_grads.w``), else
  a reducing collective on the gradient's way to its update, where the tensor keeps the weight's
  shape all along (``DistributedGradReducer``'s AllReduce).

Across ranks (:func:`gradient_sync`): the ranks holding the same slice, from the weight's layout
(:mod:`msinspect.analysis.rank.params`), or, in a file the parallel pass did not cut (no parallel
mode), every rank read whose file holds the weight with the same shape: each holds it whole.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from msinspect.mindspore import naming, vocabulary
from msinspect.mindspore.layouts import Layout
from msinspect.analysis.dataflow.node_facts import nbytes, scope_of
from msinspect.analysis.rank.context import Stages
from msinspect.analysis.rank.params import weights_of, with_slices
from msinspect.model import IRFile, Node, NodeRef, ParamRef

if TYPE_CHECKING:
    import pandas as pd

#: Optimizer update primitives (``mindspore.ops``) and the position of the gradient among their
#: inputs; the weight is input 0 of each. An update primitive not listed here is found by its
#: ``input_names`` (``gradient``, ``grad``).
GRADIENT_INPUT = {
    "SGD": 1,                          # (parameters, gradient, learning_rate, accum, momentum, stat)
    "ApplyMomentum": 3,                # (variable, accumulation, learning_rate, gradient, momentum)
    "AdamWeightDecay": 8,              # (var, m, v, lr, beta1, beta2, epsilon, decay, gradient)
    "Adam": 9,                         # (var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, gradient)
    "ApplyAdagrad": 3,                 # (var, accum, lr, grad)
    "ApplyAdagradV2": 3,
    "ApplyRMSProp": 4,                 # (var, mean_square, moment, learning_rate, grad, ...)
    "ApplyCenteredRMSProp": 4,         # (var, mean_gradient, mean_square, moment, grad, ...)
    "ApplyGradientDescent": 2,         # (var, alpha, delta)
    "ApplyProximalGradientDescent": 4,  # (var, alpha, l1, l2, delta)
    "ApplyAdaMax": 8,                  # (var, m, v, beta1_power, lr, beta1, beta2, epsilon, grad)
    "ApplyAddSign": 6,                 # (var, m, lr, alpha, sign_decay, beta, grad)
    "ApplyPowerSign": 6,
}
_GRADIENT_NAMES = ("gradient", "grad", "delta")
#: Collectives that sum: what synchronises a gradient.
_REDUCING = vocabulary.REDUCING
#: How far up the gradient's way :func:`_reduced_on_the_way` looks.
_WALK_LIMIT = 64

WEIGHT_COLUMNS = ["rank", "param", "shape", "dtype", "bytes", "update", "update_line", "optimizer", "synced_by",
                  "planner", "file"]


def _gradient_position(node: Node) -> int | None:
    if node.op in GRADIENT_INPUT:
        return GRADIENT_INPUT[node.op]
    names = node.primitive_attrs.get("input_names") if node.primitive_attrs else None
    if node.primitive_attrs.get("side_effect_mem") and isinstance(names, (list, tuple)):
        for position, name in enumerate(names):
            if position and name in _GRADIENT_NAMES:
                return position
    return None


def weight_reads(node: Node) -> tuple:
    """What :func:`weight_rows` reads of an operator: its primitive, which of its inputs are
    nodes or parameters, its output's shape, what says which input is a gradient, and the weight
    MindSpore names on it, the weight its first input's ``Ref`` names, and an update's optimizer
    cell."""
    attrs = node.primitive_attrs
    return (node.op, tuple(v if isinstance(v, (NodeRef, ParamRef)) else None for v in node.inputs),
            node.output_shape, attrs.get("input_names"), attrs.get("side_effect_mem"),
            node.cnode_primal_attrs.get("mirror_user_id") if node.cnode_primal_attrs else None,
            node.input_types[0].ref_key if node.input_types else None, _optimizer_cell(node))


def _optimizer_cell(node: Node) -> str | None:
    """The class of the optimizer cell an update stands in (:func:`_gradient_position`, or an
    ``Assign``: an optimizer written in Python gives each weight its new value so,
    ``F.assign(parameters, ...)`` in MindFormers' ``adamw.py``): ``AdamW`` of
    ``Default/optimizer-AdamW``; None: no update, or in no optimizer's cell."""
    if node.op != "Assign" and _gradient_position(node) is None:
        return None
    return naming.optimizer_cell(scope_of(node))


def verdict_of(synced: tuple, replicas: tuple | None, update: str | None) -> tuple[str, str]:
    """Whether a weight's gradient is summed over its replicas, and why "cannot tell" where it
    cannot be: ``synced``, the collectives found summing it; ``replicas``, the ranks holding the
    same slice (None: no layout known); ``update``, its optimizer update (None: none found)."""
    if synced:
        return "synchronised", ""
    if replicas is None:
        return "cannot tell", "no layout is known for it, so which ranks hold the same slice cannot be told"
    if len(replicas) < 2:
        return "not replicated", ""
    if update is None:
        return "cannot tell", "no optimizer update of it was found in the file"
    return "not synchronised", ""


class _File:
    """A parsed file's nodes by subgraph and number, and its weights by token."""

    def __init__(self, ir: IRFile):
        self.nodes = {(n.graph, n.index): n for n in ir.nodes() if n.index is not None}
        self.weights = {p.name: p for p in ir.params if p.has_default}
        self.by_short_name = {p.short_name: token for token, p in self.weights.items()}

    def weight_of(self, node: Node, value) -> str | None:
        """The token of the file's weight that ``value`` (an input of ``node``) is, directly or
        through a ``Load``."""
        if isinstance(value, NodeRef):
            loaded = self.nodes.get((node.graph, value.index))
            if loaded is None or loaded.op != "Load" or not loaded.inputs:
                return None
            value = loaded.inputs[0]
        if isinstance(value, ParamRef) and value.name in self.weights:
            return value.name
        return None

    def weight_at(self, node: Node, position: int) -> str | None:
        """The token of the file's weight that input ``position`` of ``node`` is: directly or through
        a ``Load`` (:meth:`weight_of`), or a subgraph's parameter that a call binds to it, whose
        ``Ref`` names it (``ref_key=<weight>``: MindSpore's key of the Parameter, kept through
        the calls: ``%para221_w`` of MindFormers' training step)."""
        found = self.weight_of(node, node.inputs[position])
        if found is None and position < len(node.input_types):
            found = self.by_short_name.get(node.input_types[position].ref_key)
        return found

    def producer(self, node: Node, value) -> Node | None:
        return self.nodes.get((node.graph, value.index)) if isinstance(value, NodeRef) else None


def _owner(node: Node | None, row: dict, shorts: dict[str, str]) -> str | None:
    """The weight (short name) whose gradient the collective of comm row ``row`` sums, by what
    MindSpore records; None where it records none."""
    if node is None or row["kind"] not in ("gradient", "optimizer"):
        return None
    named = node.cnode_primal_attrs.get("mirror_user_id") if node.cnode_primal_attrs else None
    if isinstance(named, str) and named in shorts:
        return named
    source = row.get("producer")
    if isinstance(source, str):
        for prefix in naming.ACCUMULATED:
            if source.startswith(prefix):
                source = source[len(prefix):]
        if source in shorts:
            return source
    return None


def _reduced_on_the_way(file: _File, update: Node, position: int, shape) -> list[int]:
    """Lines of the summing collectives on the gradient's way to ``update`` (its input
    ``position``), through the operators whose output keeps the weight's ``shape`` (past them the
    values are another tensor's: the activations the gradient was computed from)."""
    found, seen = [], set()
    todo = [file.producer(update, update.inputs[position])] if position < len(update.inputs) else []
    while todo and len(seen) < _WALK_LIMIT:
        node = todo.pop()
        if node is None or (node.graph, node.index) in seen:
            continue
        seen.add((node.graph, node.index))
        plumbing = node.op in ("Load", "Depend", "TupleGetItem")
        if not plumbing and node.output_shape != shape:
            continue
        if node.op in _REDUCING:
            found.append(node.line)
            continue
        inputs = node.inputs[:1] if plumbing else node.inputs
        todo += [file.producer(node, v) for v in inputs if isinstance(v, NodeRef)]
    return sorted(found)


def weight_rows(ir: IRFile, rank: int | None, comm: list[dict]) -> list[dict]:
    """One row per weight (parameter with a value) of ``ir``: its shape and bytes at the rank,
    the optimizer's update of it and its line (its primitive; an ``Assign`` in the optimizer cell's
    scope where the file holds that optimizer's states of the weight; None: the file shows none),
    the optimizer cell's class (:func:`_optimizer_cell`), and the lines of the collectives that sum
    its gradient (``synced_by``; ``comm``: the file's comm rows); ``planner``:
    whether the parallel pass ran (:func:`~msinspect.mindspore.vocabulary.planner_ran`)."""
    file = _File(ir)
    shorts = file.by_short_name
    updates: dict[str, tuple[Node, int]] = {}
    assigned: dict[str, tuple[Node, int]] = {}
    for node in file.nodes.values():
        position = _gradient_position(node)
        if position is None and node.op == "Assign" and _optimizer_cell(node) is not None:
            updates_of, position = assigned, 1  # Assign(weight, new value, U)
        else:
            updates_of = updates
        if position is None or not node.inputs:
            continue
        token = file.weight_at(node, 0)
        if token is not None:
            updates_of.setdefault(token, (node, position))
    with_states = naming.with_states({p.short_name: p.abstract.shape if p.abstract is not None else None
                                      for p in file.weights.values()}) if assigned else set()
    for token, found in assigned.items():  # the weights whose states the file holds, not the states
        if file.weights[token].short_name in with_states:
            updates.setdefault(token, found)
    by_line = {n.line: n for n in file.nodes.values()}
    synced: dict[str, list[int]] = {}
    for row in comm:
        if row.get("moves_data"):
            owner = _owner(by_line.get(row["line"]), row, shorts)
            if owner is not None:
                synced.setdefault(shorts[owner], []).append(row["line"])
    planner = vocabulary.planner_ran(ir.stage, ir.attrs)
    rows = []
    for token, param in file.weights.items():
        abstract = param.abstract
        shape = abstract.shape if abstract is not None else None
        dtype = abstract.dtype if abstract is not None else None
        update, position = updates.get(token, (None, None))
        lines = synced.get(token) or (_reduced_on_the_way(file, update, position, shape)
                                      if update is not None and shape is not None else [])
        rows.append({"rank": rank, "param": param.short_name, "shape": shape, "dtype": dtype,
                     "bytes": nbytes(shape, dtype),
                     "update": update.op if update is not None else None,
                     "update_line": update.line if update is not None else None,
                     "optimizer": _optimizer_cell(update) if update is not None else None, "synced_by": tuple(lines),
                     "planner": planner, "file": ir.path})
    return rows


def updated_weights(held: list[dict]) -> set[str]:
    """The weights a rank's file updates or sums the gradient of, from its :func:`weight_rows`
    (``result.held``): not its optimizer's states, whose names are their weight's with a prefix."""
    return {row["param"] for row in held if row["update"] or row["synced_by"]}


def accumulators(held: list[dict]) -> set[str]:
    """The gradient accumulators among a rank's weights (:data:`~msinspect.mindspore.naming.ACCUMULATED`
    before the name of a weight it updates: ``accu_grads.layer2.bias``, a pipeline's or gradient
    accumulation's buffer, laid out as MindSpore lays out its weight's gradient)."""
    updated = updated_weights(held)
    return {row["param"] for row in held
            if any(row["param"].startswith(p) and row["param"][len(p):] in updated for p in naming.ACCUMULATED)}


def trained_weights(held: list[dict]) -> set[str]:
    """The weights a rank trains (:func:`updated_weights`); where it trains none (a forward graph),
    every weight it holds, whether or not an operator of the file reads it."""
    return updated_weights(held) or {row["param"] for row in held}


# ------------------------------------------------------------------ across ranks
class SliceHolders:
    """Which ranks of its stage hold the same slice of a weight as a rank, from the weight's
    layout: per layout, shape and stage, each slice and the ranks holding it, worked out once (a
    weight's slice asked of every rank of the stage for every rank made this the square of the
    ranks). The stage is told by its object: give the contexts of
    :class:`~msinspect.analysis.rank.context.Stages`, one object per stage."""

    def __init__(self):
        self._holding: dict[tuple, tuple[dict[tuple, tuple[int, ...]], tuple]] = {}

    def of(self, slices: list[dict], ctx) -> dict[str, tuple[int, ...]]:
        """Weight -> the ranks holding its slice at ``ctx``'s rank, for each of the rank's weight
        rows (``slices``: :func:`~msinspect.analysis.rank.params.with_slices`) whose layout covers
        its stage; a weight without one is left out (its replicas are not told by its layout)."""
        out: dict[str, tuple[int, ...]] = {}
        # a pipeline whose stages cannot be told: the world is not the weight's stage
        stage = ctx.stage_ranks_or_world
        if not stage or ctx.local_rank is None:
            return out
        for row in slices:
            matrix, tensor_map, shape = row["device_matrix"], row["tensor_map"], row["global_shape"]
            if matrix is None or tensor_map is None or shape is None or math.prod(matrix) != len(stage):
                continue
            layout = Layout(tuple(matrix), (tuple(tensor_map),))
            key = (layout, tuple(shape), id(stage))
            if key not in self._holding:  # the stage kept with it: its id stays its own
                by_slice: dict[tuple, list[int]] = {}
                for i, r in enumerate(stage):
                    by_slice.setdefault(layout.slice_of(0, tuple(shape), i), []).append(r)
                self._holding[key] = ({piece: tuple(ranks) for piece, ranks in by_slice.items()}, stage)
            out[row["param"]] = self._holding[key][0][layout.slice_of(0, tuple(shape), ctx.local_rank)]
        return out


SYNC_COLUMNS = ["rank", "param", "shape", "bytes", "update", "update_line", "file", "replicas", "replicas_from",
                "synced_by", "verdict", "why"]


def gradient_sync(analysis) -> pd.DataFrame:
    """One row per trained weight per rank read: its replicas (the ranks holding the same slice,
    None: cannot tell) and how they were told (``layout``, or ``whole``: no parallel pass cut it),
    the collectives summing its gradient (``synced_by``: ``(op, kind, ranks, line)``), and the
    verdict: ``synchronised``, ``not replicated``, ``not synchronised`` (replicas, an update, and no
    collective summing the gradient: the copies drift apart), or ``cannot tell`` (with ``why``)."""
    import pandas as pd

    rows = [row for result in analysis.results for row in result.held if row["update"] or row["synced_by"]]
    if not rows:
        return pd.DataFrame(columns=SYNC_COLUMNS)
    stages, holders = Stages(), SliceHolders()
    by_layout = {}
    for result in analysis.results:
        ctx = stages.context(analysis, result.rank)
        found = holders.of(with_slices(weights_of(analysis.params_of(result)), ctx), ctx)
        by_layout.update(((result.rank, param), replicas) for param, replicas in found.items())
    comm = analysis.comm()
    where = {(f, line): (op, kind, ranks) for f, line, op, kind, ranks in
             zip(comm["file"], comm["line"], comm["op"], comm["kind"], comm["group_ranks"])} if len(comm) else {}
    holders: dict[tuple[str, tuple], list[int]] = {}
    for row in rows:
        if row["planner"] is False and row["rank"] is not None:
            holders.setdefault((row["param"], row["shape"]), []).append(row["rank"])
    out = []
    for row in rows:
        key = (row["rank"], row["param"])
        if key in by_layout:
            replicas, source = by_layout[key], "layout"
        elif row["planner"] is False and row["rank"] is not None:
            replicas, source = tuple(sorted(holders[(row["param"], row["shape"])])), "whole"
        else:
            replicas, source = None, None
        synced = tuple((*where.get((row["file"], line), (None, None, None)), line) for line in row["synced_by"])
        verdict, why = verdict_of(synced, replicas, row["update"])
        out.append({**{c: row[c] for c in ("rank", "param", "shape", "bytes", "update", "update_line", "file")},
                    "replicas": replicas, "replicas_from": source, "synced_by": synced, "verdict": verdict,
                    "why": why})
    return pd.DataFrame(out, columns=SYNC_COLUMNS)
