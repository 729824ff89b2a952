"""Each layout rule's whole answer (matrix, every map, the output's, the partial-sum axes, the rule in
words) on strategies where every part of the rule shows: the tests that bench/mutation_mindspore.py
found missing. Every expectation is worked out by hand from the MindSpore source the rule cites
(``frontend/parallel/ops_info``), written beside it."""
from __future__ import annotations

from msinspect.mindspore.layouts import (Call, Laid, RULES, divided, ints, layout_of, on_devices, shard_of,
                                         slice_by_map)


def laid(op, in_strategy, devices, operands=(), attrs=()):
    """The rule's answer before the repeated axis: (matrix, input maps, output map, partial, rule)."""
    return tuple(RULES[op](Call(op, in_strategy, operands, attrs), devices))[:5]


# ------------------------------------------------------------------ Conv2D
def test_conv2d_matrix_is_x_then_the_out_channels_with_maps_of_conv2d_info():
    # conv2d_info.cc InferDevMatrixShape: x (n, i, h, w) strategy, then the weight's o: (1, 2, 1, 1, 4).
    # InferTensorMap: x [4, 3, 2, 1], weight (o, i, kh, kw) [0, 3, -1, -1], output (n, o, h, w)
    # [4, 0, 2, 1]; the in-channel i (matrix axis 1 from the left) cut 2 ways: partial sums over it.
    assert laid("Conv2D", ((1, 2, 1, 1), (4, 2, 1, 1)), 8) == (
        (1, 2, 1, 1, 4), ((4, 3, 2, 1), (0, 3, -1, -1)), (4, 0, 2, 1), (1,),
        "Conv2D: x (n, i, h, w) * weight (o, i) gives (n, o, h, w)")


def test_conv2d_with_whole_in_channels_leaves_no_partial_sums():
    # n cut 2, i whole: no sum across devices (conv2d_info.cc: the forward AllReduce only for a cut i)
    assert laid("Conv2D", ((2, 1, 1, 1), (1, 1, 1, 1)), 2)[3] == ()


def test_conv2d_needs_two_four_dimensional_strategies():
    # CheckStrategyBase: two strategies, each of size 4
    assert layout_of(Call("Conv2D", ((2, 1, 1, 1), (1, 1, 1)), ()), 2) is None
    assert layout_of(Call("Conv2D", ((2, 1, 1), (1, 1, 1, 1)), ()), 2) is None
    assert layout_of(Call("Conv2D", ((2, 1, 1, 1),), ()), 2) is None


# ------------------------------------------------------------------ reductions
def test_reduce_sum_drops_the_reduced_dimension_and_sums_its_cut():
    # reduce_method_info.cc: the matrix is x's strategy (2, 4, 1), x mapped [2, 1, 0]; reducing
    # dimension 1 without keep_dims drops it from the output: [2, 0]; dimension 1 is cut 4 ways, so
    # the output holds partial sums over matrix axis 1 (the forward AllReduce).
    assert laid("ReduceSum", ((2, 4, 1),), 8, (None, (1,), False)) == (
        (2, 4, 1), ((2, 1, 0),), (2, 0), (1,), "ReduceSum over dimension(s) 1: the others keep their cut")


def test_keep_dims_leaves_the_reduced_dimension_whole():
    # keep_dims: the reduced dimension stays, size 1, mapped to no axis: [2, -1, 0]; as the third
    # operand (2.10), as the attribute (older releases), and a negative axis counts from the end (-2: 1)
    expected = (2, -1, 0)
    assert laid("ReduceSum", ((2, 4, 1),), 8, (None, (1,), True))[2] == expected
    assert laid("ReduceSum", ((2, 4, 1),), 8, (None, (1,)), (("keep_dims", True),))[2] == expected
    assert laid("ReduceSum", ((2, 4, 1),), 8, (None, (-2,), True))[2] == expected
    # keep_dims not a constant: the attribute's answer, never a later boolean (ReduceSum's skip_mode)
    assert laid("ReduceSum", ((2, 4, 1),), 8, (None, (1,), None, True))[2] == (2, 0)


