"""One damaged rank of an 8-rank dump: without --lenient every analysis exits 1 naming the file,
line and column; with --lenient the other seven ranks come out whole and the damaged rank's rows
carry complete=false. ``parse`` stays strict."""
from __future__ import annotations

import gzip
import json
import shutil


import pytest

from tests.conftest import FIXTURES, ROOT
from tests.test_cli_parse import msinspect

SOURCE = FIXTURES / "sharding_propagation_dryrun_8rank"


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """A copy of the 8-rank dump whose rank_3 validate file has one operator line garbled.

    By hand: the fixture's matmul line is ``%N(...) = PrimFunc_MatMul(...)``; putting ``?!?``
    before the operator makes that line unreadable, at the column of the ``?``."""
    root = tmp_path_factory.mktemp("damaged") / "dump"
    shutil.copytree(SOURCE, root)
    bad = next((root / "rank_3").glob("*_validate_*.ir.gz"))
    bad.chmod(0o644)
    lines = gzip.decompress(bad.read_bytes()).decode().split("\n")
    at = next(i for i, line in enumerate(lines) if "= PrimFunc_MatMul(" in line)
    column = lines[at].index("PrimFunc_MatMul(") + 1
    lines[at] = lines[at].replace("= PrimFunc_MatMul(", "= ?!? PrimFunc_MatMul(", 1)
    bad.write_bytes(gzip.compress("\n".join(lines).encode()))
    return root, bad, at + 1, column


COMMANDS = [("summary",)]  # shapes reads the same way; strategies: below, with and without --lenient


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_strict_names_the_unreadable_file(damaged, command):
    root, bad, line, column = damaged
    run = msinspect(*command, root, "--jobs", "2")
    assert run.returncode == 1, run.stdout
    assert f"{bad}:{line}:{column}:" in run.stderr
    assert "Traceback" not in run.stderr and run.stdout == ""


@pytest.mark.parametrize("command", [("strategies",)], ids=lambda c: c[0])
def test_lenient_reports_the_other_seven(damaged, command):
    root, bad, line, column = damaged
    run = msinspect(*command, root, "--jobs", "2", "--json", "--lenient")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert {r["rank"] for r in rows if r["complete"]} == {0, 1, 2, 4, 5, 6, 7}
    assert all(r["complete"] is False for r in rows if r["rank"] == 3)
    assert all(r["complete"] is True for r in rows if r["rank"] != 3)
    assert "warning:" in run.stderr and f"{bad}:{line}:{column}:" in run.stderr
    strict = msinspect(*command, root, "--jobs", "2", "--json")
    assert strict.returncode == 1 and f"{bad}:{line}:{column}:" in strict.stderr and strict.stdout == ""
    clean = json.loads(msinspect(*command, SOURCE, "--jobs", "2", "--json").stdout)

    def same(r):  # the same rows as the undamaged dump's, apart from where the files are
        return {k: v for k, v in r.items() if k not in ("file", "reference")}
    assert [same(r) for r in rows if r["rank"] != 3] == [same({**r, "complete": True}) for r in clean if r["rank"] != 3]


def test_lenient_summary_marks_rank_3_incomplete(damaged):
    root, bad, _, _ = damaged
    run = msinspect("summary", root, "--jobs", "2", "--json", "--lenient")
    assert run.returncode == 0, run.stderr
    rows = {r["rank"]: r for r in json.loads(run.stdout)}
    assert sorted(rows) == list(range(8))
    assert [k for k, r in rows.items() if not r["complete"]] == [3]
    assert rows[3]["status"] == "incomplete"


def test_lenient_diff_and_check(damaged):
    root, bad, line, column = damaged
    run = msinspect("diff", root / "rank_0", root / "rank_3", "--json")
    assert run.returncode == 1 and f"{bad}:{line}:{column}:" in run.stderr
    run = msinspect("diff", root / "rank_0", root / "rank_3", "--json", "--lenient")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert (result["left_complete"], result["right_complete"], result["complete"]) == (True, False, False)
    spec = ROOT / "train_jobs" / "sharding_propagation.toml"
    run = msinspect("check", spec, root, "--json")
    assert run.returncode == 1 and f"{bad}:{line}:{column}:" in run.stderr
    run = msinspect("check", spec, root, "--json", "--lenient")
    assert json.loads(run.stdout)["complete"] is False and "warning:" in run.stderr


def test_render_lenient(damaged, tmp_path):
    root, bad, line, column = damaged
    out = tmp_path / "g.dot"
    run = msinspect("render", root, "--rank", "3", "-o", out)
    assert run.returncode == 1 and f"{bad}:{line}:{column}:" in run.stderr
    run = msinspect("render", root, "--rank", "3", "-o", out, "--lenient")
    assert f"{bad}:{line}:{column}:" in run.stderr and "warning:" in run.stderr  # before drawing anything
    assert "Traceback" not in run.stderr


def test_parse_stays_strict(damaged):
    root, bad, line, column = damaged
    run = msinspect("parse", root, "--jobs", "2")
    assert run.returncode == 1 and f"{bad}:{line}:{column}:" in run.stderr
    run = msinspect("parse", root, "--jobs", "2", "--lenient", "--json")
    assert run.returncode == 1   # read past it, but a diagnostic is still a failure
    assert [r["status"] for r in json.loads(run.stdout) if r["file"] == str(bad)] == ["incomplete"]


def test_every_analysis_takes_lenient():
    for command in ("summary", "strategies", "comm", "shapes", "diff", "check", "render"):
        run = msinspect(command, "--help")
        assert "--lenient" in run.stdout, command
