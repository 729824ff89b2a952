"""Device-grid pictures against facts worked out by hand from MindSpore's layout definitions
(device matrix row-major over the stage's ranks; tensor map counts matrix axes from the right,
-1 = not cut; the repeated-calculation axis is appended on the right)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from msinspect.analysis import analyse
from msinspect.report.grid import device_grid, grids_of
from msinspect.report.grid_svg import PngUnavailableError, grid_svg, svg_to_png
from tests.conftest import FIXTURES

SVG = "{http://www.w3.org/2000/svg}"


def cells(svg: str) -> dict[int, dict]:
    """rank -> the cell's slice attribute, its two text lines and its fill, parsed from the SVG."""
    out = {}
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if g.get("class") != "cell":
            continue
        rect = g.find(f"{SVG}rect")
        texts = [t.text for t in g.findall(f"{SVG}text")]
        out[int(g.get("data-rank"))] = {"slice": g.get("data-slice"), "texts": texts, "fill": rect.get("fill"),
                                        "stroke_width": rect.get("stroke-width")}
    return out


@pytest.fixture(scope="module")
def seed_analysis(analysed):
    return analyse(analysed("sharding_propagation_dryrun_8rank"))


def test_seed_002_w_rank_5_holds_rows_8_to_16(seed_analysis):
    # By hand: matmul shard ((2, 4), (4, 1)) on 8 devices: x (a, b) = (2, 4), w (b, c) = (4, 1), so the
    # device matrix is [2, 4, 1] and w's tensor map (1, 0): dim 0 cut 4 ways by dm[1], dim 1 whole.
    # Rank r sits at (r // 4, r % 4, 0): it holds rows 8 * (r % 4) .. +8 of w (32, 16), all 16 columns.
    expected = {r: f"[{8 * (r % 4)}:{8 * (r % 4) + 8}, 0:16]" for r in range(8)}
    [grid] = grids_of(seed_analysis, "w")
    drawn = cells(grid_svg(grid, highlight=5))
    assert {r: c["slice"] for r, c in drawn.items()} == expected
    assert drawn[5]["texts"] == ["rank 5", "[8:16, 0:16]"]
    assert drawn[5]["stroke_width"] == "3" and drawn[4]["stroke_width"] == "1"
    # dm[0] (the batch cut of x) does not cut w: ranks r and r + 4 hold the same slice, one colour
    # per slice, four slices, four colours
    for r in range(4):
        assert drawn[r]["fill"] == drawn[r + 4]["fill"]
    assert len({drawn[r]["fill"] for r in range(4)}) == 4


def test_seed_002_grid_draws_the_4_axis_as_columns_and_the_replication_as_rows(seed_analysis):
    [grid] = grids_of(seed_analysis, "w")
    # MatMul ((2, 4), (4, 1)): [2, 4, 1] / [1, 0]; as MindSpore states w's layout: [2, 4] / [0, -1]
    assert grid.device_matrix == (2, 4) and grid.tensor_map == (0, -1)
    assert len(grid.panels) == 1
    assert [[c.rank for c in row] for row in grid.panels[0].rows] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert grid.row_axis.cuts == () and grid.col_axis.cuts == (0,)
    assert "replicated along dm[0]" in grid_svg(grid)
    assert "cannot be told" not in grid_svg(grid)  # every rank read at one stage: its stage is known


