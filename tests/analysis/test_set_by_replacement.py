"""A strategy the user set on an operator the parallel pass replaces stays the user's: the pass
makes a new, hash-named primitive (``GenerateGraph``) with the same strategy and without the
user's attribute, which read as the planner's. Zoo 05's script ``shard()``s its vocabulary-
parallel Gather ((16, 1), (1,)); MindFormers' ``LlamaEmbedding.shard`` its Gather ((mp, 1),
(dp, 1)) (zoo 12: dp 2, mp 4; zoo 16: dp 32, mp 8). The other operators of the replacement
graph (the Sub that offsets the indices) are the planner's."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"


@pytest.mark.parametrize("name, strategy", [
    ("05_expert_alltoall_16", ((16, 1), (1,))),
    ("12_mf_llama_tp8", ((4, 1), (2, 1))),
    ("16_mf_llama_256", ((8, 1), (32, 1))),
])
@pytest.mark.parametrize("stage", ["step_parallel_begin", "validate"])
def test_the_users_gather_is_the_users_at_every_stage(name, strategy, stage):
    rows = analyse(msinspect.load_dump(ZOO / name), stage).strategies()
    gathers = rows[rows["op"] == "Gather"]
    assert len(gathers) > 0
    assert set(gathers["set_by"]) == {"user"}
    assert {tuple(tuple(s) for s in v) for v in gathers["in_strategy"]} == {strategy}


def test_the_replacement_graphs_own_operators_are_the_planners():
    rows = analyse(msinspect.load_dump(ZOO / "12_mf_llama_tp8"), "validate").strategies()
    subs = rows[(rows["op"] == "Sub") & rows["name"].str.match(r"^\d{10,}")]
    assert len(subs) > 0 and set(subs["set_by"]) == {"planner"}
