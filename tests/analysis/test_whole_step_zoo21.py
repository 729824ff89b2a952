"""Zoo 21 (``fixtures/zoo/nets/21_doc_layout_two_axes.py``: a Layout with a dimension cut by two
device axes, device matrix [2, 2, 2] = (dp, sp, mp), rank = 4 dp + 2 sp + mp, ranks 0, 2, 5 kept):
the rank matrix at both stages, cell by cell, and memory without validate, derived by hand; the
step's bytes are derived in tests/analysis/test_cost_zoo21.py (read from there, one home), whose
matrix test holds which cells are non-zero only.

Who gets what (ring collectives: all of a rank's bytes to the next rank of the group's sorted
list; AlltoAll: an equal share to each other rank of the group):
- the input's three AlltoAlls, one over each pair (dp: r ^ 4, sp: r ^ 2, mp: r ^ 1), 50,176 each:
  all of it to the pair's other rank;
- matmul1's sums over the four of its mp (r % 2, r % 2 + 2, ...), 393,216, and their bprop: to the
  next of the four;
- relu1's gather over the mp pair, 262,144, and its bprop's ReduceScatter: to the other of it;
- matmul2's AlltoAll over the four, 49,152, and its bprop's: 16,384 to each of the other three;
- matmul2's sums over the world, 917,504, their bprop, the loss's scalars (3 forward, 2
  backward, 7 bytes each; at step_parallel_end 4 forward written before CSE, of which CSE keeps
  3: the copy runs 0 times, in no cell) and fc3's mirror over the
  world, 35,840: to r + 1 mod 8;
- fc1's mirror over the mp pair, 401,408: to the other of it.
Without validate: the forward's and the mirrors only.

Memory without validate: the weights are cut in place there already: 552,960 bytes of 3 weights,
SGD's two clones, one gradient each, as at validate.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import cells
from tests.analysis.test_cost_zoo21 import (INPUT_EXCHANGES, MATMUL1_SUMS, MATMUL2_EXCHANGE, MATMUL2_SUMS, RANKS,
                                            RELU1_GATHER, SCALAR)
from tests.conftest import FIXTURES

ZOO21 = FIXTURES / "zoo" / "21_doc_layout_two_axes"
FC1_MIRROR, FC3_MIRROR = 196 * 512 * 4, 2 * 7 * 512 * 10 * 4 // 8


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO21), "validate")


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO21), "step_parallel_end")


def _matrix(backward: bool) -> dict:
    both = 2 if backward else 1
    scalars = 3 + 2 if backward else 3
    expected: dict = {}
    for r in RANKS:
        four = sorted(range(r % 2, 8, 2))
        sent = [(r ^ 4, INPUT_EXCHANGES // 3), (r ^ 2, INPUT_EXCHANGES // 3), (r ^ 1, INPUT_EXCHANGES // 3),
                (four[(four.index(r) + 1) % 4], both * MATMUL1_SUMS), (r ^ 1, both * RELU1_GATHER + FC1_MIRROR),
                ((r + 1) % 8, both * MATMUL2_SUMS + scalars * SCALAR + FC3_MIRROR)]
        sent += [(other, both * MATMUL2_EXCHANGE // 3) for other in four if other != r]
        for to, b in sent:
            expected[(r, to)] = expected.get((r, to), 0) + b
    return expected


def test_the_numbers_are_the_derivation():
    assert (INPUT_EXCHANGES // 3, MATMUL2_EXCHANGE // 3, FC1_MIRROR, FC3_MIRROR) == (50_176, 16_384, 401_408, 35_840)
    assert _matrix(True)[(0, 1)] == 2_846_755 and sum(b for (r, _), b in _matrix(True).items() if r == 5) == 3_831_843


def test_the_rank_matrix(whole, at_end):
    assert cells(whole) == _matrix(backward=True)
    assert cells(at_end) == _matrix(backward=False)


def test_memory_without_validate(at_end):
    rows = memory_per_rank(at_end)
    assert sorted(rows["rank"]) == list(RANKS)
    for row in rows.to_dict("records"):
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("SGD", 552_960, 3)
        assert (row["states"], row["states_expected"], row["gradients"]) == (1_105_920, 0, 552_960)
