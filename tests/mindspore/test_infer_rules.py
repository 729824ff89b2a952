"""MindSpore's shape inference of its collectives (:func:`msinspect.mindspore.vocabulary.output_of`,
:func:`~msinspect.mindspore.vocabulary.input_of`), against the shapes MindSpore itself printed.

The rules, from ``mindspore/python/mindspore/ops/operations/comm_ops.py``:

- AllReduce, Broadcast, the mirror and virtual operators: the input's shape (``infer_shape``
  returns ``x_shape``);
- AllGather (and ``_HostAllGather``, the optimizer's ``_MicroStepAllGather`` /
  ``_MiniStepAllGather``): ``x_shape[0] * rank_size``;
- ReduceScatter: ``x_shape[0] // rank_size``, which must divide (``ValueError`` else);
- AlltoAll: ``x_shape[concat_dim] * split_count``, then ``x_shape[split_dim] / split_count``, which
  must divide; the axes index the shape as a Python list (``-1`` is the last; out of range is an
  error); a dynamic dimension (negative) stays as it is.

``rank_size`` (the primitive's attribute, the group's size) decides where it is written; the
group's size given by the caller only where it is not.

After the parallel pass MindSpore re-infers every shape at the rank: the validate files print each
collective's input and output as MindSpore computed them, which the rules must give back both
ways. The cases below are worked out by hand from the printed input and the attributes.
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache

import pytest

from msinspect.mindspore.vocabulary import SHAPE_RULES, input_of, output_of
from msinspect.model import Node
from msinspect.parser import parse_file
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
#: The zoo's jobs whose validate file (rank 0) has a collective of each rule.
VALIDATED = ("12_mf_llama_tp8", "13_mf_llama_pp_interleave", "14_mf_llama_seq_parallel", "15_mf_llama_moe_ep8",
             "16_mf_llama_256", "17_dynamic_shape_8", "18_doc_pipeline_parallel", "19_doc_optimizer_parallel",
             "20_doc_high_dimension_tp", "21_doc_layout_two_axes")


@lru_cache(maxsize=None)
def _collectives(job: str) -> tuple[Node, ...]:
    path = next((ZOO / job / "rank_0").glob("*_validate_*.ir.gz"))
    return tuple(n for n in parse_file(path).nodes() if n.op in SHAPE_RULES)


def _node(job: str, op: str, name: str | None) -> Node:
    return next(n for n in _collectives(job) if n.op == op and n.instance_name == name)


def _printed(node: Node) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    first = node.input_types[0] if node.input_types else None
    out = node.output_types[0] if len(node.output_types) == 1 else None
    if first is None or out is None or first.shape is None or out.shape is None:
        return None
    return first.shape, out.shape


def _ints(shape) -> bool:
    return shape is not None and all(type(v) is int for v in shape)


@pytest.mark.parametrize("job", VALIDATED)
def test_the_rules_give_back_what_mindspore_printed(job):
    """Every collective of a rule in the file: its output from its input, and its input from its
    output, as MindSpore printed them (no group size given: the attributes say it)."""
    checked = 0
    for node in _collectives(job):
        printed = _printed(node)
        if printed is None:
            continue
        shape_in, shape_out = printed
        assert output_of(node, shape_in, None) == shape_out, (node.op, node.instance_name, shape_in)
        assert input_of(node, shape_out, None) == shape_in, (node.op, node.instance_name, shape_out)
        assert _ints(output_of(node, shape_in, None)) and _ints(input_of(node, shape_out, None))
        checked += 1
    assert checked


@pytest.mark.parametrize("job, op, name, shape_in, shape_out", [
    # zoo 19: the optimizer gathers its weight's 8 slices: 64 * 8 = 512 rows
    ("19_doc_optimizer_parallel", "AllGather", "parallel_optimizer_allgather_not_recompute", (64, 784), (512, 784)),
    # ... and scatters the gradient: 512 / 8 = 64
    ("19_doc_optimizer_parallel", "ReduceScatter", "grad_parallel_optimizer_allgather_not_recompute",
     (512, 512), (64, 512)),
    # zoo 20: split_count 4, split_dim 3 (128 / 4 = 32), concat_dim 1 (1024 * 4 = 4096)
    ("20_doc_high_dimension_tp", "AlltoAll", "redistribution_op_14528741814808112071AlltoAll_",
     (1, 1024, 2, 128), (1, 4096, 2, 32)),
    # zoo 21: split_count 2, split_dim 4 (392 / 2 = 196), concat_dim 0 (1 * 2 = 2)
    ("21_doc_layout_two_axes", "AlltoAll", "redistribution_op_2979661217192472970AlltoAll_",
     (1, 1, 32, 2, 392), (2, 1, 32, 2, 196)),
    # zoo 15: split_count 4, split_dim -1 (the last: 4 / 4 = 1), concat_dim -2 (the first of two: 1 * 4)
    ("15_mf_llama_moe_ep8", "AlltoAll", None, (1, 4), (4, 1)),
    # zoo 13: the mirror's gradient sums in place: the shape stays
    ("13_mf_llama_pp_interleave", "AllReduce", "grad_mirror_MirrorMicroStepOperator", (512, 512), (512, 512)),
    # zoo 17: a dynamic first dimension stays dynamic through the gather (rank_size 4)
    ("17_dynamic_shape_8", "AllGather", "redistribution_op_6034215174989802841AllGather_", (-1, 32), (-1, 32)),
])
def test_worked_by_hand(job, op, name, shape_in, shape_out):
    node = _node(job, op, name)
    assert _printed(node) == (shape_in, shape_out)
    assert output_of(node, shape_in, None) == shape_out
    assert input_of(node, shape_out, None) == shape_in
    assert _ints(output_of(node, shape_in, None)) and _ints(input_of(node, shape_out, None))


@pytest.fixture(scope="module")
def gather() -> Node:
    """Zoo 19's optimizer AllGather: ``rank_size`` 8."""
    return _node("19_doc_optimizer_parallel", "AllGather", "parallel_optimizer_allgather_not_recompute")


