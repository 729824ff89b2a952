"""A failed expectation leads the report (issue 40, item 2): with ``--spec`` and one failing
entry the page's first words say so, never "Nothing suspicious found", and the failure is the
first finding at a glance, before anything suspicious; the evidence of ranks that show the same
line is one line for the ranks (item 3).

By hand, from train_jobs/sharding_propagation.py (seed 002) on 8 ranks: ``matmul`` is shard
((2, 4), (4, 1)) by the user on every rank, and MindSpore's mirrors sum its weights' gradients
over their replicas (nothing suspicious: test_report_numbers.py). A spec stating ((4, 2), (2, 1))
for it fails on ranks 0-7; every rank's file holds the operator at the same line (one program)."""
from __future__ import annotations

import re

import pytest

from msinspect.analysis import analyse
from msinspect.check import check
from msinspect.report.html import report_html
from msinspect.spec import load_spec

SPEC = """
[job]
name = "one wrong entry"
ranks = 8
stage = "step_parallel_end"

[[expect.strategy]]
op = "matmul"
in_strategy = [[4, 2], [2, 1]]
set_by = "user"
basis = "by_hand"
"""


@pytest.fixture(scope="module")
def page(analysed, tmp_path_factory):
    spec = tmp_path_factory.mktemp("spec") / "wrong.toml"
    spec.write_text(SPEC)
    dump = analysed("sharding_propagation_dryrun_8rank")
    analysis = analyse(dump)
    outcome = check(load_spec(spec), dump, analyses={None: analysis})
    assert [o.passed for o in outcome.outcomes if o.expectation.kind == "strategy"] == [False]
    return report_html(analysis, outcome)


def _glance(page: str) -> str:
    return page[page.index('id="glance"'):page.index('id="run"')]


def test_the_failed_expectation_is_the_first_words_of_the_page(page):
    glance = _glance(page)
    assert "Nothing suspicious found" not in page
    headline = re.search(r'<div id="suspicious" class="(\w+)">\s*<h3>([^<]*)</h3>', glance)
    assert headline.groups() == ("alarm", "1 expectation of the spec failed; nothing else suspicious found")


def test_the_failed_expectation_is_the_first_finding(page):
    glance = _glance(page)
    kinds = re.findall(r'<li class="finding" data-kind="([^"]+)"', glance)
    assert kinds == ["expectation"]
    finding = glance[glance.index('<li class="finding"'):]
    finding = finding[:finding.index("</li>")]
    assert "expect.strategy[0] failed: strategy matmul" in finding
    assert "expected ((4, 2), (2, 1)), set by user" in finding and "found ((2, 4), (4, 1))" in finding
    assert "rank 0 (and ranks 1-7, the same line): " in finding


def test_the_expectations_table_merges_ranks_showing_one_line(page):
    table = page[page.index('id="checks-table"'):]
    row = table[table.index('<tr class="fail">'):]
    row = row[:row.index("</tr>")]
    assert row.count("rank 0 (and ranks 1-7, the same line): ") == 1
    assert not re.search(r"rank [1-7]: ", row)
