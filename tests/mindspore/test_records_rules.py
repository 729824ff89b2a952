"""Rules of MindSpore's layout records that bench/mutation_mindspore.py found no test holding, each on
a real record where one holds the case: the dry run's rank folders (fixtures/records/, and the UT
ports' fixtures/ut/*/rank_0/ kept by tools/regen_records.py). Each expectation is derived by hand
from the network script, the device count and MindSpore's definitions, written beside it."""
from __future__ import annotations

import json
import shutil

import pytest

from msinspect.mindspore import records
from msinspect.mindspore.records import (LAYOUT_FIELDS, RecordError, RecordReadError, _message_class, _unknown_fields,
                                         read_layout_record, read_strategy_checkpoint, record_of)
from tests.conftest import FIXTURES

RECORDS = FIXTURES / "records"
TP = RECORDS / "01_semi_auto_tp4dp2"
PP = RECORDS / "04_pipeline_hsdp_recompute"
OWN = RECORDS / "own_records"
#: MindSpore's UT test_layout_extend.py::test_layout_extend_moe, rank 0 of 16 (its port's script:
#: fixtures/ut/nets/b_test_layout_extend__test_layout_extend_moe.py).
MOE = FIXTURES / "ut" / "b_test_layout_extend__test_layout_extend_moe"


# ------------------------------------------------------------------ the layout file's header
def test_the_header_of_a_real_layout_file():
    # The MoE port: 16 devices, rank 0 compiled (config.json, run_ranks [0]) with MindSpore 2.10.0,
    # no pipeline; compile_net calls _cell_graph_executor.compile(net, x) with its default phase
    # "predict" (MindSpore names a phase "<phase>.<time>.<cell id>.<...>").
    config = json.loads((MOE / "config.json").read_text())
    record = read_layout_record(MOE / "rank_0" / "parameter_layout_0.json")
    assert (record.compile, record.rank, record.rank_size, record.pipeline_stages) == (0, 0, config["ranks"], 1)
    assert record.phase.startswith("predict.") and record.mindspore == config["mindspore"] == "2.10.0"
    assert record.parallel_mode == "semi_auto_parallel" and record.strategy_checkpoint == "strategy_0.ckpt"
    # zoo 01 is trained with Model.train: the phase of the training graph
    assert read_layout_record(TP / "rank_5" / "parameter_layout_0.json").phase.startswith("train.")


def _with_header(tmp_path, source, **header):
    """The real layout file ``source`` with header keys replaced (None: left out)."""
    data = json.loads(source.read_text())
    for key, value in header.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path = tmp_path / "parameter_layout_0.json"
    path.write_text(json.dumps(data))
    return path


def test_a_layout_file_without_phase_or_release_says_neither(tmp_path):
    # a file of a dry run that did not know them: the phase empty, the release not stated
    record = read_layout_record(_with_header(tmp_path, PP / "rank_5" / "parameter_layout_0.json", phase=None,
                                             mindspore=None))
    assert record.phase == "" and record.mindspore is None


def test_the_ranks_stage_is_a_whole_number():
    # zoo 04: 8 ranks in 2 stages of 4; rank 5 is in stage 5 // (8 // 2) = 1, an integer
    stages = {w.pipeline_stage for w in read_layout_record(PP / "rank_5" / "parameter_layout_0.json").weights.values()}
    assert stages == {1} and all(type(s) is int for s in stages)


def test_one_device_a_stage(tmp_path):
    # zoo 04's rank 5 file as two stages of one device each would write it: rank 1 of 2 is stage 1 // (2 // 2) = 1
    path = _with_header(tmp_path, PP / "rank_5" / "parameter_layout_0.json", rank=1, rank_size=2)
    assert {w.pipeline_stage for w in read_layout_record(path).weights.values()} == {1}


