"""MindSpore's communication vocabulary, in one place: every collective primitive of
``mindspore/ops/operations/comm_ops.py`` and every operator the parallel pass inserts (mirror,
micro-step and mini-step variants, virtual operators), with whether it moves data, the kind of
communication it is, and the ring algorithm its wire bytes follow.

Kinds (why the operator is there):

- ``forward``: an operator's own communication (``forward_op_*``: the partial sums of a
  row-parallel MatMul ...; the operators of an operator's replacement graph; the AllReduce the
  pass adds to a global norm's partial squares, ``PARALLEL_GLOBALNORM_*``);
- ``redistribution``: a collective moving a tensor between two layouts (``redistribution_op_*``);
- ``backward``: communication of the gradient graph that is not gradient aggregation (the
  gradient of a forward AllReduce, ``gradforward_op``; the ReduceScatter that is the gradient of a
  redistribution AllGather, ``grad_redistribution_op_*``);
- ``gradient``: gradient aggregation over the ranks holding the same parameter slice (the mirror
  operators and the AllReduce they become, ``grad_mirror_*``);
- ``optimizer``: optimizer parallel: gathering a parameter's slices before use
  (``parallel_optimizer_allgather*``, ``_MicroStepAllGather``, ``_MiniStepAllGather``) and
  scattering its gradient (``grad_parallel_optimizer_*``);
- ``pipeline``: Send / Receive between pipeline stages;
- ``loss-scale``: the AllReduce a loss-scaled training step sums every device's overflow flag
  with, so that all skip or all take the step (``self.allreduce(flag_sum)`` in MindSpore's
  ``nn/wrap/loss_scale.py``: ``TrainOneStepWithLossScaleCell``, whose ``get_overflow_status``
  MindFormers' train step cells call; told by the node's ``# In file`` trace, see
  :func:`loss_scale_check`);
- ``local``: a redistribution step that computes on the rank's own data (``StridedSlice``,
  ``Reshape``, ``Split``, ``Concat``, ``Transpose``, ``GetNext`` ... named ``redistribution_op_*``):
  nothing on the wire;
- ``virtual``: the parallel pass's bookkeeping operators (``_VirtualDiv`` ...): nothing on the wire;
- ``user``: a collective the user's own code calls: told only where the file shows that the
  parallel pass inserted nothing (a stage before it, or a job it did not run in: see
  :func:`planner_ran`), or where the operator was in the rank's file from before the pass
  (:func:`msinspect.analysis.rank.comm.mark_users`);
- ``unknown``: nothing recorded tells who put it there ("cannot tell").

Who inserted a collective is read off what MindSpore records, never guessed from a name's look:
the primitive (the mirror and optimizer operators exist only for the parallel pass), the instance
names its passes give (``forward_op_*``, ``redistribution_op_*``, ``mirror``, ``parallel_optimizer``
...; an operator's replacement graph names its operators ``HashName(instance) + op + index``:
``GenerateGraph::NewOpInst`` in ``mindspore/ccsrc/frontend/parallel/graph_util/generate_graph.cc``,
e.g. ``7206914136160063563ReduceScatter11`` in the masked lookup of a vocabulary-parallel Gather
named ``vocab_gather``), and the flags the parallel pass sets on the graph.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from msinspect.model import Node
from msinspect.stages import GLOBAL_SHAPE_STAGES

#: The kinds, in the order summaries list them.
KINDS = ("forward", "redistribution", "backward", "gradient", "optimizer", "pipeline", "loss-scale", "local",
         "virtual", "user", "unknown")


@dataclass(frozen=True)
class CommOp:
    """One primitive of the vocabulary."""

    name: str
    moves_data: bool
    """Whether it sends bytes between ranks (in the graph it is in, or in the gradient graph it
    becomes: a mirror operator is the gradient's AllReduce)."""
    kind: str | None
    """Its kind whatever its instance name says (None: decided by the name, see :func:`kind_of`)."""
    algorithm: str | None
    """The ring formula of its wire bytes (see :func:`wire_bytes`); None: none known."""
    doc: str
    like: str | None = None
    """The collective whose rules it follows where an analysis asks what a collective does to a
    tensor (explain's reasons, what sums a gradient, the expert axis, the rank matrix):
    ``AllReduce``, ``AllGather``, ``ReduceScatter`` or ``AlltoAll``; None: rules of its own (a
    mirror, an optimizer gather, Send / Receive, a virtual operator) or none."""


_OPS = [
    # collectives of comm_ops.py
    CommOp("AllReduce", True, None, "allreduce", "reduce over the group, every rank gets the result", like="AllReduce"),
    CommOp("AllGather", True, None, "allgather", "concatenate every rank's tensor along axis 0", like="AllGather"),
    # the V variants send parts of sizes given at run time: their wire bytes cannot be told
    CommOp("AllGatherV", True, None, None, "AllGather of tensors of different sizes", like="AllGather"),
    CommOp("ReduceScatter", True, None, "reducescatter", "reduce over the group, rank i keeps part i",
           like="ReduceScatter"),
    CommOp("ReduceScatterV", True, None, None, "ReduceScatter of parts of different sizes", like="ReduceScatter"),
    CommOp("AlltoAll", True, None, "alltoall", "split along one axis, send part i to rank i", like="AlltoAll"),
    CommOp("AllToAll", True, None, "alltoall", "AlltoAll (older spelling)", like="AlltoAll"),
    CommOp("AlltoAllV", True, None, None, "AlltoAll of parts of different sizes", like="AlltoAll"),
    CommOp("AllToAllv", True, None, None, "AlltoAllV (older spelling)", like="AlltoAll"),
    CommOp("Broadcast", True, None, None, "the root's tensor to every rank of the group"),
    CommOp("Reduce", True, None, None, "reduce over the group to one rank"),
    CommOp("CollectiveScatter", True, None, None, "the root's tensor split over the group"),
    CommOp("CollectiveGather", True, None, None, "every rank's tensor gathered on the root"),
    CommOp("NeighborExchange", True, None, None, "send to and receive from given ranks", like="AlltoAll"),
    CommOp("NeighborExchangeV2", True, None, None, "halo exchange with neighbour ranks", like="AlltoAll"),
    CommOp("BatchISendIRecv", True, None, None, "batched sends and receives"),
    CommOp("Barrier", False, None, None, "synchronises the group, no data"),
    CommOp("Send", True, "pipeline", "p2p", "the tensor to one rank (pipeline stages)"),
    CommOp("Receive", True, "pipeline", "p2p", "a tensor from one rank (pipeline stages)"),
    CommOp("_HostAllGather", True, None, "allgather", "AllGather on the host", like="AllGather"),
    CommOp("_HostReduceScatter", True, None, "reducescatter", "ReduceScatter on the host", like="ReduceScatter"),
    # operators the parallel pass inserts
    CommOp("_MirrorOperator", True, "gradient", "allreduce",
           "identity forward; its gradient is AllReduce over the ranks holding the same slice"),
    CommOp("_MirrorMiniStepOperator", True, "gradient", "allreduce",
           "mirror operator under gradient accumulation (mini-steps)"),
    CommOp("_MirrorMicroStepOperator", True, "gradient", "allreduce",
           "mirror operator under pipeline parallel (micro-steps)"),
    CommOp("MirrorMicroStepOperator", True, "gradient", "allreduce", "_MirrorMicroStepOperator (older name)"),
    CommOp("_MicroStepAllGather", True, "optimizer", "allgather",
           "optimizer parallel under pipeline: gathers a parameter's slices, its gradient is accumulated"
           " over micro-steps and reduce-scattered"),
    CommOp("_MiniStepAllGather", True, "optimizer", "allgather",
           "optimizer parallel under gradient accumulation (mini-steps)"),
    CommOp("_VirtualDiv", False, "virtual", None, "divides the gradient by the device count (no data moves)"),
    CommOp("_VirtualAdd", False, "virtual", None, "bookkeeping add of the parallel pass"),
    CommOp("_VirtualAssignAdd", False, "virtual", None, "accumulates a gradient locally in the backward"),
    CommOp("_VirtualAccuGrad", False, "virtual", None, "local gradient accumulation"),
    CommOp("_VirtualPipelineEnd", False, "virtual", None, "marks a pipeline stage's end"),
]

#: Every operator of the vocabulary, by primitive name.
VOCABULARY: dict[str, CommOp] = {op.name: op for op in _OPS}
#: Primitives that move data between ranks.
MOVING = frozenset(op.name for op in _OPS if op.moves_data)
#: Virtual operators that are listed with communication but move nothing.
VIRTUAL = frozenset(op.name for op in _OPS if op.kind == "virtual")
MIRROR_OPS = frozenset(op.name for op in _OPS if op.kind == "gradient")
#: Collectives that sum over their group: what synchronises a gradient (a mirror's is its bprop).
REDUCING = frozenset(op.name for op in _OPS if op.like in ("AllReduce", "ReduceScatter")) | MIRROR_OPS
#: Collectives that exchange parts with every other rank of their group.
ALL_TO_ALL = frozenset(op.name for op in _OPS if op.like == "AlltoAll")
PIPELINE_OPS = frozenset({"Send", "Receive"})
#: Mirrors under gradient accumulation: their gradient is added into the accumulator, their second
#: input, and the AllReduce moves that accumulator (``grad_comm_ops.py``: ``all_reduce(z)``), in
#: its own shape and type, whatever the forward value's.
ACCUMULATING_MIRRORS = frozenset({"_MirrorMicroStepOperator", "MirrorMicroStepOperator", "_MirrorMiniStepOperator"})
#: The vocabulary's primitives by their name without case: ``alltoall`` is ``AlltoAll`` (and the
#: older spelling ``AllToAll``: one primitive, two spellings, matched alike).
_BY_FOLD: dict[str, list[str]] = {}
for _op in _OPS:
    _BY_FOLD.setdefault(_op.name.casefold(), []).append(_op.name)


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one typo: a letter added, dropped, changed, or two
    neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = sorted((a, b), key=len)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))


