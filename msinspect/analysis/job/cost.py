"""What one training step costs on the wire: each rank's communication bytes per step by parallel
axis and by phase, who sends how much to whom, and the time that takes at link speeds the user
states.

Every byte count is the comm rows' ``wire_bytes`` (:mod:`msinspect.analysis.rank.comm`, the one
definition: ring algorithms, ``docs/comm.md``) times how often the operator runs per step
(``runs``). Nothing here counts a byte a second way.

**How often an operator runs.** MindSpore's pipeline pass unrolls the micro-batches: each copy of
an operator carries its ``micro`` index in ``cnode_primal_attrs`` and appears once per
micro-batch in the file, so each row counts once (``count_basis``: ``unrolled``). An operator in
a subgraph the file calls N times (``@lazy_inline``: MindFormers' body called once per
micro-batch) runs N times per call of its caller (``called``). A subgraph reached only through
control flow (``Switch``, ``Partial``) is counted once: at most once per step (``at most``).

**The parallel axis of a collective** (``axis``; ``axis_from`` says which rule gave it):

- ``pipeline``: ``Send`` / ``Receive``;
- ``optimizer shard``: kind ``optimizer`` (``parallel_optimizer_allgather*`` and the
  ReduceScatter of its gradient, ``_MicroStepAllGather``);
- ``data``: kind ``gradient`` (a mirror operator: the sum of a weight's gradient over the ranks
  holding the same slice, data parallelism whatever devices they sit on);
- ``expert``: an ``AlltoAll`` of a tensor of three or more dimensions (experts, capacity,
  hidden) in a job one of whose weights of three or more dimensions is cut along its first (an
  expert dimension); the gradient of such an ``AlltoAll`` too; and an ``AlltoAll`` /
  ``AlltoAllV`` the user's code calls (or its bprop) among data-parallel replicas: ranks along
  one ``data`` axis of the weights' device matrices, the whole axis or part of it. Data
  parallelism never exchanges activations between replicas; expert parallelism dispatches
  tokens so, over an expert group carved out of the data-parallel ranks (MindFormers' MoE:
  ``FFN._get_ep_group_name``, zoo 15), whatever the shape of the tokens;
- a group whose ranks lie in several pipeline stages (MindSpore splits the devices into stages
  in order: stage s of n ranks is s * n .. s * n + n - 1) at the same places of each:
  ``pipeline`` where it holds one place (the global norm summed between stages), else
  ``pipeline+`` the axes of those places within a stage by the rules below (a world group);
- else the group's ranks against the stage's device matrices (those of the weights' layouts
  covering the stage, most dimensions first, :mod:`msinspect.analysis.rank.params`): in the first
  where the group is a whole sub-grid, the dimensions along which the group's ranks vary
  (the group must be a whole sub-grid), each named ``tensor`` when a weight is cut along it,
  else ``data``; a gradient operator ``grad<name>`` takes the axis of the forward ``<name>``;
- else the group's ranks against the device matrix of the operator with a strategy it takes from
  (its producer) or gives to (its consumers), as MindSpore derives it from that strategy
  (:mod:`msinspect.mindspore.layouts`): an axis is ``data`` where it cuts nothing but the batch
  (the first dimension of the operator's first input, of a Gather's indices), else ``tensor``
  (a partial-sum AllReduce after a row-parallel MatMul runs along the contracted dimension's
  axis: tensor; after a mean over the batch: data). It names the groups no weight's matrix
  holds: a group of part of an axis;
- the weights' device matrices include those of the weights the file read trains but does not
  lay out (a later pass than the parallel pass's: under ``enable_nd_tp`` validate's MatMuls print
  no strategy, zoo 20; MindSpore expands a self-defined-shard operator after the parallel passes,
  zoo 15's experts), as the rank's step_parallel_end beside it states them
  (:attr:`~msinspect.analysis.job.collect.Analysis.weights_at_end`): the parallel pass's output, whose
  layouts later passes keep. Those are tried after the file's own, and a rule that only they
  give says so;
- ``cannot tell`` with the reason where none of these says (no layout, a group that is no
  sub-grid, a group the IR does not name). Sequence parallelism runs on the tensor group and the
  IR does not name it: its collectives count under ``tensor``.

**The phase**: ``backward`` for a mirror operator (kind ``gradient``: the sum of a weight's
gradient, which stands in the forward graph until MindSpore expands the backward, ``grad_mirror``
under ``Gradients/`` after) and in the gradient graph (scope ``Gradients/``), ``optimizer`` in
the optimizer's cell (``optimizer-`` in the scope) and in gradient clipping's global norm (the
AllReduces the parallel pass adds to its partial squares, ``PARALLEL_GLOBALNORM_*``: they sum
gradients' norms after the backward, for the optimizer's step) and in the loss-scale overflow
check (kind ``loss-scale``: the sum of the devices' overflow flags after the backward, which
decides whether the optimizer takes the step), else ``forward``.

**A file without its backward.** MindSpore's parallel pass runs before automatic differentiation
is expanded: a file that still holds a ``J`` node (``step_parallel_begin``, ``step_parallel_end``)
holds the forward and the mirrors but not the gradient graph, whose collectives (the tensor
group's bprops, the pipeline's backward Send / Receive, the gradient ReduceScatters) are in no
line of it. Its rank's backward is then "cannot tell" (:func:`backward_missing`), never absent or
0: :func:`~msinspect.analysis.job.cost_tables.bytes_by` adds a backward row that says so and
leaves the totals it touches "cannot tell"; the rank matrix marks the rank (``note``). So is the
forward of a ``Morph`` the file holds, whose Python function MindSpore expands after the parallel
pass (:func:`forward_missing`): on the ``expert`` axis where it reads expert weights. ``cost``
reads, by default, the pass that holds the whole step (:data:`~msinspect.stages.WHOLE_STEP_STAGES`).

**The rank-to-rank matrix** (:func:`~msinspect.analysis.job.cost_tables.rank_matrix`) is an
assumption, labelled so: ring AllReduce / AllGather / ReduceScatter (each rank sends all its wire
bytes to its successor in the group's rank list, sorted, wrapping round), pairwise AlltoAll (an
equal share to every other rank of the group), Send to its peer; a Receive is its peer's Send
(counted from the receiving rank only when the sender's file was not read).
"""
from __future__ import annotations

