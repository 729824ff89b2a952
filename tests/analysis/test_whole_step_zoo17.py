"""Zoo 17 (``fixtures/zoo/nets/17_dynamic_shape_8.py``: a batch dimension known at run time only,
8 ranks, 0 and 3 kept) without validate (step_parallel_end): the rank matrix and static memory,
derived by hand; the step's bytes and its memory at validate are derived in
tests/analysis/test_cost_zoo17.py (``W_SLICE``, ``MIRROR``, ``PAIR``: read from there, one home).

At step_parallel_end the file holds the forward's AllGather of the dynamic (-1, 32) tensor, whose
bytes cannot be told (in no cell of the matrix, counted unknown: 1 a rank), and the weight's
mirror over its pair, 8,192 bytes to the pair's other rank (0 -> 1, 3 -> 2). The weight is cut in
place there already: memory as at validate, one (64, 32) float32 slice, 8,192 bytes, its gradient,
Momentum's one state.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost_tables import rank_matrix
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import cells
from tests.analysis.test_cost_zoo17 import MIRROR, PAIR, RANKS, W_SLICE
from tests.conftest import FIXTURES

ZOO17 = FIXTURES / "zoo" / "17_dynamic_shape_8"


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO17), "step_parallel_end")


def test_the_rank_matrix_without_validate(at_end):
    assert cells(at_end) == {(r, next(p for p in PAIR[r] if p != r)): MIRROR for r in RANKS}
    matrix = rank_matrix(at_end)
    assert dict(zip(matrix["src"], matrix["unknown"])) == {0: 1, 3: 1}


def test_memory_without_validate(at_end):
    rows = memory_per_rank(at_end)
    assert sorted(rows["rank"]) == list(RANKS)
    for row in rows.to_dict("records"):
        assert (row["weights"], row["weight_count"], row["gradients"]) == (W_SLICE, 1, W_SLICE)
        assert (row["states"], row["states_expected"]) == (W_SLICE, W_SLICE) and "Momentum" in row["optimizer"]
