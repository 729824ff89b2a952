"""Weights given to a ``@lazy_inline`` cell's body as arguments (zoo 11: two blocks, dp 2 x mp 4
on 8 ranks, ranks 0 and 5 compiled): each is read inside a called ``CR_`` subgraph, and still gets
its strategy, layout and slice. Before calls were bound, no weight had a row.

Expected facts are those written in fixtures/zoo/nets/11_lazy_inline_8.py before the dump was
read: ``up`` ((2, 1), (1, 4)) reads w1 (64, 256): each rank holds (64, 64), columns
64 * (r % 4) ...; ``down`` ((2, 4), (4, 1)) reads w2 (256, 64): rows 64 * (r % 4) ...; the
device matrix of ``up`` is [2, 1, 4], w1's tensor map [1, 0]: as MindSpore's
``parameter_layout_dict`` states a weight's layout (size-1 axes removed), [2, 4] and [-1, 0]; w2's
[2, 4] and [0, -1]."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from tests.conftest import FIXTURES

ZOO11 = FIXTURES / "zoo" / "11_lazy_inline_8"
WEIGHTS = ["blocks.0.w1", "blocks.0.w2", "blocks.1.w1", "blocks.1.w2"]


@pytest.fixture(scope="module")
def slices():
    rows = analyse(msinspect.load_dump(ZOO11), "step_parallel_end").slices()
    rows = rows[rows["kind"] == "weight"]  # the graph inputs have rows too (test_graph_inputs.py)
    return {(r.rank, r.param): r for r in rows.itertuples()}


def test_every_weight_of_both_ranks_has_a_row(slices):
    assert sorted(slices) == [(rank, w) for rank in (0, 5) for w in WEIGHTS]


@pytest.mark.parametrize("rank", [0, 5])
@pytest.mark.parametrize("block", [0, 1])
def test_each_rank_holds_its_columns_of_w1_and_rows_of_w2(slices, rank, block):
    k = rank % 4
    w1, w2 = slices[(rank, f"blocks.{block}.w1")], slices[(rank, f"blocks.{block}.w2")]
    assert (tuple(w1.global_shape), tuple(w1.rank_shape)) == ((64, 256), (64, 64))
    assert (tuple(w2.global_shape), tuple(w2.rank_shape)) == ((256, 64), (64, 64))
    assert [list(b) for b in w1.slice] == [[0, 64], [64 * k, 64 * (k + 1)]]
    assert [list(b) for b in w2.slice] == [[64 * k, 64 * (k + 1)], [0, 64]]
    assert (w1.consumer, tuple(w1.device_matrix), tuple(w1.tensor_map)) == ("up", (2, 4), (-1, 0))
    assert (w2.consumer, tuple(w2.device_matrix), tuple(w2.tensor_map)) == ("down", (2, 4), (0, -1))
    assert (tuple(w1.slice_shape), w1.opt_shard_group) == ((64, 64), "")
