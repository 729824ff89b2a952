"""diff aligns what survives renames and hashes, on the model zoo. By hand from gpt.py:
- zoo 01 (tp 4 x dp 2, no pipeline): ranks 0 and 4 are in different tensor-parallel groups (0-3,
  4-7): the row-parallel out_matmul and ffn_out_matmul of each of the 4 blocks reduce their partial
  sums over them, 8 forward AllReduces whose groups differ; there is no pipeline to be "the same"
  stage of.
- zoo 04 (2 pipeline stages): rank 0 holds embed + blocks 0-1, rank 4 blocks 2-3 + head; the
  optimizer's Assign / Muls of one stage's weights are not the other's, so they are "present in one
  rank only", never shape changes of the n-th Assign."""
from __future__ import annotations

import pytest

from msinspect.analysis.diff import _keyed, diff_ranks
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"


@pytest.fixture(scope="module")
def tp4dp2_0_4():
    return diff_ranks(ZOO / "01_semi_auto_tp4dp2" / "rank_0", ZOO / "01_semi_auto_tp4dp2" / "rank_4")


def test_no_pipeline_is_not_the_same_stage(tp4dp2_0_4):
    line = tp4dp2_0_4.stage_line()
    assert "same pipeline stage" not in line and "no pipeline" in line
    assert tp4dp2_0_4.to_dict()["pipelined"] is False


def test_tensor_parallel_groups_differ(tp4dp2_0_4):
    comm = tp4dp2_0_4.comm
    forward = comm[(comm["kind"] == "forward") & comm["after"].isin(["out_matmul", "ffn_out_matmul"])]
    assert len(forward) == 8
    assert set(forward["rank_0 group"]) == {(0, 1, 2, 3)} and set(forward["rank_4 group"]) == {(4, 5, 6, 7)}
    assert tp4dp2_0_4.unaligned["communication"] == {"rank_0": 0, "rank_4": 0}


def test_hash_named_communication_is_aligned():
    """MindSpore's generated names carry a hash that may differ between ranks and runs."""
    row = {"op": "AllReduce", "kind": "forward", "producer": "out_matmul", "consumers": ("attn_add",)}
    a = _keyed([{**row, "name": "forward_op_7137408040802222932"}], ("name", "op", "kind", "producer", "consumers"))
    b = _keyed([{**row, "name": "forward_op_1234567890123456789"}], ("name", "op", "kind", "producer", "consumers"))
    assert a.keys() == b.keys()


def test_updates_of_different_weights_are_not_paired():
    d = diff_ranks(ZOO / "04_pipeline_hsdp_recompute" / "rank_0", ZOO / "04_pipeline_hsdp_recompute" / "rank_4")
    assert "different pipeline stages" in d.stage_line()
    assert d.shapes.empty or not d.shapes["op"].isin(["Assign", "Muls", "ZerosLike"]).any()
    only = d.only
    assigns = only[only["op"] == "Assign"]
    assert any(isinstance(p, str) and p.startswith("blocks.0.") for p in assigns["param"])
    assert any(isinstance(p, str) and p.startswith("blocks.3.") for p in assigns["param"])
    counts = d.unaligned["communication"]
    assert counts["rank_0"] > 0 and counts["rank_4"] > 0  # each stage has its own communication
    assert "not aligned, so not compared" in d.format()


def test_two_folders_with_the_same_label_get_two_columns(tmp_path):
    """Two runs' rank_0 folders (here zoo 01's rank 0 and, renamed, its rank 4): two columns."""
    import shutil

    shutil.copytree(ZOO / "01_semi_auto_tp4dp2" / "rank_0", tmp_path / "a" / "rank_0")
    shutil.copytree(ZOO / "01_semi_auto_tp4dp2" / "rank_4", tmp_path / "b" / "rank_0")
    d = diff_ranks(tmp_path / "a" / "rank_0", tmp_path / "b" / "rank_0")
    assert (d.a, d.b) == ("rank_0 (a)", "rank_0 (b)")
    assert set(d.unaligned["communication"]) == {"rank_0 (a)", "rank_0 (b)"}
    comm = d.comm
    assert {"rank_0 (a) group", "rank_0 (b) group"} <= set(comm.columns)
