"""The whole step of zoo 05 (``fixtures/zoo/nets/05_expert_alltoall_16.py``: experts with AlltoAll
on 16 ranks, ranks 0, 5 and 15 kept) without validate (step_parallel_end), and its rank matrix
at both stages, derived by hand.

The step at validate and the memory are derived in tests/analysis/test_cost.py (``ZOO05_RANK``,
``ZOO05_MEMORY``: read from there, one home): one device dimension of 16, every ring collective
over 0-15, every AlltoAll over 0-15.

Without validate: the forward graph holds the forward's collectives as at validate (tensor
6,021,127: the vocabulary ReduceScatter, proj_a -> proj_b's AlltoAll, proj_b's AllReduce, the
loss's scalar; expert 245,760: dispatch and combine) and wa's mirror as data backward
(1,966,080); the rest of the backward "cannot tell". The parameters are cut in place already:
memory as at validate.

The rank matrix (ring: all of a rank's ring bytes to r + 1 mod 16; AlltoAll: an equal share to
each of the 15 others): the AlltoAlls carry 122,880 (tensor) and 2 x 122,880 (expert) forward,
15 shares of 8,192 and 16,384: 24,576 to every other rank; the ring neighbour also gets
1,966,080 + 3,932,160 + 7 + 1,966,080 = 7,864,327. At validate the backward adds the same
AlltoAll shares (24,576) and, to the neighbour, the AllReduce's bprop 3,932,160 and the
ReduceScatter's AllGather 1,966,080.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import assert_backward_untold, cells, splits
from tests.analysis.test_cost import ZOO05_MEMORY, ZOO05_RANK
from tests.conftest import FIXTURES

ZOO05 = FIXTURES / "zoo" / "05_expert_alltoall_16"
KEPT = (0, 5, 15)
ALLTOALL = 122_880                              # 15/16 of a (64, 512) float32 tensor
SHARES = (ALLTOALL + 2 * ALLTOALL) // 15        # the forward's AlltoAlls, to each other rank
RING_FORWARD = 1_966_080 + 3_932_160 + 7 + 1_966_080
RING_BACKWARD = 3_932_160 + 1_966_080
AT_END = {("tensor", "forward"): ZOO05_RANK[("tensor", "forward")], ("expert", "forward"): 2 * ALLTOALL,
          ("data", "backward"): ZOO05_RANK[("data", "backward")], ("cannot tell", "backward"): None}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO05), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO05), "step_parallel_end")


def _matrix(ring: int, shares: int) -> dict:
    return {(r, to): ring + shares if to == (r + 1) % 16 else shares for r in KEPT for to in range(16) if to != r}


def test_the_numbers_are_the_derivation():
    assert SHARES == 24_576 and RING_FORWARD == 7_864_327
    assert RING_FORWARD + 15 * SHARES == sum(v for k, v in AT_END.items() if v) == 8_232_967


def test_without_validate_the_forward_and_the_backward_cannot_tell(at_end):
    assert splits(at_end) == {rank: AT_END for rank in KEPT}
    assert_backward_untold(at_end, KEPT)


def test_the_rank_matrix(whole, at_end):
    assert cells(at_end) == _matrix(RING_FORWARD, SHARES)
    assert cells(whole) == _matrix(RING_FORWARD + RING_BACKWARD, 2 * SHARES)


def test_memory_without_validate(at_end):
    rows = memory_per_rank(at_end)
    assert sorted(rows["rank"]) == list(KEPT)
    for row in rows.to_dict("records"):
        assert {k: row[k] for k in ZOO05_MEMORY} == ZOO05_MEMORY
