"""What ``explain`` needs of an operator's layout: how its *output* is cut (from its in_strategy by
MindSpore's rule for the operator), which device-matrix axis cuts each output dimension or the
dimension it contracts, and the ranks along an axis.

MindSpore's own rules (``MatMulBase::InferTensorMap``, ``TransposeInfo``, ``ReduceMethod``,
the element-wise ``OperatorInfo`` default): the device matrix is the operator's strategy (a
MatMul's ``[batch..., a, b, c]`` for ``x (a, b) @ w (b, c)``), a repeated-calculation axis of
``devices / product`` appended on the right; a rank's place in it is row-major over its stage's
ranks. An operator of any other kind gets None: "cannot tell", never a guess.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import product as cartesian
from math import prod

from msinspect.analysis.layout import BATCH_MATMUL_OPS, ELEMENTWISE_OPS, MATMUL_OPS
from msinspect.model import Node

#: Operators whose output is cut as their (widest) input is: element-wise and row-wise ones.
SAME_AS_INPUT = ELEMENTWISE_OPS | frozenset({
    "GeLU", "FastGeLU", "Softmax", "LogSoftmax", "LayerNorm", "RmsNorm", "Dropout", "SiLU", "ReLU",
    "Tanh", "Sigmoid", "Square", "Cast", "Neg", "Exp", "Log", "ZerosLike", "OnesLike",
})
#: Reductions over the axes their second operand names.
REDUCE_OPS = frozenset({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceAll",
                        "ReduceAny", "SumExt", "MeanExt"})
#: Reductions that sum (a cut reduced axis leaves partial results to add).
SUMMING_REDUCE_OPS = frozenset({"ReduceMean", "ReduceSum", "SumExt", "MeanExt"})


@dataclass(frozen=True)
class OutputLayout:
    """How an operator's output is cut, and on which device-matrix axes."""

    factors: tuple[int, ...]
    """Parts per output dimension (``(2, 4)``: rows in 2, columns in 4)."""
    matrix: tuple[int, ...]
    """The operator's device matrix, the repeated-calculation axis included when there is one."""
    axes: tuple[int | None, ...]
    """Per output dimension, the index (from the left) of the matrix axis cutting it; None: not cut."""
    partial: tuple[int, ...] = ()
    """Indices of matrix axes over which the output holds partial sums (a contracted or reduced
    dimension cut): what a forward AllReduce adds up."""
    rule: str = ""
    """Which rule gave it, in words."""


def _ints(value) -> tuple[int, ...] | None:
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    return None


def transpose_flags(node: Node) -> tuple[bool, bool]:
    """A MatMul's ``transpose_a`` / ``transpose_b``: its third and fourth operands in 2.10, else its
    attributes."""
    flags = [v for v in node.inputs[2:4] if isinstance(v, bool)]
    if len(flags) == 2:
        return flags[0], flags[1]
    attrs = node.primitive_attrs
    return (bool(attrs.get("transpose_a", attrs.get("transpose_x1", False))),
            bool(attrs.get("transpose_b", attrs.get("transpose_x2", False))))