def test_3d_device_matrix_small_multiples_by_hand():
    # Device matrix (2, 2, 2), tensor map (2, 0) for a (8, 6) tensor: dim 0 cut by the axis 2 from
    # the right = dm[0], dim 1 by axis 0 = dm[2]; dm[1] cuts nothing (replication).
    # Rank r = (r // 4, r // 2 % 2, r % 2): rows 4 * (r // 4) .. +4, columns 3 * (r % 2) .. +3.
    expected = {0: "[0:4, 0:3]", 1: "[0:4, 3:6]", 2: "[0:4, 0:3]", 3: "[0:4, 3:6]",
                4: "[4:8, 0:3]", 5: "[4:8, 3:6]", 6: "[4:8, 0:3]", 7: "[4:8, 3:6]"}
    grid = device_grid("t", (8, 6), (2, 2, 2), (2, 0), range(8))
    drawn = cells(grid_svg(grid))
    assert {r: c["slice"] for r, c in drawn.items()} == expected
    # one 2-D grid per value of the outer axis dm[0]; rows dm[1], columns dm[2]
    assert [p.title for p in grid.panels] == ["dm[0]=0", "dm[0]=1"]
    assert [[c.rank for c in row] for row in grid.panels[1].rows] == [[4, 5], [6, 7]]
    assert grid.row_axis.cuts == () and grid.col_axis.cuts == (1,)
    # equal slices share a colour, different slices do not
    by_slice = {}
    for r, c in drawn.items():
        by_slice.setdefault(c["slice"], set()).add(c["fill"])
    assert all(len(fills) == 1 for fills in by_slice.values())
    assert len({next(iter(f)) for f in by_slice.values()}) == 4