import functools
import math
import os
from typing import TYPE_CHECKING, Collection, Iterable

from msinspect.mindspore.naming import stable_name
from msinspect.mindspore.vocabulary import ALL_TO_ALL, GLOBAL_NORM_PREFIX, PIPELINE_OPS
from msinspect.stages import (GLOBAL_SHAPE_STAGES, PARALLEL_STAGES, STRATEGY_STAGE, WHOLE_STEP_STAGES, files_of_stage,
                              later_pass)
from msinspect.mindspore.layouts import layout_of, map_axes
from msinspect.analysis.rank.operators import gradient_pending

if TYPE_CHECKING:
    import pandas as pd

AXES = ("data", "tensor", "expert", "pipeline", "optimizer shard", "sequence", "cannot tell")
PHASES = ("forward", "backward", "optimizer")
#: The assumption behind :func:`~msinspect.analysis.job.cost_tables.rank_matrix`, said wherever the matrix is shown.
MATRIX_ASSUMPTION = ("assumed: ring AllReduce / AllGather / ReduceScatter (all of a rank's wire bytes to its "
                     "successor in the group's sorted rank list), pairwise AlltoAll (an equal share to each "
                     "other rank), Send to its peer")
ESTIMATE_NOTE = "an estimate: bytes / stated link speed, links used one at a time, no latency or overlap"

#: Why a rank's backward cannot be told (:func:`backward_missing`).
NO_BACKWARD = ("the file read ({stage}) holds no gradient graph: MindSpore expands the backward after the "
               "parallel pass (validate and later passes hold it)")

#: The note on a row of :func:`~msinspect.analysis.job.cost_tables.bytes_by` the missing backward leaves "cannot tell".
SHORT = "the backward is not in the file read"

#: Why a rank's forward (and its backward, :func:`why_no_backward`) cannot be told where its file
#: is of a pass before MindSpore's parallel pass in a job that runs one (:func:`why_no_forward`).
NO_PARALLEL_PASS = ("the file read ({stage}) is written before MindSpore's parallel pass inserts the collectives "
                    "(step_parallel_end and later passes hold them)")

#: Why the collectives of a rank's ``Morph`` operators cannot be told (:func:`why_no_forward`): the
#: Python function a Morph runs (its ``fn``; a self-defined-shard operator, MindFormers' MoE
#: experts ``hook_ffn_forward``) is expanded after the parallel pass, so the AlltoAll / AlltoAllV
#: it calls are in no file before validate (zoo 15: rank 0 step_parallel_end line 6523).
NO_MORPH_BODY = ("the file read ({stage}) holds {morphs} unexpanded: MindSpore expands the Python function a Morph "
                 "runs after the parallel pass, so the collectives it calls are in no line of it")


class Untold(str):
    """A reason some bytes cannot be told, as text, that knows the one parallel axis they are on
    (:attr:`axis`); a plain ``str`` reason leaves every axis of its phase untold
    (:func:`untold_axis`)."""

    axis: str = "cannot tell"
    """The axis whose bytes the reason leaves untold; ``cannot tell``: any."""


def untold_axis(why: str) -> str:
    """The axis a reason of :func:`why_no_backward` / :func:`why_no_forward` leaves untold:
    :attr:`Untold.axis`, else ``cannot tell`` (the phase's collectives may be on any)."""
    return getattr(why, "axis", "cannot tell")


#: The note on a row of :func:`~msinspect.analysis.job.cost_tables.bytes_by` the missing forward leaves "cannot tell".
SHORT_FORWARD = "the forward's collectives are not in the file read"

#: What ``cost`` says where the files read hold no communication operator and no pending backward
#: (:func:`no_communication`: a one-device run, zoo 07): computed, not an empty table.
NO_COMMUNICATION = ("no communication: no collective, Send or Receive in the files read, and none of them "
                    "awaits its backward; nothing crosses between ranks")

#: ``count_basis`` of a collective MindSpore's common-subexpression pass merges into an earlier copy
#: (the comm row's ``merged_into``: a file written before that pass): it runs 0 times, in no total.
MERGED = "merged"