def acting_as(op: str) -> str:
    """The collective whose rules ``op`` follows (:attr:`CommOp.like`): ``AllReduce`` for
    ``AllReduce`` and for any primitive added as one; ``op`` itself for the rest."""
    found = VOCABULARY.get(op)
    return (found.like if found is not None else None) or op


def check_kind(kind: str, *, communication: bool) -> None:
    """ValueError, with the close names, when ``kind`` (an operator type a spec names, matched
    without case: ``AllToAll`` is MindSpore's ``AlltoAll``) is not one MindSpore has: with
    ``communication``, any name not in the vocabulary; else (any operator type may be counted) a
    name one typo away from a communication primitive (``AllReduc``)."""
    import difflib

    folded = kind.casefold()
    if folded in _BY_FOLD:
        return
    close = [_BY_FOLD[m][0] for m in difflib.get_close_matches(folded, list(_BY_FOLD), n=3, cutoff=0.6)]
    if communication:
        raise ValueError(f"kind {kind!r} is not a communication operator MindSpore has"
                         + (f"; did you mean {' or '.join(close)}?" if close else
                            f" (they are: {', '.join(op.name for op in _OPS)})"))
    typo = [_BY_FOLD[f][0] for f in _BY_FOLD if len(folded) >= 4 and _one_edit(folded, f)]
    if typo:
        raise ValueError(f"kind {kind!r} is not an operator MindSpore has; did you mean {' or '.join(typo)}?")

