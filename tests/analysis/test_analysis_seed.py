"""The seed document's own statements about its 2.2 sample IR (seed 002, 8 GPUs, sharding
propagation): matmul cut ((2, 4), (4, 1)) by the user, an AllReduce over ranks 0-1-2-3 after it,
a redistribution StridedSlice (8, 16) -> (8, 4) before relu, and relu's per-rank output (8, 4)."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def seed():
    return msinspect.load_dump(FIXTURES / "seed_002")


def test_matmul_strategy_is_the_users(seed):
    rows = analyse(seed).strategies()
    matmul = rows[rows["name"] == "matmul"].iloc[0]
    assert matmul["in_strategy"] == ((2, 4), (4, 1))
    assert matmul["set_by"] == "user"
    assert set(rows[rows["name"] != "matmul"]["set_by"]) == {"planner"}


def test_allreduce_after_matmul_over_ranks_0_to_3(seed):
    comm = analyse(seed).comm()
    allreduce = comm[comm["op"] == "AllReduce"].iloc[0]
    assert allreduce["producer"] == "matmul"
    assert allreduce["group_ranks"] == (0, 1, 2, 3)
    assert allreduce["kind"] == "forward"
    assert allreduce["tensor_bytes"] == 8 * 16 * 4  # the rank's (8, 16) float32 partial sum
    assert allreduce["wire_bytes"] == 2 * 3 * (8 * 16 * 4) // 4  # ring AllReduce over 4 ranks


def test_redistribution_strided_slice_8x16_to_8x4_before_relu(seed):
    comm = analyse(seed).comm()
    ss = comm[comm["op"] == "StridedSlice"].iloc[0]
    assert ss["kind"] == "local"  # a slice of the rank's own data: nothing on the wire
    assert ss["wire_bytes"] == 0
    assert (ss["shape"], ss["out_shape"]) == ((8, 16), (8, 4))
    assert ss["consumers"] == ("relu",)


def test_per_rank_shapes_follow_from_global_and_strategy(seed):
    """Global shapes come from step_parallel_begin, per-rank ones from execute."""
    shapes = analyse(seed).shapes()
    relu = shapes[shapes["name"] == "relu"].iloc[0]
    assert (relu["global_shape"], relu["strategy"], relu["rank_shape"]) == ((16, 16), (2, 4), (8, 4))
    assert shapes["ok"].tolist() == [True] * len(shapes)
    rows = analyse(seed).strategies()
    assert rows[rows["name"] == "relu"].iloc[0]["rank_output"] == (8, 4)
