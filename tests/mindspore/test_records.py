"""MindSpore's own record of its layouts, read without MindSpore (msinspect.mindspore.records), on
the real files msinspect's dry run keeps (fixtures/records/, made by tools/regen_records.py).

The layouts of the weights below were worked out by hand from the network scripts and the device
counts before any record file was produced (MindSpore's definitions: size-1 device axes removed,
tensor map counted from the right of the device matrix, -1 = not cut). Where the files then
disagreed, the entry says so and what settled it.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from msinspect.errors import EXIT_CANNOT_READ, EXIT_FINDING, MsInspectError
from msinspect.mindspore import records
from msinspect.mindspore.records import (RecordError, RecordReadError, agree, is_record_file, read_group_checkpoint,
                                         read_layout_record, read_strategy_checkpoint, read_strategy_json, record_of)
from tests.conftest import FIXTURES, ROOT, invoke

RECORDS = FIXTURES / "records"
TP = RECORDS / "01_semi_auto_tp4dp2"
PP = RECORDS / "04_pipeline_hsdp_recompute"
OWN = RECORDS / "own_records"
TWO_AXES = RECORDS / "two_axes_layout"
RANK_FOLDERS = [TP / "rank_0", TP / "rank_5", PP / "rank_0", PP / "rank_5"]

# (folder, weight) -> (device matrix, tensor map, slice shape, full shape, optimizer-shard ranks,
# checkpoint step, pipeline stage), by hand.
BY_HAND = {
    # zoo 01: 8 ranks, semi_auto, dp 2 x tp 4, no optimizer shard, no pipeline.
    # q_matmul ((2, 1), (1, 4)): MatMul's device matrix [a, b, c] = [2, 1, 4] -> [2, 4]; the
    # weight is (b, c): b was removed (-1), c is axis 0 from the right.
    (TP / "rank_0", "blocks.0.attention.wq"): ((2, 4), (-1, 0), (512, 128), (512, 512), None, 0, 0),
    # out_matmul ((2, 4), (4, 1)): [2, 4, 1] -> [2, 4]; (b, c) -> (0, -1).
    (TP / "rank_5", "blocks.0.attention.wo"): ((2, 4), (0, -1), (128, 512), (512, 512), None, 0, 0),
    # lm_matmul ((2, 1), (1, 4)): as q_matmul, vocabulary cut by 4.
    (TP / "rank_0", "head.lm_head"): ((2, 4), (-1, 0), (512, 256), (512, 1024), None, 0, 0),
    # zoo 04: 8 ranks, 2 stages of dp 2 x tp 2, hsdp (optimizer_weight_shard_size -1: over the
    # whole data-parallel repeat). Rank 0 is stage 0 (ranks 0-3, rank = 2 dp + tp): wq is
    # repeated over dp, so its optimizer shard is over ranks {0, 2}, step 2.
    # By hand the slice was (256, 256), cut by the optimizer shard too; the layout dictionary
    # states the tensor-layout slice (512, 256) and the group: MindSpore's loader
    # (mindspore.parallel._tensor._load_tensor_by_layout) cuts by device matrix and tensor map,
    # then takes its part of np.split(slice, group size) along the first dimension.
    (PP / "rank_0", "blocks.0.attention.wq"): ((2, 2), (-1, 0), (512, 256), (512, 512), (0, 2), 2, 0),
    # rank 5 is stage 1 (ranks 4-7): dp 0, tp 1; lm_matmul ((2, 1), (1, 2)); shard over {5, 7}.
    # By hand (256, 512); (512, 512) for the reason above.
    (PP / "rank_5", "head.lm_head"): ((2, 2), (-1, 0), (512, 512), (512, 1024), (5, 7), 2, 1),
}


def _folder_weight(item):
    folder, weight = item
    return f"{folder.parent.name}/{folder.name}/{weight}"


@pytest.mark.parametrize("where", list(BY_HAND), ids=_folder_weight)
def test_the_weights_worked_out_by_hand(where):
    folder, name = where
    devices, tensor_map, slice_shape, full_shape, group_ranks, step, stage = BY_HAND[where]
    record = record_of(folder)
    layout, checkpoint = record.layouts[0].weights[name], record.checkpoints[0].weights[name]
    assert (layout.name, layout.device_matrix, layout.tensor_map, layout.slice_shape, layout.full_shape) == \
        (name, devices, tensor_map, slice_shape, full_shape)
    assert (layout.field_size, layout.uniform_split, layout.pipeline_stage) == (0, True, stage)
    assert (checkpoint.device_matrix, checkpoint.tensor_map, checkpoint.pipeline_stage) == (devices, tensor_map, stage)
    assert checkpoint.opt_shard_step == step
    if group_ranks is None:
        assert layout.opt_shard_group == "" and checkpoint.opt_shard_size == 0 and not layout.opt_sharded
    else:
        assert record.groups[0].groups[layout.opt_shard_group] == group_ranks
        assert checkpoint.opt_shard_size == -1 and checkpoint.opt_shard_ranks == len(group_ranks)
        assert layout.opt_sharded and checkpoint.opt_sharded
    assert record.weights is record.layouts[0].weights


def _slice_of(w) -> tuple[int, ...]:
    """The full shape cut by the device matrix and tensor map (MindSpore's definitions)."""
    out = []
    for size, axes in zip(w.full_shape, w.tensor_map):
        for axis in (axes if isinstance(axes, tuple) else (axes,)):
            if axis >= 0:
                size //= w.device_matrix[len(w.device_matrix) - 1 - axis]
        out.append(size)
    return tuple(out)


@pytest.mark.parametrize("folder", RANK_FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_checkpoint_and_the_layout_dictionary_agree_on_every_weight(folder):
    """Every parameter of the strategy checkpoint (weights and optimizer states, as
    ``only_trainable_params`` False asks) is in the layout dictionary with the same device matrix,
    tensor map, field size and optimizer shard (the group's ranks against the checkpoint's size
    and step), but for the known exception: the checkpoint marks the ``accu_grads.*`` buffers of
    gradient accumulation as optimizer-sharded while the layout dictionary keeps them whole. The
    layout dictionary holds the graph inputs beside them; its slices are its full shapes cut by
    its own device matrix and tensor map."""
    record = record_of(folder)
    assert len(record.layouts) == len(record.checkpoints) == len(record.groups) == 1
    layout, checkpoint, groups = record.layouts[0], record.checkpoints[0], record.groups[0]
    assert layout.strategy_checkpoint == "strategy_0.ckpt" and layout.compile == 0
    assert set(layout.weights) - set(checkpoint.weights) == {"inputs0", "inputs1"}
    assert set(checkpoint.weights) <= set(layout.weights)
    disagree = {name: agree(layout.weights[name], w, groups.groups) for name, w in checkpoint.weights.items()}
    accu = {name for name in checkpoint.weights if name.startswith("accu_grads.")}
    assert {name for name, why in disagree.items() if why} == {n for n in accu if checkpoint.weights[n].opt_sharded}
    for name in accu:
        assert layout.weights[name].opt_shard_group == ""
        assert not agree(layout.weights[name], checkpoint.weights[name].__class__(
            **{**checkpoint.weights[name].__dict__, "opt_shard_size": 0}))
    assert any(name.startswith("adam_m.") for name in checkpoint.weights)
    for w in layout.weights.values():
        assert w.slice_shape == _slice_of(w), w


def test_pipeline_stages_and_accumulation_buffers():
    """Zoo 04: each rank's records hold its own stage's parameters only; ``accu_grads.*`` exist
    under pipeline (and none in zoo 01); the operators' stage is the rank's."""
    stage0, stage1 = record_of(PP / "rank_0"), record_of(PP / "rank_5")
    assert stage0.checkpoints[0].stage == 0 and stage1.checkpoints[0].stage == 1
    assert stage0.layouts[0].pipeline_stages == 2 and stage0.layouts[0].rank_size == 8
    assert {w.pipeline_stage for w in stage1.weights.values()} == {1}
    names0, names1 = set(stage0.weights), set(stage1.weights)
    assert "embed.embedding" in names0 and "head.lm_head" not in names0
    assert "head.lm_head" in names1 and "blocks.0.attention.wq" not in names1
    assert "accu_grads.head.lm_head" in names1
    assert not any(n.startswith("accu_grads.") for n in record_of(TP / "rank_0").weights)


def test_operator_strategies_of_the_checkpoint():
    """A checkpoint names each operator that uses a parameter by its type and first parameter."""
    ops = {op.name: op for op in record_of(TP / "rank_0").checkpoints[0].operators}
    assert ops["MatMul_blocks.0.attention.wq"].strategy == ((2, 1), (1, 4))
    assert ops["MatMul_blocks.0.attention.wo"].strategy == ((2, 4), (4, 1))
    assert ops["Gather_embed.embedding"].strategy == ((1, 1), (2, 1))
    assert ops["LayerNorm_blocks.0.ln1_gamma"].strategy == ((2, 1), (1,), (1,))
    assert {op.stage for op in ops.values()} == {0}
    pp = {op.name: op for op in record_of(PP / "rank_5").checkpoints[0].operators}
    assert pp["MatMul_head.lm_head"].strategy == ((2, 1), (1, 2)) and pp["MatMul_head.lm_head"].stage == 1


def test_the_json_forms_a_script_saves_itself():
    """An AutoParallel cell with its own ``save_param_strategy_file(...json)`` (all parameters) and
    ``save_operator_strategy_file``: the dry run left them alone, its layout file says where the
    checkpoint went, and the JSON checkpoint agrees with the layout dictionary."""
    record = record_of(OWN / "rank_0")
    assert record.checkpoints == () and len(record.layouts) == len(record.groups) == 1
    layout = record.layouts[0]
    assert layout.strategy_checkpoint == "<src>/strategy_0.json" and layout.parallel_mode == "auto_parallel"
    checkpoint = read_strategy_checkpoint(OWN / "script" / "strategy_0.json")
    assert checkpoint.format == "json" and set(checkpoint.weights) == {"w1", "w2", "moments.w1", "moments.w2"}
    w1 = checkpoint.weights["w1"]
    assert (w1.device_matrix, w1.tensor_map, w1.full_shape, w1.opt_shard_step, w1.opt_shard_size) == \
        ((2, 2), (-1, 0), (64, 256), 2, -1)
    for name, w in checkpoint.weights.items():
        assert agree(layout.weights[name], w, record.groups[0].groups) == [], name
        assert layout.weights[name].full_shape == w.full_shape
    assert record.groups[0].groups[layout.weights["w1"].opt_shard_group] == (0, 2)
    operators = read_strategy_json(OWN / "script" / "operators_0.json")
    assert operators.weights == {}
    by_name = {op.name.rsplit("/", 1)[1]: op.strategy for op in operators.operators}
    assert by_name["MatMul-op1"] == ((2, 1), (1, 2))  # matmul1, the script's cut
    assert by_name["MatMul-op0"] == ((2, 2), (2, 1))  # matmul2, by sharding propagation


def test_a_dimension_cut_by_two_device_axes():
    """``(("dp", "tp"), "None")`` on (512, 64): the checkpoint gives one map a dimension, the
    layout dictionary the map of the weight reshaped to (2, 256, 64) (``[1, 0, -1]``, reshaped
    slice ``[1, 64, 64]``); both read as ``((1, 0), -1)``."""
    record = record_of(TWO_AXES / "rank_0")
    layout, checkpoint = record.layouts[0].weights["w"], record.checkpoints[0].weights["w"]
    raw = json.loads((TWO_AXES / "rank_0" / "parameter_layout_0.json").read_text())["layouts"]["w"]
    assert raw[1] == [1, 0, -1] and raw[7] == [1, 64, 64]
    assert layout.tensor_map == checkpoint.tensor_map == ((1, 0), -1)
    assert (layout.device_matrix, layout.slice_shape, layout.full_shape) == ((2, 4), (64, 64), (512, 64))
    assert layout.slices == 8
    assert layout.slice_shape == _slice_of(layout) and agree(layout, checkpoint, record.groups[0].groups) == []
    # an operator cut by a Layout is named with no strategy: the checkpoint does not save layouts
    assert [(op.name, op.strategy) for op in record.checkpoints[0].operators] == [("MatMul_w", ())]


# ----------------------------------------------------------------------------- bad input
def _cut_in_an_item(data: bytes) -> bytes:
    """The file cut inside its last parameter's entry (protobuf has no end mark: a cut exactly
    between two entries reads as a shorter file)."""
    return data[:-7]


@pytest.mark.parametrize("reader, source, damage, message", [
    (read_strategy_checkpoint, TP / "rank_0/strategy_0.ckpt", _cut_in_an_item, "cut short or damaged"),
    (read_strategy_checkpoint, TP / "rank_0/group_info_0.pb", None, "lacks required fields"),
    (read_strategy_checkpoint, TP / "rank_0/parameter_layout_0.json", None, "do not decode"),
    (read_strategy_checkpoint, None, b"", "empty: not a strategy checkpoint"),
    (read_group_checkpoint, TP / "rank_0/strategy_0.ckpt", None, "fields MindSpore's ParallelGroupMap does not have"),
    (read_group_checkpoint, TP / "rank_0/group_info_0.pb", lambda d: d[:-3], "cut short or damaged"),
    (read_layout_record, TP / "rank_0/strategy_0.ckpt", None, "not UTF-8 text"),
    (read_layout_record, OWN / "script/strategy_0.json", None, "not a parameter layout file"),
    (read_layout_record, TP / "rank_0/parameter_layout_0.json", lambda d: d[:len(d) // 2], "not a parameter layout"),
    (read_strategy_json, TP / "rank_0/parameter_layout_0.json", None, "neither parallel_strategy_item"),
    (read_strategy_json, None, b'{"parallel_layout_item": {"w": {"dev_matrix": [2], "tensor_map": "x"}}}',
     "parameter 'w': expected a list of integers"),
], ids=["ckpt-cut", "ckpt-is-group", "ckpt-is-json", "ckpt-empty", "group-is-ckpt", "group-cut", "layout-is-binary",
        "layout-is-ckpt-json", "layout-cut", "json-is-layout", "json-bad-map"])
def test_bad_files_raise_a_record_error_naming_them(tmp_path, reader, source, damage, message):
    bad = tmp_path / ("bad.json" if reader in (read_layout_record, read_strategy_json) else "bad.ckpt")
    data = source.read_bytes() if source is not None else damage
    bad.write_bytes(damage(data) if callable(damage) else data)
    with pytest.raises(RecordError) as caught:
        reader(bad)
    error = caught.value
    assert isinstance(error, MsInspectError) and error.exit_code == EXIT_FINDING
    assert str(error).startswith(str(bad)) and message in str(error), str(error)
    # no protobuf (or json) traceback behind it
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error) and str(again) == str(error)


def test_a_json_fault_says_its_line_and_column(tmp_path):
    bad = tmp_path / "parameter_layout_0.json"
    bad.write_text('{\n "format": "msinspect parameter layout 1",\n "layouts": {,}\n}\n')
    with pytest.raises(RecordError) as caught:
        read_layout_record(bad)
    assert (caught.value.line, caught.value.column) == (3, 14)
    assert str(caught.value).startswith(f"{bad}:3:14: not a parameter layout file: ")


def test_missing_files_and_folders(tmp_path):
    for call in (lambda: read_strategy_checkpoint(tmp_path / "none.ckpt"), lambda: record_of(tmp_path / "none")):
        with pytest.raises(RecordReadError) as caught:
            call()
        assert caught.value.exit_code == EXIT_CANNOT_READ and str(tmp_path / "none") in str(caught.value)
    with pytest.raises(RecordReadError, match="a folder, not a file"):
        read_group_checkpoint(tmp_path)


def test_a_bad_file_in_a_rank_folder_names_itself(tmp_path):
    shutil.copytree(TP / "rank_0", tmp_path / "rank_0")
    (tmp_path / "rank_0" / "strategy_1.ckpt").write_bytes(b"\x08")  # current_stage begun, its value cut off
    with pytest.raises(RecordError, match=re.escape(str(tmp_path / "rank_0" / "strategy_1.ckpt"))):
        record_of(tmp_path / "rank_0")


# ----------------------------------------------------------------------------- a rank folder
def test_record_of_a_folder_without_records_is_none(tmp_path):
    assert record_of(tmp_path) is None
    shutil.copy(FIXTURES / "seed_002" / "step_parallel_begin_0041.excerpt.ir", tmp_path)
    (tmp_path / "notes.json").write_text("{}")
    assert record_of(tmp_path) is None


def test_record_of_keeps_compile_order(tmp_path):
    for n in (0, 2, 10):
        for name in ("parameter_layout_{}.json", "strategy_{}.ckpt", "group_info_{}.pb"):
            shutil.copy(TP / "rank_0" / name.format(0), tmp_path / name.format(n))
    record = record_of(tmp_path)
    assert [Path(r.path).name for r in record.layouts] == [f"parameter_layout_{n}.json" for n in (0, 2, 10)]
    assert [Path(r.path).name for r in record.checkpoints] == [f"strategy_{n}.ckpt" for n in (0, 2, 10)]
    assert [Path(r.path).name for r in record.groups] == [f"group_info_{n}.pb" for n in (0, 2, 10)]


def test_record_file_names():
    for name in ("parameter_layout_0.json", "parameter_layout_12.json", "strategy_3.ckpt", "strategy.ckpt",
                 "strategy.json", "group_info_0.pb", "group_info.pb"):
        assert is_record_file(name), name
    for name in ("step_parallel_end_0132.ir", "parameter_layout_x.json", "strategy_0.ckpt.tmp", "config.json",
                 "group_info_0.json"):
        assert not is_record_file(name), name


def test_the_dry_run_writes_the_names_the_reader_finds():
    """The dry-run worker imports no msinspect: its own constants must match the reader's."""
    tree = ast.parse((ROOT / "msinspect" / "dryrun" / "bootstrap.py").read_text())
    constants = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            value = ast.literal_eval(node.value) if not isinstance(node.value, ast.Call) else None
            for target in node.targets:
                if isinstance(target, ast.Tuple):
                    constants.update(zip((t.id for t in target.elts), value))
                elif isinstance(target, ast.Name):
                    constants[target.id] = value
    assert constants["LAYOUT_FORMAT"] == records.LAYOUT_FORMAT
    assert tuple(constants["LAYOUT_FIELDS"]) == records.LAYOUT_FIELDS
    for key in ("LAYOUT_NAME", "STRATEGY_NAME", "GROUP_NAME"):
        for n in (0, 7, 123):
            assert is_record_file(constants[key].format(n)), constants[key]


def test_the_launcher_keeps_the_records_when_it_prunes(tmp_path):
    from msinspect.dryrun.launcher import _prune

    for name in ("step_parallel_end_0132.ir", "21_validate_0714.ir", "hwopt_d_end_0200.ir", "parameter_layout_0.json",
                 "strategy_0.ckpt", "group_info_0.pb", "other.json"):
        (tmp_path / name).write_text("x")
    _prune(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "21_validate_0714.ir", "group_info_0.pb", "parameter_layout_0.json", "step_parallel_end_0132.ir",
        "strategy_0.ckpt"]


def test_the_run_record_lists_each_ranks_records(tmp_path):
    from types import SimpleNamespace

    from msinspect.dryrun.bootstrap import OWN_RECORD_MARK, RECORD_FAILED_MARK, RECORD_MARK
    from msinspect.dryrun.record import records as run_records
    from msinspect.dryrun.report import SimulatedRank

    ranks = []
    for rank, lines in ((0, [f"{RECORD_MARK} parameter_layout_0.json strategy_0.ckpt group_info_0.pb"]),
                        (3, [f"{OWN_RECORD_MARK} strategy checkpoint: /data/ckpt/strategy_3.json",
                             f"{RECORD_MARK} parameter_layout_0.json group_info_0.pb",
                             f"{RECORD_FAILED_MARK} the parameter layout: RuntimeError: no graph"])):
        folder = tmp_path / f"rank_{rank}"
        folder.mkdir()
        for name in lines[-1 if rank == 0 else 1].split()[4:] if rank == 0 else ("parameter_layout_0.json",
                                                                                "group_info_0.pb"):
            (folder / name).write_text("x")
        (folder / "step_parallel_end_0132.ir").write_text("x")
        log = tmp_path / f"rank_{rank}.log"
        log.write_text("\n".join(["[WARNING] something", *lines]) + "\n")
        ranks.append(SimulatedRank(rank=rank, ir_dir=folder, log=log))
    out = run_records(SimpleNamespace(ranks=ranks))
    assert out == {
        "records": {"0": ["group_info_0.pb", "parameter_layout_0.json", "strategy_0.ckpt"],
                    "3": ["group_info_0.pb", "parameter_layout_0.json"]},
        "script_records": {"3": ["strategy checkpoint: /data/ckpt/strategy_3.json"]},
        "record_failures": {"3": ["the parameter layout: RuntimeError: no graph"]},
    }


def test_parse_reads_only_the_ir_of_a_rank_folder_holding_records(tmp_path):
    """``msinspect parse`` (msinspect.dumps) passes the record files by."""
    rank = tmp_path / "rank_0"
    shutil.copytree(TP / "rank_0", rank)
    shutil.copy(FIXTURES / "seed_002" / "step_parallel_begin_0041.excerpt.ir", rank)
    result = invoke("--no-cache", "parse", rank, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [Path(r["file"]).name for r in rows] == ["step_parallel_begin_0041.excerpt.ir"], rows
    result = invoke("--no-cache", "parse", tmp_path, "--json")
    assert result.exit_code == 0 and len(json.loads(result.stdout)) == 1, result.output


# ----------------------------------------------------------------------------- without MindSpore
def test_reading_needs_neither_mindspore_nor_its_generated_module():
    """The reader's descriptor is built from its own table; reading all the fixtures imports
    protobuf's runtime but never MindSpore (nor pandas, Lark or networkx); importing the module
    does not even import protobuf."""
    code = ("import sys, msinspect.mindspore.records as r\n"
            "assert 'google.protobuf' not in sys.modules\n"
            f"for f in {[str(p) for p in RANK_FOLDERS]!r}: r.record_of(f)\n"
            "print(sorted(m for m in ('mindspore', 'pandas', 'lark', 'networkx') if m in sys.modules), "
            "'google.protobuf' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] True"


@pytest.mark.skipif(importlib.util.find_spec("mindspore") is None, reason="MindSpore is not installed")
def test_the_descriptor_is_mindsporess_own():
    """The descriptor written field by field serializes to the bytes MindSpore's generated
    ``node_strategy_pb2`` registers (read from its text, not imported)."""
    pb2 = Path(importlib.util.find_spec("mindspore").submodule_search_locations[0]) / "train" / "node_strategy_pb2.py"
    blob = ast.literal_eval(re.search(r"AddSerializedFile\((b'.*?')\)\n", pb2.read_text()).group(1))
    assert records.file_descriptor().SerializeToString() == blob
