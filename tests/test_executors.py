"""The one loop per-file work runs through (msinspect.executors.run_each), in this process and in
a local pool: every task's outcome comes once, msinspect's errors as values, bugs raised, and a
worker that dies becomes an error naming its file. (On a Dask cluster: tests/test_cluster.py.)"""
from __future__ import annotations

import os

import pytest

from msinspect.errors import IRParseError, MsInspectError
from msinspect.executors import SchedulerError, run_each, scheduler_address


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
    assert len(died) == 1 and isinstance(died[0], IRParseError)
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
