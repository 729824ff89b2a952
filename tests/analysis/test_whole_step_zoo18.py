"""Zoo 18 (``fixtures/zoo/nets/18_doc_pipeline_parallel.py``: MindSpore's pipeline sample, 2 stages
of 4 ranks, 4 micro-batches, 0 and 5 kept) without validate (step_parallel_end): the rank matrix
and static memory, derived by hand; the step's bytes and its memory at validate are derived in
tests/analysis/test_cost_zoo18.py (``ACTIVATION``, ``MICRO``, ``STAGE0_MIRRORS``,
``STAGE1_MIRRORS``, ``IMAGE_GATHER``, ``LABEL_GATHER``: read from there, one home).

At step_parallel_end (before CSE: each micro-batch its own input gather, ``loss_weights.sum()``
twice, test_cost_zoo18.py): rank 0 sends its stage's ring neighbour 1 the mirrors and 4 image
gathers, and rank 4 (its peer) the forward activation 4 x 16,384; rank 5 sends 6 the mirrors, 4
label gathers and 16 loss sums of a scalar over its stage of 4 (2 x 3/4 x 4 = 6 bytes each), and
reads its activations from rank 1 (1 -> 5, 65,536). The backward's Sends (4 -> 0, 5 -> 1) are
the gradient graph's: in no cell. Memory as at validate: rank 0 layer1.param, layer2.weight and
bias, 2,656,256 bytes; rank 5 layer3.weight and bias, 20,520; SGD two clones each; the gradients
the accumulation buffers.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import allreduce, cells
from tests.analysis.test_cost_zoo18 import (ACTIVATION, IMAGE_GATHER, LABEL_GATHER, MICRO, STAGE0_MIRRORS,
                                            STAGE1_MIRRORS)
from tests.conftest import FIXTURES

ZOO18 = FIXTURES / "zoo" / "18_doc_pipeline_parallel"


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO18), "step_parallel_end")


def test_the_rank_matrix_without_validate(at_end):
    assert cells(at_end) == {
        (0, 1): STAGE0_MIRRORS + MICRO * IMAGE_GATHER, (0, 4): MICRO * ACTIVATION,
        (5, 6): STAGE1_MIRRORS + MICRO * LABEL_GATHER + 4 * MICRO * allreduce(4, 4), (1, 5): MICRO * ACTIVATION}


def test_memory_without_validate(at_end):
    rows = memory_per_rank(at_end).set_index("rank")
    assert sorted(rows.index) == [0, 5]
    for rank, weights, count in ((0, 2_656_256, 3), (5, 20_520, 2)):
        row = rows.loc[rank]
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("SGD", weights, count)
        assert (row["states"], row["states_expected"], row["gradients"]) == (2 * weights, 0, weights)
        assert row["gradients_from"].startswith("accumulation")
