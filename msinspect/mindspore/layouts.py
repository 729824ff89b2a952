"""Tensor layouts as MindSpore's parallel pass makes them: one rule per operator family, found
through one registry (:data:`RULES`), read by the weight slices, explain, the gradient check and
the cost's axes alike.

- The *device matrix* arranges a stage's devices in a grid, row-major over the stage's ranks.
- A *tensor map* gives, for each tensor dimension, the device-matrix axis that cuts it, counted
  from the right (0 = last axis), or -1 when the dimension is not cut; an entry may name several
  axes (a ``Layout`` dimension cut by several), the first the outermost.
- When a strategy uses fewer devices than the stage has, the rest is a *repeated calculation*
  axis, appended on the right of the device matrix (``OperatorInfo``'s default; a few operators
  put it on the left), so the ranks that differ only along it hold the same slice.

A rule reads an operator call (:class:`Call`: its strategy, transpose flags, constant operands
and attributes) and gives the device matrix before the repeated axis, each input's tensor map,
the output's (None where the rule does not say), the axes whose cut leaves the output holding
partial sums, and the rule in words. An operator with no rule gets no layout: "cannot tell",
never a guess. Each rule cites the MindSpore source it follows (``frontend/parallel/ops_info``).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import Any, Callable, NamedTuple

Shape = tuple[int, ...]
TensorMap = tuple  # of int, or of tuples of int for a dimension cut over several axes


@dataclass(frozen=True)
class Call:
    """What a layout rule reads of one operator call: small, so that it travels with a rank's rows."""

    op: str
    """The primitive, without 2.10's ``PrimFunc_`` prefix."""
    in_strategy: tuple[Shape, ...]
    """Parts per dimension of each tensor input."""
    operands: tuple = ()
    """The call's operands, constants as values and anything else None: a Transpose's
    permutation, a reduction's axes, a Gather's axis, a MatMul's transpose flags in 2.10."""
    attrs: tuple[tuple[str, Any], ...] = ()
    """The primitive attributes a rule reads (:data:`RULE_ATTRS`), as pairs: older releases keep
    transpose flags and ``keep_dims`` there, and a Gather its manual split."""

    def attr(self, name: str, default: Any = None) -> Any:
        return next((v for k, v in self.attrs if k == name), default)

    @property
    def transpose(self) -> tuple[bool, bool]:
        """A MatMul's ``transpose_a`` / ``transpose_b``: its third and fourth operands in 2.10,
        else its attributes."""
        flags = [v for v in self.operands[2:4] if isinstance(v, bool)]
        if len(flags) == 2:
            return flags[0], flags[1]
        return (bool(self.attr("transpose_a", self.attr("transpose_x1", False))),
                bool(self.attr("transpose_b", self.attr("transpose_x2", False))))


#: The primitive attributes the rules read.
RULE_ATTRS = ("transpose_a", "transpose_b", "transpose_x1", "transpose_x2", "keep_dims", "manual_split",
              "manual_split_with_offset")


#: Reductions whose ``dim`` written ``None`` reduces every dimension (``ops.sum(x)``, ``ops.mean(x)``).
_NONE_IS_EVERY_DIM = frozenset({"SumExt", "MeanExt"})


def call_of(node, in_strategy=()) -> Call:
    """The :class:`Call` of an IR node (:class:`msinspect.model.Node`) with this strategy."""
    attrs = node.primitive_attrs
    op = node.op
    operands = tuple(v if _constant(v) else None for v in node.inputs)
    if op in _NONE_IS_EVERY_DIM and len(node.inputs) > 1 and node.inputs[1] is None:
        operands = (operands[0], (), *operands[2:])  # the IR's literal None: an empty axis tuple
    return Call(op, tuple(_dims(s) for s in in_strategy or ()), operands,
                tuple((k, attrs[k]) for k in RULE_ATTRS if k in attrs))


def _constant(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_constant(v) for v in value)
    return isinstance(value, (int, float, str, bool))


