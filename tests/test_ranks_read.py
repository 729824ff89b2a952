"""Every rank accounted for: ranks that cannot be read (permissions, links leading nowhere or in
a loop), a rank missing the stage the others are read at, and two copies of the same ranks are
said, flagged in the output and the JSON, and never silently dropped or merged.

The fixture is the sharding-propagation job: 8 ranks (rank_0 .. rank_7), each with
step_parallel_begin, step_parallel_end and validate files, and no pipeline (all ranks hold the
same weights), as written by train_jobs/sharding_propagation.py on 8 devices.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from msinspect.selection import world_of
from msinspect.dumps import load_dump
from msinspect.errors import MsInspectError
from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

SP = FIXTURES / "sharding_propagation_dryrun_8rank"
VALIDATE = "21_validate_0569.ir.gz"


@pytest.fixture
def dump(tmp_path):
    root = tmp_path / "dump"
    shutil.copytree(SP, root)
    return root


def _json(run):
    assert "Traceback" not in run.stderr, run.stderr
    return json.loads(run.stdout)


def _as_user_without_root_powers(*args, cwd=None):
    """Run msinspect where file permissions hold: directly for a normal user; for root, under
    capsh with the capabilities that bypass permissions dropped."""
    command = [sys.executable, "-m", "msinspect.cli", *map(str, args)]
    if os.geteuid() == 0:
        if not shutil.which("capsh"):
            pytest.skip("running as root without capsh: permissions do not stop root")
        command = ["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", shlex.join(command)]
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=300)


# ---------------------------------------------------------------- a rank folder that cannot be read
def test_unreadable_rank_folder_is_reported_and_exits_1(dump):
    (dump / "rank_3").chmod(0)
    try:
        run = _as_user_without_root_powers("summary", dump, "--json", "--jobs", "2")
    finally:
        (dump / "rank_3").chmod(0o755)
    assert run.returncode == 1, run.stderr
    rows = _json(run)
    assert [r["rank"] for r in rows if r["status"] != "not read"] == [0, 1, 2, 4, 5, 6, 7]
    (missing,) = [r for r in rows if r["status"] == "not read"]
    assert (missing["rank"], missing["rank_label"]) == (3, "rank_3") and "Permission denied" in missing["note"]
    assert f"could not read rank_3: {dump / 'rank_3'}: cannot be read: Permission denied" in run.stderr
    assert "read 7 rank(s) at validate" in run.stderr
    assert all(r["stage_ranks"] is None for r in rows)  # no pipeline stage claimed from 7 of 8 ranks


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_rank_folder_replaced_by_a_broken_link(dump, kind):
    shutil.rmtree(dump / "rank_3")
    (dump / "rank_3").symlink_to(dump / "gone" if kind == "dangling" else dump / "rank_3")
    loaded = load_dump(dump)
    assert [r.rank for r in loaded.ranks] == [0, 1, 2, 4, 5, 6, 7]
    (problem,) = loaded.unreadable
    assert problem.rank == 3 and "cannot be followed" in problem.reason
    assert world_of(loaded) == tuple(range(8))  # rank_3 is part of the job, though unreadable
    for command in ("parse", "strategies", "comm", "shapes", "summary"):
        run = msinspect(command, dump, "--json", "--jobs", "2")
        assert run.returncode == 1, (command, run.stderr)
        assert "could not read" in run.stderr and str(dump / "rank_3") in run.stderr, (command, run.stderr)
        assert "Traceback" not in run.stderr


def test_a_linked_rank_folder_is_read_and_a_link_back_is_read_once(dump, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (dump / "rank_7").rename(elsewhere)
    (dump / "rank_7").symlink_to(elsewhere)
    (dump / "rank_0" / "back_to_root").symlink_to(dump)
    loaded = load_dump(dump)
    assert [r.rank for r in loaded.ranks] == list(range(8)) and not loaded.unreadable


# ---------------------------------------------------------------- a broken link instead of a validate file
@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_broken_validate_file_is_flagged_not_silently_replaced(dump, kind):
    target = dump / "rank_3" / VALIDATE
    target.unlink()
    target.symlink_to(target.name if kind == "loop" else "nowhere.ir.gz")
    loaded = load_dump(dump)
    (problem,) = loaded.rank(3).unreadable
    assert problem.path == target and "cannot be followed" in problem.reason
    run = msinspect("summary", dump, "--json", "--jobs", "2")
    rows = {r["rank_label"]: r for r in _json(run)}
    assert rows["rank_3"]["stage"] == "step_parallel_end" and rows["rank_3"]["other_stage"] is True
    assert VALIDATE in rows["rank_3"]["note"] and "cannot be followed" in rows["rank_3"]["note"]
    assert all(rows[f"rank_{n}"]["stage"] == "validate" and not rows[f"rank_{n}"]["other_stage"]
               for n in (0, 1, 2, 4, 5, 6, 7))
    assert "read rank_3 at step_parallel_end, not validate" in run.stderr
    run = msinspect("parse", dump, "--json", "--jobs", "2")
    assert run.returncode == 1
    (bad,) = [r for r in _json(run) if r["status"] == "unreadable"]
    assert bad["file"] == str(target)


# ---------------------------------------------------------------- a rank missing the stage the others are read at
def test_rank_missing_the_common_stage_is_flagged(dump):
    (dump / "rank_4" / VALIDATE).unlink()
    run = msinspect("summary", dump, "--json", "--jobs", "2")
    assert run.returncode == 0, run.stderr
    rows = {r["rank_label"]: r for r in _json(run)}
    assert rows["rank_4"]["stage"] == "step_parallel_end" and rows["rank_4"]["other_stage"] is True
    assert "no 'validate' IR file" in rows["rank_4"]["note"]
    # a job without a pipeline: no pipeline stages made up from files of two stages
    assert all(r["stage_ranks"] is None for r in rows.values())
    run = msinspect("summary", dump, "--jobs", "2")
    assert "pipeline stages" not in run.stdout
    assert "warning: read rank_4 at step_parallel_end, not validate" in run.stderr
    run = msinspect("strategies", dump, "--json", "--jobs", "2")
    flagged = {(r["rank"], r["other_stage"]) for r in _json(run)}
    assert flagged == {(n, n == 4) for n in range(8)}


def test_rank_missing_the_asked_stage_is_not_read_and_exits_1(dump):
    (dump / "rank_4" / VALIDATE).unlink()
    run = msinspect("summary", dump, "--stage", "validate", "--json", "--jobs", "2")
    assert run.returncode == 1, run.stderr
    rows = {r["rank_label"]: r for r in _json(run)}
    assert sorted(rank for rank, r in rows.items() if r["stage"] == "validate") == \
        [f"rank_{n}" for n in (0, 1, 2, 3, 5, 6, 7)]
    assert rows["rank_4"]["status"] == "not read" and "no 'validate' IR file" in rows["rank_4"]["note"]
    assert "could not read rank_4: no 'validate' IR file" in run.stderr


# ---------------------------------------------------------------- the same ranks twice
def test_a_copy_inside_the_dump_is_a_second_run_named_with_both_folders(dump):
    shutil.copytree(SP, dump / "scrubbed")
    with pytest.raises(MsInspectError) as info:
        load_dump(dump)
    assert f"{dump} (8 rank(s): 0-7)" in str(info.value)
    assert f"{dump / 'scrubbed'} (8 rank(s): 0-7)" in str(info.value)
    for command in ("summary", "strategies"):
        run = msinspect(command, dump)
        assert run.returncode == 2 and "holds 2 runs" in run.stderr and str(dump / "scrubbed") in run.stderr
        assert "Traceback" not in run.stderr
    # parse reads files, not ranks: every copy is read, and the note says the ranks are there twice
    run = msinspect("parse", dump)
    assert run.returncode == 0 and "more than once" in run.stderr and str(dump / "scrubbed" / "rank_5") in run.stderr


def test_a_stage_no_rank_holds_is_said_once_for_every_rank_with_a_suggestion(tmp_path):
    """64 ranks without the stage asked for (a typo of ``validate``): one line names them all and
    the error suggests the stage the dump holds (issue 26: it printed one identical line per rank)."""
    source = next((FIXTURES / "manual_parallel_8rank" / "rank_0").glob("*validate*"))
    for r in range(64):
        (tmp_path / f"rank_{r}").mkdir()
        os.link(source, tmp_path / f"rank_{r}" / source.name)
    done = msinspect("strategies", str(tmp_path), "--stage", "validat")
    assert done.returncode == 2
    said = [line for line in done.stderr.splitlines() if "no 'validat' IR file" in line]
    assert len(said) == 1 and said[0].strip().startswith("ranks 0-63:")
    assert "did you mean 'validate'?" in done.stderr