COST_COLUMNS = ["rank", "line", "name", "op", "kind", "group_ranks", "wire_bytes", "runs", "count_basis",
                "step_bytes", "bytes_why", "axis", "axis_from", "phase", "micro", "graph", "file"]


# ------------------------------------------------------------------ how often an operator runs
def graph_runs(calls: Iterable[tuple[str, str]]) -> dict[str, tuple[int, str]]:
    """One file's subgraph -> (times it runs per step, basis), from its calls (``(caller's
    subgraph, callee)`` pairs): a callee runs once per run of each call of it."""
    callers: dict[str, list[str]] = {}
    for caller, callee in calls:
        callers.setdefault(callee, []).append(caller)
    memo: dict[str, int] = {}

    def runs(graph: str, seen: frozenset = frozenset()) -> int:
        if graph not in callers or graph in seen:
            return 1
        if graph not in memo:
            memo[graph] = sum(runs(c, seen | {graph}) for c in callers[graph])
        return memo[graph]

    return {callee: (runs(callee), "called") for callee in callers}


# ------------------------------------------------------------------ the device matrix of a stage
def weight_axes(rows: list[dict], devices: int, beside: Collection[str] = ()) -> tuple[tuple, bool, frozenset] | None:
    """(:func:`stage_axes` of the weight rows whose layout covers the ``devices`` of their stage;
    the device matrices among them that only weights read beside the file give: rows whose file is
    in ``beside``, :attr:`~msinspect.analysis.job.collect.Analysis.files_beside`); None where no row
    covers them."""
    full = laid_over(rows, devices)
    if not full:
        return None
    own = {m for m, _, _ in laid_over((r for r in rows if r["file"] not in beside), devices)}
    return (*stage_axes(full), frozenset(m for m, _, _ in full) - own)


def laid_over(rows: Iterable[dict], devices: int) -> list[tuple]:
    """``(device matrix, tensor map, global shape)`` of each weight row whose layout covers all
    the ``devices`` of its stage (rows of :func:`~msinspect.analysis.rank.params.with_slices`)."""
    return [(tuple(r["device_matrix"]), tuple(r["tensor_map"]), r["global_shape"]) for r in rows
            if isinstance(r["device_matrix"], (tuple, list)) and isinstance(r["tensor_map"], (tuple, list))
            and math.prod(r["device_matrix"]) == devices]


def stage_axes(full: list[tuple]) -> tuple[tuple, bool]:
    """(the device matrices of a stage's weights, most dimensions first, each with a name per
    dimension: "tensor" where a weight is cut along it, else "data"; whether a dimension cuts an
    expert weight, its first of three or more) from each weight's ``(device matrix, tensor map,
    global shape)``. The matrices describe the same devices: in a matrix that cuts a weight
    itself, a dimension that runs over the same ranks as a dimension another weight is cut along
    in another matrix is "tensor" too (:func:`_strides`; zoo 21: fc2 cut over all 8 as ``(8,)``
    makes every dimension of fc1's ``(2, 2, 2)`` tensor). Not so in a matrix of whole weights only
    (its ranks are replicas of them), nor from an expert weight, whose experts are carved out of
    the dense layers' data replicas (zoo 15: ``(2, 4)`` experts, the ``(8,)`` of a whole router)."""
    cut, spread, expert = set(), set(), False
    for matrix, tensor_map, shape in full:
        for axis, entry in enumerate(tensor_map):
            for device_axis in map_axes(entry):  # a dimension a Layout cuts by several: each
                dimension = len(matrix) - 1 - device_axis  # entries count from the right
                cut.add((matrix, dimension))
                if expert_weight(shape, axis == 0):
                    expert = True
                else:
                    spread |= _strides(matrix, dimension)
    candidates = []
    for matrix in sorted({m for m, _, _ in full}, key=lambda m: (-len(m), m)):
        cuts_one = any(m == matrix for m, _ in cut)
        names = tuple("tensor" if (matrix, d) in cut or (cuts_one and _strides(matrix, d) & spread) else "data"
                      for d in range(len(matrix)))
        candidates.append((matrix, names))
    return tuple(candidates), expert


def expert_weight(shape, first_cut: bool) -> bool:
    """Whether a weight of global ``shape`` cut along its first dimension (``first_cut``) holds
    experts: three or more dimensions, the first the experts (MindFormers' ``w1`` (experts,
    hidden, ffn)), cut so that each rank holds some of them."""
    return first_cut and shape is not None and len(shape) >= 3


def _strides(matrix: tuple[int, ...], d: int) -> set[int]:
    """The rank strides dimension ``d`` of a device matrix steps by (row-major, the last dimension
    fastest: dimension d of size n steps by s, 2s, ... up to (n-1)s, s the product of the sizes
    right of it): two dimensions of matrices over the same devices run over the same ranks where
    they share one."""
    step = math.prod(matrix[d + 1:])
    return {step * k for k in range(1, matrix[d])}


#: The input whose first dimension is the batch, where it is not the first (a Gather reads its
#: table first, its indices second).
_BATCH_INPUT = {"Gather": 1, "GatherV2": 1, "SparseGatherV2": 1, "EmbeddingLookup": 1}


