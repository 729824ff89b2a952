"""The report's tables folded one rank at a time (msinspect.report.rollup) say what the analysis's
DataFrames of every rank's rows say: the same merged rows, totals, costs, memory, gradient
verdicts and weights, on real dumps analysed with their rows spooled (as from 64 ranks)."""
from __future__ import annotations

import math

import pytest

from msinspect.analysis import analyse
from msinspect.analysis.rank.comm import comm_totals
from msinspect.analysis.job.cost_tables import bytes_by, comm_costs, rank_matrix
from msinspect.analysis.rank.memory import memory_per_rank
from msinspect.ranks_text import ranks_text
from msinspect.report.group_shapes import by_shape, shape_totals
from msinspect.report.rollup import roll_up
from msinspect.report.tables import COMM_SHOWN, STRATEGY_SHOWN, merged_rows
from tests.conftest import FIXTURES

DUMPS = ["zoo/04_pipeline_hsdp_recompute", "zoo/05_expert_alltoall_16", "zoo/11_lazy_inline_8"]


def _none(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


@pytest.fixture(scope="module", params=DUMPS)
def spooled(request, analysed):
    analysis = analyse(analysed(request.param), spool=True)
    assert type(analysis.results[0]).__name__ == "SpooledResult"
    return analysis, roll_up(analysis, many=False), roll_up(analysis, many=True)


def _cells(rows):
    return [(row.cells, sorted(row.ranks)) for row in rows]


def _bytes(value):
    return "cannot tell" if _none(value) is None else f"{int(value):,}"


def test_merged_tables_are_the_frames_merged(spooled):
    analysis, rolled, many = spooled
    assert _cells(rolled.strategies.rows()) == _cells(merged_rows(analysis.strategies(), STRATEGY_SHOWN))
    comm = analysis.comm()
    texts = {"wire_bytes": [_bytes(b) for b in comm["wire_bytes"]],
             "tensor_bytes": [_bytes(b) for b in comm["tensor_bytes"]]}
    listed = comm.assign(group_ranks=[ranks_text(g) if isinstance(g, tuple) else None for g in comm["group_ranks"]],
                         **texts)
    assert _cells(rolled.comm_rows.rows()) == _cells(merged_rows(listed, COMM_SHOWN))
    assert _cells(many.comm_rows.rows()) == _cells(merged_rows(by_shape(comm).assign(**texts), COMM_SHOWN))


def test_comm_totals_per_kind_and_group(spooled):
    analysis, rolled, many = spooled
    comm = analysis.comm()
    kinds = {row["kind"]: row for row in rolled.comm.kind_rows()}
    expected = comm_totals(comm, "kind").to_dict("records")
    assert list(kinds) == [row["kind"] for row in expected]
    for row in expected:
        assert (kinds[row["kind"]]["ops"], kinds[row["kind"]]["wire"], kinds[row["kind"]]["tensor"],
                kinds[row["kind"]]["wire_missing"]) == (row["operators"], _none(row["wire_bytes"]),
                                                        _none(row["tensor_bytes"]), row["unknown_bytes"])
    moving = comm[comm["moves_data"].astype(bool)]
    groups = rolled.comm.group_rows()
    expected = comm_totals(moving, "group").to_dict("records")
    assert [(g["ops"], g["wire"], g["tensor"]) for g in groups] == [
        (row["operators"], _none(row["wire_bytes"]), _none(row["tensor_bytes"])) for row in expected]
    shapes = shape_totals(moving)
    assert [(g["ops"], g["wire"], g["ranks"]) for g in many.comm.group_rows()] == [
        (t["ops"], t["wire"], t["ranks"]) for t in shapes]
    assert rolled.comm.local == len(comm) - len(moving)


def test_cost_per_rank_and_matrix(spooled):
    analysis, rolled, _ = spooled
    costs = comm_costs(analysis)
    split = bytes_by(analysis, ("axis", "phase"), costs)
    expected = {}
    for row in split.to_dict("records"):
        if _none(row["rank"]) is not None:
            expected.setdefault(int(row["rank"]), {})[(row["axis"], row["phase"])] = _none(row["step_bytes"])
    found = {rank: dict(items) for items, ranks in rolled.cost.per_rank.items() for rank in ranks}
    assert found == expected
    assert rolled.cost.count == len(costs)
    assert rolled.cost.basis == set(costs["count_basis"])
    undecided = costs[costs["axis"] == "cannot tell"]
    assert dict(rolled.cost.undecided) == dict(undecided.groupby("axis_from").size())
    assert rolled.cost.matrix().to_dict("records") == rank_matrix(analysis).to_dict("records")


def test_memory_and_gradient_sync(spooled):
    analysis, rolled, _ = spooled
    memory = memory_per_rank(analysis).to_dict("records")
    found = {rank: row for row, ranks in rolled.memory.values() for rank in ranks}
    for row in memory:
        mine = found[row["rank"]]
        assert [mine[c] for c in ("optimizer", "weights", "weight_count", "states", "other", "total")] == \
            [_none(row[c]) for c in ("optimizer", "weights", "weight_count", "states", "other", "total")]
    sync = analysis.gradient_sync()
    for verdict, params in rolled.sync.verdicts.items():
        assert set(params) == set(sync[sync["verdict"] == verdict]["param"]), verdict
    assert rolled.sync.rows == len(sync)


def test_weights_and_grids(spooled):
    from msinspect.report.grid import grids_of, weight_rows
    from msinspect.report.rollup import weight_grids

    analysis, rolled, _ = spooled
    slices = analysis.slices()
    rows = weight_rows(slices[slices["kind"] == "weight"])  # the report's grids are of weights, not inputs
    assert list(rolled.weights.params) == list(rows)
    cache = {}
    for param, weight in rolled.weights.params.items():
        assert sorted(weight.ranks.numbers) == sorted(r["rank"] for r in rows[param])
        grids, problem = weight_grids(param, weight, cache)
        try:
            expected, why = grids_of(analysis, param, rows[param]), None
        except ValueError as error:
            expected, why = [], str(error)
        assert (problem is None) == (why is None), param
        assert [(g.param, g.shape, g.device_matrix, g.ranks, g.slices, g.note) for g in grids] == \
            [(g.param, g.shape, g.device_matrix, g.ranks, g.slices, g.note) for g in expected]


@pytest.mark.parametrize("name, backward", [("06_control_flow_8", False), ("01_semi_auto_tp4dp2", True)])
def test_a_file_before_the_parallel_pass_leaves_the_forward_untold(name, backward):
    """At step_parallel_begin the parallel pass has inserted no collective yet: each rank's
    forward is "cannot tell" on the page as in ``cost`` (never "no communication"); zoo 01's
    backward too (its file holds the ``J`` of a gradient not yet built), zoo 06 has none (a
    forward-only network)."""
    import msinspect

    analysis = analyse(msinspect.load_dump(FIXTURES / "zoo" / name), "step_parallel_begin")
    rolled = roll_up(analysis, many=False)
    expected = {}
    for row in bytes_by(analysis, ("axis", "phase")).to_dict("records"):
        expected.setdefault(int(row["rank"]), {})[(row["axis"], row["phase"])] = _none(row["step_bytes"])
    found = {rank: dict(items) for items, ranks in rolled.cost.per_rank.items() for rank in ranks}
    assert found == expected
    for cells in found.values():
        assert cells[("cannot tell", "forward")] is None
        assert (("cannot tell", "backward") in cells) == backward
    assert rolled.cost.matrix().to_dict("records") == rank_matrix(analysis).to_dict("records")
