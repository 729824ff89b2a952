"""MindSpore's infer rules (each primitive's output shape and type from its inputs') for the
operators of the graphs its parallel pass puts in place of another operator, which step_parallel_end
prints without shapes: ``enable_nd_tp``'s MatMul (``matmul_info.cc``: AllGather, Split, Concat,
MatMul, Transpose, ReduceScatter, Transpose) and a Gather whose table is cut along the gathered
axis (``gather_info.cc``: Sub, ReLU, Minimum, Gather, Equal, Cast, ExpandDims, Mul, AllReduce).
Such a graph runs on the rank's slices, so its inputs at the rank give its outputs at the rank
(:class:`~msinspect.analysis.rank.comm.RankShapes` walks it). A rule gives None where an input is
unknown or the shapes do not fit it: "cannot tell", never a guess.
"""
from __future__ import annotations

from msinspect.mindspore.dtypes import LONG_DTYPES
from msinspect.mindspore.layouts import ints

Shape = tuple[int, ...]

#: Element-wise operators: the output is the inputs broadcast (numpy's rule, from the right).
BROADCASTING = frozenset({"Add", "Sub", "Mul", "RealDiv", "Div", "Maximum", "Minimum", "ReLU", "Cast", "Equal",
                          "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"})
#: Element-wise comparisons: a Bool output.
COMPARING = frozenset({"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual"})
#: One-input element-wise operators (a Cast's second operand is its target type).
_UNARY = frozenset({"ReLU", "Cast"})
#: The tensor inputs each rule reads, by position (a Concat's: its parts; element-wise: see above).
TENSOR_INPUTS = {"Split": (0,), "TupleGetItem": (0,), "Transpose": (0,), "ExpandDims": (0,), "MatMul": (0, 1),
                 "BatchMatMul": (0, 1), "Gather": (0, 1)}
#: Every operator a rule here infers.
INFERRED = frozenset(TENSOR_INPUTS) | BROADCASTING | {"Concat"}


def tensor_inputs(op: str, count: int) -> tuple[int, ...]:
    """The positions of the tensor inputs the rule of ``op`` reads, of a call with ``count`` inputs
    (a Concat's parts: all of them)."""
    if op in BROADCASTING:
        return (0,) if op in _UNARY else (0, 1)
    return TENSOR_INPUTS.get(op, tuple(range(count)))


def output_shape(op: str, operands: tuple, shapes: list[Shape | None]) -> Shape | None:
    """The output shape of ``op`` called with ``operands`` (the IR's inputs, constants as values)
    whose tensor inputs (:func:`tensor_inputs`) have ``shapes``: ``Split(x, axis, n)`` gives n
    parts of ``x`` cut along ``axis`` (the shape of one, which its ``TupleGetItem`` takes),
    ``Concat(parts, axis)`` joins them along ``axis``, ``Transpose(x, perm)`` puts input dimension
    perm[i] at i, ``MatMul(a, b, transpose_a, transpose_b)`` gives (rows of a, columns of b) after
    the batch dimensions broadcast, the contracted dimensions equal (flags the IR does not state as
    constants: None, as MindSpore's infer cannot tell either), ``Gather(table, indices,
    axis, 0)`` the table's dimensions with the gathered axis replaced by the indices', ``ExpandDims(x,
    axis)`` a 1 inserted at ``axis``, an element-wise operator its inputs broadcast. An axis past
    the dimensions (a Split's, Concat's or Gather's, an ExpandDims' past the output's) gives None."""
    if not shapes or any(shape is None for shape in shapes):
        return None
    first = shapes[0]
    if op == "TupleGetItem":
        return first  # of a Split: one of its equal parts
    if op == "Split":
        axis, n = _axis(operands, 1, len(first)), _int(operands, 2)
        if axis is None or n is None or n < 1 or first[axis] % n:
            return None
        return first[:axis] + (first[axis] // n,) + first[axis + 1:]
    if op == "Concat":
        axis = _axis(operands, 1, len(first))
        if axis is None or any(len(shape) != len(first) for shape in shapes):
            return None
        if any(shape[:axis] + shape[axis + 1:] != first[:axis] + first[axis + 1:] for shape in shapes):
            return None
        return first[:axis] + (sum(shape[axis] for shape in shapes),) + first[axis + 1:]
    if op == "Transpose":
        perm = ints(operands[1]) if len(operands) > 1 else None
        return tuple(first[p] for p in perm) if perm is not None and sorted(perm) == list(range(len(first))) else None
    if op in ("MatMul", "BatchMatMul") and len(shapes) == 2:
        flags = [v for v in operands[2:4] if isinstance(v, bool)]
        return product(first, shapes[1], *flags) if len(flags) == 2 else None
    if op == "Gather" and len(shapes) == 2:
        axis, batch_dims = _axis(operands, 2, len(first)), _int(operands, 3) or 0
        if axis is None or batch_dims:
            return None
        return first[:axis] + shapes[1] + first[axis + 1:]
    if op == "ExpandDims":
        axis = _axis(operands, 1, len(first) + 1)
        return first[:axis] + (1,) + first[axis:] if axis is not None else None
    if op in BROADCASTING:
        return broadcast(*shapes)
    return None


def output_dtype(op: str, operands: tuple, dtypes: list[str | None]) -> str | None:
    """The element type of the output: ``Bool`` for a comparison, a Cast's target where the IR
    writes it as a type (else None), the first input's otherwise (a Gather's table's)."""
    if op in COMPARING:
        return "Bool"
    if op == "Cast":
        target = operands[1] if len(operands) > 1 else None
        return LONG_DTYPES.get(target, target) if isinstance(target, str) else None
    return dtypes[0] if dtypes else None


def product(a: Shape, b: Shape, ta: bool, tb: bool) -> Shape | None:
    """The shape of ``a @ b`` (each transposed first where its flag says), batch dimensions
    broadcast; None where the contracted dimensions differ or a batch does not broadcast."""
    if len(a) < 2 or len(b) < 2:
        return None
    rows, inner = (a[-1], a[-2]) if ta else (a[-2], a[-1])
    other, columns = (b[-1], b[-2]) if tb else (b[-2], b[-1])
    batch = broadcast(a[:-2], b[:-2])
    return batch + (rows, columns) if inner == other and batch is not None else None


def broadcast(*shapes: Shape) -> Shape | None:
    """The shapes broadcast from the right (each dimension equal, or 1); None where they do not."""
    out: list[int] = []
    for k in range(1, max(map(len, shapes), default=0) + 1):
        sizes = {shape[-k] for shape in shapes if len(shape) >= k} - {1}
        if len(sizes) > 1:
            return None
        out.insert(0, sizes.pop() if sizes else 1)
    return tuple(out)


def _axis(operands: tuple, position: int, rank: int) -> int | None:
    """The axis the operand at ``position`` states, of ``rank`` dimensions, from 0 (a negative one
    counts from the end); None where it is no constant or outside ``[-rank, rank)``: MindSpore
    refuses such an axis (``CheckValidation`` of Split, ``GatherFuncImpl``'s range check)."""
    axis = _int(operands, position)
    return axis % rank if axis is not None and -rank <= axis < rank else None


def _int(operands: tuple, position: int) -> int | None:
    value = operands[position] if len(operands) > position else None
    return value if type(value) is int else None
