"""Device matrices, tensor maps and slices, worked out by hand from MindSpore's definitions."""
from __future__ import annotations

import pytest

from msinspect.mindspore.layouts import Call, divided, layout_of as _layout_of, standard


def layout_of(op, in_strategy, devices, transpose=(False, False)):
    """The registry's layout of ``op`` called with this strategy (and transpose flags, as 2.10
    writes them: the MatMul's third and fourth operands)."""
    return _layout_of(Call(op, in_strategy, (None, None, *transpose)), devices)


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
    assert standard(matrix, tensor_map) == expected


# ------------------------------------------------------------------ rules of the registry's other families
# Each expectation below is worked out by hand from the rule's MindSpore source (named in the rule's
# docstring in msinspect/mindspore/layouts.py), then put in MindSpore's standard form.

def weight(op, in_strategy, devices, index, operands=()):
    layout = _layout_of(Call(op, in_strategy, operands), devices)
    return standard(layout.device_matrix, layout.tensor_maps[index]), layout


def test_not_equal_is_element_wise():
    # MindSpore's NotEqualInfo is an ArithmeticBase (arithmetic_info.h), as Equal: MindFormers'
    # mask NotEqual((dp, 1), ()) on 8 ranks with dp 2: matrix (2, 1) and a repeat of 4 -> [2, 4];
    # the output cut as its first input, rows by dp: rank 4 (dp 1) holds rows 4:8 of (8, 16)
    (matrix, tensor_map), layout = weight("NotEqual", ((2, 1), ()), 8, 0)
    assert (matrix, tensor_map) == ((2, 4), (1, -1))
    assert layout.slice_of(0, (8, 16), 4) == ((4, 8), (0, 16))


def test_layernorm_gamma_follows_the_input_cut_on_the_right():
    # zoo 01's ln1 on 8 ranks: ((2, 1), (1,), (1,)): matrix (2, 1) and a repeat of 4 -> [2, 1, 4];
    # gamma's one dimension sits under the input's last (cut 1): not cut, whole on rank 0
    (matrix, tensor_map), layout = weight("LayerNorm", ((2, 1), (1,), (1,)), 8, 1)
    assert (matrix, tensor_map) == ((2, 4), (-1,))
    assert layout.slice_of(1, (512,), 0) == ((0, 512),)


def test_a_vocabulary_and_batch_parallel_embedding_cuts_rows_by_the_table_axis():
    # ((4, 1), (2, 1)) on 8: table rows and index rows cut together (4 x 2 = 8, neither alone):
    # matrix (indices[0], table[0]) = (2, 4), table (0, -1); rank 5 is (1, 1): rows 256:512 of 1024
    (matrix, tensor_map), layout = weight("Gather", ((4, 1), (2, 1)), 8, 0, (None, None, 0, 0))
    assert (matrix, tensor_map) == ((2, 4), (0, -1))
    assert layout.slice_of(0, (1024, 512), 5) == ((256, 512), (0, 512))


def test_a_data_parallel_embedding_table_is_whole_everywhere():
    # ((1, 1), (2, 1)) on 8: normal mode, matrix indices + table = (2, 1, 1, 1), a repeat of 4
    (matrix, tensor_map), layout = weight("Gather", ((1, 1), (2, 1)), 8, 0, (None, None, 0, 0))
    assert (matrix, tensor_map) == ((2, 4), (-1, -1))
    assert {layout.slice_of(0, (1024, 512), r) for r in range(8)} == {((0, 1024), (0, 512))}


def test_a_table_cut_on_part_of_the_stage_repeats_on_the_left():
    # ((2, 1), (1,)) on 8: the table's strategy uses 2 of 8 devices: repeat 4 on the left, [4, 2, 1]:
    # ranks 0, 2, 4, 6 hold the first half of the rows, 1, 3, 5, 7 the second
    (matrix, tensor_map), layout = weight("Gather", ((2, 1), (1,)), 8, 0, (None, None, 0, 0))
    assert layout.device_matrix == (4, 2, 1)
    assert (matrix, tensor_map) == ((4, 2), (0, -1))
    assert [layout.slice_of(0, (64, 8), r)[0] for r in range(4)] == [(0, 32), (32, 64), (0, 32), (32, 64)]


