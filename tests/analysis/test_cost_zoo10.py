"""Cost per step of zoo 10, MindSpore's tensor-layout API (``fixtures/zoo/nets/10_layout_api_8.py``),
derived by hand before msinspect read it.

From the script and MindSpore's definitions; 8 ranks, all kept, ``Layout((2, 4), ("dp", "tp"))``:
rank r sits at dp = r // 4, tp = r % 4 (the last axis fastest). Its tp group is the 4 ranks of its
dp row (0-3 or 4-7), its dp group the 2 ranks of its tp column ({r % 4, r % 4 + 4}). Full batch:
x (256, 512) is whole on every rank. float32 (4 bytes); wire bytes as docs/comm.md: ring
AllReduce 2(n-1)/n S, rounded down.

- Weights: w1 (512, 2048) ``("None", "tp")`` and w2 (2048, 512) ``("tp", "None")`` cut in 4 along
  tp, (512, 512) a rank, the same on the 2 ranks of a dp group; w3 (512, 512) ``("None", "None")``
  whole on all 8. AdamWeightDecay with no optimizer parallel: no gather, no scatter.
- forward, tensor: row_matmul contracts x's columns cut 4 along tp with w2's rows: partial sums of
  its (256, 512) output, rows cut 2 by dp: (128, 512) = 262,144 bytes summed over the tp group,
  2 x 3/4 x 262,144 = 393,216. (x whole -> rows cut by dp, and row_matmul's rows cut by dp ->
  flat_matmul's rows cut by (dp, tp): StridedSlices, the rank's own data, nothing on the wire.)
- forward, the loss: ReduceMean ((8, 1),) with no axis reduces every axis of square's output,
  rows cut 8 (dp then tp, which is rank order): a float32 scalar summed over all 8, 2 x 7/8 x 4 =
  7 bytes. The group varies along both axes of (2, 4): ``data+tensor`` (docs/cost.md: tp cuts a
  weight, dp does not).
- backward, tensor: MindSpore's bprop of row_matmul's AllReduce (sum) is an AllReduce of its dout
  over the same tp group: 393,216 (it also adds up the tp ranks' parts of the gradient that the
  StridedSlice before flat_matmul handed out). The loss's AllReduce has no bprop: its dout is the
  constant sens (as zoo 01's, tests/analysis/test_cost.py).
- backward, data (the mirrors, each weight's gradient summed over the ranks holding its slice):
  w3's over all 8, (512, 512) = 1,048,576 bytes: 2 x 7/8 = 1,835,008; w1's and w2's over the dp
  pair, 1,048,576 each: 2 x 1/2 = 1,048,576 each. 3 operators, 3,932,160 bytes.
- x is the graph's input: no gradient of it, so nothing past col_matmul's weight gradient.

Every rank alike: tensor forward 393,216 (1), data+tensor forward 7 (1), tensor backward 393,216
(1), data backward 3,932,160 (3). The rank matrix (each ring sends to the next rank of its group):
to the next of the tp group 2 x 393,216; to the next of the world 7 + 1,835,008; to the other of
the dp pair 2 x 1,048,576.

At step_parallel_end the forward and the mirrors (kind gradient: backward, data) are in the file;
the tensor bprop is the gradient graph's: "cannot tell", with the reason.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD, backward_missing

from tests.analysis.cost_by_hand import allreduce, cells, operators, split
from tests.conftest import FIXTURES

ZOO10 = FIXTURES / "zoo" / "10_layout_api_8"
TP_SUM = allreduce(4, 128 * 512 * 4)
LOSS = allreduce(8, 4)
W3 = allreduce(8, 512 * 512 * 4)
W12 = 2 * allreduce(2, 512 * 512 * 4)
RANK = {("tensor", "forward"): TP_SUM, ("data+tensor", "forward"): LOSS, ("tensor", "backward"): TP_SUM,
        ("data", "backward"): W3 + W12}


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO10), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO10), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert (TP_SUM, LOSS, W3, W12) == (393_216, 7, 1_835_008, 2_097_152)


def test_the_whole_step_by_axis_and_phase(whole):
    for rank in range(8):
        assert split(whole, rank) == RANK
        assert operators(whole, rank) == {("tensor", "forward"): 1, ("data+tensor", "forward"): 1,
                                          ("tensor", "backward"): 1, ("data", "backward"): 3}


def test_the_rank_matrix(whole):
    want: dict = {}
    for r in range(8):
        for to, sent in ((4 * (r // 4) + (r + 1) % 4, 2 * TP_SUM), ((r + 1) % 8, LOSS + W3), ((r + 4) % 8, W12)):
            want[(r, to)] = want.get((r, to), 0) + sent
    assert cells(whole) == want


def test_at_step_parallel_end_the_backward_cannot_tell(at_end):
    for rank in range(8):
        assert split(at_end, rank) == {("tensor", "forward"): TP_SUM, ("data+tensor", "forward"): LOSS,
                                       ("data", "backward"): W3 + W12, ("cannot tell", "backward"): None}
    why = NO_BACKWARD.format(stage="step_parallel_end")
    assert backward_missing(at_end) == {r: why for r in range(8)}
