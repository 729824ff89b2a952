"""Shared test helpers: where the fixtures are."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path
from unittest import mock

import pytest

# The suite keeps parsed files in a cache of its own (inherited by every command it runs), never in
# the user's: msinspect.cache keys entries by content, so a shared cache only saves time. Made once,
# by the session that does not inherit one (a pytest run inside a test makes none), and removed
# when that session ends.
if "MSINSPECT_PARSE_CACHE_DIR" not in os.environ:
    os.environ["MSINSPECT_PARSE_CACHE_DIR"] = tempfile.mkdtemp(prefix="msinspect-tests-cache-")
    atexit.register(shutil.rmtree, os.environ["MSINSPECT_PARSE_CACHE_DIR"], ignore_errors=True)

ROOT = Path(__file__).resolve().parent.parent


#: The longest files (each runs MindSpore's planner on 8 simulated ranks, or reads the corpus twice),
#: collected first: under ``make test`` a worker takes each whole, and one begun last kept a single
#: core busy for the suite's last minutes while the other had nothing left (tests/progress.py's lines).
#: ``make test`` passes ``--no-loadscope-reorder``: else pytest-xdist hands out the files with the
#: most tests first, whatever this order.
LONGEST_FIRST = ("tests/train/test_train_jobs.py", "tests/dryrun/test_dryrun_seed_runs.py",
                 "tests/parser/test_readings.py", "tests/parser/test_mutations.py")


def pytest_collection_modifyitems(config, items):
    """The :data:`LONGEST_FIRST` files first, in that order; every file's tests stay in theirs."""
    first = {name: place for place, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: first.get(item.nodeid.split("::", 1)[0], len(first)))


def pytest_configure(config):
    """A line per test file as it ends, with the time left (tests/progress.py)."""
    from tests.progress import register

    register(config)
FIXTURES = ROOT / "fixtures"


#: Fixture folders of text as printed in documents, "..." elisions included: read leniently
#: (tests/parser/test_docs_corpus.py, tests/parser/test_seed_as_printed.py), not whole.
AS_PRINTED = frozenset({"docs_ir", "seed_002_as_printed"})


#: Fixture folders with a parse test of their own (tests/zoo/test_zoo_parse.py).
OWN_PARSE_TEST = frozenset({"zoo"})


def fixture_files() -> list[Path]:
    """Every IR fixture in the repository but the text as printed (:data:`AS_PRINTED`) and the
    folders parsed by tests of their own (:data:`OWN_PARSE_TEST`)."""
    return sorted(p for p in FIXTURES.rglob("*")
                  if p.name.endswith((".ir", ".ir.gz"))
                  and not (AS_PRINTED | OWN_PARSE_TEST) & set(p.relative_to(FIXTURES).parts))


def kept_record(dump) -> int:
    """1 where a rank folder of ``dump`` keeps MindSpore's own layout record, else 0: ``check``
    then adds one outcome (every weight against the record) to a spec's entries."""
    from msinspect.mindspore.records import is_record_file

    return int(any(is_record_file(f.name) for f in Path(dump).glob("rank_*/*")))


def dump_without(dump, copy: Path, pattern: str) -> Path:
    """A copy of ``dump`` at ``copy`` without its files that match ``pattern`` (a glob below the
    dump: ``rank_*/*validate*``), as a pass filter that left those passes out would have dumped
    it."""
    shutil.copytree(dump, copy)
    for path in copy.glob(pattern):
        path.unlink()
    return copy


def invoke(*args):
    """``msinspect ARGS`` run in this process by click's test runner, stderr kept apart from
    stdout (click 8.1 asks for it, 8.2 always does); each argument given as text. The process's
    environment is put back afterwards: the command sets variables for the processes it starts
    (``--no-cache`` sets MSINSPECT_NO_CACHE), which in a process of its own end with it, and here
    would reach every later test's processes (a Dask worker that caches nothing)."""
    from click.testing import CliRunner

    from msinspect.cli import main

    try:
        runner = CliRunner(mix_stderr=False)  # click 8.1
    except TypeError:  # click 8.2 keeps stderr apart by itself
        runner = CliRunner()
    with mock.patch.dict(os.environ):
        return runner.invoke(main, [str(a) for a in args])


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
