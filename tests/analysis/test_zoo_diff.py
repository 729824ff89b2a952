"""diff aligns what survives renames and hashes, on the model zoo. By hand from gpt.py:
- zoo 01 (tp 4 x dp 2, no pipeline): ranks 0 and 4 are in different tensor-parallel groups (0-3,
  4-7): the row-parallel out_matmul and ffn_out_matmul of each of the 4 blocks reduce their partial
  sums over them, 8 forward AllReduces whose groups differ; there is no pipeline to be "the same"
  stage of. Both run the same network with the same strategies, so every operator of one has its
  counterpart in the other, and rank 0 and rank 4 hold the same columns (r % 4 = 0) of every weight.
- zoo 04 (2 pipeline stages): rank 0 holds embed + blocks 0-1, rank 4 blocks 2-3 + head; the
  optimizer's Assign / Muls of one stage's weights are not the other's, so they are "present in one
  rank only", never shape changes of the n-th Assign.
- zoo 01 and zoo 02 are two runs (run records of 8 and 64 ranks); zoo 01 and zoo 10 two runs of
  8 ranks each (their records name different scripts)."""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys

import pytest

from msinspect.analysis.dataflow.align import shape_dims
from msinspect.analysis.compare.ranks import _keyed, diff_ranks
from msinspect.mindspore.naming import stable_name
from msinspect.schema import is_missing
from msinspect.cli.diff_cmd import format_diff, stage_line
from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

ZOO = FIXTURES / "zoo"
TP4DP2 = ZOO / "01_semi_auto_tp4dp2"


@pytest.fixture(scope="module")
def tp4dp2_0_4():
    return diff_ranks(TP4DP2 / "rank_0", TP4DP2 / "rank_4")


@pytest.fixture(scope="module")
def pipeline_0_4():
    return diff_ranks(ZOO / "04_pipeline_hsdp_recompute" / "rank_0", ZOO / "04_pipeline_hsdp_recompute" / "rank_4")


def test_no_pipeline_is_not_the_same_stage(tp4dp2_0_4):
    line = stage_line(tp4dp2_0_4)
    assert "same pipeline stage" not in line and "no pipeline" in line
    assert tp4dp2_0_4.to_dict()["pipelined"] is False


def test_tensor_parallel_groups_differ(tp4dp2_0_4):
    comm = tp4dp2_0_4.comm
    forward = comm[(comm["kind"] == "forward") & comm["after"].isin(["out_matmul", "ffn_out_matmul"])]
    assert len(forward) == 8
    assert set(forward["left_group"]) == {(0, 1, 2, 3)} and set(forward["right_group"]) == {(4, 5, 6, 7)}
    assert tp4dp2_0_4.unaligned["communication"] == {"left": 0, "right": 0}


def test_every_operator_of_one_run_is_aligned(tp4dp2_0_4):
    assert tp4dp2_0_4.unaligned["operators"] == {"left": 0, "right": 0}
    assert tp4dp2_0_4.only.empty and tp4dp2_0_4.shapes.empty and tp4dp2_0_4.strategies.empty
    assert tp4dp2_0_4.slices.empty  # the same columns of every weight
    assert tp4dp2_0_4.warnings == []  # one run: no warning


def test_hash_named_communication_is_aligned():
    """MindSpore's generated names carry a hash that may differ between ranks and runs."""
    row = {"op": "AllReduce", "kind": "forward", "producer": "out_matmul", "consumers": ("attn_add",)}
    a = _keyed([{**row, "name": "forward_op_7137408040802222932"}], ("name", "op", "kind", "producer", "consumers"))
    b = _keyed([{**row, "name": "forward_op_1234567890123456789"}], ("name", "op", "kind", "producer", "consumers"))
    assert a.keys() == b.keys()


def test_updates_of_different_weights_are_not_paired(pipeline_0_4):
    d = pipeline_0_4
    assert "different pipeline stages" in stage_line(d)
    assert d.shapes.empty or not d.shapes["op"].isin(["Assign", "Muls", "ZerosLike"]).any()
    only = d.only
    assigns = only[only["op"] == "Assign"]
    assert any(isinstance(p, str) and p.startswith("blocks.0.") for p in assigns["param"])
    assert any(isinstance(p, str) and p.startswith("blocks.3.") for p in assigns["param"])
    counts = d.unaligned["communication"]
    assert counts["left"] > 0 and counts["right"] > 0  # each stage has its own communication
    assert "not aligned, so not compared" in format_diff(d)