def test_a_table_split_by_hand_holds_uneven_rows_in_device_order():
    # gather_field_split's table (64,) with manual_split (5, 6, 7, 8, 9, 10, 11, 8), strategy
    # ((8,), (8,)) on 8 (ManualImpl): matrix (8,), the table (0,); rank i holds part i: rank 1 rows
    # 5:11, rank 7 rows 56:64 (MindSpore's strategy checkpoint: offsets 0, 5, 11 ... 56)
    split = (5, 6, 7, 8, 9, 10, 11, 8)
    layout = _layout_of(Call("Gather", ((8,), (8,)), (None, None, 0, 0), (("manual_split", split),)), 8)
    assert standard(layout.device_matrix, layout.tensor_maps[0]) == ((8,), (0,))
    assert [layout.slice_of(0, (64,), r) for r in (0, 1, 7)] == [((0, 5),), ((5, 11),), ((56, 64),)]
    # the parts must be one a device of the table's strategy, which fills the stage
    assert _layout_of(Call("Gather", ((8,), (8,)), (None, None, 0, 0), (("manual_split", (6,) * 4),)), 8) is None
    assert _layout_of(Call("Gather", ((2, 1, 1), (2, 1)), (None, None, 1, 1)), 4) is None  # batch_dims


def test_a_replicated_convolution_weight():
    # ((4, 1, 1, 1), (1, 1, 1, 1)) on 8: matrix (n, i, h, w, o) = (4, 1, 1, 1, 1), a repeat of 2;
    # the weight (o, i, 1, 1) is cut by o and i, both 1: all -1 over MindSpore's [4, 2]
    (matrix, tensor_map), _ = weight("Conv2D", ((4, 1, 1, 1), (1, 1, 1, 1)), 8, 1)
    assert (matrix, tensor_map) == ((4, 2), (-1, -1, -1, -1))


def test_a_reduction_over_no_named_axis_reduces_every_axis():
    layout = _layout_of(Call("ReduceMean", ((8,),), (None, ())), 8)
    assert layout.output_map == ()
    assert layout.partial == (0,)


def test_an_optimizer_shard_keeps_its_part_of_the_first_dimension():
    from msinspect.mindspore.layouts import shard_of

    # a (512, 784) slice over an 8-rank shard group: the rank sixth in the group keeps rows 320:384
    assert shard_of(((0, 512), (0, 784)), 8, 5) == ((320, 384), (0, 784))
    assert shard_of(((256, 512), (0, 512)), 2, 1) == ((384, 512), (0, 512))
    assert shard_of(((0, 6),), 4, 0) is None  # 6 rows do not split in 4


def test_a_dimension_cut_by_two_axes_takes_the_first_as_the_outer():
    from msinspect.mindspore.layouts import slice_by_map

    # matrix (2, 4) (dp, mp), dimension 0 cut by (dp, mp): rank (1, 2) = 6 holds part 1 * 4 + 2 = 6 of 8
    assert slice_by_map((2, 4), ((1, 0), -1), (64, 16), 6) == ((48, 56), (0, 16))


def test_flatten_is_batch_parallel():
    # Zoo 21 (fixtures/zoo/nets/21_doc_layout_two_axes.py): flatten of the images (256, 1, 28, 28)
    # with in_strategy ((8, 1, 1, 1),) on 8 ranks; the IR marks the primitive BatchParallel, and
    # MindSpore lays it out by BatchParallelInfo (batch_parallel_info.cc): device matrix [8] (the
    # stage's devices), the input's first dimension under axis 0 (cut 8 > 1), the others -1; the
    # output (256, 784) (0, -1). Rank 5 holds images 5 * 32 .. 6 * 32 = 160:192, and the same rows
    # of the flattened output, all 784 columns.
    (matrix, tensor_map), layout = weight("Flatten", ((8, 1, 1, 1),), 8, 0)
    assert (matrix, tensor_map) == ((8,), (0, -1, -1, -1))
    assert layout.output_map == (0, -1)
    assert layout.slice_of(0, (256, 1, 28, 28), 5) == ((160, 192), (0, 1), (0, 28), (0, 28))
    # CheckStrategy takes no cut but the stage's devices on a first dimension, none elsewhere; a
    # whole input would leave the output's (0, -1) claimed, not made: no layout for these
    assert _layout_of(Call("Flatten", ((4, 1, 1, 1),)), 8) is None
    assert _layout_of(Call("Flatten", ((8, 2, 1, 1),)), 8) is None
    assert _layout_of(Call("Flatten", ((1, 1, 1, 1),)), 8) is None