def test_a_reduced_dimension_not_cut_leaves_no_partial_sums():
    # dimension 2 whole (1): nothing to add across devices; dimension 0 cut 2: partial over axis 0
    assert laid("ReduceSum", ((2, 4, 1),), 8, (None, (2,), False))[3] == ()
    assert laid("ReduceMean", ((2, 4, 1),), 8, (None, (0,), False))[3] == (0,)
    # ReduceMax takes the largest, not a sum: no partial sums (reduce_method_info.cc: a max AllReduce)
    assert laid("ReduceMax", ((2, 4, 1),), 8, (None, (1,), False))[3] == ()


def test_a_reduction_over_every_dimension_says_so():
    # an empty axis tuple reduces every dimension: a scalar, or every dimension kept as size 1
    assert laid("ReduceMean", ((8,),), 8, (None, (), False))[2:] == ((), (0,), "ReduceMean over every dimension: "
                                                                               "the output is a scalar")
    assert laid("ReduceMean", ((8,),), 8, (None, (), True))[2:] == ((-1,), (0,), "ReduceMean over every dimension: "
                                                                                "the output is a scalar kept as size 1")
    assert laid("ReduceSum", ((2, 4),), 8, (None, (0, 1), False))[4] == ("ReduceSum over every dimension: the "
                                                                         "output is a scalar")
    assert laid("ReduceSum", ((2, 4, 1),), 8, (None, (0, 2), False))[4] == ("ReduceSum over dimension(s) 0, 2: the "
                                                                            "others keep their cut")


def test_a_reduction_whose_axes_are_not_constants_gets_no_layout():
    assert layout_of(Call("ReduceSum", ((2, 4, 1),), (None, None)), 8) is None
    assert layout_of(Call("ReduceSum", ((2, 4, 1),), (None,)), 8) is None


# ------------------------------------------------------------------ Gather
def test_gather_normal_mode_over_axis_zero():
    # gather_info.cc NormalImpl (the gathered axis whole): matrix indices + table = (2, 1, 1, 4);
    # tmp_map [3, 2, 1, 0]: table [1, 0], indices [3, 2]; the output is the table's map with its
    # axis-0 entry replaced by the indices' map: [3, 2, 0]
    assert laid("Gather", ((1, 4), (2, 1)), 8, (None, None, 0, 0)) == (
        (2, 1, 1, 4), ((1, 0), (3, 2)), (3, 2, 0), (),
        "Gather: the table's gathered axis is whole; indices then table form the matrix")


def test_gather_normal_mode_over_axis_one():
    # axis 1 whole, table (2, 1), indices (4,): matrix (4, 2, 1); tmp_map [2, 1, 0]: table [1, 0],
    # indices [2]; the output: table entry 0 (1), the indices (2), nothing after: [1, 2]
    assert laid("Gather", ((2, 1), (4,)), 8, (None, None, 1, 0))[:3] == ((4, 2, 1), ((1, 0), (2,)), (1, 2))


def test_gather_batch_and_axis_mode():
    # ShardBatchAndAxisImpl: matrix (indices[0], table[0]) = (2, 4); table [0, -1], indices [1, -1];
    # the forward uses an AllReduce (axis_split_forward_allreduce_ set): the output [1, -1, -1]
    assert laid("Gather", ((4, 1), (2, 1)), 8, (None, None, 0, 0)) == (
        (2, 4), ((0, -1), (1, -1)), (1, -1, -1), (), "Gather: table rows and indices rows cut together")
    # one of them alone filling the stage is not this mode (GetGatherMode): the table's 8 is shard axis
    assert laid("Gather", ((8, 1), (1, 1)), 8, (None, None, 0, 0))[0] == (8, 1)
    assert layout_of(Call("Gather", ((1, 1), (8, 1)), (None, None, 0, 0)), 8).device_matrix == (8, 1, 1, 1)


def test_gather_shard_axis_mode():
    # ShardAxisImpl: the matrix is the table's strategy (4, 2), the table [1, 0], the indices whole
    # [-1, -1] (index_size MAP_NONE entries); the output is not told here
    assert laid("Gather", ((4, 2), (1, 1)), 8, (None, None, 0, 0)) == (
        (4, 2), ((1, 0), (-1, -1)), None, (), "Gather: the table cut along the gathered axis")
    # cut indices with a cut gathered axis: CheckSplitAxisStrategy refuses it
    assert layout_of(Call("Gather", ((4, 2), (2, 1)), (None, None, 0, 0)), 8) is None
    # axis 1 cut without filling the stage: "Don't support repeated calc"
    assert layout_of(Call("Gather", ((1, 2), (1, 1)), (None, None, 1, 0)), 8) is None
    assert layout_of(Call("Gather", ((4, 2), (1, 1)), (None, None, 1, 0)), 8).device_matrix == (4, 2)


