"""The report's totals per group shape (msinspect.report.group_shapes.shape_totals) are comm totals like
every other: each shape's operators, ranks and bytes are those of ``msinspect comm --by group``
(msinspect.analysis.job.comm_totals) over the groups of that shape, and a sum with one operator's
bytes not told is "cannot tell"."""
from __future__ import annotations

import pandas as pd
import pytest

from msinspect.analysis import analyse
from msinspect.analysis.job.comm_totals import CommTotals
from msinspect.report.group_shapes import shape_of, shape_totals


@pytest.fixture(scope="module")
def moving(analysed):
    """Zoo 01's communication rows that move data, every rank's."""
    comm = analyse(analysed("zoo/01_semi_auto_tp4dp2")).comm()
    return comm[comm["moves_data"].astype(bool)]


def test_zoo_01s_groups_by_shape(moving):
    # TP4 x DP2 on 8 ranks (fixtures/zoo/nets/01_semi_auto_tp4dp2.py): the tensor groups 0-3 and
    # 4-7 (2 groups of 4 ranks, stride 1), the data-parallel pairs (0, 4) ... (3, 7) (4 groups of
    # 2 ranks, stride 4), and the 8 ranks together (1 group of 8, stride 1); every rank in each
    shapes = {t["shape"]: t for t in shape_totals(moving)}
    assert {shape: t["groups"] for shape, t in shapes.items()} == {
        "4 ranks, stride 1": 2, "2 ranks, stride 4": 4, "8 ranks, stride 1": 1}
    assert {t["ranks"] for t in shapes.values()} == {"0-7"}


def test_a_shapes_totals_are_its_groups_comm_totals(moving):
    by_group = CommTotals("group").add(moving.to_dict("records"))
    summed: dict[str, dict] = {}
    for (group, _), total in by_group.items():
        into = summed.setdefault(shape_of(group), {"ops": 0, "wire": 0, "tensor": 0, "kinds": {}})
        into["ops"] += total.operators
        into["wire"] += total.wire_bytes
        into["tensor"] += total.tensor_bytes
        into["kinds"].update(total.kinds)
    assert {t["shape"]: {"ops": t["ops"], "wire": t["wire"], "tensor": t["tensor"], "kinds": t["kinds"]}
            for t in shape_totals(moving)} == {
        shape: {**s, "kinds": ", ".join(s["kinds"])} for shape, s in summed.items()}


def test_one_operators_bytes_not_told_make_its_shapes_sum_cannot_tell(moving):
    rows = moving.to_dict("records")
    first = next(i for i, r in enumerate(rows) if shape_of(r["group_ranks"]) == "4 ranks, stride 1")
    rows[first] = {**rows[first], "wire_bytes": None}
    shapes = {t["shape"]: t for t in shape_totals(pd.DataFrame(rows))}
    told = {t["shape"]: t for t in shape_totals(moving)}
    tp = shapes["4 ranks, stride 1"]
    assert (tp["wire"], tp["wire_missing"]) == (None, 1)
    assert (tp["tensor"], tp["tensor_missing"]) == (told["4 ranks, stride 1"]["tensor"], 0)  # still told
    assert shapes["2 ranks, stride 4"] == told["2 ranks, stride 4"]
