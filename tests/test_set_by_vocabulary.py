"""One vocabulary for who set a strategy (issue 40, item 7; docs/cli.md, "Who set a strategy"):
``strategies``' ``set_by``, ``explain`` and a spec's ``set_by`` say the same word.

By hand from ``fixtures/zoo/nets/19_doc_optimizer_parallel.py`` (its docstring): MindSpore's
sample under ``semi_auto_parallel`` on 8 ranks, no cell ``shard()``ed, 32 rows per rank (a global
batch of 256). ``relu`` follows ``layer1`` (784 -> 512), so its input is (256, 512) globally;
with no strategy given, semi-auto gives it the default batch strategy: the first dimension cut
in 8, ``((8, 1),)``. (The zoo keeps ranks 0 and 5 of the 8.) Nobody wrote that strategy: the user did not, so it is ``planner``'s, and
``explain`` says how: the default of ``semi_auto_parallel``.
"""
from __future__ import annotations

import json

from tests.conftest import FIXTURES, invoke

ZOO19 = FIXTURES / "zoo" / "19_doc_optimizer_parallel"


def test_strategies_says_planner_for_the_default():
    result = invoke("strategies", ZOO19, "--op", "relu", "--rank", "0", "--json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert rows and {tuple(map(tuple, r["in_strategy"])) for r in rows} == {((8, 1),)}
    assert {r["set_by"] for r in rows} == {"planner"}


def test_explain_says_set_by_the_planner_and_how():
    result = invoke("explain", ZOO19, "relu", "--json")
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)[0]
    assert answer["set_by"] == "planner" and answer["verdict"] == "default"
    assert "set by the planner: no shard() on it, so semi_auto_parallel's default" in answer["headline"]


def test_a_spec_says_it_with_the_same_word(tmp_path):
    spec = tmp_path / "relu.toml"
    spec.write_text('[[expect.strategy]]\nop = "relu"\nin_strategy = [[8, 1]]\n'
                    'set_by = "planner"\n')
    result = invoke("check", spec, ZOO19)
    assert result.exit_code == 0, result.stdout + result.stderr
    wrong = tmp_path / "user.toml"
    wrong.write_text(spec.read_text().replace('"planner"', '"user"'))
    assert invoke("check", wrong, ZOO19).exit_code == 1