def test_gather_manual_split_cuts_the_indices_last_dimension_with_the_rows():
    # ManualImpl::InferTensorMap: the table [0] over matrix (8,) (param_map, size 1); the indices
    # all MAP_NONE but their last dimension, which takes param_map[0] = 0 (CheckStrategy: only
    # the indices' last dimension is cut, as many ways as the table's rows)
    split = (5, 6, 7, 8, 9, 10, 11, 8)
    answer = laid("Gather", ((8,), (1, 8)), 8, (None, None, 0, 0), (("manual_split", split),))
    assert answer == ((8,), ((0,), (-1, 0)), None, (), f"Gather: the table's rows split by hand {split}")
    # the offset form is not told; neither is a split on another axis than 0
    assert layout_of(Call("Gather", ((8,), (1, 8)), (None, None, 0, 0),
                          (("manual_split_with_offset", ((5, 0),) * 8),)), 8) is None
    assert layout_of(Call("Gather", ((8, 1), (1, 8)), (None, None, 1, 0), (("manual_split", split),)), 8) is None
    assert layout_of(Call("Gather", ((8,), (1,)), (None, None, 0, 0),
                          (("manual_split_with_offset", ((5, 0),) * 8),)), 8) is None
    # a two-dimensional table: the indices' last dimension under the table's first axis, 1
    two = laid("Gather", ((8, 1), (1, 8)), 8, (None, None, 0, 0), (("manual_split", split),))
    assert two[:2] == ((8, 1), ((1, 0), (-1, 1)))
    # "Manual split doesn't support repeated calc": the table's strategy must fill the stage
    assert layout_of(Call("Gather", ((4,), (1, 4)), (None, None, 0, 0), (("manual_split", (2,) * 4),)), 8) is None


def test_gather_reads_its_axis_and_batch_dims_operands():
    # Gather(param, indices, axis, batch_dims): an axis that is not a constant is not told, even
    # where batch_dims is; batch_dims left out is 0 (the normal mode); batch_dims 1 is not told
    assert layout_of(Call("Gather", ((1, 1), (8, 1)), (None, None, None, 0)), 8) is None
    assert layout_of(Call("Gather", ((1, 1), (8, 1)), (None, None, 0)), 8).device_matrix == (8, 1, 1, 1)


# ------------------------------------------------------------------ element-wise
def test_elementwise_rule_in_words():
    # arithmetic_info.cc: the output is cut as the widest input
    assert laid("Add", ((2, 4), (4,)), 8) == ((2, 4), ((1, 0), (0,)), (1, 0), (), "Add: the output is cut as its input")


def test_elementwise_without_strategies_has_no_layout():
    assert RULES["Add"](Call("Add", ()), 8) is None


# ------------------------------------------------------------------ batch parallel
def test_flatten_on_two_devices_and_of_one_dimension():
    # batch_parallel_info.cc: matrix (devices,), an input's first dimension under axis 0 where cut
    assert laid("Flatten", ((2, 1),), 2)[:2] == ((2,), ((0, -1),))
    assert laid("Flatten", ((8,),), 8)[:2] == ((8,), ((0,),))
    assert laid("Flatten", ((8, 1),), 8)[4] == "Flatten: batch parallel, the first dimension cut over the stage's 8 devices"


# ------------------------------------------------------------------ optimizer shard
def test_shard_of_bounds_and_group():
    # _load_tensor_by_layout: np.split of the slice's first dimension into group_size parts, part index
    assert shard_of(((2, 8),), 3, 1) == ((4, 6),)  # rows 2:8 in three: 2:4, 4:6, 6:8
    assert all(isinstance(v, int) for v in shard_of(((2, 8),), 3, 1)[0])
    assert shard_of(((0, 8), (0, 4)), 1, 0) == ((0, 8), (0, 4))  # a group of one keeps its slice
    assert shard_of(((0, 8),), 4, 0) == ((0, 2),)
    assert shard_of(((0, 8),), 4, 4) is None  # no fifth part
    assert shard_of(((0, 8),), 1, 1) is None
    assert shard_of((), 2, 0) is None