# ------------------------------------------------------------------ a dimension cut by several axes
def test_a_dimension_cut_by_two_of_three_device_axes():
    # Layout((2, 2, 4), ("vp", "dp", "mp")): counted from the right mp = 0, dp = 1, vp = 2. The
    # weight (8, 1024, 1024) is laid (("dp", "vp"), "None", "mp"): dimension 0 cut by dp and vp
    # (1, 2), dimension 1 whole (-1), dimension 2 by mp (0); its slice 8 / (2 * 2) = 2, 1024,
    # 1024 / 4 = 256. The dictionary gives the map of the weight reshaped to (2, 4, 1024, 1024)
    # ([1, 2, -1, 0], slice [1, 2, 1024, 256]); the checkpoint one map a dimension.
    record = record_of(MOE / "rank_0")
    name = "network.network.w"
    raw = json.loads((MOE / "rank_0" / "parameter_layout_0.json").read_text())["layouts"][name]
    assert raw[1] == [1, 2, -1, 0] and raw[7] == [1, 2, 1024, 256]
    layout, checkpoint = record.layouts[0].weights[name], record.checkpoints[0].weights[name]
    assert (layout.device_matrix, layout.slice_shape, layout.full_shape) == ((2, 2, 4), (2, 1024, 256), (8, 1024, 1024))
    assert layout.tensor_map == checkpoint.tensor_map == ((1, 2), -1, 0)
    assert layout.slices == 16  # every device holds its own slice: 2 * 2 * 4


def _moe_entry(tmp_path, change):
    """The MoE weight's real entry changed by ``change`` (a function of the entry)."""
    data = json.loads((MOE / "rank_0" / "parameter_layout_0.json").read_text())
    data["layouts"] = {"w": change(data["layouts"]["network.network.w"])}
    if len(data["layouts"]["w"]) < len(LAYOUT_FIELDS):
        data["fields"] = list(LAYOUT_FIELDS[:len(data["layouts"]["w"])])
    path = tmp_path / "parameter_layout_0.json"
    path.write_text(json.dumps(data))
    return read_layout_record(path).weights["w"]


def test_without_the_reshaped_slice_the_map_stays_as_written(tmp_path):
    # seven fields (full_shape, no slice_shape_after_reshape): nothing tells the reshaped
    # dimensions' sizes, so the dictionary's map of the reshaped weight is kept
    assert _moe_entry(tmp_path, lambda e: e[:7]).tensor_map == (1, 2, -1, 0)


def test_a_reshaped_slice_that_does_not_make_the_full_shape_keeps_the_map(tmp_path):
    # full shape (8, 1024, 2048): 2 * 2, 1024 make the first two, but 256 * 4 = 1024 is not 2048
    def wider(entry):
        return entry[:6] + [[8, 1024, 2048]] + entry[7:]

    assert _moe_entry(tmp_path, wider).tensor_map == (1, 2, -1, 0)


def test_a_one_dimensional_weight_with_a_size_one_dimension_left_over(tmp_path):
    # a (512,) bias cut ("dp", "tp") over (2, 4), reshaped to (2, 256, 1): map [1, 0, -1], slice
    # [1, 64, 1]; 1 * 2 * 64 * 4 = 512, and the last 1 joins the one dimension: ((1, 0),)
    def bias(entry):
        return [[2, 4], [1, 0, -1], [64], 0, True, "", [512], [1, 64, 1]] + entry[8:]

    assert _moe_entry(tmp_path, bias).tensor_map == ((1, 0),)


# ------------------------------------------------------------------ a merged checkpoint
def test_a_merged_pipeline_checkpoint_gives_each_weight_its_stage(tmp_path):
    # MindSpore's _merge_protobuf_strategy over zoo 04's two stages: each file's layout items renamed
    # "<stage>-<name>" (its stage: its first operator's), the items appended, current_stage 1.
    # Rank 0 is stage 0 (ranks 0-3) and holds the blocks; rank 5 is stage 1 and holds the head.
    merged = _message_class("ParallelStrategyMap")(current_stage=1)
    for rank in ("rank_0", "rank_5"):
        source = _message_class("ParallelStrategyMap")()
        source.ParseFromString((PP / rank / "strategy_0.ckpt").read_bytes())
        stage = source.parallel_strategy_item[0].parallel_strategys.stage
        for item in source.parallel_layout_item:
            item.param_name = f"{stage}-{item.param_name}"
        merged.parallel_strategy_item.extend(source.parallel_strategy_item)
        merged.parallel_layout_item.extend(source.parallel_layout_item)
    path = tmp_path / "merged.ckpt"
    path.write_bytes(merged.SerializeToString())
    checkpoint = read_strategy_checkpoint(path)
    assert checkpoint.current_stage == 1 and checkpoint.stage is None  # operators of both stages
    wq, head = checkpoint.weights["0-blocks.0.attention.wq"], checkpoint.weights["1-head.lm_head"]
    assert (wq.name, wq.pipeline_stage) == ("blocks.0.attention.wq", 0)
    assert (head.name, head.pipeline_stage) == ("head.lm_head", 1)