def test_the_same_diff_whatever_the_hash_seed():
    """Python orders a set of strings differently in every process: a diff is one answer. Two
    seeds: an order that follows the hash differs between them (of the strings a diff orders,
    some two fall in another order under another seed)."""
    pipeline = ZOO / "04_pipeline_hsdp_recompute"
    outputs = set()
    for seed in ("1", "2"):
        run = subprocess.run([sys.executable, "-m", "msinspect.cli", "--no-cache", "diff", pipeline / "rank_0",
                              pipeline / "rank_7", "--json"], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        assert run.returncode in (0, 1), run.stderr
        outputs.add(run.stdout)
    assert len(outputs) == 1


def test_an_operator_in_one_rank_only_is_shown_at_its_first_line(pipeline_0_4):
    """Rank 4 holds four Receives of blocks.2.ln1_gamma's stage (one per micro-batch) that rank 0
    has not: the row's line is the first of them in rank 4's file (of those with its name, op,
    scope, parameter, direction and numbers of dimensions)."""
    ops = pipeline_0_4_ops()
    only = pipeline_0_4.only
    for row in only.to_dict("records"):
        side = "left" if row["left_count"] else "right"
        lines = [o["line"] for o in ops[side] if o["op"] == row["op"] and _same(o["scope"], row["scope"])
                 and _same(o["param"], row["param"]) and o["backward"] == row["gradient"]
                 and stable_name(o["name"]) == row["name"]
                 and shape_dims(o["inputs"], o["output"]) == shape_dims(row["inputs"], row["output"])]
        assert row["line"] == min(lines), row


def _same(a, b) -> bool:
    return a == b or (is_missing(a) and is_missing(b))


def pipeline_0_4_ops() -> dict[str, list[dict]]:
    from msinspect.analysis import analyse
    from msinspect import load_dump

    dump = load_dump(ZOO / "04_pipeline_hsdp_recompute")
    analysis = analyse(dump, jobs=1)
    rows = analysis.operators().to_dict("records")
    return {"left": [r for r in rows if r["rank"] == 0], "right": [r for r in rows if r["rank"] == 4]}


def _renamed_copy(tmp_path, rank: str, swap: dict[str, str]):
    """A copy of zoo 01's rank folder whose validate file names some instances otherwise (as
    another MindSpore build may print the primitive that operators share)."""
    import gzip

    target = tmp_path / "renamed" / rank
    shutil.copytree(TP4DP2 / rank, target)
    (target.parent / "config.json").write_bytes((TP4DP2 / "config.json").read_bytes())
    validate = next(target.glob("*validate*"))
    text = gzip.decompress(validate.read_bytes()).decode()
    for old, new in swap.items():
        text = text.replace(f"{{instance name: {old}}}", f"{{instance name: {new}}}")
    validate.chmod(0o644)
    validate.write_bytes(gzip.compress(text.encode()))
    return target


def test_renamed_operators_are_aligned_not_reported_as_present_in_one_only(tmp_path):
    """Rank 4 with v_transpose printed as q_transpose and ffn_add as attn_add: the operators are
    the same, so nothing is "present in one only" and nothing is left unaligned."""
    renamed = _renamed_copy(tmp_path, "rank_4", {"v_transpose": "q_transpose", "ffn_add": "attn_add"})
    d = diff_ranks(TP4DP2 / "rank_0", renamed)
    assert d.unaligned["operators"] == {"left": 0, "right": 0}
    assert d.only.empty and d.shapes.empty and d.strategies.empty


def test_two_runs_are_warned_about():
    d = diff_ranks(TP4DP2 / "rank_0", ZOO / "02_sharding_propagation_64" / "rank_0")
    text = "\n".join(d.warnings)
    assert "different run folders" in text and "run records differ" in text
    assert "worlds differ (rank_0: 8 ranks, rank_0: 64)" in text
    # each side is read with its own run's world: 8 ranks, and 64 (no pipeline in either job)
    assert d.left_stage_ranks == tuple(range(8)) and d.right_stage_ranks == tuple(range(64))
    assert "each rank runs the whole network of its own job" in stage_line(d)
    d = diff_ranks(TP4DP2 / "rank_0", ZOO / "10_layout_api_8" / "rank_0")
    assert any("run records differ" in w for w in d.warnings)
    assert not any("worlds differ" in w for w in d.warnings)  # 8 ranks each


def test_a_copy_without_its_run_record_is_warned_about(tmp_path):
    shutil.copytree(TP4DP2 / "rank_4", tmp_path / "copy" / "rank_4")
    d = diff_ranks(TP4DP2 / "rank_0", tmp_path / "copy" / "rank_4")
    assert any("only one side has a run record" in w for w in d.warnings)


def test_json_keys_do_not_depend_on_the_labels(tp4dp2_0_4, pipeline_0_4):
    other = pipeline_0_4
    assert tp4dp2_0_4.to_dict().keys() == other.to_dict().keys()
    for section in tp4dp2_0_4.SECTIONS:
        assert list(getattr(tp4dp2_0_4, section).columns) == list(getattr(other, section).columns)
    data = tp4dp2_0_4.to_dict()
    assert (data["left_label"], data["right_label"], data["left_rank"], data["right_rank"]) == \
        ("rank_0", "rank_4", 0, 4)


def test_cli_json_warnings_and_csv(tmp_path):
    left, right = TP4DP2 / "rank_0", ZOO / "02_sharding_propagation_64" / "rank_0"
    run = msinspect("diff", left, right, "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert any("worlds differ" in w for w in data["warnings"])
    assert "warning: " in run.stderr and "worlds differ" in run.stderr
    assert (data["left_label"], data["right_label"]) == ("rank_0", "rank_0")
    run = msinspect("diff", TP4DP2 / "rank_0", TP4DP2 / "rank_4", "--csv")
    assert run.returncode == 0, run.stderr
    rows = list(csv.DictReader(io.StringIO(run.stdout)))
    comm = [r for r in rows if r["section"] == "comm"]
    assert len([r for r in comm if r["kind"] == "forward"]) == 8
    assert {json.dumps(json.loads(r["left_group"])) for r in comm} == {"[0, 1, 2, 3]"}
    assert {r["right_group"] for r in comm} == {"[4, 5, 6, 7]"}
    assert all(r["left_line"].isdigit() and r["n"].isdigit() for r in comm)  # ints stay ints