def operator_calls(strategies: Iterable[dict]) -> dict:
    """Instance name -> the :class:`~msinspect.mindspore.layouts.Call` of the operator of that
    name, from one file's strategy rows; a name several operators print with other strategies
    (later passes rename) is left out: it names no one operator."""
    calls: dict = {}
    for row in strategies:
        call = row.get("call")
        if call is None:
            continue
        calls[row["name"]] = call if calls.get(row["name"], call) == call else False
    return {name: call for name, call in calls.items() if call is not False}


def axis_names(layout, op: str) -> tuple[str | None, ...]:
    """A name per device-matrix axis of an operator's layout (from the left): ``data`` where the
    axis cuts the batch (:data:`_BATCH_INPUT`) and nothing else, ``tensor`` where it cuts another
    dimension, None where it cuts none: a repeated-calculation axis, whose ranks hold replicas of
    every input of the operator whatever role the job gives them (zoo 02's ``loss_ce`` on
    (32, 1, 2): a pair of its axis of 2 holds lm_matmul's vocabulary cut), so it names no
    group's role (:func:`spanned` then asks the next operator, or the weights)."""
    batch = (_BATCH_INPUT.get(op, 0), 0)
    width = len(layout.device_matrix)
    names: list[str | None] = []
    for d in range(width):
        axis = width - 1 - d  # tensor maps count axes from the right
        cuts = {(i, j) for i, tensor_map in enumerate(layout.tensor_maps) for j, entry in enumerate(tensor_map)
                if axis in map_axes(entry)}
        names.append(None if not cuts else "data" if cuts <= {batch} else "tensor")
    return tuple(names)


def by_operators(ranks, names: Iterable, calls: dict, position: dict[int, int], devices: int | None,
                 part: bool = False):
    """(axis, rule) of a group by the layouts of the operators ``names`` (its producer, then its
    consumers) with a strategy (``calls``: :func:`operator_calls`); None where none spans it
    (``part``: along part of one axis, :func:`spanned`)."""
    if not ranks:
        return None
    for name in names:
        call = calls.get(name) if isinstance(name, str) else None
        laid = _operator_axes(call, devices) if call is not None else None
        if laid is None:
            continue
        found = spanned(tuple(ranks), position, *laid, part)
        if found is not None:
            return found, f"group along {'part of one axis of ' if part else ''}{name}'s device matrix {laid[0]}"
    return None


def _no_axis(candidates) -> str:
    """Why a group's axis cannot be told, given the weights' device matrices of its stage."""
    if not candidates:
        return "no weight layout gives the stage's device matrix, nor does an operator next to it"
    shown = ", ".join(str(m) for m, _ in candidates)
    return f"the group is no sub-grid of the weights' device matrices ({shown}), nor of its operators'"


def _operator_axes(call, devices: int | None) -> tuple[tuple[int, ...], tuple[str, ...]] | None:
    """(device matrix, :func:`axis_names`) of ``call``'s layout on ``devices``; None: no rule.
    One per distinct call (a rank repeats its operators' few strategies many times)."""
    try:
        return _cached_axes(call, devices)
    except TypeError:  # an attribute MindSpore printed as a list: not hashable, not cached
        return _cached_axes.__wrapped__(call, devices)


@functools.lru_cache(maxsize=4096)
def _cached_axes(call, devices):
    layout = layout_of(call, devices)
    return None if layout is None else (layout.device_matrix, axis_names(layout, call.op))


def spanned(ranks, position: dict[int, int], matrix: tuple[int, ...], names: tuple[str | None, ...],
            part: bool = False) -> str | None:
    """The axis the group's ranks vary along in a stage's device matrix (row-major, the last
    dimension fastest, as MindSpore numbers devices; ``position``: each rank's place in the
    stage); None where the group is not a whole sub-grid of the stage, or varies along an axis
    ``names`` leaves unnamed (an operator's repeated-calculation axis: :func:`axis_names`).
    ``part``: also a group along part of one ``tensor`` axis, as a redistribution factors an axis
    that cuts a tensor into sub-axes (its ranks differ in that axis only, their coordinates evenly
    spaced, their count dividing the axis); never part of a ``data`` axis, whose replicas a user's
    own collective may cut otherwise (zoo 15's AlltoAllV over 4 of 8 replicas is expert parallel, not data)."""
    found = _varying(ranks, position, matrix)
    if found is None:
        return None
    varying, coords = found
    if any(names[d] is None for d in varying):  # a repeated-calculation axis names no role: axis_names
        return None
    if len(ranks) != math.prod(matrix[d] for d in varying):
        if not (part and len(varying) == 1 and names[varying[0]] == "tensor"
                and _sub_axis(sorted(c[varying[0]] for c in coords), matrix[varying[0]])):
            return None
    return "+".join(dict.fromkeys(names[d] for d in varying))