#: Instance-name prefix of the operators a tensor redistribution inserts.
REDISTRIBUTION_PREFIX = "redistribution_op_"
#: The same prefix on the gradient of a redistribution operator (written with and without ``_``).
GRAD_REDISTRIBUTION_PREFIXES = ("grad_redistribution_op_", "gradredistribution_op_")
#: The scope MindSpore gives a mirror operator's bprop (``Grad__MirrorOperator``, and the micro-
#: and mini-step mirrors'): the AllReduce there is a weight's gradient sum, whatever its
#: instance name (zoo 19's bias mirror is named ``gradforward_op_*``).
MIRROR_BPROP_SCOPE = "Grad__Mirror"
#: Instance names of optimizer-parallel gathers (and ``grad_`` + it for their gradient).
OPTIMIZER_MARKS = ("parallel_optimizer", "opt_shard")
#: Instance name the parallel pass gives the AllReduce it inserts into a global norm (clip by
#: global norm) to sum its partial squares over a stage and between stages
#: (``PARALLEL_GLOBALNORM_IN_STAGES`` / ``_BETWEEN_STAGES``, ``InsertAllReduceToNodeInput`` in
#: MindSpore's parallel passes).
GLOBAL_NORM_PREFIX = "PARALLEL_GLOBALNORM"
#: MindSpore's loss-scale cells (``mindspore/nn/wrap/loss_scale.py``): every ``self.allreduce(...)``
#: there (``TrainOneStepWithLossScaleCell``'s overflow checks, ``_TrainGradAccuWithLossScaleCell``)
#: sums the devices' overflow flags over the world group (``ops.AllReduce()``, no group given).
LOSS_SCALE_FILE = "/mindspore/nn/wrap/loss_scale.py:"
LOSS_SCALE_CALL = "self.allreduce("


