"""MindSpore's infer rules for the operators of a replacement graph
(:mod:`msinspect.mindspore.infer_shapes`), each on shapes worked by hand from the primitive's
definition: zoo 20's ``enable_nd_tp`` MatMul chain and zoo 16's row-split Gather chain, and the
shapes a rule refuses."""
from __future__ import annotations

import pytest

from msinspect.mindspore.infer_shapes import output_dtype, output_shape, tensor_inputs


@pytest.mark.parametrize("op, operands, shapes, expected", [
    ("Split", (None, 0, 4), [(32768, 32)], (8192, 32)),  # zoo 20's gathered x in 4 parts
    ("Split", (None, -1, 2), [(4, 6)], (4, 3)),
    ("Split", (None, 0, 3), [(8, 2)], None),  # 8 rows do not split in 3
    ("TupleGetItem", (None, 1), [(8192, 32)], (8192, 32)),
    ("Concat", (None, 1), [(8192, 32)] * 4, (8192, 128)),
    ("Concat", (None, -2), [(2, 3), (5, 3)], (7, 3)),
    ("Concat", (None, 1), [(8192, 32), (4096, 32)], None),  # the other dimensions differ
    ("Transpose", (None, (1, 0)), [(8192, 128)], (128, 8192)),
    ("Transpose", (None, (0, 0)), [(8192, 128)], None),  # no permutation
    ("MatMul", (None, None, False, False), [(8192, 128), (128, 128)], (8192, 128)),
    ("MatMul", (None, None, True, True), [(128, 8192), (64, 128)], (8192, 64)),
    ("MatMul", (None, None, False, False), [(8192, 64), (128, 128)], None),  # 64 against 128
    ("BatchMatMul", (None, None, False, False), [(2, 1, 8, 4), (3, 4, 5)], (2, 3, 8, 5)),
    ("BatchMatMul", (None, None, False, False), [(2, 8, 4), (3, 4, 5)], None),  # 2 and 3 do not broadcast
    ("Gather", (None, None, 0, 0), [(128, 512), (1, 64)], (1, 64, 512)),  # zoo 16's slice of the table
    ("Gather", (None, None, 1, 0), [(4, 5, 6), (2, 3)], (4, 2, 3, 6)),
    ("Gather", (None, None, 0, 1), [(128, 512), (1, 64)], None),  # batch_dims: not told here
    ("ExpandDims", (None, -1), [(1, 64)], (1, 64, 1)),
    ("ExpandDims", (None, 0), [(1, 64)], (1, 1, 64)),
    ("Sub", (None, None), [(1, 64), ()], (1, 64)),  # the ids shifted by a scalar
    ("Mul", (None, None), [(1, 64, 512), (1, 64, 1)], (1, 64, 512)),  # the lookup masked
    ("Mul", (None, None), [(1, 64, 512), (1, 32, 1)], None),
    ("MatMul", (None, None, False, False), [None, (128, 128)], None),  # an input unknown
])
def test_output_shape(op, operands, shapes, expected):
    assert output_shape(op, operands, shapes) == expected


@pytest.mark.parametrize("op, operands, dtypes, expected", [
    ("Gather", (None, None, 0, 0), ["Float32", "Int32"], "Float32"),  # the table's
    ("Equal", (None, None), ["Int32", "Int32"], "Bool"),
    ("Cast", (None, "Float16"), ["Bool"], "Float16"),
    ("Cast", (None, None), ["Bool"], None),  # a target the IR computes: not told
    ("Mul", (None, None), ["Float32", None], "Float32"),
])
def test_output_dtype(op, operands, dtypes, expected):
    assert output_dtype(op, operands, dtypes) == expected


def test_the_inputs_each_rule_reads():
    assert tensor_inputs("Cast", 2) == (0,) and tensor_inputs("Mul", 2) == (0, 1)
    assert tensor_inputs("MatMul", 4) == (0, 1) and tensor_inputs("Concat", 3) == (0, 1, 2)
