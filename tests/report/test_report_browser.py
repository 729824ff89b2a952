"""The HTML report in a real browser (Selenium + headless Chromium, Debian's chromium and
chromium-driver): it opens from disk with no console errors, its tables hold the right rows,
filtering and expanding work, and seed 002's w is drawn with rank 5 on [8:16, 0:16]. A screenshot
of each section is written under the test's temporary folder (printed; ``pytest -s`` shows where).

Skipped with the reason where Chromium, its driver or Selenium is missing, except under CI (the
environment variable ``CI`` set), where that is a failure: ``make setup`` installs them as root."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.report.html import report_html
from msinspect.report.tables import COMM_SHOWN, STRATEGY_SHOWN, text
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report-screenshots")
    print(f"\nreport screenshots in {folder}")
    return folder


def _distinct_rows(frame, shown) -> int:
    """Rows of a table merged across ranks, counted with pandas: distinct texts of the shown columns."""
    return len(frame[shown].map(text).drop_duplicates()) if len(frame) else 0


def _open(browser, tmp_path_factory, dump, spec: str | None = None):
    fixture = dump.path.name
    check = msinspect.check_dump(spec, dump) if spec else None
    page = tmp_path_factory.mktemp("report") / f"{fixture}.html"
    page.write_text(report_html(analyse(dump), check), encoding="utf-8")
    browser.get(page.as_uri())
    return dump, check


def _console_errors(browser) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def _screenshot_sections(browser, shots, prefix: str) -> None:
    from selenium.webdriver.common.by import By

    for section in browser.find_elements(By.CSS_SELECTOR, "section"):
        browser.execute_script("arguments[0].scrollIntoView()", section)
        path = shots / f"{prefix}-{section.get_attribute('id')}.png"
        section.screenshot(str(path))
        assert path.stat().st_size > 1000


def test_seed_002_report_rows_filter_and_device_grid(browser, tmp_path_factory, shots, analysed):
    from selenium.webdriver.common.by import By

    dump, check = _open(browser, tmp_path_factory, analysed("sharding_propagation_dryrun_8rank"),
                        str(FIXTURES.parent / "train_jobs" / "sharding_propagation.toml"))
    assert _console_errors(browser) == []
    # seed 002's Net: matmul, relu, matmul2, then the MSE loss (Sub, Square, ReduceMean): six operators
    # with a strategy, the same on every one of the 8 ranks -> six rows, each for ranks 0-7
    strategy_rows = browser.find_elements(By.CSS_SELECTOR, "#strategies-table tr.row")
    assert len(strategy_rows) == 6 == _distinct_rows(analyse(dump).strategies(), STRATEGY_SHOWN)
    assert {r.find_elements(By.TAG_NAME, "td")[0].text for r in strategy_rows} == {"0-7"}
    assert len(browser.find_elements(By.CSS_SELECTOR, "#comm-table tr.row")) == _distinct_rows(analyse(dump).comm(), COMM_SHOWN)
    assert browser.find_element(By.ID, "world-size").text == "8"
    # filtering: only relu's row stays
    box = browser.find_element(By.ID, "strategies-filter")
    box.send_keys("relu")
    visible = [r for r in strategy_rows if r.is_displayed()]
    assert [r.find_elements(By.TAG_NAME, "td")[1].text for r in visible] == ["relu"]
    assert browser.find_element(By.ID, "strategies-shown").text == "1"
    box.clear()
    box.send_keys(" ")  # an input event with an empty needle: everything back
    assert sum(r.is_displayed() for r in strategy_rows) == 6
    # the device grid of w (32, 16) cut (4, 1): rank 5 holds rows 8..16, all 16 columns
    figure = next(f for f in browser.find_elements(By.CSS_SELECTOR, "figure.grid")
                  if "w" in f.get_attribute("data-params").split())
    cell = figure.find_element(By.CSS_SELECTOR, 'g.cell[data-rank="5"]')
    assert cell.is_displayed()
    assert [t.text for t in cell.find_elements(By.TAG_NAME, "text")] == ["rank 5", "[8:16, 0:16]"]
    # every expectation of the seed's spec shows, with its verdict
    verdicts = browser.find_elements(By.CSS_SELECTOR, "#checks-table tbody tr")
    assert len(verdicts) == len(check.outcomes) > 0
    _screenshot_sections(browser, shots, "seed002")
    assert _console_errors(browser) == []


def test_pipeline_report_collapses_micro_batches_and_expands(browser, tmp_path_factory, shots, analysed):
    from selenium.webdriver.common.by import By

    dump, _ = _open(browser, tmp_path_factory, analysed("recursive_pipeline_dryrun_8rank"))
    assert _console_errors(browser) == []
    rows = browser.find_elements(By.CSS_SELECTOR, "#strategies-table tr.row")
    assert len(rows) == _distinct_rows(analyse(dump).strategies(), STRATEGY_SHOWN)
    # recursive_pipeline.py: 4 micro-batches; stage 0 (ranks 0-3) runs layer1's matmul once per
    # micro-batch: one block "x 4 identical", collapsed until its toggle is pressed
    block = next(b for b in browser.find_elements(By.CSS_SELECTOR, "#strategies-table tbody.collapsed")
                 if "layer1-Dense" in b.get_attribute("textContent") and "matmul" in b.get_attribute("textContent"))
    head = block.find_element(By.CSS_SELECTOR, "tr.head")
    assert head.find_elements(By.TAG_NAME, "td")[0].text == "0-3"
    assert "x 4 identical" in head.text
    assert head.find_elements(By.TAG_NAME, "td")[STRATEGY_SHOWN.index("micro") + 1].text == "0-3"
    members = block.find_elements(By.CSS_SELECTOR, "tr.member")
    assert len(members) == 4 and not any(m.is_displayed() for m in members)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", head)
    head.find_element(By.CSS_SELECTOR, "button.toggle").click()
    assert all(m.is_displayed() for m in members)
    micro = STRATEGY_SHOWN.index("micro") + 1
    assert [m.find_elements(By.TAG_NAME, "td")[micro].text for m in members] == ["0", "1", "2", "3"]
    # two pipeline stages of four ranks
    assert browser.find_element(By.ID, "pipeline-stages").text.startswith("2:")
    # sorting by op puts the blocks in op order
    browser.find_element(By.CSS_SELECTOR, f'#strategies-table th[data-col="{STRATEGY_SHOWN.index("op") + 1}"]').click()
    ops = [b.find_elements(By.TAG_NAME, "tr")[0].find_elements(By.TAG_NAME, "td")[2].get_attribute("textContent")
           for b in browser.find_elements(By.CSS_SELECTOR, "#strategies-table tbody")]
    assert ops == sorted(ops, key=str.lower)
    # the cost section renders: a pipeline column of bytes, the 8 x 8 heat map, memory per rank
    cost = browser.find_element(By.ID, "cost")
    browser.execute_script("arguments[0].scrollIntoView()", cost)
    assert cost.is_displayed() and "pipeline" in cost.find_element(By.ID, "cost-axes").text
    cells = cost.find_elements(By.CSS_SELECTOR, "svg.rank-matrix rect.cell")
    assert len(cells) == 64 and cells[0].is_displayed()
    assert any(int(c.get_attribute("data-bytes")) > 0 for c in cells)
    assert cost.find_elements(By.CSS_SELECTOR, "#cost-memory tbody tr")
    # the why section explains rank 0: recursive_pipeline.py cuts 8 ranks into two stages of 4, so
    # rank 0 (stage 0) sends its activations to rank 4 (0 + 1 x 4 ranks a stage) and receives
    # their gradients back from it, the next stage in both directions
    why = browser.find_element(By.ID, "why")
    browser.execute_script("arguments[0].scrollIntoView()", why)
    answers = [r.text for r in why.find_elements(By.CSS_SELECTOR, "#why-table tr.why")]
    assert any("Send to rank 4" in a and "goes to the next pipeline stage" in a for a in answers), answers
    assert any("Receive from rank 4" in a and "from the next pipeline stage" in a for a in answers), answers
    assert not any(" None " in a for a in answers)
    _screenshot_sections(browser, shots, "pipeline")
    assert _console_errors(browser) == []


needs_dot = pytest.mark.skipif(__import__("shutil").which("dot") is None,
                               reason="Graphviz's 'dot' program is not installed (apt-get install graphviz)")


def _figure_texts(figure) -> list[str]:
    from selenium.webdriver.common.by import By

    return [t.get_attribute("textContent") for t in figure.find_elements(By.CSS_SELECTOR, "svg text")]


@needs_dot
def test_graph_around_a_named_operator_and_the_busiest_collective(browser, tmp_path_factory, shots, analysed):
    from selenium.webdriver.common.by import By

    dump = analysed("sharding_propagation_dryrun_8rank")
    page = tmp_path_factory.mktemp("around") / "named.html"
    page.write_text(report_html(analyse(dump), ops=["matmul"]), encoding="utf-8")
    browser.get(page.as_uri())
    assert _console_errors(browser) == []
    [figure] = browser.find_elements(By.CSS_SELECTOR, "#around figure.around")
    assert figure.get_attribute("data-what") == "matmul" and "named with --op" in figure.text
    assert figure.find_element(By.TAG_NAME, "svg").is_displayed()
    # the picture holds matmul's own node (its label starts with the instance name) and, by hand,
    # the AllReduce that joins its partial sums (seed 002: width cut in 4)
    texts = _figure_texts(figure)
    assert "matmul" in texts and "AllReduce (forward)" in texts
    # self-contained: the SVG references nothing outside the page
    html = page.read_text(encoding="utf-8")
    assert "<!DOCTYPE svg" not in html and "<?xml" not in html and "svg11.dtd" not in html

    # by default (no --op, no spec): per kind, the collective with the most wire bytes. By hand for
    # the forward kind: matmul's output per rank is (8, 16) float32 = 512 bytes, summed by an
    # AllReduce over 4 ranks: 2 (4 - 1) / 4 x 512 = 768 bytes per step
    page = tmp_path_factory.mktemp("around") / "default.html"
    page.write_text(report_html(analyse(dump)), encoding="utf-8")
    browser.get(page.as_uri())
    figures = browser.find_elements(By.CSS_SELECTOR, "#around figure.around")
    forward = [f for f in figures if "the forward operator with the most wire bytes: 768 bytes" in f.text]
    assert len(forward) == 1 and "(AllReduce, line" in forward[0].get_attribute("data-what")
    assert "AllReduce (forward)" in _figure_texts(forward[0])
    browser.execute_script("arguments[0].scrollIntoView()", forward[0])
    forward[0].screenshot(str(shots / "around-forward-allreduce.png"))
    assert _console_errors(browser) == []


def test_repeated_layers_weights_collapse_and_expand(browser, tmp_path_factory, shots):
    from selenium.webdriver.common.by import By

    # zoo 01: the GPT stack of gpt.py, 4 blocks with the same strategies (tp 4 x dp 2): each of a
    # block's ten weights (wq, wk, wv, wo, w_in, w_out, ln1/ln2 gamma and beta) is one block of the
    # table, "x 4 identical (blocks 0-3)"; wq (512, 512) feeds q_matmul ((dp, 1), (1, tp)) = (1, 4)
    dump = msinspect.load_dump(FIXTURES / "zoo" / "01_semi_auto_tp4dp2")
    page = tmp_path_factory.mktemp("params") / "zoo01.html"
    page.write_text(report_html(analyse(dump), ops=["no-such-operator"]), encoding="utf-8")
    browser.get(page.as_uri())
    assert _console_errors(browser) == []
    collapsed = browser.find_elements(By.CSS_SELECTOR, "#params-table tbody.collapsed")
    heads = [b.find_element(By.CSS_SELECTOR, "tr.head").text for b in collapsed]
    assert sum("x 4 identical" in h and "(blocks 0-3)" in h for h in heads) == 10
    block = next(b for b, h in zip(collapsed, heads) if "blocks.*.attention.wq" in h)
    members = block.find_elements(By.CSS_SELECTOR, "tr.member")
    assert len(members) == 4 and not any(m.is_displayed() for m in members)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", block)
    block.find_element(By.CSS_SELECTOR, "button.toggle").click()
    assert all(m.is_displayed() for m in members)
    cells = [[td.text for td in m.find_elements(By.TAG_NAME, "td")] for m in members]
    assert [c[0] for c in cells] == [f"blocks.{i}.attention.wq" for i in range(4)]
    assert {(c[1], c[3]) for c in cells} == {("(512, 512)", "(1, 4)")}
    block.screenshot(str(shots / "params-collapsed-expanded.png"))
    # filtering counts weights: w_out is only the FeedForward's, one per block
    browser.find_element(By.ID, "params-filter").send_keys("w_out")
    assert browser.find_element(By.ID, "params-shown").text == "4"
    # an --op that names nothing says so instead of a picture
    assert "no operator of the files read matches 'no-such-operator' (at stage validate)" in browser.find_element(By.ID, "around").text
    assert _console_errors(browser) == []


def test_a_run_compared_with_another_shows_what_changed(browser, tmp_path_factory, shots, analysed):
    """zoo 01 (MP 4 x DP 2) against its MP 1 run (tests/analysis/jobdiff/zoo01_mp1, rank 0). By hand,
    from fixtures/zoo/nets/01_semi_auto_tp4dp2.py and gpt.py (derivations in
    tests/analysis/test_jobdiff.py's docstring): q_matmul's weight is cut 4 ways by columns at MP 4,
    ((2, 1), (1, 4)), whole at MP 1, ((2, 1), (1, 1)); with MP 1 no tensor-parallel collective is
    left, so 0 bytes on the tensor axis, and the forward AllReduces of the attention output are
    removed; rank 0's weights grow from 15,372,288 to 54,693,888 bytes."""
    from selenium.webdriver.common.by import By

    from msinspect.analysis.compare.runs import compare_runs
    from tests.conftest import ROOT

    dump = analysed("zoo/01_semi_auto_tp4dp2")
    compared = compare_runs(dump.path, ROOT / "tests" / "analysis" / "jobdiff" / "zoo01_mp1", 0)
    page = tmp_path_factory.mktemp("report") / "compared.html"
    page.write_text(report_html(analyse(dump), compared=compared), encoding="utf-8")
    browser.get(page.as_uri())
    assert _console_errors(browser) == []
    section = browser.find_element(By.ID, "compare")
    browser.execute_script("arguments[0].scrollIntoView()", section)
    assert section.is_displayed()
    cells = lambda row: [td.text for td in row.find_elements(By.TAG_NAME, "td")]  # noqa: E731
    tensor = section.find_element(By.CSS_SELECTOR, '#compare-axes tr[data-axis="tensor"]')
    assert cells(tensor)[2] == "0"
    weights = section.find_element(By.CSS_SELECTOR, '#compare-memory tr[data-part="weights"]')
    assert cells(weights)[1:3] == ["15,372,288", "54,693,888"]
    strategies = [cells(r) for r in section.find_elements(By.CSS_SELECTOR, "#compare-strategies tbody tr")]
    assert any(r[1] == "q_matmul" and r[4] == "((2,1),(1,4))" and r[5] == "((2,1),(1,1))" for r in strategies)
    removed = [cells(r) for r in section.find_elements(By.CSS_SELECTOR, '#compare-comm tr[data-change="removed"]')]
    assert any(r[1] == "forward" and r[2] == "AllReduce" and r[4] == "4 -> 0" for r in removed), removed
    section.screenshot(str(shots / "compare.png"))