def _with_repeat(matrix: list[int], devices: int | None) -> tuple[int, ...] | None:
    used = prod(matrix) if matrix else 1
    if devices is None or used <= 0 or devices % used:
        return None
    return tuple(matrix + [devices // used]) if devices // used > 1 else tuple(matrix)


def output_layout(node: Node, in_strategy, devices: int | None) -> OutputLayout | None:
    """The layout of the operator's (first) output on ``devices`` devices of its stage; None where
    msinspect knows no rule for the operator, or the strategy does not fit the devices."""
    if not in_strategy or any(_ints(s) is None and s != () for s in in_strategy):
        return None
    op = node.op.removeprefix("PrimFunc_")
    first = tuple(in_strategy[0])
    if op in MATMUL_OPS | BATCH_MATMUL_OPS and len(in_strategy) >= 2 and min(len(s) for s in in_strategy[:2]) >= 2:
        x, w = tuple(in_strategy[0]), tuple(in_strategy[1])
        ta, tb = transpose_flags(node)
        a, b = (x[-1], x[-2]) if ta else (x[-2], x[-1])
        c = w[-2] if tb else w[-1]
        batch = list(x[:-2])
        matrix = _with_repeat(batch + [a, b, c], devices)
        if matrix is None:
            return None
        nb = len(batch)
        axes = tuple(list(range(nb)) + [nb, nb + 2])
        factors = tuple(batch + [a, c])
        rule = "MatMul: x (a, b) @ w (b, c) gives (rows, columns) cut (a, c)"
        if b > 1:
            rule += f"; the contracted dimension cut {b} ways leaves partial sums"
        return OutputLayout(factors, matrix, _cut(axes, factors), (nb + 1,) if b > 1 else (), rule)
    if op == "Transpose":
        perm = _ints(node.inputs[1]) if len(node.inputs) > 1 else None
        if perm is None or sorted(perm) != list(range(len(first))):
            return None
        matrix = _with_repeat(list(first), devices)
        if matrix is None:
            return None
        factors = tuple(first[p] for p in perm)
        return OutputLayout(factors, matrix, _cut(tuple(perm), factors), (),
                            f"Transpose {perm}: output dimension i is input dimension perm[i]")
    if op in REDUCE_OPS:
        axis = _ints(node.inputs[1]) if len(node.inputs) > 1 else None
        keep = next((v for v in node.inputs[2:3] if isinstance(v, bool)), node.primitive_attrs.get("keep_dims", False))
        if axis is None:
            return None
        axis = tuple(a % len(first) for a in axis) if first else ()
        matrix = _with_repeat(list(first), devices)
        if matrix is None:
            return None
        kept = [i for i in range(len(first)) if keep or i not in axis]
        factors = tuple(1 if i in axis else first[i] for i in kept)
        partial = tuple(i for i in axis if first[i] > 1) if op in SUMMING_REDUCE_OPS else ()
        return OutputLayout(factors, matrix, _cut(tuple(None if i in axis else i for i in kept), factors), partial,
                            f"{op} over dimension(s) {', '.join(map(str, axis))}: the others keep their cut")
    if op == "SoftmaxCrossEntropyWithLogits":
        matrix = _with_repeat(list(first), devices)
        return OutputLayout((first[0],), matrix, _cut((0,), (first[0],)), (),
                            "SoftmaxCrossEntropyWithLogits: the per-row loss keeps the rows' cut") if matrix else None
    if op in SAME_AS_INPUT:
        widest = max((tuple(s) for s in in_strategy if s), key=len, default=())
        matrix = _with_repeat(list(widest), devices)
        if matrix is None or not widest:
            return None
        return OutputLayout(widest, matrix, _cut(tuple(range(len(widest))), widest), (),
                            f"{op}: the output is cut as its input")
    return None


def input_layout(strategy, devices: int | None) -> OutputLayout | None:
    """The layout of a tensor cut ``strategy`` with the strategy as its device matrix (a
    ``_VirtualDataset``'s input), the repeated-calculation axis on the right."""
    strategy = _ints(tuple(strategy))
    matrix = _with_repeat(list(strategy), devices) if strategy else None
    if matrix is None:
        return None
    return OutputLayout(strategy, matrix, _cut(tuple(range(len(strategy))), strategy), (),
                        "the dataset's strategy: each rank reads its part")


def _cut(axes: tuple[int | None, ...], factors: tuple[int, ...]) -> tuple[int | None, ...]:
    """Axes of the dimensions that are cut (parts > 1); None for the others."""
    return tuple(a if f > 1 else None for a, f in zip(axes, factors))


def ranks_along(matrix: tuple[int, ...], axes, local_rank: int, stage_ranks: tuple[int, ...]) -> tuple[int, ...] | None:
    """The ranks that differ from ``local_rank`` (its index in ``stage_ranks``) only along the
    device-matrix ``axes`` (indices from the left): the group a collective over those axes uses."""
    if prod(matrix) != len(stage_ranks) or not 0 <= local_rank < len(stage_ranks) \
            or any(not 0 <= i < len(matrix) for i in axes):
        return None
    strides = [prod(matrix[i + 1:]) for i in range(len(matrix))]
    coord = [(local_rank // strides[i]) % matrix[i] for i in range(len(matrix))]
    base = local_rank - sum(coord[i] * strides[i] for i in axes)
    locals_ = sorted(base + sum(j * strides[i] for i, j in zip(axes, js))
                     for js in cartesian(*(range(matrix[i]) for i in axes)))
    ordered = sorted(stage_ranks)
    return tuple(ordered[i] for i in locals_)
