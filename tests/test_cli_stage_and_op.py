"""The CLI reads the stage asked for (``--stage``) in strategies, comm and shapes; ``--op``
matches instance names, op types and scopes, and an --op that matches nothing is bad input (exit
2) naming the close names; summary counts every weight. On rank 0 of zoo 01 (gpt.py, tp 4 x
dp 2): 4 blocks of LayerNorm ((2, 1), (1,), (1,)), the user's strategies alone in the
primitive's attributes at step_parallel_begin."""
from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"


@pytest.fixture(scope="module")
def rank0(tmp_path_factory):
    root = tmp_path_factory.mktemp("zoo01")
    shutil.copytree(ZOO01 / "rank_0", root / "rank_0")
    return root / "rank_0"


def test_strategies_read_the_stage_asked_for(rank0):
    run = msinspect("strategies", rank0, "--stage", "step_parallel_begin", "--op", "ln1", "--json")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert len(rows) == 4  # one ln1 per block
    assert {r["stage"] for r in rows} == {"step_parallel_begin"}
    assert all(r["in_strategy"] == [[2, 1], [1], [1]] and r["set_by"] == "user" for r in rows)


def test_comm_and_shapes_read_the_stage_asked_for(rank0):
    run = msinspect("comm", rank0, "--stage", "step_parallel_end", "--json")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert rows and {r["stage"] for r in rows} == {"step_parallel_end"}
    # the mirror operators exist only before the gradient graph is built (validate has their AllReduce)
    assert any(r["op"] == "_MirrorOperator" for r in rows)
    run = msinspect("comm", rank0, "--stage", "validate", "--json")
    assert not any(r["op"] == "_MirrorOperator" for r in json.loads(run.stdout))
    run = msinspect("shapes", rank0, "--stage", "step_parallel_begin", "--op", "lm_matmul", "--json")
    rows = json.loads(run.stdout)
    assert [r["strategy"] for r in rows] == [[2, 1], [1, 4]]
    assert all(r["rank_shape"] is None for r in rows)  # global shapes only before the parallel pass


def test_op_matches_an_op_type_and_a_scope(rank0):
    run = msinspect("strategies", rank0, "--op", "LayerNorm", "--json")
    assert run.returncode == 0, run.stderr
    names = {r["name"] for r in json.loads(run.stdout)}
    assert names == {"ln1", "ln2", "ln_f"}
    run = msinspect("strategies", rank0, "--op", "head-Head/MatMul", "--json")
    assert {r["name"] for r in json.loads(run.stdout)} == {"lm_matmul"}


def test_op_matching_nothing_is_bad_input_with_the_close_names(rank0):
    run = msinspect("strategies", rank0, "--op", "ln_f2")
    assert run.returncode == 2
    assert "no strategies match --op 'ln_f2'" in run.stderr and "did you mean ln_f" in run.stderr
    run = msinspect("comm", rank0, "--op", "no_such_op", "--json")
    assert run.returncode == 2 and run.stdout.strip() == ""
    assert "op types: " in run.stderr  # what there is to match


def test_summary_counts_every_weight(rank0):
    """gpt.py's weights: embedding table and positions (2); per block ln1/ln2 gamma and beta (4),
    q, k, v, out, ffn_in, ffn_out (6); the head's ln_f gamma, beta and lm_head (3):
    2 + 4 x 10 + 3 = 45 weights; AdamWeightDecay adds two moments each (90), plus its own
    global_step, learning rate ... so at least 45 + 90."""
    run = msinspect("summary", rank0, "--json")
    assert run.returncode == 0, run.stderr
    (row,) = json.loads(run.stdout)
    assert row["weights"] >= 45 + 2 * 45
    assert row["sharded_weights"] <= row["weights"]
