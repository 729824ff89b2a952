"""Zoo 10 (``fixtures/zoo/nets/10_layout_api_8.py``: MindSpore's Layout API, ``Layout((2, 4), ("dp",
"tp"))`` on 8 ranks): static memory at both stages and the rank matrix without validate, derived
by hand; the step's bytes are derived in tests/analysis/test_cost_zoo10.py (``TP_SUM``, ``LOSS``,
``W3``, ``W12``: read from there, one home).

Memory per rank (docs/cost.md "Static memory", float32): w1 (512, 2048) ``("None", "tp")`` and w2
(2048, 512) ``("tp", "None")`` cut in 4: (512, 512) = 1,048,576 bytes each; w3 (512, 512) whole:
1,048,576. 3,145,728 bytes, 3 weights; no optimizer parallel: gradients one per weight,
3,145,728; AdamWeightDecay two states (m, v) a weight as stored: 6,291,456, which is what it is
expected to keep. The parameters are cut in place at step_parallel_end already: the same there.

The rank matrix without validate (step_parallel_end: the forward and the mirrors): to the next
rank of the tp group (4 (r // 4) + (r + 1) % 4) row_matmul's AllReduce, 393,216 (its bprop is the
gradient graph's, not in the file); to the next of the world (r + 1 mod 8) the loss's 7 bytes and
w3's mirror 1,835,008; to the other of the dp pair (r + 4 mod 8) w1's and w2's mirrors 2,097,152.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import cells
from tests.analysis.test_cost_zoo10 import LOSS, TP_SUM, W3, W12
from tests.conftest import FIXTURES

ZOO10 = FIXTURES / "zoo" / "10_layout_api_8"
WEIGHTS = 3 * 512 * 512 * 4


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO10), "step_parallel_end")


def test_the_rank_matrix_without_validate(at_end):
    want: dict = {}
    for r in range(8):
        for to, sent in ((4 * (r // 4) + (r + 1) % 4, TP_SUM), ((r + 1) % 8, LOSS + W3), ((r + 4) % 8, W12)):
            want[(r, to)] = want.get((r, to), 0) + sent
    assert cells(at_end) == want
    assert want[(0, 1)] == 393_216 + 7 + 1_835_008


@pytest.mark.parametrize("stage", ["validate", "step_parallel_end"])
def test_memory_per_rank(stage, at_end):
    analysis = at_end if stage == "step_parallel_end" else analyse(msinspect.load_dump(ZOO10), stage)
    rows = memory_per_rank(analysis)
    assert sorted(rows["rank"]) == list(range(8))
    for row in rows.to_dict("records"):
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("AdamWeightDecay", WEIGHTS, 3)
        assert (row["gradients"], row["gradients_from"]) == (WEIGHTS, "one per weight")
        assert row["states"] == row["states_expected"] == 2 * WEIGHTS == 6_291_456