def loss_scale_check(node: Node) -> bool:
    """Whether the node is a loss-scale overflow check's AllReduce: its own ``# In file`` line
    (innermost, :attr:`Node.source_line`) is a ``self.allreduce(`` call in MindSpore's
    ``loss_scale.py``. Read off the trace, not the instance name: the comm-op reuse pass prints
    the loss-scale primitive's name ``allreduce`` on other AllReduces too (zoo 14's embedding)."""
    line = node.source_line or ""
    return node.op == "AllReduce" and LOSS_SCALE_FILE in line and LOSS_SCALE_CALL in line


def is_comm(node: Node) -> bool:
    """Whether the operator is listed with communication: a vocabulary primitive (the
    ``_VirtualDataset`` / ``_VirtualOutput`` plumbing excepted), or a step of a redistribution."""
    return node.op in VOCABULARY or is_redistribution_step(node)


#: Instance names of the steps a dynamic-shape redistribution adds to cut a tensor it cannot
#: slice by static offsets: a Split on each cut dimension and the TupleGetItem of the rank's piece
#: (2.10, before the ``redistribution_op_*`` AllGather they feed).
DYNAMIC_SPLIT_NAME = "redistribution_allsplit"


def is_redistribution_step(node: Node) -> bool:
    """An operator a redistribution inserted (named ``redistribution_op_*`` or its gradient, or a
    dynamic-shape redistribution's ``redistribution_allsplit``)."""
    name = node.instance_name or ""
    return (name.startswith(REDISTRIBUTION_PREFIX) or name.startswith(GRAD_REDISTRIBUTION_PREFIXES)
            or name == DYNAMIC_SPLIT_NAME)


def moves_data(node: Node) -> bool:
    """Whether the operator sends bytes between ranks (a local redistribution step does not)."""
    return node.op in MOVING


#: The name ``GenerateGraph::NewOpInst`` gives an operator of a replacement graph (an operator's
#: own parallel implementation, ``ops_info/*.cc``; ``graph_util/generate_graph.cc``):
#: ``HashName(instance name)``, a decimal ``std::hash`` of the replaced operator's instance name,
#: then the primitive's name (none for some operators in 2.10: zoo 20's Concat
#: ``6225793066312219455``) and the operator's index in the graph. With ``grad`` before it: its
#: gradient. ``enable_nd_tp``'s MatMul writes ``forward_op`` before its collectives (zoo 20:
#: ``forward_op3815130986688897272AllGather1``, the hash of the MatMul it replaced).
_REPLACEMENT_NAME = re.compile(r"^(?:grad)?(?:forward_op)?(\d{10,20}?)([A-Za-z_]*)\d+$")

#: Graph flags the parallel pass sets (``mindspore/ccsrc/frontend/parallel/step_parallel.cc``,
#: ``ops_utils.h``): ``check_set_strategy_valid_once_only`` when it returned without running (the
#: job is not [semi-]auto parallel), ``semi_auto_parallel_run_once_only`` once it ran.
RAN_FLAG = "semi_auto_parallel_run_once_only"
SKIPPED_FLAG = "check_set_strategy_valid_once_only"
#: Stages written before the parallel pass inserts any collective (``pipeline_split`` inserts
#: only Send / Receive, whose kind the vocabulary fixes; ``step_parallel_begin`` is dumped as the
#: pass begins): the stages whose shapes are global but step_parallel_end, and the auto-parallel
#: search's step_auto_parallel_begin.
BEFORE_PLANNER = (GLOBAL_SHAPE_STAGES - {"step_parallel_end"}) | {"step_auto_parallel_begin"}


