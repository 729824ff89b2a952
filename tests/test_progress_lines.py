"""A run of several test files says each file as it ends, how many are done and the time left
(tests/progress.py; issue 40, item 4). Run here on two small files of the suite, once alone and
once under pytest-xdist as ``make test`` runs them; what the lines must count is taken from
pytest's own ``--collect-only``, not from the lines."""
from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import ROOT

FILES = ["tests/test_ranks_text.py", "tests/test_stages.py"]
LINE = re.compile(r"^\[(\d+)/(\d+) files, (\d+)/(\d+) tests, [^\]]*\] (\S+) done in ")


def _pytest(*args: str) -> str:
    run = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def _collected() -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in _pytest("--collect-only", "-q", *FILES).splitlines():
        if "::" in line:
            counts[line.split("::")[0]] = counts.get(line.split("::")[0], 0) + 1
    return counts


def _lines(out: str) -> list[tuple[int, int, int, int, str]]:
    found = [m.groups() for m in map(LINE.match, out.splitlines()) if m]
    return [(int(a), int(b), int(c), int(d), f) for a, b, c, d, f in found]


def test_each_file_is_said_once_with_what_is_done():
    counts = _collected()
    total = sum(counts.values())
    lines = _lines(_pytest("-q", "-p", "no:cacheprovider", *FILES))
    assert [f for *_, f in lines] == FILES
    assert lines[0] == (1, 2, counts[FILES[0]], total, FILES[0])
    assert lines[1] == (2, 2, total, total, FILES[1])


def test_under_xdist_the_controller_says_it_once():
    counts = _collected()
    lines = _lines(_pytest("-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", *FILES))
    assert sorted(f for *_, f in lines) == sorted(FILES)  # once each, not once a worker
    assert lines[-1][:4] == (2, 2, sum(counts.values()), sum(counts.values()))
