"""A selector that matches nothing is bad input (exit 2) that names what there is, never an
empty table with exit 0: ``--rank``, ``--op``, ``--param``, ``--columns`` and a spec's operator
kind. ``--op`` matches as written, else without case (``Matmul``; ``AllToAll`` for MindSpore's
``AlltoAll``).

Expected facts by hand from the network scripts:

- ``train_jobs`` sharding propagation (``networks.Net``) on 8 ranks: two MatMuls, ``matmul``
  (the user's ((2, 4), (4, 1))) and ``matmul2``, with weights ``w`` and ``w2``; ranks 0-7;
- zoo 05 (``fixtures/zoo/nets/05_expert_alltoall_16.py``, ``enable_alltoall``): the (16, 1) ->
  (1, 16) layout change between ``proj_a`` and ``proj_b`` and the tokens' move to their expert
  before ``expert_bmm`` are all-to-alls over the 16 ranks: at least two AlltoAll on every rank.
"""
from __future__ import annotations

import json

import pytest

from msinspect.spec import SpecError, load_spec
from tests.conftest import FIXTURES, kept_record
from tests.test_cli_parse import msinspect

SP = FIXTURES / "sharding_propagation_dryrun_8rank"
ZOO05 = FIXTURES / "zoo" / "05_expert_alltoall_16"


@pytest.mark.parametrize("command", ["strategies", "comm", "shapes"])
def test_a_rank_the_dump_lacks_is_bad_input_naming_its_ranks(command):
    run = msinspect(command, SP, "--rank", "9")
    assert run.returncode == 2, run.stderr
    assert "error: no rank 9 (ranks: 0-7)" in run.stderr
    assert run.stdout == ""


def test_a_rank_the_dump_lacks_is_refused_with_json_too():
    run = msinspect("strategies", SP, "--rank", "3", "--rank", "8", "--json")
    assert run.returncode == 2 and run.stdout == ""
    assert "no rank 8 (ranks: 0-7)" in run.stderr


def test_a_weight_no_rank_holds_is_named_as_render_names_it():
    run = msinspect("shapes", SP, "--params", "--param", "ww")
    assert run.returncode == 2 and run.stdout == ""
    # the job's two weights, then its two graph inputs (the dataset's data and label), which
    # --param names too
    said = "no weight named 'ww' with a strategy (weights: w, w2; graph inputs: inputs0, inputs1); did you mean w?"
    assert said in run.stderr
    drawn = msinspect("render", SP, "--param", "ww")  # one wording, one place
    assert drawn.returncode == 2 and said in drawn.stderr


def test_an_op_that_matches_nothing_suggests_the_close_names():
    run = msinspect("strategies", SP, "--op", "matmull")
    assert run.returncode == 2 and run.stdout == ""
    assert "no strategies match --op 'matmull'" in run.stderr
    assert "did you mean matmul or matmul2?" in run.stderr
    assert "op types: MatMul" in run.stderr


def test_an_op_matches_as_written_else_without_case():
    exact = json.loads(msinspect("strategies", SP, "--op", "matmul", "--json").stdout)
    assert {r["name"] for r in exact} == {"matmul"} and len(exact) == 8
    run = msinspect("strategies", SP, "--op", "Matmul", "--json")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert {(r["name"], r["op"]) for r in rows} == {("matmul", "MatMul"), ("matmul2", "MatMul")}
    assert sorted({r["rank"] for r in rows}) == list(range(8))


def test_alltoall_written_as_the_older_spelling_finds_mindspores_alltoall():
    run = msinspect("comm", ZOO05, "--op", "AllToAll", "--rank", "0", "--json")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert {r["op"] for r in rows} == {"AlltoAll"} and len(rows) >= 2


def test_a_column_that_is_not_there_is_named_with_the_close_ones():
    run = msinspect("strategies", SP, "--columns", "rank,nme")
    assert run.returncode == 2 and run.stdout == ""
    assert "no column 'nme'" in run.stderr and "did you mean name?" in run.stderr


def _spec(tmp_path, body: str):
    path = tmp_path / "spec.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_spec_kind_in_another_case_counts_mindspores_operator(tmp_path):
    spec = _spec(tmp_path, '[[expect.count]]\nkind = "AllToAll"\nranks = [0, 5, 15]\nmin = 2\n\n'
                           '[[expect.comm]]\nkind = "AllToAll"\nbefore = "expert_bmm"\n'
                           f'groups = [{list(range(16))}]\n')
    run = msinspect("check", spec, ZOO05, "--json")
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["ok"] and report["passed_count"] == 2 + kept_record(ZOO05)


@pytest.mark.parametrize("body, said", [
    ('[[expect.count]]\nkind = "AllToAlll"\nranks = [0]\nmin = 1\n', "did you mean AlltoAll"),
    ('[[expect.count]]\nkind = "AllReduc"\nranks = [0]\nmin = 1\n', "did you mean AllReduce?"),
    ('[[expect.comm]]\nkind = "AllGathr"\nafter = "matmul"\ngroups = [[0, 1]]\n', "did you mean AllGather"),
    ('[[expect.comm]]\nkind = "MatMul"\nafter = "matmul"\ngroups = [[0, 1]]\n', "not a communication operator"),
])
def test_a_spec_kind_mindspore_does_not_have_is_refused_when_read(tmp_path, body, said):
    with pytest.raises(SpecError, match="expect\\.(count|comm)\\[0\\]: kind") as refused:
        load_spec(_spec(tmp_path, body))
    assert said in str(refused.value)


def test_an_operator_type_that_is_not_communication_may_be_counted(tmp_path):
    spec = load_spec(_spec(tmp_path, '[[expect.count]]\nkind = "BroadcastTo"\nranks = [0]\nmin = 0\n'))
    assert spec.expectations[0].values["kind"] == "BroadcastTo"
