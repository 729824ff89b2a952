"""``check`` and ``report`` as a user reads them (issue 40 item 3, issue 39 item 7): evidence the
ranks share is one line for the ranks, and both take ``--world`` for a dump whose files do not
state the job's rank count, as ``summary`` does.

By hand, from zoo 01 (``fixtures/zoo/nets/01_semi_auto_tp4dp2.py`` with gpt.py: dp 2 x tp 4 on 8
ranks, one program on every rank): q_matmul is ((2, 1), (1, 4)) by the user in each of the 4
blocks, so a spec stating ((2, 1), (1, 2)) fails on ranks 0-7, each rank's file holding the
first block's q_matmul at the same line. The weight wq (512, 512) is cut (1, 4) along the last
(fastest) device axis: device matrix [2, 4] (MindSpore drops the size-1 axis of (2, 1, 4)),
tensor map [-1, 0], slice [512, 128] on every rank. Before the parallel pass
(``step_parallel_begin``) no communication names the world, so a copy of rank 7 alone does not
state it: the layout cannot be told (tests/analysis/test_zoo_partial_ranks.py) unless ``--world
8`` states it."""
from __future__ import annotations

import json
import re
import shutil

import pytest
from click.testing import CliRunner

from msinspect.cli import main
from tests.conftest import FIXTURES

ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"

WRONG = """
[job]
name = "zoo 01, one wrong entry"
stage = "step_parallel_end"

[[expect.strategy]]
op = "q_matmul"
in_strategy = [[2, 1], [1, 2]]
set_by = "user"
basis = "by_hand"
"""

LAYOUT = """
[job]
name = "zoo 01, wq's layout"
stage = "step_parallel_begin"

[[expect.layout]]
param = "blocks.0.attention.wq"
device_matrix = [2, 4]
tensor_map = [-1, 0]
slice_shape = [512, 128]
basis = "by_hand"
"""


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    root = tmp_path_factory.mktemp("specs")
    (root / "wrong.toml").write_text(WRONG)
    (root / "layout.toml").write_text(LAYOUT)
    return root


@pytest.fixture(scope="module")
def rank7(tmp_path_factory):
    """Rank 7's IR alone, as copied off a cluster (no run record, no MindSpore records)."""
    root = tmp_path_factory.mktemp("one_rank")
    (root / "rank_7").mkdir()
    for ir in (ZOO01 / "rank_7").glob("*.ir.gz"):
        shutil.copy(ir, root / "rank_7" / ir.name)
    return root


def test_a_line_every_rank_shows_is_said_once_for_the_ranks(specs):
    done = run("check", specs / "wrong.toml", ZOO01, "--failed-only")
    assert done.exit_code == 1
    assert "FAIL expect.strategy[0] strategy q_matmul" in done.stdout
    evidence = re.findall(r"^     (rank .*)$", done.stdout, re.M)  # the located lines (long ones wrap on)
    assert len(evidence) == 1, done.stdout
    assert evidence[0].startswith("rank 0 (and ranks 1-7, the same line): ")
    assert "rank_0/step_parallel_end_" in evidence[0]
    # merging is for a person: JSON keeps each rank's line
    outcome = json.loads(run("check", specs / "wrong.toml", ZOO01, "--json").stdout)["outcomes"][0]
    assert [ev["rank"] for ev in outcome["evidence"]] == list(range(8))


def test_check_takes_the_world_of_a_dump_that_does_not_state_it(specs, rank7):
    unknown = run("check", specs / "layout.toml", rank7, "--json")
    assert unknown.exit_code == 1
    assert json.loads(unknown.stdout)["outcomes"][0]["passed"] is False
    told = run("check", specs / "layout.toml", rank7, "--world", "8", "--json")
    assert told.exit_code == 0, told.output
    assert [o["passed"] for o in json.loads(told.stdout)["outcomes"]] == [True]


def test_report_takes_the_world_of_a_dump_that_does_not_state_it(rank7, tmp_path):
    def ranks_fact(*args):
        page = tmp_path / f"report{len(args)}.html"
        done = run("report", rank7, "--stage", "step_parallel_begin", "-o", page, *args)
        assert done.exit_code == 0, done.output
        html = page.read_text()
        return re.search(r"<tr><th>ranks</th><td>([^<]*)</td>", html).group(1), html

    said, html = ranks_fact()
    assert said == "the job&#39;s count cannot be told; 1 read: rank 7, at step_parallel_begin"
    assert "--world N states it" in html
    said, _ = ranks_fact("--world", "8")
    assert said == "8 in the job; 1 read: rank 7, at step_parallel_begin"