def test_only_a_dash_marks_a_stage(tmp_path):
    # MindSpore's loader splits a name at "-" only (`if "-" in param_name`): a name of digits
    # alone has no stage
    merged = _message_class("ParallelStrategyMap")()
    merged.ParseFromString((TP / "rank_0" / "strategy_0.ckpt").read_bytes())
    merged.parallel_layout_item[0].param_name = "7"
    path = tmp_path / "strategy_0.ckpt"
    path.write_bytes(merged.SerializeToString())
    weight = read_strategy_checkpoint(path).weights["7"]
    assert (weight.name, weight.pipeline_stage) == ("7", 0)  # the stage of the file's operators (zoo 01: 0)


# ------------------------------------------------------------------ a rank folder's order
def test_a_json_checkpoint_after_a_protobuf_one_is_the_later_compile(tmp_path):
    # compile 0 wrote a protobuf checkpoint (zoo 01 rank 0's), compile 1 a JSON one (own_records'
    # script's): compile order, so the folder's weights are the JSON's (w1, w2 and their moments)
    shutil.copy(TP / "rank_0" / "strategy_0.ckpt", tmp_path / "strategy_0.ckpt")
    shutil.copy(OWN / "script" / "strategy_0.json", tmp_path / "strategy_1.json")
    record = record_of(tmp_path)
    assert [c.format for c in record.checkpoints] == ["protobuf", "json"]
    assert set(record.weights) == {"w1", "w2", "moments.w1", "moments.w2"}


# ------------------------------------------------------------------ errors, exactly
def test_read_errors_say_what_and_where(tmp_path):
    def message(call):
        with pytest.raises(RecordReadError) as caught:
            call()
        return caught.value.path, caught.value.message

    missing = tmp_path / "strategy_0.ckpt"
    assert message(lambda: read_strategy_checkpoint(missing)) == (str(missing), "no such file")
    assert message(lambda: read_strategy_checkpoint(tmp_path)) == (str(tmp_path), "a folder, not a file")
    # a name longer than the file system allows (255 bytes): the system's own words
    long = tmp_path / ("x" * 300)
    assert message(lambda: read_strategy_checkpoint(long)) == (str(long), "cannot read: File name too long")
    assert message(lambda: record_of(long)) == (str(long), "cannot read: File name too long")


def test_a_damaged_checkpoint_names_four_of_its_missing_fields(tmp_path):
    # zoo 01 rank 0's checkpoint with the strategies of its first five operators lost: protobuf
    # names each missing required field; the message names the first four
    message = _message_class("ParallelStrategyMap")()
    message.ParseFromString((TP / "rank_0" / "strategy_0.ckpt").read_bytes())
    for item in message.parallel_strategy_item[:5]:
        item.ClearField("parallel_strategys")
    path = tmp_path / "strategy_0.ckpt"
    path.write_bytes(message.SerializePartialToString())
    with pytest.raises(RecordError) as caught:
        read_strategy_checkpoint(path)
    fields = ", ".join(f"parallel_strategy_item[{i}].parallel_strategys" for i in range(4))
    assert caught.value.message == f"not a strategy checkpoint: MindSpore's ParallelStrategyMap lacks required " \
                                   f"fields ({fields})"
    # a group checkpoint read as a strategy checkpoint: its restore list reads as an operator
    # without name or strategy, and no current_stage
    with pytest.raises(RecordError) as caught:
        read_strategy_checkpoint(TP / "rank_0" / "group_info_0.pb")
    assert caught.value.message == "not a strategy checkpoint: MindSpore's ParallelStrategyMap lacks required fields " \
                                   "(current_stage, parallel_strategy_item[0].node_name, " \
                                   "parallel_strategy_item[0].parallel_strategys)"


