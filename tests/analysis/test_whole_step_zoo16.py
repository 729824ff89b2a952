"""Zoo 16 (``fixtures/zoo/nets/16_mf_llama_256.py``: MindFormers' LLaMA at dp 32 x mp 8 on 256 ranks,
0, 131 and 255 kept) without validate (step_parallel_end): the rank matrix and what explain says,
derived by hand; the step's bytes, its memory at both stages and explain at validate are derived in
tests/analysis/test_cost_zoo16.py (read from there, one home).

The matrix (ring: the next rank of the group's sorted list, ``NEXT``): at step_parallel_end a rank
sends its tensor group's neighbour the forward's tensor bytes (689,472: the embedding's, the row-
parallel and the loss sums; their bprops are the gradient graph's), its data group's neighbour the
loss and mask gathers and the data-group mirrors (15,872 + 7,618,560), and its world neighbour the
RMSNorm mirrors and the optimizer's two scalars (20,400 + 14). Rank 0's tensor and world
neighbour are both rank 1.

What explain says of rank 131 there: the 21 mirrors stand in the forward graph as
``_MirrorOperator``, 16 over its data group (3, 11, .., 251) and the 5 RMSNorm weights' over the
world, each named after its weight (``MIRRORED`` / ``WHOLE``); its forward AllReduces over its
tensor group 128-135, 8 parts: the loss's ReduceMax (max) and seven sums, as at validate.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.answers import explain

from tests.analysis.cost_by_hand import cells
from tests.analysis.test_cost_zoo16 import (DATA_MIRRORS, LOSS_GATHER, MIRRORED, NEXT, SCALAR, TENSOR_FORWARD, TP,
                                            WHOLE, WORLD, WORLD_MIRRORS)
from tests.conftest import FIXTURES

ZOO16 = FIXTURES / "zoo" / "16_mf_llama_256"


@pytest.fixture(scope="module")
def at_end():
    return analyse(msinspect.load_dump(ZOO16), "step_parallel_end")


def test_the_rank_matrix_without_validate(at_end):
    expected: dict = {}
    for rank, (tensor, data, world) in NEXT.items():
        for to, b in ((tensor, TENSOR_FORWARD), (data, 2 * LOSS_GATHER + DATA_MIRRORS),
                      (world, WORLD_MIRRORS + 2 * SCALAR)):
            expected[(rank, to)] = expected.get((rank, to), 0) + b
    assert cells(at_end) == expected
    assert expected[(0, 1)] == 689_472 + 20_414


def test_what_explain_says_of_rank_131_without_validate(at_end):
    tensor, data, world = tuple(range(128, 136)), tuple(range(3, 256, 8)), tuple(range(WORLD))
    mirrors = explain(at_end, "type:_MirrorOperator", rank=131)
    named = {e.headline.split("same slice of ")[1].split(" ")[0]: tuple(e.group_ranks) for e in mirrors}
    assert len(mirrors) == 21 and named == {**{w: data for w in MIRRORED}, **{w: world for w in WHOLE}}
    forward = [e for e in explain(at_end, "type:AllReduce", rank=131) if tuple(e.group_ranks) == tensor]
    assert sorted((e.kind, e.action, e.parts) for e in forward for _ in e.lines) == (
        [("forward", "max", TP)] + [("forward", "sum", TP)] * 7)
