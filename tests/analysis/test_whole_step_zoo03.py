"""Zoo 03 (``fixtures/zoo/nets/03_recursive_programming_32.py``: gpt.py under recursive programming
on 32 ranks, every operator cut by the batch only, ranks 0, 15, 31 kept) without validate
(step_parallel_end): the rank matrix and static memory, derived by hand; the step's bytes and its
memory at validate are derived in tests/analysis/test_cost_zoo03.py (``WEIGHTS``, ``LOSS_SUM``,
``MIRRORS``: read from there, one home).

Every collective is over the world 0-31, a ring: a rank sends all its bytes to r + 1 mod 32. At
step_parallel_end the file holds the loss's sum (7 bytes) and the 45 mirrors (105,969,408): the
same cells as at validate, whose backward adds no collective (the constant sens needs no sum).
The parameters are held whole at every rank and stated so there already: memory as at validate,
54,693,888 bytes of 45 weights, AdamWeightDecay's two states each, one gradient each.

What ``explain`` says there (rank 0): the 45 mirrors stand in the forward graph as
``_MirrorOperator``, each over the world and named after its weight (test_cost_zoo03.py's
``NAMES``), a gradient's sum over the weight's replicas; the one AllReduce is loss_mean's sum
over the 32 ranks its rows are cut over.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.answers import explain
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import cells
from tests.analysis.test_cost_zoo03 import LOSS_SUM, MIRRORS, NAMES, RANKS, WEIGHTS, WORLD
from tests.conftest import FIXTURES

ZOO03 = FIXTURES / "zoo" / "03_recursive_programming_32"


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO03), "step_parallel_end")


def test_the_rank_matrix_without_validate(at_end):
    assert cells(at_end) == {(r, (r + 1) % 32): MIRRORS + LOSS_SUM for r in RANKS}


def test_memory_without_validate(at_end):
    rows = memory_per_rank(at_end)
    assert sorted(rows["rank"]) == list(RANKS)
    for row in rows.to_dict("records"):
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("AdamWeightDecay", sum(WEIGHTS), 45)
        assert (row["states"], row["states_expected"], row["gradients"]) == (2 * sum(WEIGHTS),) * 2 + (sum(WEIGHTS),)


def test_what_explain_says_without_validate(at_end):
    mirrors = explain(at_end, "type:_MirrorOperator", rank=0)
    assert sorted(e.headline.split("same slice of ", 1)[1].split(" ", 1)[0] for e in mirrors) == sorted(NAMES)
    assert {(e.kind, e.action, e.parts, tuple(e.group_ranks)) for e in mirrors} == {("gradient", "replicas", 32, WORLD)}
    (loss,) = explain(at_end, "type:AllReduce", rank=0)
    assert (loss.kind, loss.action, loss.dims, loss.parts, tuple(loss.group_ranks)) == ("forward", "sum", (), 32, WORLD)
    assert "loss_mean" in loss.headline and not loss.cannot_tell