def test_4d_device_matrix_with_global_ranks_of_a_stage():
    # Stage ranks 8..23 (16 devices), matrix (2, 1, 2, 4), tensor map (-1, 1) for (16, 12):
    # dim 0 whole, dim 1 cut by axis 1 from the right = dm[2] (2 parts). dm[1] = 1 is not drawn;
    # dm[0] and dm[3] replicate. Local l = 8 * i + 4 * k + j at (i, 0, k, j): columns 6 * k .. +6.
    ranks = tuple(range(8, 24))
    grid = device_grid("v", (16, 12), (2, 1, 2, 4), (-1, 1), ranks)
    drawn = cells(grid_svg(grid))
    for local, rank in enumerate(ranks):
        k = (local // 4) % 2
        assert drawn[rank]["slice"] == f"[0:16, {6 * k}:{6 * k + 6}]"
    assert len(grid.panels) == 2 and grid.outer_axes[0].position == 0
    assert grid.row_axis.position == 2 and grid.col_axis.position == 3
    assert len({c["fill"] for c in drawn.values()}) == 2


def test_pipeline_weight_is_drawn_over_its_own_stage(analysed):
    # recursive_pipeline.py: 2 stages on 8 ranks, layer2 on stage 1 = ranks 4..7
    analysis = analyse(analysed("recursive_pipeline_dryrun_8rank"))
    [grid] = grids_of(analysis, "layer2.weight")
    assert grid.ranks == (4, 5, 6, 7)
    with pytest.raises(KeyError, match="layer1.weight"):
        grids_of(analysis, "nope")


def test_a_matrix_that_does_not_hold_the_stage_is_refused():
    with pytest.raises(ValueError, match="holds 4 devices, the stage 8"):
        device_grid("t", (8, 6), (2, 2), (1, 0), range(8))


def test_render_param_writes_svg_and_png_and_keeps_existing_files(tmp_path):
    from click.testing import CliRunner

    from msinspect.cli import main

    dump = str(FIXTURES / "sharding_propagation_dryrun_8rank")
    runner = CliRunner()
    svg_path = tmp_path / "w.svg"
    result = runner.invoke(main, ["render", dump, "--param", "w", "--rank", "5", "-o", str(svg_path)])
    assert result.exit_code == 0, result.output
    assert "rank 5 holds [8:16, 0:16] of w [32, 16]" in result.output
    assert cells(svg_path.read_text())[5]["slice"] == "[8:16, 0:16]"
    png_path = tmp_path / "w.png"
    png_path.write_bytes(b"mine")
    refused = runner.invoke(main, ["render", dump, "--param", "w", "-o", str(png_path)])
    assert refused.exit_code == 2 and "exists already" in refused.output
    assert png_path.read_bytes() == b"mine"
    try:
        svg_to_png(grid_svg(device_grid("t", (2,), (1,), (-1,), [0])))
    except PngUnavailableError as error:
        pytest.skip(f"PNG output unavailable here: {error}")
    done = runner.invoke(main, ["render", dump, "--param", "w", "-o", str(png_path), "--overwrite"])
    assert done.exit_code == 0, done.output
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    unknown = runner.invoke(main, ["render", dump, "--param", "nope"])
    assert unknown.exit_code == 2 and "no weight named 'nope'" in unknown.output


def test_a_grid_says_when_the_stage_was_assumed(tmp_path):
    # rank 3 without its validate file: read at step_parallel_end, so pipeline stages cannot be told
    import shutil

    import msinspect

    dump = tmp_path / "dump"
    shutil.copytree(FIXTURES / "sharding_propagation_dryrun_8rank", dump)
    for f in (dump / "rank_3").glob("*validate*"):
        f.unlink()
    [grid] = grids_of(analyse(msinspect.load_dump(dump)), "w")
    assert "pipeline stages cannot be told" in grid_svg(grid)
    assert grid.cell(5).slice_text == "[8:16, 0:16]"


def test_zoo_tp4_dp2_transformer_weights_by_hand(analysed):
    # fixtures/zoo/nets/gpt.py with dp=2, tp=4 on 8 ranks, hidden 512:
    # q_matmul shard ((dp, 1), (1, tp)) -> device matrix [2, 1, 4], wq (512, 512) map (1, 0): columns cut 4
    # ways by dm[2]; out_matmul ((dp, tp), (tp, 1)) -> [2, 4, 1], wo rows cut 4 ways by dm[1].
    # Rank r sits at (r // 4, ., r % 4): wq columns / wo rows 128 * (r % 4) .. +128; dm[0] (data
    # parallel) replicates both, so ranks r and r + 4 hold the same slice.
    analysis = analyse(analysed("zoo/01_semi_auto_tp4dp2"))
    [wq] = grids_of(analysis, "blocks.0.attention.wq")
    [wo] = grids_of(analysis, "blocks.0.attention.wo")
    q_cells, o_cells = cells(grid_svg(wq)), cells(grid_svg(wo))
    for r in range(8):
        k = 128 * (r % 4)
        assert q_cells[r]["slice"] == f"[0:512, {k}:{k + 128}]"
        assert o_cells[r]["slice"] == f"[{k}:{k + 128}, 0:512]"
    assert q_cells[5]["slice"] == "[0:512, 128:256]" and q_cells[5]["fill"] == q_cells[1]["fill"]
    assert len({c["fill"] for c in q_cells.values()}) == 4


def test_a_dimension_cut_over_two_axes_is_drawn_by_hand():
    """zoo 21 (its net's docstring): Layout((2, 2, 2), ("dp", "sp", "mp")), fc1_weight (784, 512)
    cut (("sp", "dp"), "None"): tensor map ((1, 2), -1), dimension 0 in 4 parts, "sp" the outer.
    Rank r = 4 dp + 2 sp + mp stores part k = 2 sp + dp, rows 196k .. 196k + 195: rank 0
    [0:196], rank 2 (sp 1, dp 0) [392:588], rank 5 (sp 0, dp 1) [196:392]; "mp" does not cut it,
    so ranks 2k and 2k + 1 draw one slice (4 slices in all)."""
    grid = device_grid("fc1_weight", (784, 512), (2, 2, 2), ((1, 2), -1), range(8))
    assert grid.cell(0).slice == ((0, 196), (0, 512))
    assert grid.cell(2).slice == ((392, 588), (0, 512))
    assert grid.cell(5).slice == ((196, 392), (0, 512))
    assert grid.cell(1).slice == grid.cell(0).slice and len(grid.slices) == 4
    assert [axis.cuts for axis in grid.axes] == [(0,), (0,), ()]  # dp and sp cut dimension 0; mp none


def test_the_report_of_a_two_axis_layout_is_written(tmp_path):
    """The page of zoo 21 draws fc1_weight's grid (it crashed on the nested tensor map)."""
    from tests.conftest import invoke

    page = tmp_path / "z21.html"
    done = invoke("report", FIXTURES / "zoo" / "21_doc_layout_two_axes", "-o", page)
    assert done.exit_code == 0, done.output
    assert "fc1_weight" in page.read_text()