def _varying(ranks, position: dict[int, int], matrix: tuple[int, ...]) -> tuple[list[int], list[tuple]] | None:
    """(the dimensions of ``matrix`` along which the group's ranks vary, each rank's coordinates:
    row-major over its place in the stage, ``position``); None where a rank is not in the stage,
    none varies or two share a place."""
    if not ranks or any(r not in position for r in ranks):
        return None
    coords = []
    for r in ranks:
        index, coord = position[r], []
        for size in reversed(matrix):
            coord.append(index % size)
            index //= size
        coords.append(tuple(reversed(coord)))
    varying = [d for d in range(len(matrix)) if len({c[d] for c in coords}) > 1]
    if not varying or len(set(coords)) != len(ranks):
        return None
    return varying, coords


def among_replicas(ranks, position: dict[int, int], candidates) -> tuple[int, ...] | None:
    """The first of the weights' device matrices (``candidates``: :func:`stage_axes`) along one
    ``data`` axis of which the group's ranks lie, the whole axis or a part of it (evenly spaced,
    a factor of it: :func:`_sub_axis`): ranks that hold the same slices of those weights, data-
    parallel replicas; None where none."""
    for matrix, names in candidates:
        found = _varying(tuple(ranks), position, matrix)
        if found is None or len(found[0]) != 1 or names[found[0][0]] != "data":
            continue
        (d,), coords = found
        if len(ranks) == matrix[d] or _sub_axis(sorted(c[d] for c in coords), matrix[d]):
            return matrix
    return None