@pytest.fixture(scope="module")
def scatter() -> Node:
    """Zoo 19's ReduceScatter of the gradient: ``rank_size`` 8."""
    return _node("19_doc_optimizer_parallel", "ReduceScatter", "grad_parallel_optimizer_allgather_not_recompute")


@pytest.fixture(scope="module")
def alltoall() -> Node:
    """Zoo 20's AlltoAll: split_count 4, split_dim 3, concat_dim 1."""
    return _node("20_doc_high_dimension_tp", "AlltoAll", "redistribution_op_14528741814808112071AlltoAll_")


def _without(node: Node, *keys: str, **values) -> Node:
    attrs = {k: v for k, v in node.primitive_attrs.items() if k not in keys}
    return dataclasses.replace(node, primitive_attrs={**attrs, **values})


def test_rank_size_is_the_groups_size(gather, scatter):
    """``rank_size`` 8 is the group's size whatever the caller says; without it, the caller's."""
    assert output_of(gather, (64, 784), 2) == (512, 784)
    assert input_of(scatter, (64, 512), 2) == (512, 512)
    bare = _without(gather, "rank_size")
    assert output_of(bare, (64, 784), 2) == (128, 784)     # 64 * 2
    assert input_of(bare, (128, 784), 2) == (64, 784)      # undone: 128 / 2
    assert output_of(bare, (64, 784), 1) == (64, 784)      # a group of one gathers nothing
    assert output_of(_without(scatter, "rank_size"), (512, 512), 4) == (128, 512)  # 512 / 4


@pytest.mark.parametrize("n", [None, 0, -2])
def test_no_group_size_is_no_shape(gather, scatter, n):
    """Without ``rank_size`` and with no group size known (or none that is a size): cannot tell."""
    assert output_of(_without(gather, "rank_size"), (64, 784), n) is None
    assert output_of(_without(scatter, "rank_size"), (512, 512), n) is None
    assert input_of(_without(gather, "rank_size"), (512, 784), n) is None


