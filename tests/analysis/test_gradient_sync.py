"""Whether each trained weight's gradient is summed over the ranks holding the same slice of it
(msinspect.analysis.rank.gradsync), the expectations worked out by hand from the jobs' scripts."""
from __future__ import annotations

from msinspect.analysis import analyse

#: train_jobs/networks.py's MLP 784-512-512-10 (seed 003): nn.Dense keeps its weight as (out, in).
MANUAL_WEIGHTS = {"layer1.weight": (512, 784), "layer1.bias": (512,), "layer2.weight": (512, 512),
                  "layer2.bias": (512,), "layer3.weight": (10, 512), "layer3.bias": (10,)}


def test_manual_parallel_replicas_get_no_gradient_sum(manual):
    """train_jobs/manual_parallel.py sets no parallel mode: each of the 8 ranks builds the whole
    Network(10) and trains it with nn.SGD(net.trainable_params()) on its own 4 rows of the batch.
    The one collective is ops.AllReduce of the loss (and its gradient), a scalar: nothing sums a
    weight's gradient. So each of the six weights is held whole by ranks 0-7, updated by SGD with
    each rank's own gradient: not synchronised, on every rank; the optimizer's own parameters
    (accum.*, stat.*, learning_rate, momentum, global_step) are no trained weights."""
    sync = analyse(manual).gradient_sync()
    assert set(sync["param"]) == set(MANUAL_WEIGHTS)
    assert len(sync) == 6 * 8
    assert set(sync["verdict"]) == {"not synchronised"}
    assert set(sync["replicas"]) == {tuple(range(8))}
    assert set(sync["update"]) == {"SGD"}
    assert {p: s for p, s in zip(sync["param"], sync["shape"])} == MANUAL_WEIGHTS
    assert set(sync["synced_by"]) == {()}


def test_seed_002_mirrors_sum_each_weight_over_its_replicas(sharding):
    """Seed 002 on 8 ranks: matmul's ((2, 4), (4, 1)) puts w (32, 16) on the device matrix (2, 4)
    with rows cut in 4 by the right axis; the axis of 2 repeats it, so rank r and rank r + 4 hold
    the same rows of w (ranks r, r + 4 in 0-7). MindSpore's mirror operator sums w's gradient over
    each such pair: an AllReduce over (r, r + 4), of kind gradient."""
    sync = analyse(sharding).gradient_sync()
    w = sync[sync["param"] == "w"]
    assert sorted(w["rank"]) == list(range(8))
    for row in w.to_dict("records"):
        pair = tuple(sorted({row["rank"] % 4, row["rank"] % 4 + 4}))
        assert row["replicas"] == pair
        assert row["verdict"] == "synchronised"
        assert [(op, kind, ranks) for op, kind, ranks, _ in row["synced_by"]] == [("AllReduce", "gradient", pair)]
    assert "not synchronised" not in set(sync["verdict"])


def test_recursive_pipeline_has_no_unsynchronised_replica(pipeline):
    """Seeds 000/001 in 2 stages under the planner: whatever it cuts, every replica it leaves gets
    its mirror; nothing is flagged."""
    sync = analyse(pipeline).gradient_sync()
    assert len(sync) > 0
    assert "not synchronised" not in set(sync["verdict"])
