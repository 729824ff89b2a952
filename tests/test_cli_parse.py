"""The CLI as a user types it."""
from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES


def msinspect(*args, cwd=None):
    """``msinspect ARGS`` as a user types it, run in this process by click's test runner (the
    interpreter's start and imports are not paid again per call): an object with ``returncode``,
    ``stdout`` and ``stderr``. An exception the CLI did not turn into a message fails the test, as
    the traceback would have shown in a process of its own (:func:`msinspect_process`)."""
    from tests.conftest import invoke

    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        result = invoke(*args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["msinspect", *map(str, args)], result.exit_code, result.stdout, result.stderr)


def msinspect_process(*args, cwd=None):
    """``python -m msinspect.cli ARGS`` in a process of its own."""
    return subprocess.run([sys.executable, "-m", "msinspect.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=300)


def test_parse_fixture_roots_json():
    run = msinspect("parse", FIXTURES / "manual_parallel_8rank", FIXTURES / "seed_002", "--json", "--jobs", "2")
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert len(rows) == 19
    validate = [r for r in rows if r["stage"] == "validate"]
    assert len(validate) == 8 and all(r["cnodes"] == r["stated_cnodes"] == 117 for r in validate)
    assert {r["status"] for r in rows} == {"complete", "excerpt"}


def test_parse_table_and_stage_filter():
    run = msinspect("parse", FIXTURES / "manual_parallel_8rank", "--stage", "execute")
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("24_execute_0142.ir.gz") == 8
    assert "complete" in run.stdout


def test_parse_error_exit_and_message(tmp_path):
    bad = tmp_path / "bad_0001.ir"
    bad.write_text("# IR entry: @g\n# Total subgraphs: 1\nsubgraph attr:\nsubgraph @g() {\n  %0(x) = Add(%1, ?)\n}\n")
    run = msinspect_process("parse", bad)  # as a shell sees it: the exit code and one line, no traceback
    assert run.returncode == 1
    assert f"{bad}:5:19: unexpected" in run.stderr and "Traceback" not in run.stderr
    lenient = msinspect("parse", bad, "--lenient", "--json")
    assert lenient.returncode == 1
    (row,) = json.loads(lenient.stdout)
    assert row["status"] == "incomplete"
    assert row["diagnostics"][0]["line"] == 5


def test_wrong_paths(tmp_path):
    run = msinspect("parse", tmp_path / "missing")
    assert run.returncode == 2 and "no such file or folder" in run.stderr
    run = msinspect("parse", tmp_path)
    assert run.returncode == 2 and "no MindSpore IR files" in run.stderr


def test_help_lists_commands():
    run = msinspect("--help")
    assert run.returncode == 0 and "parse" in run.stdout and "scrub" in run.stdout


def test_parse_reads_every_run_of_a_folder_that_holds_several(tmp_path):
    """parse reads files, not ranks: two runs under one folder (rank_0 twice, as in fixtures/zoo)
    are both read; an analysis, which needs one job, refuses the same folder naming both."""
    import shutil

    source = FIXTURES / "manual_parallel_8rank" / "rank_0"
    for run in ("run_a", "run_b"):
        shutil.copytree(source, tmp_path / run / "rank_0")
    done = msinspect("parse", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    paths = sorted(row["file"] for row in json.loads(done.stdout))
    per_run = len(list(source.glob("*.ir.gz")))
    assert len(paths) == 2 * per_run and {Path(p).parts[-3] for p in paths} == {"run_a", "run_b"}
    refused = msinspect("summary", str(tmp_path))
    assert refused.returncode == 2 and "holds 2 runs" in refused.stderr
    assert f"{tmp_path / 'run_a'} (1 rank(s): 0)" in refused.stderr
    assert f"{tmp_path / 'run_b'} (1 rank(s): 0)" in refused.stderr
