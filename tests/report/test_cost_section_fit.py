"""The report's cost section: the activation estimate per rank and, with ``report --device-memory``,
whether each rank fits, on zoo 04 (activations derived by hand in tests/analysis/test_activations.py:
stage 0 17,830,912, stage 1 19,403,776 bytes; rank 0's static memory 35,422,216 by hand in
tests/analysis/test_cost.py), ranks that agree in one row."""
from __future__ import annotations

import re

from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

ZOO04 = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"


def _row(page: str, table: str, ranks: str) -> str:
    section = page.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    match = re.search(rf'<tr data-ranks="{ranks}"[^>]*>(.*?)</tr>', section)
    assert match, (table, ranks)
    return match.group(1)


def test_report_says_activations_and_fit(tmp_path):
    out = tmp_path / "r.html"
    # exactly rank 0's static + activations: stage 0 (ranks 0-3, the same weights) fits with 0 to spare
    run = msinspect("report", ZOO04, "-o", out, "--device-memory", f"{35_422_216 + 17_830_912}B")
    assert run.returncode == 0, run.stderr
    page = out.read_text()
    assert "Activation memory per rank (an estimate)" in page and "leaves out" in page
    assert "17,830,912" in _row(page, "cost-activations", "0-3")
    assert "19,403,776" in _row(page, "cost-activations", "4-7")
    stage0 = _row(page, "cost-fit", "0-3")
    assert "53,253,128" in stage0 and ">fits<" in stage0
    bad = msinspect("report", ZOO04, "-o", tmp_path / "b.html", "--device-memory", "a lot")
    assert bad.returncode == 2 and "--device-memory" in bad.stderr and "Traceback" not in bad.stderr
