"""A collective's parallel axis from the operators next to it (issue 39, item 3), where no weight's
device matrix holds its group: the layout MindSpore derives from the producer's (else a
consumer's) strategy, an axis named ``data`` where it cuts nothing but the batch, else ``tensor``.

By hand, zoo 02 (``fixtures/zoo/nets/02_sharding_propagation_64.py``: gpt.py under
sharding_propagation on 64 ranks, dp 8 x tp 8 set on the MatMuls, full batch): the weights are
laid out on (8, 8). The planner propagates ((32,),) to loss_mean (the IR line below says so), a
ReduceMean over the batch axis cut 32 ways on 64 devices: device matrix (32, 2), the repeated
axis of 2 on the right. Each rank holds a partial mean of its 1/32 of the batch, summed over the
32 ranks that share its place on the repeated axis, the ranks of its parity: no sub-grid of
(8, 8) (stride 2 over 32 ranks crosses its rows), a whole axis of (32, 2), which cuts the batch
only: data."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import axis_names
from msinspect.analysis.job.cost_tables import comm_costs
from msinspect.mindspore.layouts import Call, layout_of

from tests.conftest import FIXTURES

ZOO02 = FIXTURES / "zoo" / "02_sharding_propagation_64"


@pytest.fixture(scope="module")
def zoo02():
    analysis = analyse(msinspect.load_dump(ZOO02), "validate")
    return analysis, comm_costs(analysis)


@pytest.mark.parametrize("rank", [0, 31, 63])
def test_the_loss_sum_runs_along_loss_means_data_axis(zoo02, rank):
    analysis, costs = zoo02
    strategies = analysis.strategies()
    (strategy,) = set(strategies[(strategies["rank"] == rank) & (strategies["name"] == "loss_mean")]["in_strategy"])
    assert strategy == ((32,),)  # the planner's choice, as the IR states it
    mine = costs[(costs["rank"] == rank) & (costs["op"] == "AllReduce") & (costs["wire_bytes"] == 2 * 31 * 4 // 32)]
    (row,) = mine.to_dict("records")
    assert row["group_ranks"] == tuple(range(rank % 2, 64, 2))
    assert row["axis"] == "data" and "loss_mean's device matrix (32, 2)" in row["axis_from"]


def test_axis_names_by_what_each_axis_cuts():
    # MatMul x (a, b) @ w (b, c) by ((2, 1), (1, 4)) on 8: matrix [2, 1, 4]; the first axis cuts
    # x's rows (the batch) only, the others the contracted dimension and w's columns
    layout = layout_of(Call("MatMul", ((2, 1), (1, 4)), (None, None, False, False)), 8)
    assert layout.device_matrix == (2, 1, 4)
    assert axis_names(layout, "MatMul") == ("data", "tensor", "tensor")
    # a Gather's batch is its indices: a table cut by rows is vocabulary parallel (tensor), cut
    # indices data parallel
    table = layout_of(Call("Gather", ((8, 1), (1,)), (None, None, 0)), 8)
    indices = layout_of(Call("Gather", ((1, 1), (8,)), (None, None, 0)), 8)
    assert axis_names(table, "Gather")[0] == "tensor"
    assert indices.device_matrix[0] == 8 and axis_names(indices, "Gather")[0] == "data"


@pytest.mark.parametrize("rank", [0, 3])
def test_a_redistribution_along_part_of_the_tensor_axis_is_tensor(rank):
    """Zoo 14 (``fixtures/zoo/nets/14_mf_llama_seq_parallel.py``): data_parallel 1, model_parallel
    4 with sequence parallel on 4 ranks: the one axis of 4 is the tensor axis (every cut weight is
    cut along it). Between wo's ReduceScatter and the residual add ((1, 4, 1), (1, 4, 1)) MindSpore
    redistributes through two AllGathers over pairs, the axis of 4 factored as 2 x 2: ranks that
    differ in the fast factor ({0, 1}, {2, 3}) and in the slow one ({0, 2}, {1, 3}), each part of
    the tensor axis: tensor, never "cannot tell"."""
    analysis = analyse(msinspect.load_dump(FIXTURES / "zoo" / "14_mf_llama_seq_parallel"), "validate")
    costs = comm_costs(analysis)
    pairs = costs[(costs["rank"] == rank) & (costs["op"] == "AllGather")
                  & costs["group_ranks"].map(lambda g: g is not None and len(g) == 2)]
    fast = tuple(sorted({rank, rank ^ 1}))
    slow = tuple(sorted({rank, rank ^ 2}))
    assert set(pairs["group_ranks"]) == {fast, slow}
    assert set(pairs["axis"]) == {"tensor"} and pairs["axis_from"].str.contains("part of one axis").all()
    assert "cannot tell" not in set(costs[costs["rank"] == rank]["axis"])