def test_what_does_not_divide_is_no_shape(gather, scatter, alltoall):
    """ReduceScatter needs its first dimension divisible by the group (``ValueError`` in
    MindSpore); an AllGather's output not a multiple of its group is no gather's; AlltoAll needs
    its split dimension divisible by ``split_count``."""
    assert output_of(scatter, (500, 512), None) is None        # 500 = 8 * 62 + 4
    assert input_of(gather, (500, 784), None) is None
    assert output_of(alltoall, (1, 1024, 2, 130), None) is None  # 130 = 4 * 32 + 2
    assert input_of(alltoall, (1, 4098, 2, 32), None) is None    # undone: 4098 is no 4 * rows


def test_a_scalar_cannot_be_gathered_or_exchanged(gather, scatter, alltoall):
    """Dimension 0 (AllGather, ReduceScatter) or ``split_dim`` 3 of a scalar does not exist."""
    assert output_of(gather, (), None) is None
    assert output_of(scatter, (), None) is None
    assert output_of(alltoall, (), None) is None


def test_identity_rules_and_no_rule():
    """AllReduce and the mirrors keep any shape (a scalar too); an operator with no rule (MatMul)
    or no shape: None."""
    reduce = _node("13_mf_llama_pp_interleave", "AllReduce", "grad_mirror_MirrorMicroStepOperator")
    for shape in ((512, 512), (), (3,)):
        assert output_of(reduce, shape, None) == shape and input_of(reduce, shape, None) == shape
    assert output_of(reduce, None, 4) is None and input_of(reduce, None, 4) is None
    matmul = dataclasses.replace(reduce, op="MatMul")
    assert output_of(matmul, (512, 512), 4) is None and input_of(matmul, (512, 512), 4) is None


@pytest.mark.parametrize("attrs, shape, out", [
    ({"split_dim": -1, "concat_dim": -4}, (4, 2, 3, 8), (16, 2, 3, 2)),     # -1 is axis 3, -4 axis 0
    ({"split_dim": 3, "concat_dim": -3}, (4, 2, 3, 8), (4, 8, 3, 2)),       # -3 is axis 1
    ({"split_dim": -5}, (4, 2, 3, 8), None),                                # no axis -5 of four
    ({"split_dim": 4}, (4, 2, 3, 8), None),                                 # no axis 4
    ({"concat_dim": -5}, (4, 2, 3, 8), None),
    ({"concat_dim": 4}, (4, 2, 3, 8), None),
    ({"split_count": 0}, (4, 2, 3, 8), None),                               # no parts
    ({"split_count": None}, (4, 2, 3, 8), None),                            # not written: cannot tell
    ({"split_dim": None}, (4, 2, 3, 8), None),
    ({"concat_dim": None}, (4, 2, 3, 8), None),
    ({"split_count": 2}, (4, 2, 3, 8), (4, 4, 3, 4)),                       # 2 * 2, 8 / 2
    ({"split_count": 1}, (4, 2, 3, 8), (4, 2, 3, 8)),                       # a group of one: as it was
    ({"split_dim": -4, "concat_dim": 3}, (8, 2, 3, 4), (2, 2, 3, 16)),      # -4 is axis 0: 8 / 4; 4 * 4
])
def test_alltoall_axes(alltoall, attrs, shape, out):
    """Zoo 20's AlltoAll with other attributes (``split_count`` 4, ``split_dim`` 3, ``concat_dim``
    1 unless changed): its axes index the shape as a Python list does."""
    changed = {k: v for k, v in attrs.items() if v is not None}
    node = _without(alltoall, *attrs, **changed)
    assert output_of(node, shape, None) == out
    if out is not None:
        assert input_of(node, out, None) == shape


def test_a_virtual_assign_add_gives_its_first_input():
    """``_VirtualAssignAdd(x, accumulator)`` (zoo 13 at step_parallel_end: the embedding table and
    its ``accu_grads`` before the Gather) does nothing in the forward: MindSpore's infer returns
    x's shape (``_VirtualAssignAdd.infer_shape`` in ``ops/operations/comm_ops.py``), the rank's
    (512, 512) slice of the (1024, 512) table, and the inverse gives it back."""
    path = next((ZOO / "13_mf_llama_pp_interleave" / "rank_0").glob("step_parallel_end_*.ir.gz"))
    node = next(n for n in parse_file(path).nodes() if n.op == "_VirtualAssignAdd")
    assert output_of(node, (512, 512), None) == (512, 512)
    assert input_of(node, (512, 512), None) == (512, 512)
