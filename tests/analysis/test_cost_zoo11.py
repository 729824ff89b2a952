"""Cost per step of zoo 11, two feed-forward blocks under ``@lazy_inline``
(``fixtures/zoo/nets/11_lazy_inline_8.py``), derived by hand before msinspect read it.

From the script and MindSpore's definitions; 8 ranks, dp 2 x mp 4, full batch, the zoo keeps
ranks 0 and 5; rank r sits at dp = r // 4, mp = r % 4: its mp group is the 4 ranks of its dp row
(0-3 for rank 0, 4-7 for rank 5), its dp group {r % 4, r % 4 + 4} ({0, 4}, {1, 5}). x (16, 64)
whole; float32; wire bytes as docs/comm.md (ring AllReduce 2(n-1)/n S).

``@lazy_inline`` compiles the block's body once, a subgraph called once per block with that
block's weights: an operator in it runs twice a step (docs/cost.md: runs per step by the calls).

- forward, tensor: ``down`` ((2, 4), (4, 1)) contracts ``act``'s columns cut 4 along mp with w2's
  rows: partial sums of its (16, 64) output, rows cut 2: (8, 64) = 2,048 bytes summed over the mp
  group, 2 x 3/4 x 2,048 = 3,072; twice (two blocks): 6,144. ``up`` ((2, 1), (1, 4)) cuts no
  contracted dimension: nothing; each block's output, rows cut 2 over dp, is what the next
  ``up`` reads: no redistribution between.
- forward, data: the loss ReduceMean ((2, 1),) with no axis sums a float32 scalar over the rows
  cut by dp: over the dp pair, 2 x 1/2 x 4 = 4 bytes.
- backward, tensor: MindSpore's bprop of each ``down`` AllReduce (sum) is an AllReduce of its dout
  over the same group (it also sums the next block's ``up`` input gradient, partial over mp):
  2 x 3,072 = 6,144. The loss's sum has no bprop (its dout is the constant sens, as zoo 01's).
- backward, data: the mirrors of w1_i and w2_i, each (64, 64) = 16,384 bytes a rank, held alike by
  the dp pair: 2 x 1/2 x 16,384 = 16,384 each, 4 weights: 65,536.
- Momentum updates each slice where it lies: no collective.

Ranks 0 and 5 alike: tensor forward 6,144 (2 runs), data forward 4 (1), tensor backward 6,144
(2), data backward 65,536 (4). The rank matrix: to the next of the mp ring (0 -> 1, 5 -> 6)
2 x 6,144; to the other of the dp pair (0 -> 4, 5 -> 1) 4 + 65,536.

At step_parallel_end: the forward and the mirrors (kind gradient: backward, data); the tensor
bprops are the gradient graph's: "cannot tell", with the reason.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD, backward_missing

from tests.analysis.cost_by_hand import allreduce, cells, operators, split
from tests.conftest import FIXTURES

ZOO11 = FIXTURES / "zoo" / "11_lazy_inline_8"
DOWN = allreduce(4, 8 * 64 * 4)
LOSS = allreduce(2, 4)
MIRRORS = 4 * allreduce(2, 64 * 64 * 4)
RANK = {("tensor", "forward"): 2 * DOWN, ("data", "forward"): LOSS, ("tensor", "backward"): 2 * DOWN,
        ("data", "backward"): MIRRORS}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO11), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO11), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert (DOWN, LOSS, MIRRORS) == (3_072, 4, 65_536)


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in (0, 5):
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == {("tensor", "forward"): 2, ("data", "forward"): 1,
                                          ("tensor", "backward"): 2, ("data", "backward"): 4}


def test_the_rank_matrix(whole):
    assert cells(whole) == {(0, 1): 4 * DOWN, (0, 4): LOSS + MIRRORS, (5, 6): 4 * DOWN, (5, 1): LOSS + MIRRORS}


def test_at_step_parallel_end_the_backward_cannot_tell(at_end):
    for rank in (0, 5):
        assert split(at_end, rank) == {("tensor", "forward"): 2 * DOWN, ("data", "forward"): LOSS,
                                       ("data", "backward"): MIRRORS, ("cannot tell", "backward"): None}
    why = NO_BACKWARD.format(stage="step_parallel_end")
    assert backward_missing(at_end) == {0: why, 5: why}