def across_stages(ranks, position: dict[int, int]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(the pipeline stages, the ranks of this stage at the same places) of a group whose ranks lie
    in other stages than this one (``position``: each rank's place in this stage). MindSpore splits
    the devices into stages in order (stage s of n ranks: s * n .. s * n + n - 1), so rank r is at
    place r % n of stage r // n. None where every rank is in this stage, where the stage is no such
    block, or where the group does not hold the same places in every stage it reaches (it is then
    no sub-grid of stages x places)."""
    if all(r in position for r in ranks):
        return None
    stage = sorted(position)
    n = len(stage)
    if not n or stage != list(range(stage[0], stage[0] + n)) or stage[0] % n or len(set(ranks)) != len(ranks):
        return None
    places: dict[int, set[int]] = {}
    for r in ranks:
        places.setdefault(r // n, set()).add(r % n)
    held = {frozenset(p) for p in places.values()}
    if len(held) != 1 or len(places) < 2:
        return None
    return tuple(sorted(places)), tuple(stage[0] + p for p in sorted(held.pop()))


def _sub_axis(values: list[int], size: int) -> bool:
    """Whether coordinates along one axis of ``size`` are one group of a factor of it: evenly
    spaced, as many as divide the axis, within one block of spacing x count."""
    n, step = len(values), values[1] - values[0]
    return (size % n == 0 and all(b - a == step for a, b in zip(values, values[1:]))
            and (size // n) % step == 0 and values[0] // (step * n) == values[-1] // (step * n))


def user_called(row: dict) -> bool:
    """Whether a comm row is a collective the user's code calls (kind ``user``) or its bprop: of
    kind ``backward`` with no instance name (``AlltoAllV-op0``: the parallel pass names every
    operator it makes, ``grad_redistribution_op_*`` ...)."""
    return row["kind"] == "user" or (row["kind"] == "backward" and stable_name(row["name"]) == row["op"])


def phase_of(kind, scope, name=None) -> str:
    """The phase of a communication operator of ``kind`` in ``scope`` named ``name`` (see the
    module)."""
    scope = scope if isinstance(scope, str) else ""
    if kind == "gradient" or scope.startswith("Gradients/"):
        return "backward"
    if any(part.startswith("optimizer-") for part in scope.split("/")[:3]):
        return "optimizer"
    if kind == "loss-scale" or (isinstance(name, str) and name.startswith(GLOBAL_NORM_PREFIX)):
        return "optimizer"
    return "forward"


def why_no_backward(result) -> str | None:
    """Why a rank's backward cannot be told (:data:`NO_BACKWARD`; :data:`NO_PARALLEL_PASS` before
    the parallel pass, :func:`why_no_forward`) where its file (a
    :class:`~msinspect.analysis.rank.result.RankResult`) holds no gradient graph
    (:func:`~msinspect.analysis.rank.operators.gradient_pending`); None where it holds one, or where the network has none. One
    sentence object per stage name, shared by the ranks read at it."""
    if not gradient_pending(result.ops):
        return None
    return _before_parallel_pass(result) or _no_backward(result.stage or "?")


def why_no_forward(result) -> str | None:
    """Why some of a rank's forward collectives cannot be told: all of them where its file is of
    a pass before the parallel pass (:data:`NO_PARALLEL_PASS`), else those of the ``Morph``
    operators it holds, whose functions MindSpore expands later (:data:`NO_MORPH_BODY`; an
    :class:`Untold` on the ``expert`` axis where a Morph reads an expert weight,
    :func:`expert_weight`: zoo 15's experts dispatch their tokens so); None otherwise."""
    return _before_parallel_pass(result) or _unexpanded(result)


def _before_parallel_pass(result) -> str | None:
    """:data:`NO_PARALLEL_PASS` where the rank's file is of a pass before the parallel pass (one
    whose shapes are global, not step_parallel_end) and its folder holds a file of the parallel
    passes, so the job runs one (a one-device run writes none: zoo 07); None otherwise."""
    stage = result.stage or ""
    if stage == STRATEGY_STAGE or stage not in GLOBAL_SHAPE_STAGES or not isinstance(result.file, str):
        return None
    return _before_parallel(stage) if files_of_stage(os.path.dirname(result.file), PARALLEL_STAGES) else None


def _unexpanded(result) -> Untold | None:
    """:data:`NO_MORPH_BODY` of the ``Morph`` operators in the rank's file (its operator rows), on
    the ``expert`` axis where one of them reads a weight that holds experts (its parameter rows);
    None where it holds none, and for a file of the whole step (:data:`~msinspect.stages.WHOLE_STEP_STAGES`:
    MindSpore has expanded every Morph by validate), whose operator rows it does not read."""
    if result.stage in WHOLE_STEP_STAGES:
        return None
    morphs = tuple((row["name"], row["line"]) for row in result.ops if row["op"] == "Morph")
    if not morphs:
        return None
    names = {name for name, _ in morphs}
    experts = any(row["op"] == "Morph" and row["consumer"] in names
                  and expert_weight(row["global_shape"], _first_cut(row)) for row in result.params)
    return _morph_reason(result.stage or "?", morphs, "expert" if experts else "cannot tell")


def _first_cut(row: dict) -> bool:
    """Whether a parameter row's rank holds less of its first dimension than the whole."""
    whole, mine = row.get("global_shape"), row.get("rank_shape")
    return (isinstance(whole, (tuple, list)) and isinstance(mine, (tuple, list)) and len(whole) == len(mine) > 0
            and isinstance(whole[0], int) and isinstance(mine[0], int) and 0 < mine[0] < whole[0])


@functools.lru_cache(maxsize=None)
def _morph_reason(stage: str, morphs: tuple[tuple[str, int], ...], axis: str) -> Untold:
    """:data:`NO_MORPH_BODY` of one stage and its Morphs (name, line), made once, on ``axis``."""
    lines: dict[str, list[int]] = {}
    for name, line in morphs:
        lines.setdefault(name, []).append(line)
    shown = ", ".join(f"Morph {name} (line{'s' if len(at) > 1 else ''} {', '.join(map(str, at))})"
                      for name, at in lines.items())
    why = Untold(NO_MORPH_BODY.format(stage=stage, morphs=shown))
    why.axis = axis
    return why


@functools.lru_cache(maxsize=None)
def _before_parallel(stage: str) -> str:
    """:data:`NO_PARALLEL_PASS` of one stage name, made once."""
    return NO_PARALLEL_PASS.format(stage=stage)


@functools.lru_cache(maxsize=None)
def _no_backward(stage: str) -> str:
    """:data:`NO_BACKWARD` of one stage name, made once (the ranks of a job are read at a few)."""
    return NO_BACKWARD.format(stage=stage)


def backward_missing(analysis) -> dict:
    """Rank -> :func:`why_no_backward`, for each rank read whose file holds no gradient graph."""
    return {r.rank: why for r in analysis.results if (why := why_no_backward(r)) is not None}


def forward_missing(analysis) -> dict:
    """Rank -> :func:`why_no_forward`, for each rank read whose file precedes the parallel pass
    or holds a Morph whose function MindSpore has yet to expand (:func:`untold_axis`: the axis
    left untold)."""
    return {r.rank: why for r in analysis.results if (why := why_no_forward(r)) is not None}


def no_communication(costs: pd.DataFrame, missing: dict) -> bool:
    """Whether the ranks read move no byte between them, told (:data:`NO_COMMUNICATION`): their
    files hold no communication operator (``costs``,
    :func:`~msinspect.analysis.job.cost_tables.comm_costs`) and none misses its backward or its
    forward's collectives (``missing``, :func:`backward_missing` and :func:`forward_missing`), which
    could hold some."""
    return costs.empty and not missing


#: Why a later pass's weights are laid out as the rank's step_parallel_end states them.
LATER = "the file read states no layout of them; later passes keep the parallel pass's"


class AxisRules:
    """The parallel axis of a communication operator and the rule that gave it (see the module),
    asked row by row by the one cost fold
    (:class:`~msinspect.analysis.job.cost_tables.CostFold`) that ``msinspect cost`` and the report
    read."""

    def __init__(self, experts: bool):
        self.experts = experts
        """Whether the job has expert weights (:func:`stage_axes`)."""
        self._by_weights: dict = {}

    def of(self, row: dict, *, candidates, position: dict[int, int], devices: int, forward: dict, calls: dict,
           key=None, ended: Collection = ()) -> tuple[str, str]:
        """(axis, rule) of one comm row: ``candidates`` the weights' device matrices of its stage
        (:func:`stage_axes`), ``position`` each rank's place in the stage, ``devices`` the stage's
        size, ``forward`` the axes of its file's forward operators by name (a gradient operator
        takes its forward operator's; filled here), ``calls`` its file's
        :func:`operator_calls`; ``key``: a key for the group on its stage under which the
        weights' answer is kept (None: not kept); ``ended``: the matrices among ``candidates``
        that only weights read at the step_parallel_end beside the file give (:func:`weight_axes`):
        the rule says so."""
        name = row["name"] or ""
        ranks = row["group_ranks"] if isinstance(row["group_ranks"], (tuple, list)) else None
        shape = row["shape"] if isinstance(row["shape"], (tuple, list)) else None
        twin = name[len("grad"):].lstrip("_") if name.startswith("grad") else None
        if row["op"] in PIPELINE_OPS:
            axis, why = "pipeline", "Send / Receive"
        elif row["kind"] == "optimizer":
            axis, why = "optimizer shard", "kind optimizer (optimizer-parallel gather or its gradient's scatter)"
        elif row["kind"] == "gradient":
            axis, why = "data", "kind gradient (a weight's gradient summed over its replicas)"
        elif row["op"] in ALL_TO_ALL and self.experts and shape is not None and len(shape) >= 3:
            axis, why = "expert", "AlltoAll of a 3-D tensor in a job with expert weights"
        elif twin is not None and twin in forward:
            axis, why = forward[twin]
            why = f"the forward operator's: {why}"
        elif ranks is None:
            axis, why = "cannot tell", "the IR does not say the group's ranks"
        elif row["op"] in ALL_TO_ALL and user_called(row) and (matrix := among_replicas(ranks, position, candidates)):
            whose = "the bprop of the user's" if row["kind"] == "backward" else "the user's"
            axis, why = "expert", (f"{whose} {row['op']} among data-parallel replicas (along a data axis of "
                                   f"device matrix {matrix}): tokens exchanged between replicas, expert "
                                   "parallelism's dispatch")
        else:
            around = (row["producer"], *(row["consumers"] or ()))
            axis, why = self._group(tuple(ranks), around, candidates, position, devices, calls, key, ended)
            if axis == "cannot tell" and not candidates and later_pass(row.get("file")):
                why += "; nor does a step_parallel_end beside the file read"  # asked: Analysis.weights_at_end
        if twin is None and axis != "cannot tell":
            forward.setdefault(name, (axis, why))
        return axis, why

    def _group(self, ranks, around, candidates, position, devices: int, calls: dict, key,
               ended: Collection = ()) -> tuple[str, str]:
        """(axis, rule) of a group by the device matrices of its stage: the weights', then its
        operators' (``around``: its producer, then its consumers), each the whole group, then
        along part of one axis; a group across pipeline stages by its places in each
        (:func:`across_stages`): ``pipeline``, then the axes of those places within a stage."""
        across = across_stages(ranks, position)
        if across is not None:
            stages, places = across
            where = f"the same {'place' if len(places) == 1 else 'places'} of pipeline stages {stages}"
            if len(places) == 1:
                return "pipeline", f"{where} (stage s of n ranks: s * n .. s * n + n - 1)"
            axis, why = self._group(places, around, candidates, position, devices, calls, None, ended)
            return ("cannot tell", f"{where}: {why}") if axis == "cannot tell" else (f"pipeline+{axis}",
                                                                                      f"{where}, within one: {why}")
        axis, why = self._weights(ranks, candidates, position, key, ended)
        if axis == "cannot tell" and calls:
            axis, why = by_operators(ranks, around, calls, position, devices) or (axis, why)
        if axis == "cannot tell":
            axis, why = self._weights(ranks, candidates, position, key and (key, "part"), ended, part=True)
            if axis == "cannot tell" and calls:
                axis, why = by_operators(ranks, around, calls, position, devices, part=True) or (axis, why)
        return axis, why

    def _weights(self, ranks, candidates, position, key, ended: Collection, part: bool = False) -> tuple[str, str]:
        """The axis of a group by the weights' device matrices of its stage (the first it spans;
        ``part``: along part of one axis, :func:`spanned`; ``ended``: as :meth:`of` has it)."""
        if key is not None and key in self._by_weights:
            return self._by_weights[key]
        # the file's own weights' matrices first: one read beside it only where they say nothing
        found = next(((a, m) for m, names in sorted(candidates, key=lambda c: c[0] in ended)
                      if (a := spanned(tuple(ranks), position, m, names, part)) is not None), None)
        told = (found[0], f"group along {'part of one axis of ' if part else ''}device matrix {found[1]}"
                + (f" of the weights at the rank's step_parallel_end ({LATER})" if found[1] in ended else "")) \
            if found is not None else ("cannot tell", _no_axis(candidates))
        if key is not None:
            self._by_weights[key] = told
        return told


def sends(op: str, rank: int, group: list[int], index: int, sent) -> list[tuple[int, int, float]]:
    """``(src, dst, bytes)`` of what ``rank`` (at ``index`` in its ``group``'s sorted ranks)
    sends per step for one operator of ``sent`` bytes, under :data:`MATRIX_ASSUMPTION`; a
    Receive is its peer's Send, counted by its caller."""
    if op == "Send":
        return [(rank, r, sent) for r in group if r != rank]
    if op in ALL_TO_ALL:
        others = [r for r in group if r != rank]
        return [(rank, r, sent / len(others)) for r in others]
    if len(group) > 1:
        return [(rank, group[(index + 1) % len(group)], sent)]
    return []


def matrix_frame(cells: dict, unknown: dict, missing: dict) -> pd.DataFrame:
    """The rank matrix's rows from its cells (``(src, dst) -> bytes``), each sender's unknown
    operators and the ranks whose backward is not in the file read (see
    :func:`~msinspect.analysis.job.cost_tables.rank_matrix`)."""
    import pandas as pd

    note = {rank: SHORT for rank in missing if rank is not None}
    rows = [{"src": s, "dst": d, "bytes": int(round(b)), "unknown": unknown.get(s, 0), "note": note.get(s)}
            for (s, d), b in sorted(cells.items()) if b > 0]
    for rank in sorted((set(unknown) | set(note)) - {s for s, _ in cells}):
        rows.append({"src": rank, "dst": None, "bytes": 0, "unknown": unknown.get(rank, 0), "note": note.get(rank)})
    return pd.DataFrame(rows, columns=["src", "dst", "bytes", "unknown", "note"])


def matrix_table(matrix: pd.DataFrame) -> pd.DataFrame:
    """:func:`~msinspect.analysis.job.cost_tables.rank_matrix` as a square table: senders down,
    receivers across, 0 where nothing."""
    import pandas as pd

    known = matrix.dropna(subset=["dst"]) if not matrix.empty else matrix
    if known.empty:
        return pd.DataFrame()
    ranks = sorted(set(known["src"]) | set(known["dst"].astype(int)))
    return (known.assign(dst=known["dst"].astype(int))
            .pivot_table(index="src", columns="dst", values="bytes", aggfunc="sum", fill_value=0)
            .reindex(index=ranks, columns=ranks, fill_value=0).astype(int))


def matrix_blocks(matrix: pd.DataFrame, most: int) -> pd.DataFrame:
    """:func:`matrix_table` with at most ``most`` rows and columns: past that many ranks, the ranks
    in equal blocks of consecutive ranks (labelled ``0-31``), their bytes summed. A square table
    of every rank grows as the square of the ranks (10,000 ranks: 100 million cells); blocks keep
    the pattern (a tensor-parallel group of neighbours, a data-parallel stride) in a picture."""
    import pandas as pd

    from msinspect.ranks_text import ranks_text

    known = matrix.dropna(subset=["dst"]) if not matrix.empty else matrix
    if known.empty:
        return pd.DataFrame()
    known = known.assign(dst=known["dst"].astype(int))
    ranks = sorted(set(known["src"]) | set(known["dst"]))
    if len(ranks) <= most:
        return matrix_table(matrix)
    size = -(-len(ranks) // most)
    block = {r: i // size for i, r in enumerate(ranks)}
    labels = [ranks_text(ranks[i:i + size]) for i in range(0, len(ranks), size)]
    summed = known.assign(src=known["src"].map(block), dst=known["dst"].map(block)).groupby(["src", "dst"])["bytes"].sum()
    table = (summed.unstack(fill_value=0).reindex(index=range(len(labels)), columns=range(len(labels)), fill_value=0)
             .astype(int))
    table.index, table.columns = labels, labels
    return table


def parse_link(text: str) -> dict[str, float]:
    """``intra=GBPS,inter=GBPS`` -> ``{"intra": ..., "inter": ...}`` (gigabytes per second);
    ValueError on anything else."""
    speeds = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, _, value = part.partition("=")
        if key.strip() not in ("intra", "inter") or not value:
            raise ValueError(f"--link: {part!r} is not intra=GBPS or inter=GBPS")
        speed = float(value)
        if not speed > 0:
            raise ValueError(f"--link: {part!r}: a speed must be above 0")
        speeds[key.strip()] = speed
    if not speeds:
        raise ValueError("--link: give intra=GBPS and/or inter=GBPS")
    return speeds


def link_time(matrix: pd.DataFrame, speeds: dict[str, float], ranks_per_node: int) -> pd.DataFrame:
    """An estimate (:data:`ESTIMATE_NOTE`) of each sending rank's time per step on the wire: its
    bytes to ranks of its own node (``rank // ranks_per_node``) over ``speeds["intra"]`` plus
    those to other nodes over ``speeds["inter"]`` (GB/s, 1e9 bytes); None where a speed needed is
    not stated or some of its bytes cannot be told."""
    import pandas as pd

    columns = ["rank", "intra_bytes", "inter_bytes", "seconds", "estimate"]
    if matrix.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for src, cells in matrix.groupby("src"):
        cells = cells.dropna(subset=["dst"])
        same = cells["dst"].astype(int) // ranks_per_node == src // ranks_per_node
        intra, inter = int(cells.loc[same, "bytes"].sum()), int(cells.loc[~same, "bytes"].sum())
        seconds = 0.0
        for amount, key in ((intra, "intra"), (inter, "inter")):
            if amount:
                seconds = None if seconds is None or key not in speeds else seconds + amount / (speeds[key] * 1e9)
        mine = matrix.loc[matrix["src"] == src]
        unknown = int(mine["unknown"].max() or 0) or mine["note"].map(lambda v: isinstance(v, str)).any()
        rows.append({"rank": src, "intra_bytes": intra, "inter_bytes": inter,
                     "seconds": None if unknown else seconds, "estimate": ESTIMATE_NOTE})
    return pd.DataFrame(rows, columns=columns)
