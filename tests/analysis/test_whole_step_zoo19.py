"""Zoo 19 (``fixtures/zoo/nets/19_doc_optimizer_parallel.py``: MindSpore's optimizer-parallel
sample on 8 ranks, 0 and 5 kept) without validate (step_parallel_end): the rank matrix and static
memory, derived by hand; the step's bytes and its memory at validate are derived in
tests/analysis/test_cost_zoo19.py (``GATHERS``, ``MIRRORS``, ``SCALAR``: read from there, one
home).

Every group is the world, a ring: a rank sends all its bytes to r + 1. At step_parallel_end the
file holds the optimizer shard's gathers (2,322,432), the loss's sums before CSE (4 of a scalar,
7 bytes each, of which CSE keeps 3: the copy runs 0 times) and the mirrors (43,078): 0 -> 1 and
5 -> 6, 2,365,531 each (msinspect first counted the copy: 2,365,538). The weights are
stored as their shards there already: memory as at validate (356,392 bytes of 6 weights, SGD's
two clones, the gradients whole: 2,678,824). The file says so: each sharded weight is gathered
over the 8 (``parallel_optimizer_allgather``, the optimizer shard's forward rows above), so its
gradient, computed for the whole weight, is 8 times its shard.

msinspect first printed gradients 356,392 "one per weight" there: it read a weight's shard group
from the optimizer's ReduceScatter of its gradient only (``memory.shards_of_rank``), which the
gradient graph holds, not this file; the gather of the same group (the ReduceScatter is its
bprop) stands in the file and now tells it.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import cells
from tests.analysis.test_cost_zoo19 import GATHERS, MIRRORS, SCALAR
from tests.conftest import FIXTURES

ZOO19 = FIXTURES / "zoo" / "19_doc_optimizer_parallel"


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO19), "step_parallel_end")


def test_the_rank_matrix_without_validate(at_end):
    sent = GATHERS + 3 * SCALAR + MIRRORS
    assert sent == 2_365_531
    assert cells(at_end) == {(0, 1): sent, (5, 6): sent}


def test_memory_without_validate(at_end):
    rows = memory_per_rank(at_end)
    assert sorted(rows["rank"]) == [0, 5]
    for row in rows.to_dict("records"):
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("SGD", 356_392, 6)
        assert (row["states"], row["states_expected"]) == (712_784, 0)


def test_gradients_without_validate_are_whole(at_end):
    for row in memory_per_rank(at_end).to_dict("records"):
        assert (row["gradients"], row["gradients_from"]) == (2_678_824, "weights x optimizer-shard group")