# ------------------------------------------------------------------ MatMul
def test_matmul_transpose_flags_from_operands_or_older_attributes():
    # 2.10: MatMul(x, w, transpose_a, transpose_b); older releases keep the flags as attributes,
    # transpose_a / transpose_b (transpose_x1 / transpose_x2 in the older primitives), False unset
    assert Call("MatMul", (), (None, None, True, False)).transpose == (True, False)
    assert Call("MatMul", (), (None, None, False, True)).transpose == (False, True)
    assert Call("MatMul", (), (), (("transpose_a", True),)).transpose == (True, False)
    assert Call("MatMul", (), (), (("transpose_b", True),)).transpose == (False, True)
    assert Call("MatMul", (), (), (("transpose_x1", True),)).transpose == (True, False)
    assert Call("MatMul", (), (), (("transpose_x2", True),)).transpose == (False, True)
    assert Call("MatMul", (), (), (("transpose_a", False), ("transpose_x1", True))).transpose == (False, False)
    assert Call("MatMul", (), ()).transpose == (False, False)


def test_matmul_needs_two_matrices_and_maps_a_third_input_on_the_right():
    # matmul_info.cc: x and w each of two dimensions at least; a third input (a bias) is mapped
    # aligned on the right of the matrix [a, b, c]: its one dimension under c (axis 0)
    assert layout_of(Call("MatMul", ((2,), (4, 1)), (None, None, False, False)), 8) is None
    answer = laid("MatMul", ((2, 4), (4, 1), (1,)), 8, (None, None, False, False))
    assert answer[:2] == ((2, 4, 1), ((2, 1), (1, 0), (0,)))


# ------------------------------------------------------------------ the first input's rule, StridedSlice
def test_first_input_rule_in_words():
    assert laid("GatherD", ((2, 8, 1), (2, 8, 1)), 16)[4] == "GatherD: its first input's cut"


def test_strided_slice_masks_bit_by_bit():
    # strided_slice_info.cc over x (8, 4) cut (2, 1): the input map [1, -1]
    def output(begin, new_axis, shrink):
        operands = (None, begin, begin, (1,) * len(begin), 0, 0, 0, new_axis, shrink)
        return laid("StridedSlice", ((2, 1),), 2, operands)[2:5:2]

    # shrink bit 1: dimension 1 leaves the output
    assert output((0, 0), 0, 2) == ((1,), "StridedSlice: the output keeps its input's cut")
    # new_axis and shrink both at bit 1: a new axis (-1) inserted there, not shrunk
    assert output((0, 0), 2, 2)[0] == (1, -1, -1)
    # a shrink bit past begin's length (1) does nothing
    assert output((0,), 0, 2)[0] == (1, -1)
    # masks that are not constants, or no operands: the output is not told
    assert laid("StridedSlice", ((2, 1),), 2, (None, (0, 0), (8, 4), (1, 1), 0, 0, 0, None, 0))[2] is None
    assert laid("StridedSlice", ((2, 1),), 2, ())[2] is None
    assert laid("StridedSlice", ((2, 1),), 2, (None,))[2] is None


# ------------------------------------------------------------------ the repeated axis, integers
def test_a_repeated_axis_on_the_right_moves_every_named_axis_left():
    # OperatorInfo appends the repeat on the right: an axis counted from the right moves one left,
    # in an entry naming several axes too; -1 (no axis) stays
    answer = on_devices(Laid((2, 4), (((1, 0), -1), ((0, -1), 1)), ((1, 0), -1), (), "r"), 16)
    assert answer.device_matrix == (2, 4, 2)
    assert answer.tensor_maps == (((2, 1), -1), ((1, -1), 2))
    assert answer.output_map == ((2, 1), -1)


def test_ints_keeps_booleans_apart():
    # an axis or a permutation is integers; a boolean (a transpose flag, keep_dims) is none
    assert ints(3) == (3,)
    assert ints((1, 2)) == (1, 2)
    assert ints(True) is None
    assert ints((1, True)) is None
    assert ints(None) is None


