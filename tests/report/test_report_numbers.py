"""The report's numbers agree with each other and with the analyses: the communication tables
show wire bytes under headers that say so, one dtype spelling in every table, and the page leads
with what a user asks first, the suspicious first (issue 26, point 6). Every expectation is worked
out by hand from the jobs' scripts; the page is read as HTML (what is seen: test_report_seen.py)."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from msinspect.analysis import analyse
from msinspect.report.html import report_html


class _Tables(HTMLParser):
    """Every table of a page by id: its header texts and its rows' cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, dict] = {}
        self._table = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table" and attrs.get("id"):
            self._table = self.tables.setdefault(attrs["id"], {"head": [], "rows": []})
        elif self._table is not None and tag == "tr":
            self._table["rows"].append([])
        elif self._table is not None and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None
        elif self._table is not None and tag in ("td", "th") and self._cell is not None:
            text = " ".join("".join(self._cell).split())
            row = self._table["rows"][-1]
            row.append(text)
            self._cell = None
        elif self._table is not None and tag == "thead":
            self._table["head"] = self._table["rows"].pop()

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tables(html: str) -> dict[str, dict]:
    parser = _Tables()
    parser.feed(html)
    return parser.tables


@pytest.fixture(scope="module")
def seed_002(analysed):
    return report_html(analyse(analysed("sharding_propagation_dryrun_8rank")))


def _column(table: dict, header: str) -> list[str]:
    index = next(i for i, h in enumerate(table["head"]) if h.startswith(header))
    return [row[index] for row in table["rows"]]


def test_comm_tables_show_wire_bytes_as_the_cli_counts_them(seed_002):
    """Seed 002 on 8 ranks (train_jobs/sharding_propagation.py), per rank and step, by the ring
    formulas of docs/comm.md:

    - forward: matmul's partial sums, (8, 16) float32 = 512 bytes, AllReduce over 4 ranks:
      2 x 3 / 4 x 512 = 768; the loss's scalar AllReduce over the 8: 2 x 7 / 8 x 4 = 7 -> 775;
    - redistribution: the data-parallel input (2, 32) gathered over 4 for matmul's (2, 4) cut:
      3 x 256 = 768, the label (2, 16): 3 x 128 = 384 -> 1,152;
    - backward: the gradient of matmul's AllReduce, 768;
    - gradient: the mirrors of w (8, 16) and w2 (16, 4) over their pair of replicas:
      2 x 1 / 2 x 512 + 256 = 768.

    Summed over the 8 ranks: forward 6,200, redistribution 9,216, backward 6,144, gradient 6,144;
    each rank sends 775 + 1,152 + 768 + 768 = 3,463. Per group: ranks 0-3 (and 4-7) run the
    redistribution, matmul's AllReduce and its gradient: 4 x (1,152 + 768 + 768) = 10,752; the pair
    (r, r + 4) the two mirrors: 2 x 768 = 1,536; the world the loss's: 8 x 7 = 56."""
    found = tables(seed_002)
    kinds = found["comm-kinds"]
    assert any(h.startswith("wire bytes per step") for h in kinds["head"])
    assert any(h.startswith("tensor bytes per step") for h in kinds["head"])
    wire = dict(zip(_column(kinds, "kind"), _column(kinds, "wire bytes")))
    assert wire == {"forward": "6,200", "redistribution": "9,216", "backward": "6,144", "gradient": "6,144",
                    "local": "0"}
    groups = found["comm-groups"]
    by_group = dict(zip(_column(groups, "ranks in the group"), _column(groups, "wire bytes")))
    assert by_group == {"0-3": "10,752", "4-7": "10,752", "0-7": "56", "0, 4": "1,536", "1, 5": "1,536",
                        "2, 6": "1,536", "3, 7": "1,536"}
    per_rank = found["wire-per-rank"]
    assert [row[:2] for row in per_rank["rows"]] == [["0-7", "3,463"]]
    # the bars draw the same numbers the group table shows
    bars = dict(re.findall(r'<g class="bar" data-group="ranks ([^"]+)" data-bytes="(\d+)"', seed_002))
    assert {k: f"{int(v):,}" for k, v in bars.items()} == by_group


def test_every_table_spells_a_dtype_one_way(analysed):
    """The recursive pipeline (seeds 000/001) is float32 throughout; its Sends and Receives write
    their dtype attribute ``F32``, the other collectives' abstracts ``Float32``: the communication
    table says ``Float32`` on every row that has a dtype."""
    found = tables(report_html(analyse(analysed("recursive_pipeline_dryrun_8rank"))))
    table = found["comm-table"]
    dtypes = {d for d in _column(table, "dtype") if d and not d.startswith("(")}
    assert dtypes == {"Float32"}
    ops = set(_column(table, "op"))
    assert {"Send", "Receive", "AllGather"} <= ops


def test_manual_parallel_report_leads_with_the_unsynchronised_replicas(analysed):
    """train_jobs/manual_parallel.py: no parallel mode, each of 8 ranks trains the whole MLP with
    SGD on its own rows, the loss's AllReduce the only collective: its six weights (layer1-3's
    weight and bias) are replicas on ranks 0-7 whose gradients nothing sums. The page's first
    section says exactly that, before the run; it says how the job is cut (8 ranks, no parallel
    pass, no pipeline), what each rank sends (the loss's AllReduce and its gradient, 7 + 7 = 14
    bytes a step) and holds (the six weights whole, 2,678,824 bytes of float32)."""
    html = report_html(analyse(analysed("manual_parallel_8rank")))
    assert html.index('id="glance"') < html.index('id="run"')
    findings = re.findall(r'<li class="finding" data-kind="([^"]+)" data-params="([^"]*)">', html)
    assert [(kind, set(params.split())) for kind, params in findings] == [
        ("gradient", {"layer1.weight", "layer1.bias", "layer2.weight", "layer2.bias", "layer3.weight",
                      "layer3.bias"})]
    found = tables(html)
    cut = dict(found["job-cut"]["rows"][i] for i in range(len(found["job-cut"]["rows"])))
    assert cut["ranks"].startswith("8 in the job; 8 read")
    assert cut["parallel pass"].startswith("did not run")
    assert cut["pipeline stages"].startswith("none")
    assert [row[:2] for row in found["wire-per-rank"]["rows"]] == [["0-7", "14"]]
    weights = found["weights-per-rank"]["rows"]
    by_hand = 4 * (512 * 784 + 512 + 512 * 512 + 512 + 10 * 512 + 10)
    assert [row[:3] for row in weights] == [["0-7", "6", f"{by_hand:,}"]]
    # the loss's AllReduce is the job's own (no parallel pass ran): "user" in the table and in the
    # graph picture drawn around it alike
    assert "user" in _column(found["comm-table"], "kind")
    if "<svg" in html[html.index('id="around"'):]:
        assert "AllReduce (user)" in html and "AllReduce (unknown)" not in html


def test_a_planner_job_with_mirrors_has_nothing_suspicious(seed_002):
    """Seed 002: MindSpore's mirrors sum w's and w2's gradients over their replicas (above)."""
    assert "Nothing suspicious found" in seed_002
    assert 'class="finding"' not in seed_002
