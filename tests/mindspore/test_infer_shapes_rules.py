"""Each infer rule of :mod:`msinspect.mindspore.infer_shapes` where it gives an answer and where
it must say "cannot tell" (None), on the operands of real nodes of the zoo where one shows the case:
zoo 20's ``enable_nd_tp`` Split and MatMul (``fixtures/zoo/nets/20_doc_high_dimension_tp.py``, 8
devices, ``Layout((2, 4), ("x", "y"))``) and zoo 16's row-split Gather's Cast, whose target the IR
computes (``DtypeToEnum(DType(%7))``).

MindSpore's definitions (``mindspore/ops/infer/ops_func_impl/``, read for these tests):

- ``split.cc`` ``SplitFuncImpl``: ``output_num`` must be positive (``CheckValidation``), the axis
  dimension divisible by it; each part is ``x_shape[axis] / output_num``, an integer; an axis the
  IR does not state gives dimensions of unknown size (``kShapeDimAny``);
- ``concat.cc`` ``ConcatFuncImpl``: every part of the same rank, equal off the axis, the axis
  summed; an unknown axis gives unknown dimensions;
- ``transpose.cc`` ``TransposeFuncImpl``: without a known ``perm`` every dimension is unknown;
- ``matmul.cc`` ``MatMulFuncImpl::InferShape2D``: both inputs of rank 2 ("MatMul inputs should
  have the same dimension size and equal to 2"), the output ``(x[1 if transpose_a else 0],
  y[0 if transpose_b else 1])``; ``batch_matmul.cc``: the flags swap each input's last two
  dimensions, the batch dimensions broadcast;
- ``expand_dims.cc`` ``ExpandDimsFuncImpl``: a negative axis counts from the end of the output
  (``axis + rank + 1``), a 1 is inserted there;
- Cast: the output type is the target its second operand states.
- numpy's ``broadcast_shapes()`` of no shapes is ``()``: the shape of a scalar.
"""
from __future__ import annotations

from functools import lru_cache

import pytest

from msinspect.mindspore.infer_shapes import broadcast, output_dtype, output_shape
from msinspect.model import Node, NodeRef
from msinspect.parser import parse_file
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
#: An operand the IR computes (``%3``), not a constant: no rule can read its value.
COMPUTED = NodeRef(index=3)


@lru_cache(maxsize=None)
def _node(folder: str, op: str, name: str) -> Node:
    path = next((ZOO / folder / "rank_0").glob("step_parallel_end_*.ir.gz"))
    return next(n for n in parse_file(path).nodes() if n.op == op and n.instance_name == name)


@pytest.fixture(scope="module")
def split() -> Node:
    """Zoo 20's matmul1 Split: ``Split(%7, I64(0), I64(4))`` of x gathered over "y"."""
    return _node("20_doc_high_dimension_tp", "Split", "3815130986688897272Split2")


def test_a_split_gives_integer_parts(split):
    # x (8192, 256) is cut ("None", ("x", "y")): (8192, 32) at the rank; gathered along 0 over the
    # 4 ranks of "y": (32768, 32); split along 0 in 4: (8192, 32), dimensions that are integers
    shape = output_shape("Split", split.inputs, [(32768, 32)])
    assert shape == (8192, 32) and all(type(d) is int for d in shape)


def test_a_split_in_one_part_is_the_whole(split):
    assert output_shape("Split", (split.inputs[0], 0, 1), [(32768, 32)]) == (32768, 32)


@pytest.mark.parametrize("parts", [0, -2])
def test_a_split_in_no_positive_count_cannot_tell(split, parts):
    # output_num must be positive; -2 divides 32768 and would give -16384
    assert output_shape("Split", (split.inputs[0], 0, parts), [(32768, 32)]) is None


def test_a_split_along_an_axis_the_ir_computes_cannot_tell(split):
    assert output_shape("Split", (split.inputs[0], COMPUTED, 4), [(32768, 32)]) is None


@pytest.mark.parametrize("shapes", [
    [(2, 3), (2,)],  # a part of another rank: equal to the first off axis 1, but no dimension 1
    [(), ()],  # scalars have no axis to join along
])
def test_a_concat_of_parts_unlike_the_first_cannot_tell(shapes):
    assert output_shape("Concat", (None, 1), shapes) is None


def test_a_concat_along_an_axis_the_ir_computes_cannot_tell():
    assert output_shape("Concat", (None, COMPUTED), [(8192, 32)] * 4) is None


@pytest.mark.parametrize("op, operands, shapes", [
    ("Split", (None,), [(8, 2)]),  # no axis, no count
    ("Split", (None, 0), [(8, 2)]),  # no count
    ("Concat", (None,), [(8, 2), (8, 2)]),
    ("Transpose", (None,), [(8, 2)]),  # no perm
    ("ExpandDims", (None,), [(8, 2)]),
    ("Gather", (None, None), [(8, 2), (4,)]),  # no axis
])
def test_a_call_short_of_its_constants_cannot_tell(op, operands, shapes):
    assert output_shape(op, operands, shapes) is None


