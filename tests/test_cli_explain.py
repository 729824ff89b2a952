"""``msinspect explain DUMP OP``: the answer in 120 columns, the same facts as JSON, and a selector
or rank that selects nothing refused (exit 2) with what there is. The facts themselves are
derived by hand in tests/analysis/test_explain.py; zoo 01 is TP 4 x DP 2 on 8 ranks."""
from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES, invoke

ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"


def _invoke(*args):
    return invoke("explain", *args)


def test_a_user_strategy_and_a_collective_read_in_120_columns():
    run = _invoke(ZOO01, "q_matmul", "--rank", "0")
    assert run.exit_code == 0, run.stderr
    assert "set by the user with shard()" in run.stdout
    assert "gpt.py:123" in run.stdout  # the line the dump records (see the library's test)
    assert "read rank 0 at step_parallel_end" in run.stderr
    run = _invoke(ZOO01, "type:AllGather", "--rank", "0")
    assert run.exit_code == 0, run.stderr
    assert "AllGather over ranks 0-3: lm_matmul gives (2, 4), loss_ce needs (2, 1)" in " ".join(run.stdout.split())
    assert "reconstruction: " in run.stdout
    assert max(len(line) for line in run.stdout.splitlines()) <= 120


def test_json_holds_the_same_facts():
    run = _invoke(ZOO01, "type:AllReduce", "--rank", "0", "--json")
    assert run.exit_code == 0, run.stderr
    found = json.loads(run.stdout)
    sums = [e for e in found if e["producer"] == "out_matmul"]
    assert sums and sums[0]["action"] == "sum" and sums[0]["group_ranks"] == [0, 1, 2, 3]
    assert len(sums[0]["lines"]) == 4  # one per block, one answer
    assert {"headline", "facts", "reconstruction", "cannot_tell"} <= set(sums[0])


@pytest.mark.parametrize("args, said", [
    (("q_matmull",), "did you mean q_matmul"),
    (("q_matmul", "--rank", "9"), "no rank 9 (ranks: 0-7)"),
])
def test_what_selects_nothing_is_bad_input(args, said):
    run = _invoke(ZOO01, *args)
    assert run.exit_code == 2
    assert said in run.stderr
    assert run.stdout == ""


def test_the_backward_communication_is_read_from_validate():
    # zoo 10: 2 forward AllReduces at step_parallel_end, 1 backward and 3 gradient ones (the
    # mirrors of w1, w2, w3) in validate only: all 6, and stderr says which file gave which
    # (tests/analysis/test_explain_rules.py derives each).
    zoo10 = FIXTURES / "zoo" / "10_layout_api_8"
    run = _invoke(zoo10, "type:AllReduce", "--rank", "0", "--json")
    assert run.exit_code == 0, run.stderr
    assert sum(len(e["lines"]) for e in json.loads(run.stdout)) == 6
    assert "read rank 0 at step_parallel_end" in run.stderr
    assert "read rank 0 at validate for the backward's communication" in run.stderr
    run = _invoke(zoo10, "type:AllReduce", "--rank", "0", "--json", "--stage", "step_parallel_end")
    assert sum(len(e["lines"]) for e in json.loads(run.stdout)) == 2
    assert "validate" not in run.stderr
