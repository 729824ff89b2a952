"""``msinspect compare``: what a person reads in 120 columns, and ``--json`` with every section.

The facts compared are tests/analysis/test_jobdiff.py's (worked out by hand there); here the
command's text and JSON carry them."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from msinspect.cli import main

ROOT = Path(__file__).resolve().parents[1]
MP4 = str(ROOT / "fixtures" / "zoo" / "01_semi_auto_tp4dp2")
MP1 = str(ROOT / "tests" / "analysis" / "jobdiff" / "zoo01_mp1")


def _run(*args):
    return CliRunner().invoke(main, ["compare", *args], env={"COLUMNS": "120"})


def test_the_text_fits_120_columns_and_names_what_changed():
    from msinspect.analysis.compare.runs import compare_runs
    from msinspect.cli.compare_cmd import format_compare

    result = _run(MP4, MP1)
    assert result.exit_code == 0, result.output
    text = result.stdout
    narrow = format_compare(compare_runs(MP4, MP1), 120)
    tables = [line for line in narrow.splitlines() if line.startswith("  ")]  # paths in the header may be longer
    assert narrow.count("\n") == text.rstrip("\n").count("\n")  # nothing left out at 120
    lines = text.splitlines()
    assert tables and all(len(line) <= 120 for line in tables), [line for line in tables if len(line) > 120]
    assert "strategies that changed: 61 operator(s)" in text
    assert "$MP: - -> 1" in text
    removed = lines[lines.index("  removed (7):") + 1:lines.index("  other groups (3):")]
    assert any(l.split()[:4] == ["forward", "AllReduce", "4", "->"] and l.endswith(".../attention-Attention")
               for l in removed), removed
    assert any(l.split()[:2] == ["redistribution", "AllGather"] for l in removed), removed
    assert "None" not in text and "nan" not in text.lower().split()


def test_json_holds_every_section():
    result = _run(MP4, MP1, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for key in ("left_run", "right_run", "rank", "settings", "strategies", "comm", "axes", "memory", "ranks",
                "strategy_changes", "notes"):
        assert key in data
    assert data["rank"] == 0
    assert data["strategy_changes"] == sum(r["n"] for r in data["strategies"])
    assert set(data["ranks"]["differences"]) == {"only", "shapes", "strategies", "comm", "slices"}
    changes = {r["change"] for r in data["comm"]}
    assert {"removed", "same"} <= changes


def test_a_missing_rank_is_a_usage_error():
    result = _run(MP4, MP1, "--rank", "5")
    assert result.exit_code != 0
    assert "no rank 5" in result.output
