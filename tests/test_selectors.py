"""Selectors (docs/spec-language.md, msinspect/analysis/dataflow/spec_selector.py) on seed 002's dry run
(fixtures/sharding_propagation_dryrun_8rank), whose facts are read off its network
(train_jobs/networks.py ``Net``): ``matmul`` = x (16, 32) @ w (32, 16) with the user's shard
((2, 4), (4, 1)), then ``relu``, then ``matmul2`` by w2; 8 ranks. In the graph's file order the
forward ``matmul`` is the first MatMul and ``matmul2`` the second (at step_parallel_end the backward
pass is not written yet)."""
from __future__ import annotations

import pytest

from msinspect.analysis import analyse
from msinspect.analysis.dataflow.spec_selector import parse_selector, type_name
from msinspect.dumps import load_dump
from msinspect.testing import ExpectationFailed, assert_shape, assert_strategy
from tests.conftest import FIXTURES

SP = FIXTURES / "sharding_propagation_dryrun_8rank"


@pytest.fixture(scope="module")
def ops():
    return analyse(load_dump(SP), stage="step_parallel_end").operators()


def _names(ops, text):
    return sorted(set(ops[parse_selector(text).rows(ops)]["name"]))


def test_each_form_selects_what_it_says(ops):
    assert _names(ops, "matmul") == ["matmul"]
    assert _names(ops, "MatMul-0") == ["matmul"]          # ParallelValidator's name of the first MatMul
    assert _names(ops, "MatMul-1") == ["matmul2"]
    every = _names(ops, "type:MatMul")
    assert every == ["matmul", "matmul2"]                     # step_parallel_end: no backward yet
    assert _names(ops, "type:matmul") == every               # a primitive without case
    assert _names(ops, "re:^matmul\\d$") == ["matmul2"]
    assert _names(ops, "Matmul2") == ["matmul2"]             # an instance without case
    relu = ops[ops["name"] == "relu"]["scope"].iloc[0]
    assert "relu" in _names(ops, f"scope:{relu}") and _names(ops, "scope:NoSuchScope*") == []


def test_type_n_counts_per_rank_and_graph_in_file_order(ops):
    for rank in range(8):
        on = ops[ops["rank"] == rank]
        names = type_name(on)
        assert all(names[on["graph"] == g].is_unique for g in set(on["graph"]))   # one name per node of a graph
        matmuls = on[on["op"] == "MatMul"].sort_values("line")
        assert list(names[matmuls.index]) == [f"MatMul-{n}" for n in range(len(matmuls))]


def test_selectors_in_the_pytest_api():
    assert assert_strategy(SP, "MatMul-0", ((2, 4), (4, 1)), set_by="user").passed
    # per rank: x (16, 32) cut (2, 4) -> (8, 8); w (32, 16) cut (4, 1) -> (8, 16)
    assert assert_shape(SP, "MatMul-0", inputs=((8, 8), (8, 16))).passed
    with pytest.raises(ExpectationFailed):
        assert_strategy(SP, "MatMul-1", ((2, 4), (4, 1)), set_by="user")   # matmul2: the planner's


@pytest.mark.parametrize("bad", ["re:(", "type:", ""])
def test_a_bad_selector_is_refused(bad):
    with pytest.raises(ValueError):
        parse_selector(bad)


def test_an_op_type_named_plainly_is_not_taken_for_an_instance():
    with pytest.raises(ExpectationFailed) as exc:
        assert_strategy(SP, "MatMul", ((2, 4), (4, 1)))
    assert "select its operators with type:MatMul or MatMul-0" in str(exc.value)
