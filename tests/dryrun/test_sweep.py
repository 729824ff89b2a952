"""``msinspect sweep``: the dry run once per setting of a grid, on the smallest network.

Expectations worked out by hand before the sweep was first run, from ``nets/matmul_strategy.py``
(``x (16, 64) @ w (64, 32)``, the MatMul's strategy the script's first argument, then a ReLU, no
strategy) and MindSpore's semi-auto rules, on 2 simulated ranks:

- ``1,2/2,1``: ((1, 2), (2, 1)) uses 1 x 2 x 1 = 2 devices, the whole stage: it compiles. It
  cuts the contracted dimension (64) in two, so each rank holds a partial product (16, 32) and
  the planner inserts one AllReduce over ranks 0-1 after the MatMul: at least that one
  collective that moves data on each rank (nothing is trained, so no gradient is mirrored; the
  ReLU's generated batch-parallel strategy only slices, which moves nothing).
- ``2,2/2,1``: ((2, 2), (2, 1)) needs 2 x 2 x 1 = 4 devices and the stage has 2, which 4 does not
  divide: MindSpore's MatMulInfo refuses it ("it requires 4 devices, but the device number of
  this stage is 2"), on both ranks, and the sweep goes on to the table.

Two settings of a 2-rank job, rank 0 run of each: two compiles of a one-MatMul network, about 25 s
on two cores (rank 1 compiles the same program).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from dryrun_helpers import NETS
from msinspect.cli import main
from tests.report.conftest import browser  # noqa: F401 (the report tests' headless Chromium)

FITS, TOO_BIG = "1,2/2,1", "2,2/2,1"


def test_a_sweep_runs_every_setting_and_says_why_one_fails(dryrun_xdg, tmp_path, browser):  # noqa: F811
    result = CliRunner().invoke(main, ["sweep", str(NETS / "matmul_strategy.py"), "--ranks", "2", "--only", "0",
                                       "--arg", "--grid", f"S={FITS};{TOO_BIG}", "--out", str(tmp_path), "--json",
                                       "--", "{S}"], env={"COLUMNS": "120"})
    assert result.exit_code == 1, result.output  # one setting did not compile: the sweep's finding
    report = json.loads(result.stdout[result.stdout.index("{"):])
    fits, too_big = report["settings"]
    assert [fits["label"], too_big["label"]] == [f"S={FITS}", f"S={TOO_BIG}"]

    assert fits["status"] == "ok" and fits["ranks_ok"] == [0]
    assert fits["collectives"]["0"] >= 1

    assert too_big["status"] == "failed" and too_big["ranks_ok"] == []
    (failure,) = too_big["failures"]
    assert failure["ranks"] == [0]
    assert "it requires 4 devices, but the device number of this stage is 2" in failure["reason"]

    # each setting's run is kept, its record says the setting and the arguments it was given
    for setting, args in ((fits, [FITS]), (too_big, [TOO_BIG])):
        record = json.loads((tmp_path / setting["run_dir"] / "config.json").read_text())
        assert record["script_args"] == args and record["sweep"]["label"] == setting["label"]
    on_disk = json.loads((tmp_path / report["sweep_dir"] / "sweep.json").read_text())
    assert [s["status"] for s in on_disk["settings"]] == ["ok", "failed"]

    # the same table as a page, read in a browser: a row per setting, the failure said below
    from selenium.webdriver.common.by import By

    browser.get((tmp_path / report["sweep_dir"] / "sweep.html").as_uri())
    rows = browser.find_elements(By.CSS_SELECTOR, "#sweep-table tbody tr")
    assert [(r.get_attribute("data-status"), r.find_elements(By.TAG_NAME, "td")[0].text) for r in rows] == \
        [("ok", f"S={FITS}"), ("failed", f"S={TOO_BIG}")]
    notes = browser.find_element(By.ID, "sweep-notes").text
    assert f"S={TOO_BIG}: rank 0 failed" in notes and "it requires 4 devices" in notes


def test_the_table_names_each_setting_and_the_failure_below_it(tmp_path):
    """The text a person reads, from the sweep's own record (no second run: the table is made from
    :class:`SweepReport`, which the JSON test above checks against MindSpore)."""

    from msinspect.cli.sweep_cmd import format_sweep
    from msinspect.dryrun.sweep import SettingResult, SweepReport

    ok = SettingResult({"S": FITS}, f"S={FITS}", "S-1_2_2_1", status="ok", ranks_run=[0, 1], ranks_ok=[0, 1],
                       collectives={0: 1, 1: 1}, wall_seconds=9.0, cost_why="cannot tell: cost analysis not available",
                       memory_why="cannot tell: cost analysis not available")
    bad = SettingResult({"S": TOO_BIG}, f"S={TOO_BIG}", "S-2_2_2_1", status="failed", ranks_run=[0, 1],
                        failures=[{"ranks": [0, 1], "state": "failed", "reason": "why"}], reason="why",
                        wall_seconds=8.0)
    report = SweepReport(Path("matmul_strategy.py"), tmp_path, 2, None, "arg", [("S", [FITS, TOO_BIG])], [ok, bad])
    text = format_sweep(report)
    assert all(len(line) <= 120 for line in text.splitlines() if not line.startswith(("run folders", "S=")))
    lines = text.splitlines()
    assert lines[2].split()[:4] == [f"S={FITS}", "ok", "2/2", "1"]
    assert lines[3].split()[:3] == [f"S={TOO_BIG}", "failed", "0/2"]
    assert f"S={TOO_BIG}: ranks 0-1 failed: why" in lines


@pytest.mark.skipif(not os.environ.get("MSINSPECT_SWEEP_ZOO"), reason="a sweep of zoo 01 takes a few minutes on two "
                    "cores: MSINSPECT_SWEEP_ZOO=1 runs it (make sweep-demo runs the same sweep)")
def test_zoo01_sweep_of_tensor_parallel_sizes(dryrun_xdg, tmp_path):
    """Zoo 01 (``fixtures/zoo/nets/01_semi_auto_tp4dp2.py``) with MP 1, 2, 4, 8 and DP left at 2, on 8
    ranks, ranks 0 and 5 run. Worked out by hand before the sweep was first run (the strategies:
    ``gpt.py``'s table with plan "all"; the sizes: tests/analysis/test_jobdiff.py's docstring):

    - MP 1, 2, 4 compile: their strategies use 2, 4 and 8 devices, each dividing the stage's 8
      (fewer than 8: each operator repeats on the ranks left over, on the right of its device
      matrix). MP 8 does not: ((2, 1), (1, 8)) needs 16 devices, the stage has 8, and MindSpore
      says so ("it requires 16 devices, but the device number of this stage is 8").
    - Collectives that move data, rank 0: MP 1 has only the 45 gradient mirrors and loss_mean's
      AllReduce, 46; MP 2 cuts the same dimensions as MP 4, by less, so it has as many as MP 4.
    - Bytes on the data axis per step, rank 0 (ring: 2 (n - 1) / n of each tensor): MP 1, 45
      whole weights (54,693,888 bytes) over 8 ranks, 95,714,304, + 4 (loss_mean over 0, 4):
      95,714,308. MP 2: the 25 weights cut by tp hold 6,553,600 values at the rank (26,214,400
      bytes), mirrored over their 4 replicas (dp x the repeat: 0, 1, 4, 5): 1.5 x = 39,321,600; the
      20 whole ones 2,265,088 bytes over 8: 3,963,904; + 4: 43,285,508.
    - Tensor axis, MP 2, rank 0: out_matmul's and ffn_out_matmul's AllReduces of (256, 512) float32
      over 2 ranks, 524,288 each, 8 forward and as many backward; lm_matmul's AllGather of (256,
      1024) and its gradient's ReduceScatter, half of 1,048,576 each: 9,437,184. MP 1: none.
    - Weights at rank 0: MP 1 54,693,888; MP 2 (6,553,600 + 566,272) x 4 = 28,479,488; MP 4
      15,372,288 bytes.
    """
    script = Path(__file__).resolve().parents[2] / "fixtures" / "zoo" / "nets" / "01_semi_auto_tp4dp2.py"
    result = CliRunner().invoke(main, ["sweep", str(script), "--ranks", "8", "--only", "0,5", "--grid",
                                       "MP=1,2,4,8", "--out", str(tmp_path), "--json"], env={"COLUMNS": "120"})
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout[result.stdout.index("{"):])
    by = {s["setting"]["MP"]: s for s in report["settings"]}
    assert [by[m]["status"] for m in "1248"] == ["ok", "ok", "ok", "failed"]
    (failure,) = by["8"]["failures"]
    assert failure["ranks"] == [0, 5]
    assert "it requires 16 devices, but the device number of this stage is 8" in failure["reason"]
    assert by["1"]["collectives"]["0"] == 46
    assert by["2"]["collectives"]["0"] == by["4"]["collectives"]["0"]
    if by["1"]["bytes_by_axis"] is not None:
        assert by["1"]["bytes_by_axis"]["0"]["data"] == 95_714_308
        assert by["1"]["bytes_by_axis"]["0"].get("tensor") in (None, 0)
        assert by["2"]["bytes_by_axis"]["0"]["data"] == 43_285_508
        assert by["2"]["bytes_by_axis"]["0"]["tensor"] == 9_437_184
    if by["1"]["memory"] is not None:
        assert [by[m]["memory"]["0"]["weights"] for m in "124"] == [54_693_888, 28_479_488, 15_372_288]