# ------------------------------------------------------------------ Transpose, the loss
def test_transpose_output_dimension_i_is_input_dimension_perm_i():
    # transpose_info.cc: the matrix is x's strategy (2, 4, 1), x mapped [2, 1, 0]; the output takes
    # input dimension perm[i] at i: perm (0, 2, 1) gives [2, 0, 1]
    assert laid("Transpose", ((2, 4, 1),), 8, (None, (0, 2, 1))) == (
        (2, 4, 1), ((2, 1, 0),), (2, 0, 1), (), "Transpose (0, 2, 1): output dimension i is input dimension perm[i]")
    # a permutation that is none, of another length, or not a constant: no layout
    assert layout_of(Call("Transpose", ((2, 4, 1),), (None, (0, 0, 1))), 8) is None
    assert layout_of(Call("Transpose", ((2, 4, 1),), (None, (1, 0))), 8) is None
    assert layout_of(Call("Transpose", ((2, 4, 1),), (None, None)), 8) is None
    assert layout_of(Call("Transpose", ((2, 4, 1),), (None,)), 8) is None


def test_softmax_cross_entropy_loss_keeps_the_rows_cut():
    # loss_info.cc: the matrix is the logits' strategy (4, 1); logits and labels mapped [1, -1]
    # (the class dimension not cut); the per-row loss (its first output) keeps the rows: [1]
    assert laid("SoftmaxCrossEntropyWithLogits", ((4, 1), (4, 1)), 8) == (
        (4, 1), ((1, -1), (1, -1)), (1,), (), "SoftmaxCrossEntropyWithLogits: the per-row loss keeps the rows' cut")
    assert RULES["SoftmaxCrossEntropyWithLogits"](Call("SoftmaxCrossEntropyWithLogits", ((),)), 8) is None


def test_flatten_on_one_device_cuts_nothing():
    # batch_parallel_info.cc: a dimension is cut where its strategy is over 1; on one device none is
    assert laid("Flatten", ((1, 1),), 1)[:2] == ((1,), ((-1, -1),))


# ------------------------------------------------------------------ the dataset's inputs
def test_virtual_dataset_maps_each_input_onto_the_widest_strategy():
    # virtual_dataset_info.cc: the matrix is the strategy of the input with the most dimensions,
    # (1, 4, 1) here, not the one that sorts last; each input cut along one dimension into
    # shard_num (4) parts maps it to the matrix axis of that 4: index 1, axis 3 - 1 - 1 = 1
    assert laid("_VirtualDataset", ((4, 1), (1, 4, 1)), 4) == (
        (1, 4, 1), ((1, -1), (-1, 1, -1)), None, (),
        "_VirtualDataset: each input whole or cut along one dimension into the dataset's parts")
    # full_batch: every input whole, no axis named
    assert laid("_VirtualDataset", ((1, 1), (1,)), 8)[:2] == ((1, 1), ((-1, -1), (-1,)))
    # CheckStrategy: inputs cut into different numbers of parts, or one input cut along two
    # dimensions, are refused
    assert layout_of(Call("_VirtualDataset", ((8, 1), (4,))), 8) is None
    assert layout_of(Call("_VirtualDataset", ((2, 2),)), 4) is None


def test_matmul_transposed_x_and_the_contracted_cut():
    # matmul_info.cc: the matrix is [a, b, c]; a transposed x is stored (b, a): strategy (4, 2) is
    # b = 4, a = 2, and its map [1, 2]; w (b, c) = (4, 1) maps [1, 0]; the output (a, c) [2, 0];
    # b cut 4 ways: partial sums over matrix axis 1
    assert laid("MatMul", ((4, 2), (4, 1)), 8, (None, None, True, False)) == (
        (2, 4, 1), ((1, 2), (1, 0)), (2, 0), (1,),
        "MatMul: x (a, b) @ w (b, c) gives (rows, columns) cut (a, c); the contracted dimension cut 4 ways "
        "leaves partial sums")
    # b cut 2 ways; and b whole: no partial sums, the rule says no more than the product
    assert laid("MatMul", ((1, 2), (2, 1)), 2, (None, None, False, False))[3:] == (
        (1,), "MatMul: x (a, b) @ w (b, c) gives (rows, columns) cut (a, c); the contracted dimension cut 2 ways "
              "leaves partial sums")
    assert laid("MatMul", ((2, 1), (1, 4)), 8, (None, None, False, False))[3:] == (
        (), "MatMul: x (a, b) @ w (b, c) gives (rows, columns) cut (a, c)")