def test_a_strided_slice_output_keeps_its_cut_less_shrunk_plus_new_axes():
    # fixtures/ut/a_test_stridedslice__test_new_axis_mask_and_shrink_axis_mask (.toml): x
    # (2, 4, 8, 16) cut (1, 4, 8, 16) on 512, begin (1, 1), new_axis_mask 6, shrink_axis_mask 1
    # (strided_slice_info.cc). Input map (-1, 2, 1, 0) over [1, 4, 8, 16]; new_axis bit 1 inserts
    # -1 at 1: (-1, -1, 2, 1, 0); bit 2 is past begin's 2 positions, ignored; shrink bit 0 drops
    # position 0: (-1, 2, 1, 0): the output (1, 4, 8, 16) cut (1, 4, 8, 16), as the UT's ReLU takes it.
    call = Call("StridedSlice", ((1, 4, 8, 16),), (None, (1, 1), (2, 4), (1, 1), 0, 0, 0, 6, 1))
    layout = _layout_of(call, 512)
    assert layout.output_map == (-1, 2, 1, 0)
    assert [layout.parts(m) for m in layout.output_map] == [1, 4, 8, 16]
    # no masks: the output is cut as its input; masks that are not constants, or an ellipsis: not told
    plain = Call("StridedSlice", ((2, 1),), (None, (0, 0), (8, 4), (1, 1), 0, 0, 0, 0, 0))
    assert _layout_of(plain, 8).output_map == (2, -1)
    assert _layout_of(Call("StridedSlice", ((2, 1),), (None, (0, 0), (8, 4), (1, 1))), 8).output_map is None
    ellipsis = Call("StridedSlice", ((2, 1),), (None, (0, 0), (8, 4), (1, 1), 0, 0, 1, 0, 0))
    assert _layout_of(ellipsis, 8).output_map is None


def test_masked_fill_is_element_wise():
    # Zoo 19 (fixtures/zoo/nets/19_doc_optimizer_parallel.py): the loss's MaskedFill of the (256, 1)
    # per-row losses with its mask, ((8, 1), (8, 1)) on 8 ranks, the value a scalar. MindSpore's
    # MaskedFillInfo is an ArithmeticBase (arithmetic_info.cc): matrix [8, 1], both inputs and the
    # output (1, -1) (standard [8], (0, -1)), the value no map: rank 5 holds rows 160:192.
    (matrix, tensor_map), layout = weight("MaskedFill", ((8, 1), (8, 1), ()), 8, 1)
    assert (matrix, tensor_map) == ((8,), (0, -1))
    assert standard(layout.device_matrix, layout.output_map) == ((8,), (0, -1))
    assert layout.tensor_maps[2] == ()
    assert layout.slice_of(0, (256, 1), 5) == ((160, 192), (0, 1))


def test_sort_keeps_its_input_cut():
    # Zoo 15 (fixtures/zoo/nets/15_mf_llama_moe_ep8.py): MoE routing's sort ((8, 1),) along axis 1 on
    # 8 ranks. SortInfo (activation_info.cc): the device matrix is the input's strategy and both
    # outputs, values and indices, keep the input's map: [8, 1], (1, -1), standard [8], (0, -1).
    layout = _layout_of(Call("Sort", ((8, 1),)), 8)
    assert standard(layout.device_matrix, layout.output_map) == ((8,), (0, -1))
    assert standard(layout.device_matrix, layout.tensor_maps[0]) == ((8,), (0, -1))
