"""Device matrices, tensor maps and slices, worked out by hand from MindSpore's definitions."""
from __future__ import annotations

import pytest

from msinspect.analysis.layout import divided, layout_of, standard


def test_matmul_device_matrix_is_a_b_c_with_maps_counted_from_the_right():
    layout = layout_of("MatMul", ((2, 4), (4, 1)), 8)
    assert layout.device_matrix == (2, 4, 1)
    assert layout.tensor_maps[:2] == ((2, 1), (1, 0))


def test_transposed_weight_swaps_its_map():
    layout = layout_of("MatMul", ((1, 1), (4, 1)), 4, transpose=(False, True))
    # w is stored (out, in) = (c, b): its first dimension is cut by c, the last matrix axis.
    assert layout.device_matrix == (1, 1, 4)
    assert layout.tensor_maps[1] == (0, 1)
    assert layout.slice_of(1, (512, 784), 2) == ((256, 384), (0, 784))


def test_repeated_calculation_axis_is_appended_on_the_right():
    layout = layout_of("ReLU", ((2, 1),), 8)
    assert layout.device_matrix == (2, 1, 4)
    assert layout.tensor_maps == ((2, -1),)
    # ranks 0-3 share batch slice 0, ranks 4-7 slice 1
    assert [layout.slice_of(0, (16, 16), r)[0] for r in range(8)] == [(0, 8)] * 4 + [(8, 16)] * 4


def test_rank_coordinates_are_row_major():
    layout = layout_of("MatMul", ((2, 4), (4, 1)), 8)
    assert [layout.coordinate(r) for r in (0, 1, 4, 5, 7)] == [(0, 0, 0), (0, 1, 0), (1, 0, 0), (1, 1, 0), (1, 3, 0)]
    assert layout.slice_of(1, (32, 16), 5) == ((8, 16), (0, 16))


def test_strategy_that_does_not_fit_the_devices_has_no_layout():
    assert layout_of("MatMul", ((4, 4), (4, 1)), 8) is None


@pytest.mark.parametrize("shape,strategy,expected", [
    ((16, 32), (2, 4), (8, 8)),
    ((16, 16), (2, 1), (8, 16)),
    ((15, 16), (2, 1), None),
    ((16,), (2, 1), None),
])
def test_divided(shape, strategy, expected):
    assert divided(shape, strategy) == expected


def test_operators_with_their_own_device_matrix_get_no_layout():
    assert layout_of("Gather", ((8, 1), (1, 1)), 8) is None
    assert layout_of("OneHot", ((8, 1), (), ()), 8) is None


def test_batch_matmul_and_first_input_operators_as_mindspore_lays_them_out():
    """MindSpore 2.10's own parameter_layout_dict on its unit tests (printed by the ports' nets,
    tests/ut_ports): BatchMatMul ((2, 2, 2), (2, 2, 2)) on 16 devices lays w out as [2, 2, 2, 2] /
    [3, 1, 0]; ((1, 1, 1), (1, 1, 16)) as [16] / [-1, -1, 0]; GatherD (2, 8, 1) as [2, 8] /
    [1, 0, -1]; StridedSlice (1, 4, 2) on 8 as [4, 2] / [-1, 1, 0]."""
    def param(op, strategy, devices, index):
        layout = layout_of(op, strategy, devices)
        return standard(layout.device_matrix, layout.tensor_maps[index])

    assert param("BatchMatMul", ((2, 2, 2), (2, 2, 2)), 16, 1) == ((2, 2, 2, 2), (3, 1, 0))
    assert param("BatchMatMul", ((1, 1, 1), (1, 1, 16)), 16, 1) == ((16,), (-1, -1, 0))
    assert param("GatherD", ((2, 8, 1), (2, 8, 1)), 16, 0) == ((2, 8), (1, 0, -1))
    assert param("StridedSlice", ((1, 4, 2),), 8, 0) == ((4, 2), (-1, 1, 0))


@pytest.mark.parametrize("matrix, tensor_map, expected", [
    # MindSpore's own cases (tests/ut/cpp/parallel/tensor_layout/tensor_layout_test.cc,
    # RemoveElementEqualToOneInDeviceArrangement1-3)
    ((2, 2, 1), (2, 1), ((2, 2), (1, 0))),
    ((16, 1, 1), (2, 0), ((16,), (0, -1))),
    ((1, 16, 1), (2, 1), ((16,), (-1, 0))),
    # what MindSpore 2.10's parameter_layout_dict printed for zoo 10 / 11 (dp 2 x mp 4): a MatMul
    # ((2, 1), (1, 4)) reads w with [2, 1, 4] / [1, 0]; ((2, 4), (4, 1)) with [2, 4, 1] / [1, 0]
    ((2, 1, 4), (1, 0), ((2, 4), (-1, 0))),
    ((2, 4, 1), (1, 0), ((2, 4), (0, -1))),
    # a Layout dimension cut by two axes is kept as written
    ((2, 4), ((1, 0), -1), ((2, 4), ((1, 0), -1))),
])
def test_the_standard_form_is_mindspores(matrix, tensor_map, expected):
    from msinspect.analysis.layout import standard

    assert standard(matrix, tensor_map) == expected
