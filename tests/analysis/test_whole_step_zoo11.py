"""Zoo 11 (``fixtures/zoo/nets/11_lazy_inline_8.py``: two ``@lazy_inline`` feed-forward blocks, dp 2 x
mp 4 on 8 ranks, ranks 0 and 5 kept): static memory at both stages and the rank matrix without
validate, derived by hand; the step's bytes are derived in tests/analysis/test_cost_zoo11.py
(``DOWN``, ``LOSS``, ``MIRRORS``: read from there, one home).

Memory per rank (float32): block i's w1_i (64, 256) read by ``up`` ((2, 1), (1, 4)): (64, 64) at
the rank; w2_i (256, 64) read by ``down`` ((2, 4), (4, 1)): (64, 64); 16,384 bytes each, 4
weights: 65,536. Gradients one per weight: 65,536. ``nn.Momentum`` keeps one state (its
``moments``) a weight as stored: 65,536, as expected of it. The same at step_parallel_end (the
parameters are cut in place there already).

The rank matrix without validate (step_parallel_end: the forward and the mirrors): to the next of
the mp ring (0 -> 1, 5 -> 6) the two ``down`` AllReduces, 2 x 3,072 (their bprops are the gradient
graph's); to the other of the dp pair (0 -> 4, 5 -> 1) the loss's 4 bytes and the 4 mirrors,
65,536.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import cells
from tests.analysis.test_cost_zoo11 import DOWN, LOSS, MIRRORS
from tests.conftest import FIXTURES

ZOO11 = FIXTURES / "zoo" / "11_lazy_inline_8"
WEIGHTS = 4 * 64 * 64 * 4


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO11), "step_parallel_end")


def test_the_rank_matrix_without_validate(at_end):
    assert cells(at_end) == {(0, 1): 2 * DOWN, (0, 4): LOSS + MIRRORS, (5, 6): 2 * DOWN, (5, 1): LOSS + MIRRORS}


@pytest.mark.parametrize("stage", ["validate", "step_parallel_end"])
def test_memory_per_rank(stage, at_end):
    analysis = at_end if stage == "step_parallel_end" else analyse(msinspect.load_dump(ZOO11), stage)
    rows = memory_per_rank(analysis)
    assert sorted(rows["rank"]) == [0, 5]
    for row in rows.to_dict("records"):
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("ApplyMomentum", WEIGHTS, 4)
        assert (row["gradients"], row["gradients_from"]) == (WEIGHTS, "one per weight")
        assert row["states"] == row["states_expected"] == WEIGHTS == 65_536
