"""``explain`` where it gave up on a rule it has, or stated what is not so (issue 39, item 5), on
the zoo's real dumps. Each expectation is worked out by hand from the network script named in its
fixture's docstring and MindSpore's rules, in the comment above it.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain import explain

from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"


def _zoo(name: str, stage: str, rank: int = 0):
    return analyse(msinspect.load_dump(ZOO / name), stage, only=[rank])


@pytest.fixture(scope="module")
def zoo10_end():
    """Zoo 10 (fixtures/zoo/nets/10_layout_api_8.py): Layout((2, 4), ("dp", "tp")) on 8 ranks,
    rank = dp * 4 + tp. col_matmul ((2, 1), (1, 4)), act ((2, 4),), row_matmul ((2, 4), (4, 1)),
    flat_matmul ((8, 1), (1, 1)), square ((8, 1),), loss_mean ReduceMean(x, ()) ((8, 1),);
    256 rows, hidden 512 -> 2048 -> 512 -> 512; AdamWeightDecay on w1, w2, w3."""
    return _zoo("10_layout_api_8", "step_parallel_end")


@pytest.fixture(scope="module")
def zoo10_validate():
    return _zoo("10_layout_api_8", "validate")


def _one(found, **where):
    hits = [e for e in found if all(getattr(e, k) == v for k, v in where.items())]
    assert len(hits) == 1, f"{len(hits)} of {[(e.name, e.producer, e.consumer) for e in found]} have {where}"
    return hits[0]


# ------------------------------------------------------------------ (a) a reduction over every axis
def test_reduce_mean_over_empty_axis_tuple_gives_a_scalar(zoo10_end):
    # loss_mean = ReduceMean(square, ()) with keep_dims False: an empty axis tuple reduces every
    # dimension of the (256, 512) input, so the output is a scalar: its cut is () (no dimension
    # left), not the input's (8, 1) nor "(8,)". The rows are cut 8 ways (strategy ((8, 1),) on 8
    # devices, no repeat axis): each rank holds the sum of its 32 rows, an AllReduce(sum) over the
    # 8 ranks 0-7 makes the whole.
    e = _one(explain(zoo10_end, "type:AllReduce", rank=0), producer="loss_mean")
    assert e.producer_layout == ()
    assert any("over every dimension: the output is a scalar" in t for t in e.reconstruction)
    assert (e.action, e.parts) == ("sum", 8)
    assert tuple(e.group_ranks) == tuple(range(8))
    assert tuple(e.predicted_group) == tuple(range(8))


# ------------------------------------------------------------------ (d) a mirror at validate
@pytest.mark.parametrize("weight, reader, replicas", [
    # w1 (512, 2048) is input 1 of col_matmul ((2, 1), (1, 4)): device matrix (2, 1, 4), w1's map
    # uses the middle (size 1) and last (tp, 4) axes; the dp axis (2, stride 4) leaves it whole:
    # rank 0's replicas are 0 and 4.
    ("w1", "col_matmul", (0, 4)),
    # w2 (2048, 512) is input 1 of row_matmul ((2, 4), (4, 1)): matrix (2, 4, 1), w2 cut by tp
    # only: replicas along dp, 0 and 4.
    ("w2", "row_matmul", (0, 4)),
    # w3 (512, 512) is input 1 of flat_matmul ((8, 1), (1, 1)): whole on every rank: 0-7.
    ("w3", "flat_matmul", tuple(range(8))),
])
def test_mirror_at_validate_is_named_after_its_weight(zoo10_validate, weight, reader, replicas):
    # At validate a mirror is the gradient's AllReduce (grad_mirror_MirrorOperator under
    # Gradients/), fed by the gradient's MatMul (Grad_MatMul/MatMul-op2 for w1) and feeding
    # AdamWeightDecay: the weight is the one MindSpore records (mirror_user_id: "w1"), never the
    # gradient MatMul, and its replicas follow from the forward operator that reads it.
    found = explain(zoo10_validate, "type:AllReduce", rank=0)
    e = _one(found, kind="gradient", consumer=reader)
    assert f"same slice of {weight} " in e.headline
    assert "MatMul-op" not in e.headline
    assert e.action == "replicas"
    assert tuple(e.group_ranks) == replicas
    assert tuple(e.predicted_group) == replicas
    assert not e.cannot_tell
