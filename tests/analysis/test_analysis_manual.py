"""The manual-parallel run (seed 003), trained for real on 8 CPU ranks: no parallel mode, so no
strategies; the user's ops.AllReduce of the loss over the world group of 8 ranks."""
from __future__ import annotations

from msinspect.analysis import analyse


def test_no_strategies_without_a_parallel_mode(manual):
    assert analyse(manual).strategies().empty


def test_users_allreduce_over_the_world(manual):
    comm = analyse(manual).comm()
    assert sorted(set(comm["rank"])) == list(range(8))
    forward = comm[comm["kind"] == "user"]
    assert len(forward) == 8  # one per rank
    assert set(forward["group"]) == {"mccl_world_group"}
    assert set(forward["group_ranks"]) == {tuple(range(8))}
    assert set(forward["tensor_bytes"]) == {4}  # a float32 scalar loss
    assert set(forward["wire_bytes"]) == {2 * 7 * 4 // 8}  # ring AllReduce: 2 (n - 1) / n * S, n = 8
    backward = comm[comm["kind"] == "backward"]
    assert len(backward) == 8


def test_operator_table_has_the_per_rank_batch(manual):
    ops = analyse(manual).operators()
    first = ops[(ops["name"] == "matmul") & ops["scope"].str.endswith("layer1-Dense") & ~ops["backward"]]
    assert set(first["inputs"]) == {((4, 784), (512, 784))}  # 32 rows / 8 ranks
