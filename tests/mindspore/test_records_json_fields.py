"""Every field of a JSON strategy checkpoint, read into its record: the tests that
bench/mutation_mindspore.py found missing. The files are written here in MindSpore's JSON form (the
keys of fixtures/records/own_records/script/strategy_0.json, which MindSpore 2.10 wrote), with each
value distinct so that a field read from the wrong key, or a default, shows."""
from __future__ import annotations

import json

import pytest

from msinspect.mindspore.records import OperatorStrategy, RecordError, WeightLayout, read_strategy_json


def write(tmp_path, data, name="strategy_0.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_every_field_of_a_json_checkpoint(tmp_path):
    path = write(tmp_path, {
        "current_stage": 3,
        "parallel_strategy_item": {"MatMul_emb": {"stage": 1, "parallel_strategy": [[2, 1], [1, 4]]},
                                   "ReLU_x": {"stage": 1}},
        "parallel_layout_item": {
            # a merged checkpoint's "stage-name": stage 1, parameter emb
            "1-emb": {"dev_matrix": [2, 4], "tensor_map": [1, -1], "tensor_shape": [8, 16], "field": 2,
                      "opt_weight_shard_step": 4, "opt_weight_shard_size": 2,
                      "param_split_shape": [5, 3], "indices_offset": [0, 5]},
            # the optional keys left out: MindSpore wrote none of them
            "w": {"dev_matrix": [8], "tensor_map": [[0], [-1]], "param_split_shape": [], "indices_offset": []},
        }})
    checkpoint = read_strategy_json(path)
    where = str(path)
    assert (checkpoint.path, checkpoint.format, checkpoint.current_stage) == (where, "json", 3)
    # an operator without "parallel_strategy": no strategy (one cut by a Layout, which it does not save)
    assert checkpoint.operators == (OperatorStrategy("MatMul_emb", 1, ((2, 1), (1, 4))),
                                    OperatorStrategy("ReLU_x", 1, ()))
    assert checkpoint.weights["1-emb"] == WeightLayout(
        name="emb", device_matrix=(2, 4), tensor_map=(1, -1), slice_shape=None, field_size=2, uniform_split=None,
        opt_shard_group=None, opt_shard_step=4, opt_shard_size=2, full_shape=(8, 16), pipeline_stage=1,
        split_shape=(5, 3), indices_offset=(0, 5), source=where)
    # no stage prefix: the stage every operator of the file is in (1); absent keys: 0, or not stated
    assert checkpoint.weights["w"] == WeightLayout(
        name="w", device_matrix=(8,), tensor_map=(0, -1), slice_shape=None, field_size=0, uniform_split=None,
        opt_shard_group=None, opt_shard_step=0, opt_shard_size=0, full_shape=None, pipeline_stage=1,
        split_shape=None, indices_offset=None, source=where)


def test_operators_of_several_stages_leave_a_weight_without_a_prefix_stageless(tmp_path):
    path = write(tmp_path, {"parallel_strategy_item": {"A": {"stage": 0, "parallel_strategy": []},
                                                       "B": {"stage": 1, "parallel_strategy": []}},
                            "parallel_layout_item": {"w": {"dev_matrix": [2], "tensor_map": [0]}}})
    checkpoint = read_strategy_json(path)
    assert checkpoint.current_stage == 0 and checkpoint.stage is None
    assert checkpoint.weights["w"].pipeline_stage is None
    # an operator with no "stage": stage 0
    only = read_strategy_json(write(tmp_path, {"parallel_strategy_item": {"A": {}}}, "operators.json"))
    assert only.operators == (OperatorStrategy("A", 0, ()),)


LAYOUT = {"dev_matrix": [2], "tensor_map": [0]}


@pytest.mark.parametrize("data, message", [
    ({"parallel_strategy_item": [1], "parallel_layout_item": {}},
     "not a strategy checkpoint or operator strategy file: parallel_strategy_item and parallel_layout_item must be "
     "objects"),
    ({"parallel_strategy_item": {}, "parallel_layout_item": [1]},
     "not a strategy checkpoint or operator strategy file: parallel_strategy_item and parallel_layout_item must be "
     "objects"),
    ({"parallel_strategy_item": {"M": 3}}, "operator 'M': expected an object, found 3"),
    ({"parallel_strategy_item": {"M": {"parallel_strategy": 3}}}, "operator 'M': parallel_strategy must be a list"),
    ({"parallel_strategy_item": {"M": {"stage": "x"}}}, "operator 'M': expected an integer, found 'x'"),
    ({"parallel_strategy_item": {"M": {"parallel_strategy": [["x"]]}}},
     "operator 'M': expected a list of integers, found ['x']"),
    ({"parallel_layout_item": {"w": {"dev_matrix": [2]}}},
     "parameter 'w': expected an object with dev_matrix and tensor_map, found {'dev_matrix': [2]}"),
    ({"parallel_layout_item": {"w": {"tensor_map": [0]}}},
     "parameter 'w': expected an object with dev_matrix and tensor_map, found {'tensor_map': [0]}"),
    ({"parallel_layout_item": {"w": 3}}, "parameter 'w': expected an object with dev_matrix and tensor_map, found 3"),
    ({"parallel_layout_item": {"w": {**LAYOUT, "dev_matrix": "x"}}}, "parameter 'w': expected a list of integers, "
                                                                     "found 'x'"),
    *[({"parallel_layout_item": {"w": {**LAYOUT, key: "x"}}}, f"parameter 'w': expected {kind}, found 'x'")
      for key, kind in (("field", "an integer"), ("opt_weight_shard_step", "an integer"),
                        ("opt_weight_shard_size", "an integer"), ("tensor_shape", "a list of integers"),
                        ("param_split_shape", "a list of integers"), ("indices_offset", "a list of integers"))],
    ({"current_stage": "x", "parallel_strategy_item": {}}, "current_stage: expected an integer, found 'x'"),
])
def test_a_bad_field_names_the_file_and_the_entry(tmp_path, data, message):
    path = write(tmp_path, data)
    with pytest.raises(RecordError) as caught:
        read_strategy_json(path)
    assert str(caught.value) == f"{path}: {message}"
    assert caught.value.path == str(path)


def test_a_json_file_that_is_no_object_says_what_it_should_be(tmp_path):
    path = tmp_path / "strategy_0.json"
    path.write_text("[1]")
    with pytest.raises(RecordError) as caught:
        read_strategy_json(path)
    assert str(caught.value) == f"{path}: not a strategy checkpoint or operator strategy file: a JSON list, not an object"
