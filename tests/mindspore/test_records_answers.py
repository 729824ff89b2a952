"""What a record answers besides its fields (slices, the optimizer shard, the stage, a comparison,
an error's text) and what a layout rule reads of an IR node: the tests that
bench/mutation_mindspore.py found missing. Expectations follow MindSpore's definitions (named at
each) on records written here."""
from __future__ import annotations

from types import SimpleNamespace

from msinspect.mindspore.layouts import Call, call_of
from msinspect.mindspore.records import OperatorStrategy, RecordError, StrategyCheckpoint, WeightLayout, agree


def weight(device_matrix=(2, 4), tensor_map=(0, -1), group=None, size=None, step=None, source="strategy_0.ckpt"):
    return WeightLayout(name="w", device_matrix=device_matrix, tensor_map=tensor_map, slice_shape=None, field_size=0,
                        uniform_split=None, opt_shard_group=group, opt_shard_step=step, opt_shard_size=size,
                        source=source)


def layout(group="", **kw):
    return weight(group=group, source="/rank_0/parameter_layout_0.json", **kw)


# ------------------------------------------------------------------ slices and the optimizer shard
def test_slices_count_the_axes_the_map_names():
    # matrix (2, 4), map (0, -1): axis 0 (the last, 4) cuts the first dimension: 4 slices
    assert weight().slices == 4
    assert weight(tensor_map=(1, 0)).slices == 8
    # a map naming an axis the matrix lacks cuts nothing by it
    assert weight(tensor_map=(2, -1)).slices == 1


def test_optimizer_shard_ranks_as_mindspores_loader_resolves_them():
    # _extract_layout_item: size -1 is every rank holding the same slice: 8 devices / 4 slices = 2
    ranks = weight(size=-1, step=4).opt_shard_ranks
    assert ranks == 2 and isinstance(ranks, int)
    assert weight(size=4).opt_shard_ranks == 4
    assert weight(size=0).opt_shard_ranks == 1  # not sharded: one rank holds its slice
    assert weight().opt_shard_ranks is None  # a layout names a group, not a size
    # sharded: a group, or a size other than 0 and 1
    assert weight(size=2).opt_sharded and weight(group="g").opt_sharded
    assert not weight(size=1).opt_sharded and not weight(size=0).opt_sharded and not weight(group="").opt_sharded


def test_a_file_of_operators_in_several_stages_has_no_stage():
    def checkpoint(*stages):
        return StrategyCheckpoint("s.json", "json", 1, tuple(OperatorStrategy(f"op{s}", s, ()) for s in stages))

    assert checkpoint(1, 1).stage == 1
    assert checkpoint(0, 1).stage is None


# ------------------------------------------------------------------ agree
def test_agree_names_each_difference_with_both_files():
    assert agree(layout(), weight()) == []
    assert agree(layout(device_matrix=(8,)), weight()) == [
        "device_matrix: (8,) in parameter_layout_0.json, (2, 4) in strategy_0.ckpt"]
    assert agree(layout(group="g"), weight(size=0, step=0)) == [
        "optimizer shard: group 'g' in parameter_layout_0.json, size 0 step 0 in strategy_0.ckpt"]


def test_agree_holds_the_shard_group_to_the_checkpoints_size_and_step():
    # the group of a weight sharded over 2 ranks 4 apart: (0, 4) with size 2 step 4 agrees
    assert agree(layout(group="g"), weight(size=2, step=4), {"g": (0, 4)}) == []
    assert agree(layout(group="g"), weight(size=2, step=4)) == []  # no group checkpoint: not compared
    assert agree(layout(group="g"), weight(size=2, step=4), {}) == [
        "optimizer shard: group 'g' is not in the group checkpoint"]
    # ranks 1 apart where the checkpoint says 4
    assert agree(layout(group="g"), weight(size=2, step=4), {"g": (0, 1)}) == [
        "optimizer shard: group 'g' holds ranks [0, 1]; the checkpoint says 2 ranks (size 2) step 4"]
    # four ranks where the checkpoint says 2, each 4 apart
    assert agree(layout(group="g"), weight(size=2, step=4), {"g": (0, 4, 8, 12)}) == [
        "optimizer shard: group 'g' holds ranks [0, 4, 8, 12]; the checkpoint says 2 ranks (size 2) step 4"]
    # a group of one rank has no step to compare: size -1 over (2,) with map (0,) is 2 // 2 = 1 rank
    assert agree(layout(group="g", device_matrix=(2,), tensor_map=(0,)),
                 weight(device_matrix=(2,), tensor_map=(0,), size=-1, step=2), {"g": (3,)}) == []


# ------------------------------------------------------------------ RecordError
def test_a_record_error_says_line_and_column_only_where_it_has_them():
    assert str(RecordError("f.json", "bad", 1, 5)) == "f.json:1:5: bad"
    assert str(RecordError("f.json", "bad")) == "f.json: bad"


# ------------------------------------------------------------------ call_of
def node(op, inputs, attrs=None):
    # call_of reads a node's op, inputs and primitive_attrs (msinspect.model.Node) and nothing else
    return SimpleNamespace(op=op, inputs=inputs, primitive_attrs=attrs or {})


REF = object()  # an operand that is another node's output: not a constant


def test_call_of_keeps_constants_and_the_attributes_the_rules_read():
    # 2.10 prints PrimFunc_MatMul(x, w, transpose_a, transpose_b); a one-dimensional strategy as (4)
    call = call_of(node("PrimFunc_MatMul", (REF, REF, False, True), {"transpose_a": True, "group": "g"}),
                   ((2, 1), 4))
    assert call == Call("MatMul", ((2, 1), (4,)), (None, None, False, True), (("transpose_a", True),))
    assert call_of(node("ReLU", ((1, 2), REF))) == Call("ReLU", (), ((1, 2), None))


def test_call_of_reads_a_sum_over_none_as_every_dimension():
    # ops.sum(x, dim=None, keepdim, dtype): SumExt(x, None, False, None); None is every dimension
    assert call_of(node("SumExt", ((1, 2), None, False, None))).operands == ((1, 2), (), False, None)
    # not for other operators, nor where dim is given
    assert call_of(node("ReduceSum", (REF, None))).operands == (None, None)
    assert call_of(node("SumExt", (REF, (1,), False, None))).operands == (None, (1,), False, None)
    assert call_of(node("SumExt", (REF,))).operands == (None,)
    assert call_of(node("MeanExt", (REF, None))).operands == (None, ())
