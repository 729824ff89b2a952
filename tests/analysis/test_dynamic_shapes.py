"""A job compiled with a dynamic input (zoo 17: batch dimension None, w (64, 128) cut by MatMul
((1, 1), (1, 4)) on 8 ranks, ranks 0 and 3 compiled): its files parse strictly (symbolic type
lines, symbol engines) and the analyses say what its script works out by hand: w's layout as
MindSpore's parameter_layout_dict states it, [4, 2] / [-1, 1] (MindSpore 2.10 printed exactly
that for rank 3 in the dry run), rank r holds columns 32 * (r // 2) .. + 32, and w's gradient is
mirrored over {2k, 2k + 1}. What depends on the unknown batch (the bytes an activation's
collective moves) is "cannot tell", never a number."""
from __future__ import annotations

import math

import pytest

import msinspect
from msinspect.analysis import analyse
from tests.conftest import FIXTURES

ZOO17 = FIXTURES / "zoo" / "17_dynamic_shape_8"


@pytest.fixture(scope="module")
def analysis():
    return analyse(msinspect.load_dump(ZOO17), "step_parallel_end")


@pytest.mark.parametrize("rank", [0, 3])
def test_the_weight_layout_and_slice(analysis, rank):
    slices = analysis.slices()
    (w,) = slices[(slices["rank"] == rank) & (slices["kind"] == "weight")].itertuples()
    assert (w.param, tuple(w.global_shape), tuple(w.rank_shape)) == ("w", (64, 128), (64, 32))
    assert (tuple(w.device_matrix), tuple(w.tensor_map), tuple(w.slice_shape)) == ((4, 2), (-1, 1), (64, 32))
    k = rank // 2
    assert w.slice == ((0, 64), (32 * k, 32 * k + 32))


@pytest.mark.parametrize("rank", [0, 3])
def test_the_gradient_mirror_pair_and_unknown_activation_bytes(analysis, rank):
    comm = analysis.comm()
    mine = comm[comm["rank"] == rank]
    mirror = mine[mine["kind"] == "gradient"]
    assert [tuple(g) for g in mirror["group_ranks"]] == [(rank - rank % 2, rank - rank % 2 + 1)]
    # w's gradient (64, 32) float32, AllReduce over 2: 2 (n - 1) / n * 8192 bytes
    assert list(mirror["wire_bytes"]) == [2 * (2 - 1) / 2 * 64 * 32 * 4]
    moving = mine[(mine["kind"] != "gradient") & mine["moves_data"]]
    assert len(moving) > 0
    assert all(b is None or (isinstance(b, float) and math.isnan(b)) for b in moving["wire_bytes"])
