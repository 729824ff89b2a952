"""A weight's device grid over more devices than a page draws is kept without its cells
(msinspect.report.rollup.weight_grids ``cells_up_to``): the page says how many devices and distinct
slices it has, which the grid without cells still says; a cell per device of each distinct layout
held megabytes at 10,000 ranks."""
from __future__ import annotations

from msinspect.analysis import analyse
from msinspect.report.rollup import roll_up, weight_grids


def test_a_grid_past_the_drawn_size_has_no_cells_and_the_same_facts(analysed):
    # zoo 01 (fixtures/zoo/nets/01_semi_auto_tp4dp2.py): TP4 x DP2 on 8 ranks, device matrix (2, 4);
    # blocks.0.attention.wq (512, 512), strategy (1, 4): its columns cut 4 by the tp axis (tensor
    # map (-1, 0)) and held alike by the dp pair: 4 distinct slices over 8 devices
    rolled = roll_up(analyse(analysed("zoo/01_semi_auto_tp4dp2")), many=False)
    full, bare = {}, {}
    for param, weight in rolled.weights.params.items():
        drawn, _ = weight_grids(param, weight, full)
        kept, _ = weight_grids(param, weight, bare, cells_up_to=4)  # 8 devices: past it
        assert [(g.shape, g.device_matrix, g.tensor_map, g.ranks, g.slices, g.note) for g in kept] == \
            [(g.shape, g.device_matrix, g.tensor_map, g.ranks, g.slices, g.note) for g in drawn], param
        assert all(g.panels for g in drawn) and not any(g.panels for g in kept), param
        assert weight_grids(param, weight, {}, cells_up_to=8)[0][0].panels  # 8 devices: drawn
    grid = weight_grids("blocks.0.attention.wq", rolled.weights.params["blocks.0.attention.wq"], {},
                        cells_up_to=4)[0][0]
    assert (grid.device_matrix, grid.tensor_map, len(grid.ranks), len(grid.slices)) == ((2, 4), (-1, 0), 8, 4)
