"""An operator's repeated-calculation axis names no group's role (issue 39): MindSpore lays an
operator whose strategy uses fewer devices than its stage on a device matrix with one more axis,
the repeated calculation number, on the right (``repeated_num_in_dev_matrix_right``), which cuts
no dimension of any input: its ranks hold replicas of the operator's inputs, whatever the job
made of them. A group along it is named by the next operator, or by the weights' matrices."""
from __future__ import annotations

from msinspect.analysis.job.cost import axis_names, spanned
from msinspect.mindspore.layouts import Call, layout_of


def test_the_repeated_axis_is_left_unnamed():
    # MatMul x (a, b) @ w (b, c) by ((2, 1), (1, 2)) on 8: the strategy uses 2 x 1 x 2 = 4 devices,
    # so the matrix is [2, 1, 2] and a repeated axis of 8 / 4 = 2 on the right: (2, 1, 2, 2). The
    # first cuts x's rows (the batch): data; the second b (by 1), the third w's columns: tensor;
    # the fourth cuts nothing
    layout = layout_of(Call("MatMul", ((2, 1), (1, 2)), (None, None, False, False)), 8)
    assert layout.device_matrix == (2, 1, 2, 2)
    assert axis_names(layout, "MatMul") == ("data", "tensor", "tensor", None)


def test_a_group_along_the_repeated_axis_is_not_spanned():
    # on (2, 1, 2, 2), rank = 4 i + 2 k + l: ranks {0, 1} differ in l only (the repeated axis),
    # {0, 2} in k only (w's columns), {0, 4} in i only (the batch)
    matrix, names = (2, 1, 2, 2), ("data", "tensor", "tensor", None)
    position = {r: r for r in range(8)}
    assert spanned((0, 1), position, matrix, names) is None
    assert spanned((0, 2), position, matrix, names) == "tensor"
    assert spanned((0, 4), position, matrix, names) == "data"