def test_batch_matmul_batch_axes_and_a_broadcast_weight():
    # MatMulBase over x (2, 2, a 2, b 1) and w (batch 2, b 1, c 1): the matrix [2, 2, 2, 1, 1],
    # top axis 4; x's batch dimensions under axes 4, 3, then (a, b) under (2, 1); w's one batch
    # dimension aligns with x's last (axis 3), then (b, c) under (1, 0); the output (4, 3, 2, 0)
    assert laid("BatchMatMul", ((2, 2, 2, 1), (2, 1, 1)), 8, (None, None, False, False))[:4] == (
        (2, 2, 2, 1, 1), ((4, 3, 2, 1), (3, 1, 0)), (4, 3, 2, 0), ())
    # a weight batch dimension not cut (1) is broadcast: no axis
    assert laid("BatchMatMul", ((2, 2, 2, 1), (1, 1, 1)), 8, (None, None, False, False))[1][1] == (-1, 1, 0)
    # x transposed with a batch dimension: x (batch 2, b 4, a 2): a = 2, b = 4
    assert laid("BatchMatMul", ((2, 4, 2), (2, 4, 1)), 16, (None, None, True, False))[:4] == (
        (2, 2, 4, 1), ((3, 1, 2), (3, 1, 0)), (3, 2, 0), (2,))


# ------------------------------------------------------------------ the registry's helpers
def test_divided_gives_integers_and_refuses_a_zero_cut():
    assert divided((16, 32), (2, 4)) == (8, 8) and all(isinstance(d, int) for d in divided((16, 32), (2, 4)))
    assert divided((16,), (0,)) is None


def test_no_strategy_no_layout():
    assert layout_of(Call("Reshape", ()), 8) is None


def test_the_repeated_axis_on_the_left_shifts_the_partial_axes():
    # gather_info.cc's shard-axis mode puts the repeat on the left: matrix (4,) on 8 devices is
    # [2, 4]; the maps count from the right and keep their axes, the partial axes (from the left)
    # move one right; where the strategy fills the stage, nothing is added
    left = on_devices(Laid((4,), ((0,),), None, (0,), "r", repeat_left=True), 8)
    assert (left.device_matrix, left.tensor_maps, left.partial, left.rule) == ((2, 4), ((0,),), (1,), "r")
    assert all(isinstance(d, int) for d in left.device_matrix)
    full = on_devices(Laid((4, 2), ((1, 0),), None, (0,), "r", repeat_left=True), 8)
    assert (full.device_matrix, full.partial) == ((4, 2), (0,))
    # a rule's matrix of no axis (a scalar's strategy) uses one device: all 8 repeat it
    assert on_devices(Laid((), ((),), None, (), "r"), 8).device_matrix == (8,)
    assert on_devices(Laid((1,), ((-1,),), None, (), "r"), 8).device_matrix == (1, 8)
    assert on_devices(Laid((0,), ((0,),), None, (), "r"), 8) is None


def test_slices_past_the_map_and_after_uneven_rows():
    # a dimension the map does not reach is whole; uneven rows (rows 2, 3) and an even second dimension
    assert slice_by_map((2,), (0,), (4, 6), 1) == ((2, 4), (0, 6))
    assert slice_by_map((2,), (0, -1), (5, 4), 1, rows=(2, 3)) == ((2, 5), (0, 4))


def test_the_uneven_rows_are_the_tables_only():
    # a hand-split table with 1-D indices (8,) cut 8 ways: the indices (16,) split evenly, rank 1
    # holds 2:4, whatever the table's rows
    split = (5, 6, 7, 8, 9, 10, 11, 8)
    layout = layout_of(Call("Gather", ((8,), (8,)), (None, None, 0, 0), (("manual_split", split),)), 8)
    assert layout.slice_of(1, (16,), 1) == ((2, 4),)
    assert layout.slice_of(0, (64,), 1) == ((5, 11),)
