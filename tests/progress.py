"""A line per test file as it ends, for runs of several files (``make test``): which file ended,
how long it took, how many files and tests are done, what is still running and about how long is
left. Ten minutes of dots said neither what runs nor how long it would take (issue 40, item 4).

Registered by ``tests/conftest.py`` in the process that reports (under pytest-xdist the
controller, which receives every worker's reports; never in a worker). The time left is the
time so far scaled by the tests left over the tests done: a guess, said as ``about``, and not
before a tenth of the tests are done."""
from __future__ import annotations

import time
from collections import Counter

import pytest

#: Share of the tests done before a time left is guessed.
GUESS_AFTER = 0.1


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


class FileProgress:
    """Counts each file's tests as they are collected, and says so when a file's last ends."""

    def __init__(self, config) -> None:
        self.config = config
        self.left: Counter[str] = Counter()
        self.total = 0
        self.done = 0
        self.files_done = 0
        self.started: dict[str, float] = {}
        self.start = time.monotonic()

    def expect(self, nodeids) -> None:
        if self.total:  # each xdist worker collects the same tests: the first is enough
            return
        for nodeid in nodeids:
            self.left[_file(nodeid)] += 1
        self.total = sum(self.left.values())

    def pytest_collection_finish(self, session) -> None:
        self.expect(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        self.expect(ids)

    def pytest_runtest_logstart(self, nodeid, location) -> None:
        self.started.setdefault(_file(nodeid), time.monotonic())

    def pytest_runtest_logreport(self, report) -> None:
        if report.when != "teardown" or len(self.left) < 2:  # one file: pytest's own line says it
            return
        name = _file(report.nodeid)
        if self.left[name] <= 0:
            return
        self.done += 1
        self.left[name] -= 1
        if self.left[name]:
            return
        self.files_done += 1
        now = time.monotonic()
        took = now - self.started.pop(name, now)
        text = (f"[{self.files_done}/{len(self.left)} files, {self.done}/{self.total} tests, "
                f"{_duration(now - self.start)}{self.left_text(now)}] {name} done in {_duration(took)}")
        running = [f for f in self.started if self.left[f]]
        if running:
            text += f"; running: {', '.join(running)}"
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:  # -p no:terminal
            return
        reporter.ensure_newline()  # after a file's dots
        if getattr(getattr(reporter, "_tw", None), "width_of_current_line", 0):  # after -q's dots
            reporter.write("\n")
        reporter.write_line(text)

    def left_text(self, now: float) -> str:
        if self.done >= self.total:
            return ""
        if self.done < GUESS_AFTER * self.total:
            return ", time left: guessed after a tenth of the tests"
        return f", about {_duration((now - self.start) * (self.total - self.done) / self.done)} left"


def register(config) -> None:
    """Add :class:`FileProgress` where reports are printed: not in an xdist worker."""
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(FileProgress(config), "msinspect-file-progress")
