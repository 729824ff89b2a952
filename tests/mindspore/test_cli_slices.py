"""``shapes --params`` on what MindSpore holds: where no weight of the files read is read by an
operator with a strategy it says so ("cannot tell", why) instead of printing an empty table, and an
optimizer-sharded weight's slice is the part the rank stores."""
from __future__ import annotations

import json

from tests.conftest import FIXTURES, invoke

RESHAPE_7 = FIXTURES / "ut" / "a_test_auto_parallel_reshape__test_reshape_auto_7"
ZOO_04 = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"


def test_no_weight_read_with_a_strategy_is_cannot_tell_not_an_empty_table():
    # reshape_auto_7's compiled graph (validate) returns zeros: no Mul reads the weight there. Its
    # graph input is still told: the UT feeds each of 8 ranks x (128, 28) under the default
    # data-parallel dataset strategy, so the whole batch is 8 x 128 rows and rank 0 holds 0:128
    done = invoke("shapes", RESHAPE_7, "--params", "--json")
    assert done.exit_code == 0
    row, weight = json.loads(done.stdout)
    assert (row["param"], row["kind"], row["global_shape"]) == ("x", "input", [1024, 28])
    assert row["slice"] == [[0, 128], [0, 28]]
    # the weight's layout is the parallel pass's: read at the step_parallel_end beside validate,
    # as MindSpore's own record states it (tests/analysis/test_params_at_end.py)
    assert weight["kind"] == "weight" and "step_parallel_end" in weight["file"] and weight["record"] == "same"
    assert "step_parallel_end beside" in done.stderr and "cannot tell" not in done.stderr


def test_an_optimizer_sharded_weight_shows_its_group_and_the_rows_the_rank_stores():
    # zoo 04 by hand (its net's docstring): stage 1 is ranks 4-7, dp 2 x tp 2 inside it; out_matmul
    # ((2, 2), (2, 1)) cuts wo's rows by tp over (2, 2, 1): rank 5 (place 1) holds rows 256:512, and
    # optimizer parallel splits those rows over its data-parallel group {5, 7}: rank 5 stores 256:384
    done = invoke("shapes", ZOO_04, "--params", "--param", "blocks.2.attention.wo", "--rank", "5", "--json")
    assert done.exit_code == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert row["opt_shard_ranks"] == [5, 7]
    assert row["slice"] == [[256, 384], [0, 512]]
    assert row["rank_shape"] == [128, 512]


def test_an_expert_weight_laid_out_by_the_users_layout_is_cut_by_that_layout():
    # zoo 15 by hand (its net's docstring): MindFormers' MoEV3 lays the experts' w1 (4, 512, 3072) out
    # as ("inner_dp", "mp0", "mp1") over (outer_dp 2, inner_dp 4, 1, 1, 1): rank r holds expert r % 4
    done = invoke("shapes", FIXTURES / "zoo" / "15_mf_llama_moe_ep8", "--params", "--param",
                  "model.layers.0.feed_forward.ffn.w1", "--stage", "step_parallel_end", "--json")
    assert done.exit_code == 0, done.stderr
    rows = {row["rank"]: row for row in json.loads(done.stdout)}
    assert rows[0]["slice"] == [[0, 1], [0, 512], [0, 3072]]
    assert rows[5]["slice"] == [[1, 2], [0, 512], [0, 3072]]
    assert rows[5]["device_matrix"] == [2, 4] and rows[5]["tensor_map"] == [0, -1, -1]


def test_a_weight_copied_by_tensormove_and_a_matmul_replaced_by_enable_nd_tp_are_read():
    # MindSpore's own samples (zoo 18, 20; their nets' docstrings derive these by hand): the pipeline
    # sample's validate graph copies layer2.weight with a TensorMove before its MatMul, whole on a
    # 4-rank stage; the 2-D tensor-parallel sample (enable_nd_tp) replaces matmul1 by a MatMul of its
    # replacement graph without a strategy, named by matmul1's hash: fc1_weight (256, 512) by the
    # Layout (2, 4) / (1, 0): rank 3 holds [0:128, 384:512], rank 6 [128:256, 256:384]
    done = invoke("shapes", FIXTURES / "zoo" / "18_doc_pipeline_parallel", "--params", "--param", "layer2.weight",
                  "--rank", "0", "--json")
    assert done.exit_code == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert (row["device_matrix"], row["tensor_map"], row["slice"]) == ([4], [-1, -1], [[0, 512], [0, 512]])
    done = invoke("shapes", FIXTURES / "zoo" / "20_doc_high_dimension_tp", "--params", "--param", "fc1_weight",
                  "--stage", "step_parallel_end", "--json")
    assert done.exit_code == 0, done.stderr
    rows = {row["rank"]: row for row in json.loads(done.stdout)}
    assert rows[3]["consumer"] == "matmul1" and rows[3]["slice"] == [[0, 128], [384, 512]]
    assert rows[6]["slice"] == [[128, 256], [256, 384]]
    # at validate both replaced MatMuls share a primitive and print one name: the file tells no
    # weight's layout, the step_parallel_end beside it does (tests/analysis/test_params_at_end.py)


def test_a_pipeline_whose_stages_cannot_be_told_has_no_layout_on_the_world():
    # rank 0 of 4 in 2 stages sends to rank 2 and names no group: stages of 1 or 2 ranks both fit,
    # so the weight's device matrix is not told (before: (2, 2), over all 4 ranks; MindSpore: (2,))
    done = invoke("shapes", FIXTURES / "ut" / "b_test_pipeline_inference__test_pipeline_inference_first_stage",
                  "--params", "--stage", "step_parallel_end", "--json")
    assert done.exit_code == 0, done.stderr
    (row,) = [row for row in json.loads(done.stdout) if row["kind"] == "weight"]
    assert row["device_matrix"] is None and row["slice"] is None
    assert row["record"] == "cannot tell here" and row["ms_device_matrix"] == [2]
