"""Seed 002's IR blocks as the document prints them ("..." elisions included): with --lenient the
analyses give the strategies and the communication the seed states; without, exit 1 naming the
first elision. Facts from the seed's text: matmul ((2, 4), (4, 1)) set by the user, relu's (2, 4)
chosen by the planner, an AllReduce over ranks 0-3 between matmul and relu."""
from __future__ import annotations

import json

from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

PRINTED = FIXTURES / "seed_002_as_printed"


def test_strategies_and_comm_under_lenient():
    done = msinspect("strategies", str(PRINTED), "--lenient", "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["name"]: r for r in json.loads(done.stdout)}
    assert rows["matmul"]["in_strategy"] == [[2, 4], [4, 1]] and rows["matmul"]["set_by"] == "user"
    assert rows["relu"]["in_strategy"] == [[2, 4]] and rows["relu"]["set_by"] == "planner"
    assert all(r["complete"] is False for r in rows.values())
    assert "18_execute_0185.excerpt.ir:2:1" in done.stderr and "skipped line 30" in done.stderr

    done = msinspect("comm", str(PRINTED), "--lenient", "--json")
    assert done.returncode == 0, done.stderr
    allreduce = [r for r in json.loads(done.stdout) if r["op"] == "AllReduce"]
    assert len(allreduce) == 1
    assert allreduce[0]["producer"] == "matmul" and allreduce[0]["consumers"] == ["relu"]
    assert allreduce[0]["group_ranks"] == [0, 1, 2, 3]


def test_strict_names_the_first_elision():
    done = msinspect("comm", str(PRINTED))
    assert done.returncode == 1
    assert "18_execute_0185.excerpt.ir:2:1: unexpected '...'" in done.stderr
    assert "--lenient" in done.stderr