def test_zoo_20s_matmul_reads_its_flags():
    matmul = _node("20_doc_high_dimension_tp", "MatMul", "3815130986688897272MatMul8")
    assert matmul.inputs[2:] == (False, False)
    # the gathered activation (8192, 128) by fc1_weight's slice (128, 128)
    assert output_shape("MatMul", matmul.inputs, [(8192, 128), (128, 128)]) == (8192, 128)


@pytest.mark.parametrize("flags, a, b, expected", [
    # transpose_a: a's last two (4, 8) swap to rows 8, inner 4; transpose_b: b's (5, 4) to inner 4,
    # columns 5; the batch 2: (2, 8, 5)
    ((True, True), (2, 4, 8), (2, 5, 4), (2, 8, 5)),
    ((True, False), (2, 4, 8), (2, 4, 5), (2, 8, 5)),
    ((False, True), (2, 8, 4), (2, 5, 4), (2, 8, 5)),
    ((True, True), (2, 8, 4), (2, 4, 5), None),  # transposed, the inner 8 meets the inner 5
])
def test_a_batch_matmul_swaps_the_last_two_dimensions(flags, a, b, expected):
    assert output_shape("BatchMatMul", (None, None, *flags), [a, b]) == expected


@pytest.mark.parametrize("a, b", [((128,), (128, 128)), ((8192, 128), (128,))])
def test_a_matmul_of_a_vector_cannot_tell(a, b):
    assert output_shape("MatMul", (None, None, False, False), [a, b]) is None


def test_expand_dims_counts_a_negative_axis_from_the_outputs_end():
    # (1, 64) has rank 2, its output rank 3: axis -2 is 1, a 1 inserted there
    assert output_shape("ExpandDims", (None, -2), [(1, 64)]) == (1, 1, 64)
    assert output_shape("ExpandDims", (None, -3), [(1, 64)]) == (1, 1, 64)  # -3 is 0


def test_no_shapes_broadcast_to_a_scalar():
    assert broadcast() == ()


def test_a_cast_to_a_target_the_ir_computes_cannot_tell():
    cast = _node("16_mf_llama_256", "Cast", "53231728838148748788")  # Cast(%8, %10), %10 = DtypeToEnum(...)
    assert isinstance(cast.inputs[1], NodeRef)
    assert output_dtype("Cast", cast.inputs, ["Bool"]) is None


def test_a_casts_short_target_is_named_long():
    assert output_dtype("Cast", (None, "F16"), ["Bool"]) == "Float16"  # as every value and row says it


def test_untold_inputs_give_no_type():
    assert output_dtype("Cast", (None,), ["Bool"]) is None  # no target
    assert output_dtype("Mul", (None, None), []) is None  # no input's type told


@pytest.mark.parametrize("operands", [
    (None, None, COMPUTED, False),  # a flag the IR computes
    (None, None),  # the flags as primitive attributes (older releases' MatMul(%a, %b)): not read here
])
def test_a_matmul_whose_flags_are_no_constants_cannot_tell(operands):
    # MatMulFuncImpl::InferShape: without transpose_a's value MindSpore returns x's shape as a
    # placeholder, not the product: (128, 8192) @ (128, 64) is (8192, 64) transposed, (128, 64) not
    assert output_shape("MatMul", operands, [(128, 8192), (128, 64)]) is None


@pytest.mark.parametrize("op, operands, shapes", [
    # Split's CheckValidation: "axis must in [-rank, rank)"; of (32768, 32): 2 and -3 are outside
    ("Split", (None, 2, 4), [(32768, 32)]),
    ("Split", (None, -3, 4), [(32768, 32)]),
    ("Concat", (None, 2), [(8192, 32)] * 4),
    ("Concat", (None, -3), [(8192, 32)] * 4),
    # GatherFuncImpl: -rank <= axis < rank of the table (zoo 16's (128, 512) slice)
    ("Gather", (None, None, 2, 0), [(128, 512), (1, 64)]),
    ("Gather", (None, None, -3, 0), [(128, 512), (1, 64)]),
    # ExpandDims: the axis within the output's three dimensions (axis + 3 >= 0, at most the end)
    ("ExpandDims", (None, 3), [(1, 64)]),
    ("ExpandDims", (None, -4), [(1, 64)]),
])
def test_an_axis_past_the_dimensions_cannot_tell(op, operands, shapes):
    assert output_shape(op, operands, shapes) is None


@pytest.mark.parametrize("op, operands, shapes, expected", [
    ("Split", (None, -2, 4), [(32768, 32)], (8192, 32)),  # -2 of two dimensions is 0
    ("Split", (None, 1, 4), [(32768, 32)], (32768, 8)),
    ("Concat", (None, -2), [(8192, 32)] * 2, (16384, 32)),
    ("Gather", (None, None, -2, 0), [(128, 512), (1, 64)], (1, 64, 512)),  # -2 of the table's two is 0
    ("Gather", (None, None, -1, 0), [(128, 512), (1, 64)], (128, 1, 64)),
    ("ExpandDims", (None, 2), [(1, 64)], (1, 64, 1)),  # the output's last
])
def test_an_axis_at_the_ends_of_the_range(op, operands, shapes, expected):
    assert output_shape(op, operands, shapes) == expected
