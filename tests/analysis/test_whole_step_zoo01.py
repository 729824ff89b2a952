"""Zoo 01 (``fixtures/zoo/nets/01_semi_auto_tp4dp2.py``: gpt.py at dp 2 x tp 4 on 8 ranks, rank =
4 d + t): the rank matrix cell by cell at both stages and memory without validate, derived by
hand; the step's bytes and its memory at validate are derived in tests/analysis/test_cost.py
(``ZOO01_RANK0``, ``ZOO01_MEMORY``: read from there, one home), whose matrix test holds the
pattern and rank 0's two cells.

Who gets what (ring: all of a rank's bytes to the next rank of the group's sorted list): the
tensor group's next (4 (r // 4) + (r + 1) % 4) the tensor bytes, forward 7,077,888 and at validate
as much again backward; the other of the data pair (r ^ 4) the loss's 4 bytes and the mirrors of
the cut matrices, 13,107,200 (test_cost.py); the world's next (r + 1 mod 8) the mirrors of the
weights whole on all 8, 18 LayerNorm vectors 18 x 3,584 + the embedding 3,670,016 + the position
table 229,376 = 3,963,904. At step_parallel_end the same but the tensor bytes' backward half.

Memory without validate: the weights are cut in place there already: as at validate.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import allreduce, cells
from tests.analysis.test_cost import ZOO01_MEMORY, ZOO01_RANK0
from tests.conftest import FIXTURES

ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"
WORLD_MIRRORS = 18 * allreduce(8, 512 * 4) + allreduce(8, 1024 * 512 * 4) + allreduce(8, 64 * 512 * 4)
PAIR_MIRRORS = ZOO01_RANK0[("data", "backward")] - WORLD_MIRRORS


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO01), "step_parallel_end")


def _matrix(tensor: int) -> dict:
    expected: dict = {}
    for r in range(8):
        for to, b in ((4 * (r // 4) + (r + 1) % 4, tensor), (r ^ 4, ZOO01_RANK0[("data", "forward")] + PAIR_MIRRORS),
                      ((r + 1) % 8, WORLD_MIRRORS)):
            expected[(r, to)] = expected.get((r, to), 0) + b
    return expected


def test_the_numbers_are_the_derivation():
    assert (WORLD_MIRRORS, PAIR_MIRRORS) == (3_963_904, 13_107_200)


def test_the_rank_matrix(at_end):
    whole = analyse(msinspect.load_dump(ZOO01), "validate")
    forward, backward = ZOO01_RANK0[("tensor", "forward")], ZOO01_RANK0[("tensor", "backward")]
    assert cells(whole) == _matrix(forward + backward)
    assert cells(at_end) == _matrix(forward)


def test_memory_without_validate(at_end):
    rows = memory_per_rank(at_end)
    assert sorted(rows["rank"]) == list(range(8)) and set(rows["optimizer"]) == {"AdamWeightDecay"}
    for row in rows.to_dict("records"):
        assert {k: row[k] for k in ZOO01_MEMORY} == ZOO01_MEMORY
