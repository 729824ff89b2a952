"""``msinspect report``: one self-contained file, never over an existing one, spec verdicts and exit codes."""
from __future__ import annotations

import re
from click.testing import CliRunner

from msinspect.analysis import analyse
from msinspect.cli import main
from tests.conftest import FIXTURES

SEED = str(FIXTURES / "sharding_propagation_dryrun_8rank")
SPEC = str(FIXTURES.parent / "train_jobs" / "sharding_propagation.toml")


def test_report_is_self_contained_and_never_replaces_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    first = runner.invoke(main, ["report", SEED])
    assert first.exit_code == 0, first.output
    page = tmp_path / "report-sharding_propagation_dryrun_8rank.html"
    html = page.read_text(encoding="utf-8")
    # nothing fetched: no external script, stylesheet, image or font
    assert not re.search(r"""<(script|link|img|iframe)[^>]+(src|href)=["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert html.count("<svg") >= 3  # the bar chart and the grids of w and w2
    # the default name is never an existing file: the second report goes beside the first
    second = runner.invoke(main, ["report", SEED])
    assert second.exit_code == 0 and (tmp_path / "report-sharding_propagation_dryrun_8rank-2.html").exists()
    assert page.read_text(encoding="utf-8") == html
    # an -o that exists is kept unless --overwrite; a folder never
    mine = tmp_path / "mine.html"
    mine.write_text("mine")
    refused = runner.invoke(main, ["report", SEED, "-o", str(mine)])
    assert refused.exit_code == 2 and "exists already" in refused.output and mine.read_text() == "mine"
    folder = runner.invoke(main, ["report", SEED, "-o", str(tmp_path), "--overwrite"])
    assert folder.exit_code == 2 and "is a folder" in folder.output


def test_spec_verdicts_and_a_failing_expectation_exits_1(tmp_path):
    runner = CliRunner()
    ok = runner.invoke(main, ["report", SEED, "--spec", SPEC, "-o", str(tmp_path / "ok.html")])
    assert ok.exit_code == 0, ok.output
    assert "0 failed" in ok.output
    html = (tmp_path / "ok.html").read_text(encoding="utf-8")
    assert html.count('<tr class="pass">') > 0 and '<tr class="fail">' not in html
    # by hand: seed 002's user strategy is ((2, 4), (4, 1)); expecting ((8, 1), (1, 1)) must fail
    spec = tmp_path / "wrong.toml"
    spec.write_text('[job]\nranks = 8\nstage = "step_parallel_end"\n\n'
                    '[[expect.strategy]]\nop = "matmul"\nin_strategy = [[8, 1], [1, 1]]\n')
    bad = runner.invoke(main, ["report", SEED, "--spec", str(spec), "-o", str(tmp_path / "bad.html")])
    assert bad.exit_code == 1, bad.output
    page = (tmp_path / "bad.html").read_text(encoding="utf-8")
    assert '<tr class="fail">' in page and "PrimFunc_MatMul" in page


def test_a_bad_spec_stops_before_anything_is_written(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text("[job\n")
    result = CliRunner().invoke(main, ["report", SEED, "--spec", str(spec), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "bad spec" in result.output
    assert not (tmp_path / "r.html").exists()


def test_report_op_pictures_are_bounded(tmp_path, monkeypatch):
    """--op draws the graph around the operator inline; a picture larger than the bound is left out
    with the reason and the command that draws it whole."""
    import shutil

    import pytest

    if shutil.which("dot") is None:
        pytest.skip("Graphviz's 'dot' program is not installed")
    from msinspect.report import around

    runner = CliRunner()
    ok = runner.invoke(main, ["report", SEED, "--op", "relu", "-o", str(tmp_path / "ok.html")])
    assert ok.exit_code == 0, ok.output
    html = (tmp_path / "ok.html").read_text(encoding="utf-8")
    section = html[html.index('<section id="around">'):]
    section = section[:section.index("</section>")]
    assert section.count("<svg") == 1 and "named with --op" in section and ">relu</text>" in section
    monkeypatch.setattr(around, "MAX_SVG_BYTES", 1000)
    small = runner.invoke(main, ["report", SEED, "--op", "relu", "-o", str(tmp_path / "small.html")])
    assert small.exit_code == 0, small.output
    html = (tmp_path / "small.html").read_text(encoding="utf-8")
    assert "too large to show here even at depth 0" in html and "msinspect render" in html and "--op &#39;relu&#39;" in html


def test_report_without_graphviz_says_so(tmp_path, monkeypatch):
    import msinspect.render

    monkeypatch.setattr(msinspect.render, "dot_available", lambda: False)
    result = CliRunner().invoke(main, ["report", SEED, "--op", "relu", "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "no picture: Graphviz&#39;s &#39;dot&#39; program is not installed" in html


def test_rank_groups_in_the_run_section(analysed, monkeypatch):
    """recursive_pipeline (train_jobs/recursive_pipeline.py): 2 pipeline stages on 8 devices, so
    by hand ranks 0-3 (stage 0) and 4-7 (stage 1) hold different weights: two groups, A and B, no
    odd rank. One rank alone (seed 002's single file) shows no group table."""
    from msinspect.report import around
    from msinspect.report.html import report_html

    monkeypatch.setattr(around, "choose", lambda *a, **k: [])  # no pictures: this test is about the run section
    html = report_html(analyse(analysed("recursive_pipeline_dryrun_8rank")))
    table = html[html.index('id="rank-groups"'):]
    table = table[:table.index("</table>")]
    rows = [r for r in table.split("<tr")[2:]]
    assert len(rows) == 2 and 'class="warn"' not in table
    assert ">A</td><td>ranks 0-3</td><td>0</td>" in rows[0] and ">B</td><td>ranks 4-7</td><td>1</td>" in rows[1]
    assert 'id="rank-groups"' not in report_html(analyse(analysed("seed_002")))


def test_pictures_come_from_the_rank_asked_for(tmp_path):
    """zoo 04 (fixtures/zoo/nets/04_pipeline_hsdp_recompute.py) puts the head on pipeline stage 1,
    ranks 4-7: its ``lm_matmul`` is in their files only. Without --rank the picture comes from the
    first rank whose file has it (4); --rank 6 draws it from rank 6's file; rank 1 has none, which
    the picture's place says; a rank that was not read is bad input, and nothing is written."""
    from msinspect import load_dump
    from msinspect.report.around import choose, draw

    pipeline = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"
    analysis = analyse(load_dump(pipeline), jobs=1)
    assert [c.rank for c in choose(analysis, ["lm_matmul"])] == [4]
    (on_6,) = choose(analysis, ["lm_matmul"], rank=6)
    assert on_6.rank == 6 and "rank_6" in on_6.file and on_6.lines
    (on_1,) = choose(analysis, ["lm_matmul"], rank=1)
    assert on_1.lines == []
    (item,) = draw(analysis, [on_1], rank=1)
    assert item.problem.startswith("no operator of rank 1's file matches 'lm_matmul'")
    busiest = choose(analysis, rank=2)  # the busiest collective of each kind, on rank 2
    assert busiest and {c.rank for c in busiest} == {2}
    out = tmp_path / "r.html"
    run = CliRunner().invoke(main, ["report", str(pipeline), "--rank", "9", "-o", str(out)])
    assert run.exit_code == 2 and "--rank 9: no such rank was read" in run.stderr and not out.exists()


def test_compare_adds_a_section_that_says_when_nothing_changed(tmp_path):
    """A run compared with itself: every strategy and collective the same, said in words."""
    from tests.conftest import ROOT

    run = ROOT / "tests" / "analysis" / "jobdiff" / "zoo01_mp1"
    out = tmp_path / "same.html"
    result = CliRunner().invoke(main, ["report", str(run), "--compare", str(run), "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    section = page[page.index('<section id="compare">'):]
    section = section[:section.index("</section>")]
    assert "No aligned operator changed its strategy." in section
    assert "The same communication on both sides." in section
    assert 'href="#compare"' in page


def test_the_files_read_are_one_row_per_file_name(analysed, monkeypatch):
    """recursive_pipeline's two stages compile two programs, so by hand ranks 0-3 read one
    validate file name (rank_0's 21_validate_0587) and ranks 4-7 another: two rows, each naming
    its ranks as a range, not eight; the ranks present said as one range."""
    from msinspect.report import around
    from msinspect.report.html import report_html

    monkeypatch.setattr(around, "choose", lambda *a, **k: [])  # no pictures: this test is about the run section
    html = report_html(analyse(analysed("recursive_pipeline_dryrun_8rank")))
    assert '<td id="ranks-present">8: ranks 0-7</td>' in html
    table = html[html.index("<summary>file read per rank"):]
    rows = table[:table.index("</table>")].split("<tr")[2:]
    assert [re.findall(r"<td>([^<]*)</td>", row)[:2] for row in rows] == [
        ["ranks 0-3", "21_validate_0587.ir.gz (each in its rank&#39;s folder)"],
        ["ranks 4-7", "21_validate_0628.ir.gz (each in its rank&#39;s folder)"]]