def _varint(n: int) -> bytes:
    out = b""
    while True:
        out += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            return out


def _with_a_foreign_operator(tmp_path):
    """Zoo 01 rank 0's checkpoint with one more operator that holds a field node_strategy.proto
    does not have (field 9): a file of another kind whose top level decodes cleanly."""
    item = _message_class("ParallelStrategyItem")(node_name="x")
    item.parallel_strategys.stage = 0
    inner = item.SerializeToString() + b"\x48\x01"  # field 9, a varint 1
    path = tmp_path / "strategy_0.ckpt"
    path.write_bytes((TP / "rank_0" / "strategy_0.ckpt").read_bytes() + b"\x12" + _varint(len(inner)) + inner)
    return path


def test_a_field_of_another_kind_inside_an_operator(tmp_path):
    path = _with_a_foreign_operator(tmp_path)
    with pytest.raises(RecordError) as caught:
        read_strategy_checkpoint(path)
    assert caught.value.message == "not a strategy checkpoint: it holds fields MindSpore's ParallelStrategyMap does " \
                                   "not have (a file of another kind)"


class _OldField:
    """A message field's descriptor as protobuf before 6.31 has it: ``label``, no ``is_repeated``."""

    LABEL_OPTIONAL, LABEL_REPEATED = 1, 3

    def __init__(self, desc):
        self.message_type = desc.message_type
        self.label = self.LABEL_REPEATED if desc.is_repeated else self.LABEL_OPTIONAL


class _OldMessage:
    def __init__(self, message):
        self.message = message

    def ListFields(self):  # noqa: N802 (protobuf's name)
        def wrap(desc, value):
            if desc.message_type is None:
                return value
            return [_OldMessage(v) for v in value] if desc.is_repeated else _OldMessage(value)
        return [(_OldField(d), wrap(d, v)) for d, v in self.message.ListFields()]


def test_unknown_fields_under_protobuf_before_6_31(tmp_path, monkeypatch):
    from google.protobuf import unknown_fields

    field_set = unknown_fields.UnknownFieldSet
    monkeypatch.setattr(unknown_fields, "UnknownFieldSet",
                        lambda m: field_set(m.message if isinstance(m, _OldMessage) else m))

    def parsed(path):
        message = _message_class("ParallelStrategyMap")()
        message.ParseFromString(path.read_bytes())
        return _OldMessage(message)

    assert _unknown_fields(parsed(_with_a_foreign_operator(tmp_path))) is True
    assert _unknown_fields(parsed(TP / "rank_0" / "strategy_0.ckpt")) is False


def test_the_first_read_builds_the_message_classes(monkeypatch):
    # the classes are made once, on the first read: from an empty cache, a real checkpoint reads
    monkeypatch.setattr(records, "_classes", {})
    checkpoint = read_strategy_checkpoint(TP / "rank_0" / "strategy_0.ckpt")
    assert checkpoint.weights["blocks.0.attention.wq"].tensor_map == (-1, 0)  # zoo 01: q_matmul's (1, 4) cut
    assert set(records._classes) == {name for name, *_ in records._MESSAGES}


def test_a_bad_slice_field_or_cut_names_the_file_and_the_parameter(tmp_path):
    # the real MoE entry with its slice shape, field size or one cut of its map not integers
    for change, found in [(lambda e: e[:2] + ["x"] + e[3:], "expected a list of integers, found 'x'"),
                          (lambda e: e[:3] + ["x"] + e[4:], "expected an integer, found 'x'"),
                          (lambda e: e[:1] + [[[1, "x"], [-1]]] + e[2:], "expected a list of integers, found [1, 'x']")]:
        with pytest.raises(RecordError) as caught:
            _moe_entry(tmp_path, change)
        assert str(caught.value) == f"{tmp_path / 'parameter_layout_0.json'}: parameter 'w': {found}"