def _dims(value) -> Shape:
    """A strategy entry as a tuple: MindSpore prints a one-dimensional one as ``(1)``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return tuple(value)


class Laid(NamedTuple):
    """What a rule gives, before the repeated-calculation axis."""

    matrix: tuple[int, ...]
    inputs: tuple[TensorMap, ...]
    output: TensorMap | None
    partial: tuple[int, ...]
    """Device-matrix axes (from the left) over which the output holds partial sums."""
    rule: str
    repeat_left: bool = False
    rows: tuple[int, ...] | None = None
    """Uneven parts of the first dimension, in device order (a Gather's ``manual_split``)."""


@dataclass(frozen=True)
class Layout:
    """A device matrix (the repeated-calculation axis included) and the tensor map of each input;
    with the output's map, the partial-sum axes and the rule in words where a rule gave them."""

    device_matrix: tuple[int, ...]
    tensor_maps: tuple[TensorMap, ...]
    output_map: TensorMap | None = None
    partial: tuple[int, ...] = ()
    """Indices (from the left) of the matrix axes over which the output holds partial sums."""
    rule: str = ""
    rows: tuple[int, ...] | None = None
    """The sizes of the first input's uneven parts of its first dimension, in the order of the axis
    cutting it (a Gather's ``manual_split``); None: even parts."""

    def coordinate(self, local_rank: int) -> tuple[int, ...]:
        """The rank's position in the device matrix (row-major)."""
        coord = []
        for size in reversed(self.device_matrix):
            coord.append(local_rank % size)
            local_rank //= size
        return tuple(reversed(coord))

    def parts(self, entry) -> int:
        """How many parts a tensor-map entry cuts its dimension into."""
        return prod(self.device_matrix[len(self.device_matrix) - 1 - a] for a in map_axes(entry))

    def slice_of(self, index: int, shape: Shape, local_rank: int) -> tuple[tuple[int, int], ...]:
        """``(start, stop)`` per dimension of input ``index`` held by the rank at ``local_rank``."""
        return slice_by_map(self.device_matrix, self.tensor_maps[index], shape, local_rank,
                            self.rows if index == 0 else None)


def map_axes(entry) -> tuple[int, ...]:
    """The device-matrix axes (from the right) of a tensor-map entry; () for -1."""
    if isinstance(entry, (tuple, list)):
        return tuple(a for a in entry if a >= 0)
    return (entry,) if entry >= 0 else ()


def slice_by_map(matrix: tuple[int, ...], tensor_map: TensorMap, shape: Shape,
                 local_rank: int, rows: tuple[int, ...] | None = None) -> tuple[tuple[int, int], ...]:
    """``(start, stop)`` per dimension of a tensor of ``shape`` laid out by ``tensor_map`` over
    ``matrix``, held by the rank at ``local_rank`` of its stage (row-major). A dimension cut over
    several axes is cut by the first as the outermost (MindSpore's ``Layout`` order). ``rows``: the
    first dimension's parts where they are uneven, in order (part i starts after parts 0 .. i-1)."""
    coord = Layout(tuple(matrix), ()).coordinate(local_rank)
    out = []
    for dim, size in enumerate(shape):
        axes = map_axes(tensor_map[dim]) if dim < len(tensor_map) else ()
        index, parts = 0, 1
        for axis in axes:
            position = len(matrix) - 1 - axis
            index, parts = index * matrix[position] + coord[position], parts * matrix[position]
        if dim == 0 and rows is not None and len(rows) == parts:
            start = sum(rows[:index])
            out.append((start, start + rows[index]))
            continue
        step = size // parts
        out.append((index * step, index * step + step))
    return tuple(out)


def shard_of(bounds: tuple[tuple[int, int], ...], group_size: int, index: int) -> tuple[tuple[int, int], ...] | None:
    """The part of a layout slice an optimizer-sharded rank stores: MindSpore splits the slice
    along its first dimension into ``group_size`` equal parts and rank ``index`` of the
    optimizer-shard group keeps part ``index`` (``_load_tensor_by_layout``: ``np.split`` of the
    slice, part ``get_rank(group)``). None where the first dimension does not divide."""
    if not bounds or group_size < 1 or not 0 <= index < group_size:
        return None
    (start, stop), rest = bounds[0], bounds[1:]
    if (stop - start) % group_size:
        return None
    step = (stop - start) // group_size
    return ((start + index * step, start + index * step + step), *rest)


# ------------------------------------------------------------------ the registry
Rule = Callable[[Call, int], "Laid | None"]
#: Operator (without ``PrimFunc_``) -> its family's rule.
RULES: dict[str, Rule] = {}


def rule(*ops: str) -> Callable[[Rule], Rule]:
    """Register a rule for these operators."""
    def register(fn: Rule) -> Rule:
        for op in ops:
            RULES[op] = fn
        return fn
    return register


def layout_of(call: Call, devices: int | None) -> Layout | None:
    """The layout MindSpore derives for ``call`` on ``devices`` devices of its stage; None where
    no rule is registered for the operator, the strategy does not suit the rule, or it does not
    fit the devices."""
    found = RULES.get(call.op)
    if found is None or not call.in_strategy or not devices:
        return None
    laid = found(call, devices)
    return on_devices(laid, devices) if laid is not None else None


def on_devices(laid: Laid, devices: int | None) -> Layout | None:
    """A rule's layout on ``devices`` devices of its stage, the repeated-calculation axis added
    where the strategy uses fewer; None where it does not fit them."""
    used = prod(laid.matrix) if laid.matrix else 1
    if not devices:
        return None
    if used <= 0 or devices % used:
        return None
    matrix, inputs, output, partial = list(laid.matrix), laid.inputs, laid.output, laid.partial
    repeat = devices // used
    if repeat > 1 and laid.repeat_left:
        matrix.insert(0, repeat)
        partial = tuple(a + 1 for a in partial)
    elif repeat > 1:
        matrix.append(repeat)
        inputs = tuple(_shifted(m) for m in inputs)
        output = _shifted(output) if output is not None else None
    return Layout(tuple(matrix), tuple(tuple(m) for m in inputs), tuple(output) if output is not None else None,
                  tuple(partial), laid.rule, laid.rows)


def _shifted(tensor_map: TensorMap) -> TensorMap:
    """A map onto a matrix that gained an axis on its right: every named axis one further left."""
    return tuple(tuple(a + 1 if a >= 0 else a for a in v) if isinstance(v, (tuple, list)) else (v + 1 if v >= 0 else v)
                 for v in tensor_map)


def right_aligned(rank: int) -> TensorMap:
    """Dimension j of a rank-n tensor under axis n - 1 - j counted from the right."""
    return tuple(rank - 1 - j for j in range(rank))


def aligned_maps(in_strategy, width: int) -> tuple[TensorMap, ...]:
    """Each input mapped onto a ``width``-axis device matrix aligned on the right, a dimension it
    does not cut (1) mapped to no axis (-1)."""
    return tuple(tuple(axis if parts != 1 else -1 for axis, parts in zip(right_aligned(len(s)), s))
                 for s in in_strategy)


def standard(device_matrix: tuple[int, ...], tensor_map: tuple) -> tuple[tuple[int, ...], tuple]:
    """The layout as MindSpore keeps and reports it (a parameter's ``parameter_layout_dict``
    entry): every device-matrix axis of size 1 removed, a tensor dimension it cut marked -1 and
    the axes numbered again (``TensorLayout::RemoveElementEqualToOneInDeviceArrangement``). An
    entry that names several axes (a ``Layout`` dimension cut by several) is kept as it is."""
    count = len(device_matrix)
    if any(not isinstance(v, int) for v in tensor_map):
        return tuple(device_matrix), tuple(tensor_map)
    original = list(tensor_map)
    out = list(tensor_map)
    kept = []
    for i, size in enumerate(device_matrix):
        if size != 1:
            kept.append(size)
            continue
        reverse = count - 1 - i
        if reverse in original:  # the dimension that axis cut (it cut nothing: size 1)
            out[original.index(reverse)] = -1
        out = [v - 1 if v >= reverse else v for v in out]
    return tuple(kept), tuple(out)


def divided(shape: Shape, strategy: tuple[int, ...]) -> Shape | None:
    """The per-rank shape a strategy gives; None when a dimension does not divide evenly or the
    ranks differ."""
    if len(shape) != len(strategy):
        return None
    if any(s <= 0 or d % s for d, s in zip(shape, strategy)):
        return None
    return tuple(d // s for d, s in zip(shape, strategy))


def ints(value) -> tuple[int, ...] | None:
    """A tuple of ints (an int alone as a one-tuple); None for anything else (booleans, nodes)."""
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return None


# ------------------------------------------------------------------ the rules
MATMUL_OPS = frozenset({"MatMul", "MatMulExt"})
#: Matrix products over batch dimensions (``MatMulBase::InferDevMatrixShape``).
BATCH_MATMUL_OPS = frozenset({"BatchMatMul", "BatchMatMulExt"})


@rule(*MATMUL_OPS, *BATCH_MATMUL_OPS)
def _matmul(call: Call, devices: int) -> Laid | None:
    """``matmul_info.cc``: ``x (a, b) @ w (b, c)`` over ``[batch..., a, b, c]``; w's batch
    dimensions align with x's on the right; a cut ``b`` leaves partial sums."""
    two = call.in_strategy[:2]
    if len(two) != 2 or min(len(s) for s in two) < 2:
        return None
    x, w = two
    ta, tb = call.transpose
    a, b = (x[-1], x[-2]) if ta else (x[-2], x[-1])
    c = w[-2] if tb else w[-1]
    batch = list(x[:-2])
    matrix = batch + [a, b, c]
    top = len(matrix) - 1  # a batch dimension j sits under matrix axis top - j (axes count from the right)
    x_map = [top - j for j in range(len(batch))] + ([1, 2] if ta else [2, 1])
    skip = len(batch) - (len(w) - 2)
    w_map = [top - (j + skip) if w[j] != 1 else -1 for j in range(len(w) - 2)]
    w_map += [0, 1] if tb else [1, 0]
    maps = (tuple(x_map), tuple(w_map)) + tuple(right_aligned(len(s)) for s in call.in_strategy[2:])
    output = tuple(top - j for j in range(len(batch))) + (2, 0)
    text = "MatMul: x (a, b) @ w (b, c) gives (rows, columns) cut (a, c)"
    if b > 1:
        text += f"; the contracted dimension cut {b} ways leaves partial sums"
    return Laid(tuple(matrix), maps, output, (len(batch) + 1,) if b > 1 else (), text)


#: Operators laid out by the element-wise rule: the widest input's strategy is the device matrix,
#: every input aligned on the right, the output cut as that input (``arithmetic_info.cc``,
#: ``activation_info.cc``; LayerNorm and RmsNorm take their first input's strategy, the widest,
#: and map gamma and beta on the right, ``layer_norm_info.cc``, ``rms_norm_info.cc``; MaskedFill is
#: an ``ArithmeticBase`` of its input and mask, its scalar value mapped to nothing; Sort's two
#: outputs, values and indices, both keep its input's map, ``SortInfo::InferTensorMap``).
ELEMENTWISE_OPS = frozenset({
    "Add", "Sub", "Mul", "RealDiv", "Div", "Maximum", "Minimum", "Pow", "BiasAdd", "ReLU", "ReLU6",
    "GeLU", "FastGeLU", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Abs", "Neg", "Cast",
    "Sign", "Erf", "SiLU", "LessEqual", "Less", "Greater", "GreaterEqual", "Equal", "NotEqual", "Select", "AddN",
    "Softmax", "LogSoftmax", "LayerNorm", "RmsNorm", "Dropout", "ZerosLike", "OnesLike", "MaskedFill",
    "Sort",
})

#: One-input operators that, given no strategy by the parallel pass, pass their input's layout on
#: (MindFormers casts each weight and the loss mask without a strategy; a pipeline's validate graph
#: copies a weight with TensorMove).
LAYOUT_KEEPING = frozenset({"Cast", "TensorMove"})


@rule(*ELEMENTWISE_OPS)
def _elementwise(call: Call, devices: int) -> Laid | None:
    width = max((len(s) for s in call.in_strategy), default=0)
    if not width:
        return None
    widest = next(s for s in call.in_strategy if len(s) == width)
    return Laid(tuple(widest), aligned_maps(call.in_strategy, width), right_aligned(width), (),
                f"{call.op}: the output is cut as its input")


#: Operators whose device matrix is their first input's strategy and whose inputs are mapped onto
#: it aligned on the right (the default ``OperatorInfo`` rule; checked against MindSpore's own
#: ``parameter_layout_dict`` on its GatherD, StridedSlice and Reshape unit tests, tests/ut_ports;
#: ``reshape_info.cc`` lays its input out by its strategy so). Their output is not told here (a
#: Reshape's new shape; a StridedSlice's: :func:`_strided_slice`).
@rule("GatherD", "Reshape")
def _first_input(call: Call, devices: int) -> Laid | None:
    first = call.in_strategy[0]
    return Laid(tuple(first), aligned_maps(call.in_strategy, len(first)), None, (), f"{call.op}: its first input's cut")


@rule("StridedSlice")
def _strided_slice(call: Call, devices: int) -> Laid | None:
    """``strided_slice_info.cc``: laid out as :func:`_first_input`; the output keeps the input's
    map, with -1 inserted where ``new_axis_mask`` sets a bit and the dimension dropped where
    ``shrink_axis_mask`` sets one (not where both do); bits past ``begin``'s length do nothing. A
    cut dimension is always fetched whole (``CheckInputStrategy``), so its cut stays. The masks
    are the call's operands 4 to 8 (2.10); where they are not constants, or ``ellipsis_mask`` is
    set (MindSpore refuses it), the output is not told."""
    laid = _first_input(call, devices)
    masks, begin = call.operands[4:9], ints(call.operands[1]) if len(call.operands) > 1 else None
    if len(masks) != 5 or begin is None or not all(type(m) is int for m in masks) or masks[2]:
        return laid
    new_axis, shrink = masks[3], masks[4]
    tensor_map = list(laid.inputs[0])
    for j in range(len(begin)):
        if new_axis >> j & 1:
            tensor_map.insert(j, -1)
    output = tuple(m for k, m in enumerate(tensor_map)
                   if not (k < len(begin) and shrink >> k & 1 and not new_axis >> k & 1))
    return laid._replace(output=output, rule="StridedSlice: the output keeps its input's cut")


@rule("Transpose")
def _transpose(call: Call, devices: int) -> Laid | None:
    """``transpose_info.cc``: the input's strategy is the matrix; output dimension i is input
    dimension perm[i]."""
    first = call.in_strategy[0]
    perm = ints(call.operands[1]) if len(call.operands) > 1 else None
    if perm is None or sorted(perm) != list(range(len(first))):
        return None
    x_map = right_aligned(len(first))
    return Laid(tuple(first), (x_map,), tuple(x_map[p] for p in perm), (),
                f"Transpose {perm}: output dimension i is input dimension perm[i]")


REDUCE_OPS = frozenset({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceAll",
                        "ReduceAny", "SumExt", "MeanExt"})
#: Reductions that sum (a cut reduced axis leaves partial results to add).
SUMMING_REDUCE_OPS = frozenset({"ReduceMean", "ReduceSum", "SumExt", "MeanExt"})


@rule(*REDUCE_OPS)
def _reduce(call: Call, devices: int) -> Laid | None:
    """``reduce_method_info.cc``: the input's strategy is the matrix; a reduced dimension leaves
    the output (or stays as size 1 with ``keep_dims``); an empty axis tuple reduces every
    dimension."""
    first = call.in_strategy[0]
    axis = ints(call.operands[1]) if len(call.operands) > 1 else None
    if axis is None or not first:
        return None
    keep = next((v for v in call.operands[2:3] if isinstance(v, bool)), call.attr("keep_dims", False))
    axis = tuple(a % len(first) for a in axis) if axis else tuple(range(len(first)))
    x_map = right_aligned(len(first))
    output = tuple(-1 if i in axis else x_map[i] for i in range(len(first)) if keep or i not in axis)
    partial = tuple(i for i in axis if first[i] > 1) if call.op in SUMMING_REDUCE_OPS else ()
    text = (f"{call.op} over every dimension: the output is a scalar" + (" kept as size 1" if keep else "")
            if len(set(axis)) == len(first) else
            f"{call.op} over dimension(s) {', '.join(map(str, axis))}: the others keep their cut")
    return Laid(tuple(first), (x_map,), output, partial, text)


@rule("SoftmaxCrossEntropyWithLogits")
def _softmax_cross_entropy(call: Call, devices: int) -> Laid | None:
    """``loss_info.cc``: the logits' strategy is the matrix; the per-row loss keeps the rows' cut."""
    first = call.in_strategy[0]
    if not first:
        return None
    maps = aligned_maps(call.in_strategy, len(first))
    return Laid(tuple(first), maps, (len(first) - 1,), (),
                "SoftmaxCrossEntropyWithLogits: the per-row loss keeps the rows' cut")


@rule("Conv2D")
def _conv2d(call: Call, devices: int) -> Laid | None:
    """``conv2d_info.cc``: x ``(n, i, h, w)`` and the weight ``(o, i, 1, 1)`` over ``(n, i, h, w,
    o)``; the weight is cut by o and i only; a cut in-channel leaves partial sums."""
    if len(call.in_strategy) < 2 or len(call.in_strategy[0]) != 4 or len(call.in_strategy[1]) != 4:
        return None
    x, weight = call.in_strategy[:2]
    return Laid(tuple(x) + (weight[0],), ((4, 3, 2, 1), (0, 3, -1, -1)), (4, 0, 2, 1), (1,) if x[1] > 1 else (),
                "Conv2D: x (n, i, h, w) * weight (o, i) gives (n, o, h, w)")


@rule("Gather", "GatherV2", "SparseGatherV2")
def _gather(call: Call, devices: int) -> Laid | None:
    """``gather_info.cc``, by mode:

    - normal (the gathered axis of the table not cut): the matrix is the indices' strategy then
      the table's, each mapped on the right;
    - batch and axis (axis 0, a 2-D table and 2-D indices cut on their first dimension only,
      together filling the stage, neither alone): matrix ``(indices[0], table[0])``, the table
      ``(0, -1)``, the indices ``(1, -1)``;
    - shard axis (the table cut along the gathered axis): the matrix is the table's strategy, the
      indices whole; the repeated axis goes on the left unless the table's strategy fills the
      stage or uses one device;
    - manual split (``manual_split``): the table's strategy, its rows split as the attribute says,
      in device order, the indices' last dimension cut with them, their others whole
      (``ManualImpl``; ``manual_split_with_offset`` is not told here)."""
    if len(call.in_strategy) < 2:
        return None
    table, indices = call.in_strategy[:2]
    axis = next((v for v in call.operands[2:3] if isinstance(v, int) and not isinstance(v, bool)), None)
    batch_dims = next((v for v in call.operands[3:4] if isinstance(v, int) and not isinstance(v, bool)), 0)
    if axis is None or not table:
        return None
    axis %= len(table)
    if batch_dims:
        return None
    manual = call.attr("manual_split")
    if manual is not None or call.attr("manual_split_with_offset") is not None:
        # ManualImpl: the table's strategy is the matrix (no repeated calculation), rows split as given
        rows = ints(manual) if manual is not None else None
        if axis != 0 or rows is None or len(rows) != table[0] or prod(table) != devices or not indices:
            return None
        table_map = right_aligned(len(table))
        return Laid(tuple(table), (table_map, (-1,) * (len(indices) - 1) + table_map[:1]), None, (),
                    f"Gather: the table's rows split by hand {rows}", rows=rows)
    if table[axis] == 1:
        width = len(indices) + len(table)
        tmp = right_aligned(width)
        out = tmp[len(indices):len(indices) + axis] + tmp[:len(indices)] + tmp[len(indices) + axis + 1:]
        return Laid(tuple(indices) + tuple(table), (tmp[len(indices):], tmp[:len(indices)]), out, (),
                    "Gather: the table's gathered axis is whole; indices then table form the matrix")
    if (axis == 0 and len(table) == 2 and len(indices) == 2 and table[1] == 1 and indices[1] == 1
            and table[0] * indices[0] == devices and devices not in (table[0], indices[0])):
        return Laid((indices[0], table[0]), ((0, -1), (1, -1)), (1, -1, -1), (),
                    "Gather: table rows and indices rows cut together")
    if prod(indices) != 1 or (axis != 0 and prod(table) != devices):
        return None
    left = prod(table) not in (devices, 1)
    return Laid(tuple(table), (right_aligned(len(table)), tuple(-1 for _ in indices)), None, (),
                "Gather: the table cut along the gathered axis", repeat_left=left)


@rule("Flatten")
def _batch_parallel(call: Call, devices: int) -> Laid | None:
    """``batch_parallel_info.cc``: MindSpore has no operator info of Flatten's own; the parallel
    pass marks it ``BatchParallel`` and lays it out by ``BatchParallelInfo``. The device matrix is
    the stage's devices, one axis; an input's first dimension is cut along it where its strategy
    cuts it (by every device: ``CheckStrategy`` takes no other cut), every other dimension whole;
    the output's first dimension is cut along it, the rest whole (Flatten's ``(N, X)``). A whole
    input (strategy all 1) would leave the output's cut claimed, not made: no layout then."""
    first = call.in_strategy[0]
    if not first or first[0] != devices or any(p != 1 for s in call.in_strategy for p in s[1:]) \
            or any(s and s[0] not in (1, devices) for s in call.in_strategy):
        return None
    maps = tuple(tuple(0 if j == 0 and p > 1 else -1 for j, p in enumerate(s)) for s in call.in_strategy)
    return Laid((devices,), maps, (0, -1), (),
                f"{call.op}: batch parallel, the first dimension cut over the stage's {devices} devices")


@rule("_VirtualDataset")
def _virtual_dataset(call: Call, devices: int) -> Laid | None:
    """``virtual_dataset_info.cc``: the layout of the graph's inputs (the dataset strategy, or all
    ones under ``full_batch``). The matrix is the strategy of the input with the most dimensions;
    each input is either whole or cut along one dimension into the same number of parts
    (``shard_num``), which maps to the axis of that part in the matrix; the repeated axis goes on
    the right."""
    widest = max(call.in_strategy, key=len)
    cut = {p for s in call.in_strategy for p in s if p != 1}
    if len(cut) > 1 or not widest or any(sum(p != 1 for p in s) > 1 for s in call.in_strategy):
        return None
    shard = next(iter(cut), None)
    if shard is not None and shard not in widest:
        return None
    axis = len(widest) - 1 - widest.index(shard) if shard is not None else -1
    return Laid(tuple(widest), tuple(tuple(axis if p != 1 else -1 for p in s) for s in call.in_strategy), None, (),
                "_VirtualDataset: each input whole or cut along one dimension into the dataset's parts")