def planner_ran(stage: str, attrs: dict) -> bool | None:
    """Whether the parallel pass inserted its communication into a file of ``stage`` with header
    ``attrs``: False before it (:data:`BEFORE_PLANNER`) or where it returned without running
    (:data:`SKIPPED_FLAG` without :data:`RAN_FLAG`), True at ``step_parallel_end`` and where
    :data:`RAN_FLAG` is set; None where the file does not tell."""
    if stage in BEFORE_PLANNER:
        return False
    if stage == "step_parallel_end" or RAN_FLAG in attrs:
        return True
    if SKIPPED_FLAG in attrs:
        return False
    return None


def stands_in(node: Node | None) -> bool:
    """Whether ``node`` is of a graph MindSpore put in place of another operator (its instance
    name is :data:`_REPLACEMENT_NAME`'s, the hash a 64-bit number, the primitive's name in it,
    where written, its own):
    such an operator prints no strategy of its own."""
    match = _REPLACEMENT_NAME.match(str(node.instance_name or "")) if node is not None else None
    return match is not None and match.group(2) in ("", node.op) and int(match.group(1)) < 1 << 64


def kind_of(node: Node, backward: bool, planner: bool | None = None) -> str:
    """Why the operator is there (see the module's docstring); ``backward``: whether it sits in
    the gradient graph; ``planner``: whether the parallel pass inserted communication into the
    file (:func:`planner_ran`; None: the file does not tell)."""
    name = (node.instance_name or "").lower()
    entry = VOCABULARY.get(node.op)
    if entry is None or not entry.moves_data:
        if entry is not None and entry.kind:
            return entry.kind
        return "local"  # a redistribution step computing on the rank's own data
    if entry.kind:
        return entry.kind
    if loss_scale_check(node):
        return "loss-scale"
    if name.startswith(GRAD_REDISTRIBUTION_PREFIXES):
        return "backward"
    if name.startswith(REDISTRIBUTION_PREFIX):
        return "redistribution"
    if "mirror" in name:
        return "gradient"
    if any(mark in name for mark in OPTIMIZER_MARKS):
        return "optimizer"
    if name.startswith("forward_op_") or (node.instance_name or "").startswith(GLOBAL_NORM_PREFIX):
        return "forward"
    if backward:
        return "backward"
    if stands_in(node):
        return "forward"
    if planner is False:
        return "user"
    return "unknown"


def group_size(node: Node, ranks: tuple[int, ...] | None) -> int | None:
    """How many ranks take part: the group's rank list, else :func:`stated_size`."""
    return len(ranks) if ranks else stated_size(node)


def wire_bytes(node: Node, tensor_bytes: int | None, n: int | None) -> int | None:
    """Bytes one rank sends on the wire for the operator, by the ring algorithms, from the
    tensor at the rank (``S``, the input) and the group size ``n``:

    - AllReduce (and the mirror operators, whose gradient is one): ``2 (n - 1) / n * S``;
    - AllGather (and the optimizer gathers): ``(n - 1) * S`` (S: the rank's slice, the input);
    - ReduceScatter: ``(n - 1) / n * S`` (S: the whole input);
    - AlltoAll: ``(n - 1) / n * S``;
    - Send / Receive: ``S`` (Receive: the bytes it receives, so a pipeline pair counts both ends);
    - operators that move nothing (local redistribution steps, virtual operators): 0.

    None when the tensor's size or the group size is unknown, or the algorithm is not one of these.
    """
    return wire_bytes_for(node.op, tensor_bytes, n)


def wire_bytes_for(op: str, tensor_bytes: int | None, n: int | None) -> int | None:
    """:func:`wire_bytes` of an operator of type ``op``."""
    entry = VOCABULARY.get(op)
    if entry is None or not entry.moves_data:
        return 0
    if tensor_bytes is None:
        return None
    if entry.algorithm == "p2p":
        return tensor_bytes
    if n is None or n < 1:
        return None
    if entry.algorithm == "allreduce":
        return 2 * (n - 1) * tensor_bytes // n
    if entry.algorithm == "allgather":
        return (n - 1) * tensor_bytes
    if entry.algorithm in ("reducescatter", "alltoall"):
        return (n - 1) * tensor_bytes // n
    return None


