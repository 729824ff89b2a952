"""A report of many ranks stays the size of a few ranks': each rank's own group is written by its
shape (msinspect.report.group_shapes), so ranks doing the same are one row whatever the job's
size, and a device grid past html.GRID_DEVICES devices is named, not drawn square by square."""
from __future__ import annotations

import re

import pandas as pd

from msinspect.analysis import analyse
from msinspect.report import group_shapes, html
from msinspect.report.group_shapes import by_shape, shape_of, shape_totals


def test_a_group_s_shape():
    assert shape_of((4, 5, 6, 7)) == "4 ranks, stride 1"
    assert shape_of([6, 2]) == "2 ranks, stride 4"
    assert shape_of((0, 1, 3)) is None and shape_of((3,)) is None and shape_of(None) is None


def test_ranks_of_one_shape_are_one_row():
    """Ranks 0-7 of a TP4 x DP2 job, one AllReduce each over its own tensor group (0-3 or 4-7), one
    Send to the rank 4 ahead: every rank's rows read alike once written by shape."""
    frame = pd.DataFrame([{"rank": r, "group_ranks": tuple(range(r // 4 * 4, r // 4 * 4 + 4)), "group": f"4-{r // 4}",
                           "peer": r + 4 if r < 4 else None, "op": "AllReduce", "kind": "forward", "wire_bytes": 10,
                           "tensor_bytes": 8, "moves_data": True} for r in range(8)])
    shaped = by_shape(frame)
    assert set(shaped["group_ranks"]) == {"each rank's own: 4 ranks, stride 1"}
    assert shaped["group"].isna().all()
    assert [None if pd.isna(p) else p for p in shaped["peer"]] == ["+4"] * 4 + [None] * 4
    (total,) = shape_totals(frame)
    assert (total["shape"], total["groups"], total["ops"], total["ranks"], total["wire"]) == \
        ("4 ranks, stride 1", 2, 8, "0-7", 80)


def test_the_report_of_many_ranks_writes_groups_by_shape(monkeypatch, analysed):
    """zoo 01 (TP4 x DP2 on 8 ranks, read as if many): by hand from its script, the tensor groups
    0-3 and 4-7 are 2 groups of 4 ranks, stride 1, the data-parallel pairs (0, 4) ... (3, 7) are 4
    groups of 2 ranks, stride 4."""
    monkeypatch.setattr(html, "MANY", 8)
    monkeypatch.setattr(group_shapes, "MANY", 8)
    page = html.report_html(analyse(analysed("zoo/01_semi_auto_tp4dp2")))
    groups = page[page.index('id="comm-groups"'):]
    groups = re.sub(r"<[^>]+>", " ", groups[:groups.index("</table>")])
    assert "2 groups of 4 ranks, stride 1" in groups and "4 groups of 2 ranks, stride 4" in groups
    assert 'id="groups-by-shape"' in page
    table = page[page.index('id="comm-table"'):]
    assert "each rank&#39;s own: 4 ranks, stride 1" in table[:table.index("</table>")]


def test_a_device_grid_of_too_many_devices_is_named_not_drawn(monkeypatch, analysed):
    """zoo 01's weights are cut over its 8 devices: past a bound of 4, each grid says so and how
    to draw it, and no grid picture is drawn."""
    monkeypatch.setattr(html, "GRID_DEVICES", 4)
    page = html.report_html(analyse(analysed("zoo/01_semi_auto_tp4dp2")))
    params = page[page.index('<section id="params">'):]
    params = params[:params.index("</section>")]
    assert "8 devices" in params and "not drawn (msinspect render DUMP --param " in params
    assert "<svg" not in params
