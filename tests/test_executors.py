"""The one loop per-file work runs through (msinspect.executors.run_each), in this process and in
a local pool: every task's outcome comes once, msinspect's errors as values, bugs raised, and a
worker that dies becomes an error naming its file. (On a Dask cluster: tests/test_cluster.py.)"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from msinspect.errors import MsInspectError, WorkerError
from msinspect.executors import SchedulerError, run_each, scheduler_address
from tests.conftest import FIXTURES, ROOT


def _square_or_refuse(path: str, n: int, *, scale: int = 1):
    if n < 0:
        raise MsInspectError(f"{path}: negative")
    if n == 13:
        os._exit(3)  # the worker process dies (as when killed or out of memory)
    return n * n * scale


def _bug(path: str, n: int):
    raise ZeroDivisionError("a bug")


TASKS = [(f"f{n}.ir", n) for n in (3, -1, 5, 0)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_outcome_once_with_errors_as_values(jobs):
    seen = {index: (task, outcome) for index, task, outcome in
            run_each(_square_or_refuse, TASKS, jobs=jobs, scheduler="", scale=2)}
    assert sorted(seen) == [0, 1, 2, 3]
    assert [seen[i][0] for i in range(4)] == TASKS
    assert [seen[i][1] for i in (0, 2, 3)] == [18, 50, 0]
    assert isinstance(seen[1][1], MsInspectError) and str(seen[1][1]) == "f-1.ir: negative"


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_bug_is_raised_not_returned(jobs):
    with pytest.raises(ZeroDivisionError):
        list(run_each(_bug, TASKS, jobs=jobs, scheduler=""))


def test_a_worker_that_dies_names_its_file():
    outcomes = list(run_each(_square_or_refuse, [("ok.ir", 2), ("dies.ir", 13)], jobs=2, scheduler=""))
    died = [outcome for _, task, outcome in outcomes if task[0] == "dies.ir"]
    assert len(died) == 1 and isinstance(died[0], WorkerError) and died[0].exit_code == 71
    assert died[0].path == "dies.ir" and "died while reading this file" in died[0].message


def test_the_scheduler_comes_from_the_option_else_the_environment(monkeypatch):
    monkeypatch.setenv("MSINSPECT_SCHEDULER", "tcp://env:8786")
    assert scheduler_address(None) == "tcp://env:8786"
    assert scheduler_address("tcp://given:1") == "tcp://given:1"
    assert scheduler_address("") is None  # an empty option runs locally, whatever the environment
    monkeypatch.setenv("MSINSPECT_SCHEDULER", " ")
    assert scheduler_address(None) is None


def test_without_dask_a_scheduler_says_how_to_install_it(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(SchedulerError, match=r"pip install 'msinspect\[cluster\]'"):
        list(run_each(_square_or_refuse, TASKS, scheduler="tcp://127.0.0.1:8786"))


def test_an_error_crosses_the_pool_bare_when_exception_chains_are_pickled(tmp_path):
    """A process that has used a Dask client pickles exceptions with their chains (tblib, which
    Dask installs, for every exception class defined by then): the parse error of a worker, raised while handling Lark's own exception, must
    still come back whole (file:line:col), not as a pool broken by an unpicklable Lark error."""
    pytest.importorskip("tblib")
    bad = tmp_path / "rank_0" / "bad.ir"
    bad.parent.mkdir()
    good = FIXTURES / "seed_002" / "step_parallel_begin_0041.excerpt.ir"
    bad.write_text(good.read_text(encoding="utf-8").replace("MatMul(", "MatMul(?", 1), encoding="utf-8")
    script = ("from msinspect.dumps import parse_many\n"
              "from msinspect.errors import IRParseError\n"
              "from tblib import pickling_support; pickling_support.install()  # as Dask does, after\n"
              f"try:\n    parse_many([{str(good)!r}, {str(bad)!r}], jobs=2)\n"
              "except IRParseError as e:\n    print(e.path, e.line, e.column)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "MSINSPECT_NO_CACHE": "1"}, timeout=120)
    assert done.returncode == 0, done.stderr
    path, line, column = done.stdout.split()
    want = next(i for i, text in enumerate(bad.read_text().splitlines(), 1) if "MatMul(?" in text)
    assert path == str(bad) and int(line) == want and int(column) > 0
