"""What a record answers besides its fields (slices, the optimizer shard, the stage, a comparison,
an error's text) and what a layout rule reads of an IR node: the tests that
bench/mutation_mindspore.py found missing. Expectations follow MindSpore's definitions (named at
each) on records written here."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from msinspect.mindspore.layouts import Call, call_of
from msinspect.mindspore.records import (LAYOUT_FIELDS, LAYOUT_FORMAT, LayoutRecord, OperatorStrategy, RankRecord,
                                         RecordError, StrategyCheckpoint, WeightLayout, _message_class, agree,
                                         read_group_checkpoint, read_layout_record)


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
    # 2.10 prints PrimFunc_MatMul(x, w, transpose_a, transpose_b), which the parser reads as MatMul
    # (model.Node.op); a one-dimensional strategy as (4)
    call = call_of(node("MatMul", (REF, REF, False, True), {"transpose_a": True, "group": "g"}),
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


# ------------------------------------------------------------------ the layout file, the group checkpoint, a rank folder
def layout_file(tmp_path, entry, fields=None):
    path = tmp_path / "parameter_layout_0.json"
    path.write_text(json.dumps({"format": LAYOUT_FORMAT, "layouts": {"w": entry},
                                **({"fields": list(fields)} if fields else {})}))
    return path


def test_a_layout_entry_of_six_fields_as_mindspore_before_2_10_gives_them(tmp_path):
    # LAYOUT_FIELDS: device_matrix, tensor_map, slice_shape, field_size, uniform_split, opt_shard_group
    path = layout_file(tmp_path, [[2, 4], [1, -1], [4, 16], 0, True, ""])
    assert read_layout_record(path).weights["w"] == WeightLayout(
        name="w", device_matrix=(2, 4), tensor_map=(1, -1), slice_shape=(4, 16), field_size=0, uniform_split=True,
        opt_shard_group="", source=str(path))


def test_a_bad_layout_entry_names_the_file_and_the_parameter(tmp_path):
    good = [[2, 4], [1, -1], [4, 16], 0, True, ""]
    for entry, message in [
        (good[:5], f"parameter 'w': expected a list of at least 6 fields, found {good[:5]!r}"),
        (3, "parameter 'w': expected a list of at least 6 fields, found 3"),
        (good[:5] + [3], "parameter 'w': opt_shard_group: expected text, found 3"),
        (["x"] + good[1:], "parameter 'w': expected a list of integers, found 'x'"),
        ([good[0], "x"] + good[2:], "parameter 'w': expected a list of integers, found 'x'"),
        (good + ["x"], "parameter 'w': expected a list of integers, found 'x'"),  # full_shape
    ]:
        path = layout_file(tmp_path, entry)
        with pytest.raises(RecordError) as caught:
            read_layout_record(path)
        assert str(caught.value) == f"{path}: {message}"


def test_a_reshaped_map_with_a_size_one_dimension_left_over(tmp_path):
    # (512, 64) cut (("dp", "tp"), "None") over (2, 4): the dictionary's map of the weight reshaped
    # to (2, 256, 64, 1) is [1, 0, -1, -1] with the reshaped slice [1, 64, 64, 1]: 1 * 2, 64 * 4
    # make 512, 64 makes 64, and the last 1 joins the last dimension: ((1, 0), -1)
    entry = [[2, 4], [1, 0, -1, -1], [256, 64], 0, True, "", [512, 64], [1, 64, 64, 1]]
    path = layout_file(tmp_path, entry, LAYOUT_FIELDS[:8])
    assert read_layout_record(path).weights["w"].tensor_map == ((1, 0), -1)


def test_a_group_checkpoint_keeps_its_groups_and_restore_ranks(tmp_path):
    # node_strategy.proto's ParallelGroupMap: items (group_name, ranks) and ckpt_restore_rank_list
    message = _message_class("ParallelGroupMap")()
    item = message.parallel_group_item.add(group_name="2-1645")
    item.parallel_group_ranks.dim.extend([0, 4])
    message.ckpt_restore_rank_list.dim.extend([0, 1])
    path = tmp_path / "group_info_0.pb"
    path.write_bytes(message.SerializeToString())
    record = read_group_checkpoint(path)
    assert (record.path, record.groups, record.restore_ranks) == (str(path), {"2-1645": (0, 4)}, (0, 1))
    empty = tmp_path / "group_info_1.pb"
    empty.write_bytes(b"")
    with pytest.raises(RecordError) as caught:
        read_group_checkpoint(empty)
    assert str(caught.value) == f"{empty}: empty: not a group checkpoint"


def test_a_rank_folders_weights_are_the_last_compiles_that_has_any():
    def compiled(n, weights):
        return LayoutRecord(f"parameter_layout_{n}.json", n, 0, 8, "train", None, 1, None, None, weights)

    def checkpoint(n, weights):
        return StrategyCheckpoint(f"strategy_{n}.ckpt", "protobuf", 1, (), weights)

    a, b = {"w": weight()}, {"w": weight(size=2)}
    assert RankRecord("r", layouts=(compiled(0, a), compiled(1, b), compiled(2, {}))).weights == b
    assert RankRecord("r", checkpoints=(checkpoint(0, a), checkpoint(1, b), checkpoint(2, {}))).weights == b
    assert RankRecord("r", layouts=(compiled(0, {}),), checkpoints=(checkpoint(0, a),)).weights == a
    assert RankRecord("r").weights == {}


# ------------------------------------------------------------------ record_of
def strategy_ckpt(path, stage):
    # node_strategy.proto's ParallelStrategyMap with no items: current_stage is its one required field
    path.write_bytes(_message_class("ParallelStrategyMap")(current_stage=stage).SerializeToString())


def test_a_rank_folder_orders_each_kind_by_compile_number(tmp_path):
    from msinspect.mindspore.records import record_of

    strategy_ckpt(tmp_path / "strategy_1.ckpt", 2)
    strategy_ckpt(tmp_path / "strategy.ckpt", 1)  # no number: before the numbered ones
    (tmp_path / "strategy_0.json").write_text(json.dumps({"current_stage": 3, "parallel_strategy_item": {}}))
    record = record_of(tmp_path)
    assert record.folder == str(tmp_path)
    assert [(c.path.rsplit("/", 1)[1], c.format) for c in record.checkpoints] == [
        ("strategy.ckpt", "protobuf"), ("strategy_0.json", "json"), ("strategy_1.ckpt", "protobuf")]


def test_a_rank_folder_with_groups_only_or_nothing(tmp_path):
    from msinspect.mindspore.records import RecordReadError, record_of

    message = _message_class("ParallelGroupMap")()
    message.ckpt_restore_rank_list.dim.extend([0])
    (tmp_path / "group_info_0.pb").write_bytes(message.SerializeToString())
    assert len(record_of(tmp_path).groups) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert record_of(empty) is None
    with pytest.raises(RecordReadError) as caught:
        record_of(tmp_path / "none")
    assert str(caught.value) == f"{tmp_path / 'none'}: no such folder"
    with pytest.raises(RecordReadError) as caught:
        record_of(tmp_path / "group_info_0.pb")
    assert str(caught.value) == f"{tmp_path / 'group_info_0.pb'}: not a folder"


# ------------------------------------------------------------------ the protobuf checkpoint, the layout file's header
def test_every_field_of_a_protobuf_checkpoint(tmp_path):
    from msinspect.mindspore.records import read_strategy_checkpoint

    # node_strategy.proto's ParallelStrategyMap, each value distinct
    message = _message_class("ParallelStrategyMap")(current_stage=3)
    op = message.parallel_strategy_item.add(node_name="MatMul_emb")
    op.parallel_strategys.stage = 1
    op.parallel_strategys.parallel_strategy.add().dim.extend([2, 1])
    item = message.parallel_layout_item.add(param_name="emb")
    layouts = item.parallel_layouts
    layouts.dev_matrix.add().dim.extend([2, 4])
    layouts.tensor_map.add().dim.extend([1, -1])
    layouts.param_split_shape.add().dim.extend([5, 3])
    layouts.indices_offset.add().dim.extend([0, 5])
    layouts.field, layouts.opt_weight_shard_step, layouts.opt_weight_shard_size = 2, 4, 2
    path = tmp_path / "strategy_0.ckpt"
    path.write_bytes(message.SerializeToString())
    checkpoint = read_strategy_checkpoint(path)
    assert (checkpoint.path, checkpoint.format, checkpoint.current_stage) == (str(path), "protobuf", 3)
    assert checkpoint.operators == (OperatorStrategy("MatMul_emb", 1, ((2, 1),)),)
    # no stage prefix: the stage of the file's operators (1)
    assert checkpoint.weights["emb"] == WeightLayout(
        name="emb", device_matrix=(2, 4), tensor_map=(1, -1), slice_shape=None, field_size=2, uniform_split=None,
        opt_shard_group=None, opt_shard_step=4, opt_shard_size=2, pipeline_stage=1, split_shape=(5, 3),
        indices_offset=(0, 5), source=str(path))
    # a parameter with a device matrix but no tensor map
    bad = message.parallel_layout_item.add(param_name="w")
    bad.parallel_layouts.dev_matrix.add().dim.extend([2])
    bad.parallel_layouts.field, bad.parallel_layouts.opt_weight_shard_step = 0, 0
    bad.parallel_layouts.opt_weight_shard_size = 0
    path.write_bytes(message.SerializeToString())
    with pytest.raises(RecordError) as caught:
        read_strategy_checkpoint(path)
    assert str(caught.value) == f"{path}: parameter 'w': no device matrix or tensor map"


def test_the_layout_files_header(tmp_path):
    # the rank's stage: rank // (rank_size // pipeline_stages): rank 5 of 8 in 2 stages is stage 1
    path = tmp_path / "parameter_layout_0.json"
    entry = [[2], [0], [4], 0, True, ""]
    path.write_text(json.dumps({"format": LAYOUT_FORMAT, "rank": 5, "rank_size": 8, "pipeline_stages": 2,
                                "layouts": {"w": entry}}))
    assert read_layout_record(path).weights["w"].pipeline_stage == 1
    for header, message in [
        ({"rank": 5}, None), ({"rank_size": 8, "pipeline_stages": 2}, None),
        ({"format": "other"}, f"not a parameter layout file: its format is 'other', not {LAYOUT_FORMAT!r} with a "
                              "layouts object"),
        ({"layouts": []}, f"not a parameter layout file: its format is {LAYOUT_FORMAT!r}, not {LAYOUT_FORMAT!r} "
                          "with a layouts object"),
        ({"fields": ["a"] * 6}, f"its fields {['a'] * 6} do not begin with {list(LAYOUT_FIELDS[:6])}"),
        ({"rank": "x"}, "rank: expected an integer, found 'x'"),
    ]:
        path.write_text(json.dumps({"format": LAYOUT_FORMAT, "layouts": {"w": entry}, **header}))
        if message is None:  # without all three, no stage
            assert read_layout_record(path).weights["w"].pipeline_stage is None
            continue
        with pytest.raises(RecordError) as caught:
            read_layout_record(path)
        assert str(caught.value) == f"{path}: {message}"
