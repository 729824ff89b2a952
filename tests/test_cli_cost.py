"""``msinspect cost``: the command prints zoo 04's bytes per axis (derived by hand in
tests/analysis/test_cost.py), its --json carries every number, the SVG heat map is written, the tables print, and
--link without --ranks-per-node is a usage error."""
from __future__ import annotations

import json

from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

ZOO04 = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"


def test_cost_json_table_and_svg(tmp_path):
    svg = tmp_path / "m.svg"
    run = msinspect("cost", ZOO04, "--json", "--svg", svg, "--link", "intra=100,inter=10", "--ranks-per-node", "4")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    rank0 = {row["axis"]: row["step_bytes"] for row in out["bytes"] if row["rank"] == 0}
    # hand: pipeline 4 sends + 4 receives of (128, 512) float32; optimizer shard 2 x 7,962,624
    assert rank0["pipeline"] == 2_097_152 and rank0["optimizer shard"] == 15_925_248
    assert {m["rank"] for m in out["memory"]} == set(range(8)) and "ring" in out["matrix_assumption"]
    assert all("estimate" in t["estimate"] for t in out["link_time"])
    assert svg.read_text().count('class="cell"') == 64
    # the tables, on the small sharding-propagation job (8 ranks, no pipeline)
    text = msinspect("cost", FIXTURES / "sharding_propagation_dryrun_8rank", "--by", "phase", "--matrix", "--memory")
    assert text.returncode == 0 and "once per operator in the file" in text.stdout
    assert "sender (row) to receiver (column)" in text.stdout and "static memory" in text.stdout
    bad = msinspect("cost", ZOO04, "--link", "intra=100")
    assert bad.returncode == 2 and "--ranks-per-node" in bad.stderr
