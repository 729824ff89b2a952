"""Tensor layouts as MindSpore defines them: strategy -> device matrix and tensor maps -> the slice
each rank holds.

- The *device matrix* arranges a stage's devices in a grid (row-major over the stage's ranks).
- A *tensor map* gives, for each tensor dimension, the device-matrix axis that cuts it, counted
  from the right (0 = last axis), or -1 when the dimension is not cut.
- When a strategy uses fewer devices than the stage has, the remaining factor is a *repeated
  calculation* axis, appended on the right of the device matrix (MindSpore's default), so the
  ranks that differ only along it hold the same slice.

MatMul has its own device matrix ``[a, b, c]`` for ``x (a, b) @ w (b, c)``; element-wise operators
use the inputs aligned on the right with the longest strategy as the matrix. Operators with rules
of their own get no layout here.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import prod

from msinspect.model import Shape

MATMUL_OPS = frozenset({"MatMul", "MatMulExt"})
#: Matrix products over batch dimensions: the device matrix is the first input's batch cuts, then
#: rows, the contracted dimension and columns (MindSpore's ``MatMulBase::InferDevMatrixShape``).
BATCH_MATMUL_OPS = frozenset({"BatchMatMul", "BatchMatMulExt"})
#: Operators whose device matrix is their first input's strategy and whose inputs are mapped onto
#: it aligned on the right (the default ``OperatorInfo`` rule; checked against MindSpore's own
#: ``parameter_layout_dict`` on its GatherD and StridedSlice unit tests, tests/ut_ports).
FIRST_INPUT_OPS = frozenset({"GatherD", "StridedSlice"})
#: Operators whose layout follows the element-wise rule (inputs aligned on the right). Others
#: (Gather, OneHot, Conv2D ...) define their own device matrix: no layout is given for them rather
#: than a wrong one.
ELEMENTWISE_OPS = frozenset({
    "Add", "Sub", "Mul", "RealDiv", "Div", "Maximum", "Minimum", "Pow", "BiasAdd", "ReLU", "ReLU6",
    "GeLU", "FastGeLU", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Abs", "Neg", "Cast",
    "Sign", "Erf", "SiLU", "LessEqual", "Less", "Greater", "GreaterEqual", "Equal", "Select", "AddN",
})


@dataclass(frozen=True)
class Layout:
    """A device matrix and the tensor map of each input."""

    device_matrix: tuple[int, ...]
    tensor_maps: tuple[tuple[int, ...], ...]

    def coordinate(self, local_rank: int) -> tuple[int, ...]:
        """The rank's position in the device matrix (row-major)."""
        coord = []
        for size in reversed(self.device_matrix):
            coord.append(local_rank % size)
            local_rank //= size
        return tuple(reversed(coord))

    def slice_of(self, index: int, shape: Shape, local_rank: int) -> tuple[tuple[int, int], ...]:
        """``(start, stop)`` per dimension of input ``index`` held by the rank at ``local_rank``."""
        coord = self.coordinate(local_rank)
        tensor_map = self.tensor_maps[index]
        out = []
        for dim, size in enumerate(shape):
            axis = tensor_map[dim] if dim < len(tensor_map) else -1
            if axis < 0:
                out.append((0, size))
                continue
            position = len(self.device_matrix) - 1 - axis
            parts = self.device_matrix[position]
            step = size // parts
            out.append((coord[position] * step, coord[position] * step + step))
        return tuple(out)


def layout_of(op: str, in_strategy: tuple[tuple[int, ...], ...], stage_devices: int,
              transpose: tuple[bool, bool] = (False, False)) -> Layout | None:
    """The layout MindSpore derives for ``op`` with this strategy on ``stage_devices`` devices;
    None when the strategy does not fit the devices or the operator has a rule of its own."""
    two = in_strategy[:2]
    if len(two) == 2 and ((op in MATMUL_OPS and all(len(s) == 2 for s in two))
                          or (op in BATCH_MATMUL_OPS and min(len(s) for s in two) >= 2)):
        x, w = two
        a, b = (x[-1], x[-2]) if transpose[0] else (x[-2], x[-1])
        c = w[-2] if transpose[1] else w[-1]
        batch = list(x[:-2])
        matrix = batch + [a, b, c]
        top = len(matrix) - 1  # a batch dimension j sits under matrix axis top - j (axes count from the right)
        x_map = [top - j for j in range(len(batch))] + ([1, 2] if transpose[0] else [2, 1])
        skip = len(batch) - (len(w) - 2)  # w's batch dimensions align with x's on the right
        w_map = [top - (j + skip) if w[j] != 1 else -1 for j in range(len(w) - 2)]
        w_map += [0, 1] if transpose[1] else [1, 0]
        maps = [x_map, w_map] + [_right_aligned(len(s), len(matrix)) for s in in_strategy[2:]]
    elif op in FIRST_INPUT_OPS and in_strategy:
        matrix = list(in_strategy[0])
        maps = _aligned_maps(in_strategy, len(matrix))
    elif op in ELEMENTWISE_OPS:
        width = max((len(s) for s in in_strategy), default=0)
        matrix = list(next((s for s in in_strategy if len(s) == width), ()))
        maps = _aligned_maps(in_strategy, width)
    else:
        return None
    used = prod(matrix) if matrix else 1
    if used == 0 or stage_devices % used:
        return None
    repeat = stage_devices // used
    if repeat > 1:
        matrix.append(repeat)
        maps = [[v + 1 if v >= 0 else v for v in m] for m in maps]
    return Layout(tuple(matrix), tuple(tuple(m) for m in maps))


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


def _aligned_maps(in_strategy, width: int) -> list[list[int]]:
    """Each input mapped onto a ``width``-axis device matrix aligned on the right, a dimension it
    does not cut (1) mapped to no axis (-1)."""
    return [[axis if parts != 1 else -1 for axis, parts in zip(_right_aligned(len(s), width), s)]
            for s in in_strategy]


def _right_aligned(rank: int, width: int) -> list[int]:
    # Tensor dim j of a rank-n tensor sits under matrix axis width - n + j, i.e. n - 1 - j from the right.
    return [rank - 1 - j for j in range(rank)]


def divided(shape: Shape, strategy: tuple[int, ...]) -> Shape | None:
    """The per-rank shape a strategy gives; None when a dimension does not divide evenly or the
    ranks differ."""
    if len(shape) != len(strategy):
        return None
    if any(s <= 0 or d % s for d, s in zip(shape, strategy)):
        return None
    return tuple(d // s for d, s in zip(shape, strategy))
