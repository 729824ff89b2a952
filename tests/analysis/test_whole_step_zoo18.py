"""Zoo 18 (``fixtures/zoo/nets/18_doc_pipeline_parallel.py``: MindSpore's pipeline sample, 2 stages
of 4 ranks, 4 micro-batches, 0 and 5 kept) without validate (step_parallel_end): the rank matrix
and static memory, derived by hand; the step's bytes and its memory at validate are derived in
tests/analysis/test_cost_zoo18.py (``ACTIVATION``, ``MICRO``, ``STAGE0_MIRRORS``,
``STAGE1_MIRRORS``, ``IMAGE_GATHER``, ``LABEL_GATHER``: read from there, one home).

At step_parallel_end (before CSE: each micro-batch its own input gather, ``loss_weights.sum()``
twice, test_cost_zoo18.py; the copies CSE merges run 0 times, so the cells are what the step
sends): rank 0 sends its stage's ring neighbour 1 the mirrors and 1 image gather, and rank 4 (its
peer) the forward activation 4 x 16,384; rank 5 sends 6 the mirrors, 1 label gather and 12 loss
sums of a scalar over its stage of 4 (2 x 3/4 x 4 = 6 bytes each), and reads its activations from
rank 1 (1 -> 5, 65,536). (msinspect first counted every copy: 4 gathers, 16 sums.) The backward's Sends (4 -> 0, 5 -> 1) are
the gradient graph's: in no cell. Memory as at validate: rank 0 layer1.param, layer2.weight and
bias, 2,656,256 bytes; rank 5 layer3.weight and bias, 20,520; SGD two clones each; the gradients
the accumulation buffers.

What ``explain`` says there: rank 0's three micro-step mirrors over its stage 0-3, one per weight
of stage 0, by name; its Send to rank 4 of the (8, 512) activation, one a micro-batch; its input
gather (dimension 0 from 4 parts over 0-3), one a micro-batch. Rank 5's two mirrors over 4-7
(layer3's weight and bias); its Receive from rank 1, one a micro-batch; the loss's 4 sums a
micro-batch over 4-7 (4 parts each), 16; the label's gather, one a micro-batch. Asked for what
only the gradient graph holds (rank 0's Receive, rank 5's Send), it says so.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.answers import explain
from msinspect.errors import NoMatchError
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
        (0, 1): STAGE0_MIRRORS + IMAGE_GATHER, (0, 4): MICRO * ACTIVATION,
        (5, 6): STAGE1_MIRRORS + LABEL_GATHER + 3 * MICRO * allreduce(4, 4), (1, 5): MICRO * ACTIVATION}


def test_memory_without_validate(at_end):
    rows = memory_per_rank(at_end).set_index("rank")
    assert sorted(rows.index) == [0, 5]
    for rank, weights, count in ((0, 2_656_256, 3), (5, 20_520, 2)):
        row = rows.loc[rank]
        assert (row["optimizer"], row["weights"], row["weight_count"]) == ("SGD", weights, count)
        assert (row["states"], row["states_expected"], row["gradients"]) == (2 * weights, 0, weights)
        assert row["gradients_from"].startswith("accumulation")


def _said(analysis, selector: str, rank: int) -> list:
    return [(e.kind, e.action, e.dims, e.parts, tuple(e.group_ranks or ())) for e in explain(analysis, selector, rank=rank)
            for _ in e.lines]


def test_what_explain_says_without_validate(at_end):
    stage0, stage1 = (0, 1, 2, 3), (4, 5, 6, 7)
    mirrors = explain(at_end, "type:_MirrorMicroStepOperator", rank=0)
    assert sorted(e.headline.split("same slice of ")[1].split(" ")[0] for e in mirrors) == [
        "layer1.param", "layer2.bias", "layer2.weight"]
    assert _said(at_end, "type:_MirrorMicroStepOperator", 0) == [("gradient", "replicas", (), 4, stage0)] * 3
    assert _said(at_end, "type:Send", 0) == [("pipeline", "send", (), None, (0, 4))] * MICRO
    assert _said(at_end, "type:AllGather", 0) == [("redistribution", "gather", (0,), 4, stage0)] * MICRO
    assert _said(at_end, "type:_MirrorMicroStepOperator", 5) == [("gradient", "replicas", (), 4, stage1)] * 2
    assert _said(at_end, "type:Receive", 5) == [("pipeline", "receive", (), None, (1, 5))] * MICRO
    assert _said(at_end, "type:AllReduce", 5) == [("forward", "sum", (), 4, stage1)] * 4 * MICRO
    assert _said(at_end, "type:AllGather", 5) == [("redistribution", "gather", (0,), 4, stage1)] * MICRO
    for selector, rank in (("type:Receive", 0), ("type:Send", 5)):
        with pytest.raises(NoMatchError, match="no gradient graph"):
            explain(at_end, selector, rank=rank)