# How each operator's output shape follows from its input's, as MindSpore's infer functions define
# them (``mindspore/python/mindspore/ops/operations/comm_ops.py``: ``AlltoAll.infer_shape``,
# ``_MicroStepAllGather`` / ``_MiniStepAllGather`` / ``_HostAllGather.infer_shape``; the C infer
# functions ``nnacl/infer/all_gather_infer.c`` and ``reduce_scatter_infer.c``):
#
# - ``same``: AllReduce, Broadcast, and the mirror and virtual operators (identity forward);
# - ``gather``: the first dimension times the group's rank count (``rank_size``);
# - ``scatter``: the first dimension divided by it (it must divide);
# - ``alltoall``: ``concat_dim`` times ``split_count``, then ``split_dim`` divided by it.
#
# A dynamic dimension (-1) stays as it is in each.
SHAPE_RULES = {
    "AllReduce": "same", "Broadcast": "same", "_MirrorOperator": "same", "_MirrorMiniStepOperator": "same",
    "_MirrorMicroStepOperator": "same", "MirrorMicroStepOperator": "same", "_VirtualDiv": "same",
    "_VirtualAssignAdd": "same",
    "AllGather": "gather", "_HostAllGather": "gather", "_MicroStepAllGather": "gather",
    "_MiniStepAllGather": "gather", "ReduceScatter": "scatter", "_HostReduceScatter": "scatter",
    "AlltoAll": "alltoall", "AllToAll": "alltoall",
}


def int_attr(node: Node, key: str) -> int | None:
    """An integer primitive attribute, or None."""
    value = node.primitive_attrs.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def stated_size(node: Node) -> int | None:
    """The size the operator states of its group: ``rank_size`` (mirrors: ``dev_num``), or None."""
    for key in ("rank_size", "dev_num"):
        value = int_attr(node, key)
        if value is not None and value > 0:
            return value
    return None


def _alltoall_args(node: Node, rank: int) -> tuple[int, int, int] | None:
    count, split, concat = (int_attr(node, k) for k in ("split_count", "split_dim", "concat_dim"))
    if count is None or split is None or concat is None or count < 1:
        return None
    if not (-rank <= split < rank and -rank <= concat < rank):  # they index the shape as a list does
        return None
    return count, split % rank, concat % rank


def _scaled(dim: int, count: int, grow: bool) -> int | None:
    """A dimension times ``count`` (``grow``) or divided by it (None where it does not divide); a
    dynamic dimension (negative) stays as it is, as MindSpore's infer functions keep it."""
    if dim < 0:
        return dim
    if grow:
        return dim * count
    return dim // count if dim % count == 0 else None


def output_of(node: Node, shape: tuple[int, ...] | None, n: int | None) -> tuple[int, ...] | None:
    """The operator's output shape from its input's (``n``: the group's rank count), by MindSpore's
    infer rule (:data:`SHAPE_RULES`); None where the rule does not apply or is unknown."""
    return _by_rule(node, shape, n, forward=True)


def input_of(node: Node, shape: tuple[int, ...] | None, n: int | None) -> tuple[int, ...] | None:
    """The operator's input shape from its output's: :func:`output_of` undone."""
    return _by_rule(node, shape, n, forward=False)


def _by_rule(node: Node, shape: tuple[int, ...] | None, n: int | None, forward: bool) -> tuple[int, ...] | None:
    """The infer rule of :data:`SHAPE_RULES` applied to ``shape``, or undone (``forward`` False):
    what one direction multiplies, the other divides."""
    rule = SHAPE_RULES.get(node.op)
    if shape is None or rule is None:
        return None
    if rule == "same":
        return tuple(shape)
    if rule in ("gather", "scatter"):
        n = int_attr(node, "rank_size") or n
        if not shape or not n or n < 1:
            return None
        first = _scaled(shape[0], n, grow=(rule == "gather") == forward)
        return (first, *shape[1:]) if first is not None else None
    args = _alltoall_args(node, len(shape))
    if args is None:
        return None
    count, split, concat = args
    grown, cut = (concat, split) if forward else (split, concat)
    out = list(shape)
    out[grown] = _scaled(out[grown], count, grow=True)
    out[cut] = _scaled(out[cut], count, grow=False)
    return tuple(out) if out[cut] is not None else None
