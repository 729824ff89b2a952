"""What ``explain`` needs of an operator's layout: how its *output* is cut, which device-matrix
axis cuts each output dimension or the dimension it contracts, and the ranks along an axis.

The rules are MindSpore's, one per operator family, in :mod:`msinspect.mindspore.layouts`; this
module reads an operator's output off its layout. An operator with no rule (or whose rule does not
say how its output is cut) gets None: "cannot tell", never a guess.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import product as cartesian
from math import prod

from msinspect.mindspore.layouts import Laid, Layout, call_of, ints, layout_of, map_axes, on_devices, right_aligned
from msinspect.model import Node


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


def _output(layout: Layout | None) -> OutputLayout | None:
    """The output's cut as :class:`OutputLayout` reads it off a layout."""
    if layout is None or layout.output_map is None:
        return None
    width = len(layout.device_matrix)
    factors, axes = [], []
    for entry in layout.output_map:
        named = [width - 1 - a for a in map_axes(entry)]
        parts = layout.parts(entry)
        factors.append(parts)
        axes.append(named[0] if len(named) == 1 and parts > 1 else None)
    return OutputLayout(tuple(factors), layout.device_matrix, tuple(axes), layout.partial, layout.rule)


def output_layout(node: Node, in_strategy, devices: int | None) -> OutputLayout | None:
    """The layout of the operator's (first) output on ``devices`` devices of its stage; None where
    msinspect knows no rule for the operator, or the strategy does not fit the devices."""
    if not in_strategy or any(ints(s) is None and s != () for s in in_strategy):
        return None
    return _output(layout_of(call_of(node, in_strategy), devices))


def input_layout(strategy, devices: int | None) -> OutputLayout | None:
    """The layout of a tensor cut ``strategy`` with the strategy as its device matrix (a
    ``_VirtualDataset``'s input), the repeated-calculation axis on the right."""
    strategy = ints(tuple(strategy))
    if not strategy:
        return None
    tensor_map = right_aligned(len(strategy))
    return _output(on_devices(Laid(strategy, (tensor_map,), tensor_map, (),
                                   "the dataset's strategy: each rank reads its part"), devices))


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


#: Reductions that do not sum, and the AllReduce ``op`` that combines each rank's part of one:
#: the max of the ranks' maxima is the max (``reduce_method_info.cc``, ReduceMaxInfo ...).
COMBINED_BY = {"ReduceMax": "max", "ReduceMin": "min", "ReduceProd": "prod"}


def reduced_parts(node: Node, in_strategy, devices: int | None) -> OutputLayout | None:
    """A reduction of :data:`COMBINED_BY`'s output layout with ``partial`` the matrix axes of its
    cut reduced dimensions, over which each rank holds its part's max (min, product): the axes a
    sum over the same dimensions leaves partial. None for any other operator, or no layout."""
    op = node.op
    if op not in COMBINED_BY or not in_strategy or any(ints(s) is None and s != () for s in in_strategy):
        return None
    found = _output(layout_of(replace(call_of(node, in_strategy), op="ReduceSum"), devices))
    return replace(found, rule=found.rule.replace("ReduceSum", op)) if found is not None else None


def cut_through_reshape(shape, factors, to_shape) -> tuple[int, ...] | None:
    """The cut that a tensor of ``shape`` cut ``factors`` (parts per dimension, each in equal
    contiguous blocks) has once reshaped to ``to_shape`` (row-major, the same elements), where
    that is a cut; None where it is not (a dimension of ``to_shape`` would hold interleaved
    blocks) or the shapes do not agree.

    Row-major, a dimension of size ``n`` cut ``k`` ways is an outer digit of ``k`` values (the
    part) then an inner one of ``n / k`` (the place in the part): the reshape regroups those digits
    into the new dimensions, outer first, and a new dimension is cut by the parts of its digits
    where they come before any whole digit. (128, 512) cut (4, 1) as (2, 64, 512): the 4 parts
    of 128 are 2 for the first dimension and 2 more for the second, (2, 2, 1)."""
    if len(shape) != len(factors) or prod(shape) != prod(to_shape):
        return None
    digits: list[list] = []
    for size, parts in zip(shape, factors):
        if parts < 1 or size % parts:
            return None
        digits += [[parts, True]] if parts > 1 else []
        digits += [[size // parts, False]] if size // parts > 1 else []
    out = []
    for size in to_shape:
        need, cut, whole_before = size, 1, False
        while need > 1:
            if not digits:
                return None
            value, is_cut = digits[0]
            if value <= need and need % value == 0:
                take = value
                digits.pop(0)
            elif value > need and value % need == 0:
                take = need
                digits[0][0] = value // need
            else:
                return None
            if is_cut and whole_before:
                return None
            cut *= take if is_cut else 1
            whole_before = whole_before or not is_cut
            need //= take
        out.append(cut)
    return tuple(out) if not digits else None
