"""Layers: finding a dump's files (dumps, selection, ranks_read) imports no analysis and no parser;
the analyses import the dump, not the reverse; and no module of msinspect imports, at import time
or at run time, one that imports it."""
from __future__ import annotations

import itertools
import shutil
import subprocess
import sys

import networkx as nx
import pytest

from tests.conftest import ROOT
from tests.import_graph import import_graph

PROBE = """
import sys
import msinspect.dumps, msinspect.selection, msinspect.ranks_read, msinspect.cache
dump = msinspect.dumps.load_dump("fixtures/sharding_propagation_dryrun_8rank")
msinspect.ranks_read.plan_reads(dump)
print(sorted(m for m in sys.modules if m.startswith(("msinspect.analysis", "msinspect.parser", "lark", "pandas", "networkx"))))
"""


def test_finding_files_imports_no_analysis_and_no_parser():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


#: Cycles among msinspect's modules that stay for now, each (from its least module, in import
#: order) with why; one that is gone must leave the list. None stays today.
ALLOWED_CYCLES: dict[tuple[str, ...], str] = {}


def _canonical(cycle: list[str]) -> tuple[str, ...]:
    """The cycle from its least module, so each is listed once however it was found."""
    start = cycle.index(min(cycle))
    return tuple(cycle[start:] + cycle[:start])


def _shown(graph, cycle: tuple[str, ...]) -> str:
    """``msinspect.dumps:229 -> msinspect.analysis.job.collect:32 -> msinspect.dumps``: each module
    with the line of its import of the next."""
    steps = zip(cycle, cycle[1:] + cycle[:1])
    return " -> ".join(f"{a}:{graph.edges[a, b]['line']}" for a, b in steps) + f" -> {cycle[0]}"


def cycles(graph, most: int = 50) -> dict[tuple[str, ...], str]:
    """Up to ``most`` cycles of ``graph``, each shown with its lines."""
    found = (_canonical(c) for c in nx.simple_cycles(graph))
    return {c: _shown(graph, c) for c in itertools.islice(found, most)}


def test_no_module_imports_one_that_imports_it():
    """msinspect's modules import one way: no module imports, directly or through others, one that
    imports it, counting every import of the source (tests/import_graph.py): at import time, in a
    function (run time), for type checkers, through a lazy table or ``import_module``. (The
    expectation kinds once typed against the checker and the spec reader that import them, and
    ``Dump.analyse`` imported the analysis that imports the dump.)"""
    graph = import_graph(typed=True)
    found = cycles(graph)
    unexpected = [shown for cycle, shown in found.items() if cycle not in ALLOWED_CYCLES]
    assert not unexpected, "import cycles:\n" + "\n".join(unexpected)
    assert not ALLOWED_CYCLES.keys() - found.keys(), "allowed cycles that are gone: drop them from ALLOWED_CYCLES"


#: Imports the package once had, each appended to a copy: the module, the code, and the modules
#: of the cycle it closes (the line of the planted import is the code's second).
PLANTED = {
    "in a function (Dump.analyse)": (
        "dumps", "def _analyse(dump):\n    from msinspect.analysis import analyse\n",
        ("msinspect.analysis.job.collect", "msinspect.dumps")),
    "for type checkers (the kinds' Checker)": (
        "expectations/base", "if TYPE_CHECKING:\n    from msinspect.check import Checker\n",
        ("msinspect.check", "msinspect.expectations.base")),
}


@pytest.mark.parametrize("planted", PLANTED)
def test_a_planted_cycle_is_found(tmp_path, planted):
    """The reader sees an import inside a function and one for type checkers: a copy of the package
    with either import it once had has the cycle, named with the line of the planted import."""
    module, code, cycle = PLANTED[planted]
    shutil.copytree(ROOT / "msinspect", tmp_path / "msinspect", ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "msinspect" / f"{module}.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "\n\n" + code, encoding="utf-8")
    line = text.count("\n") + 4
    found = cycles(import_graph(typed=True, root=tmp_path))
    assert any(c[0] == cycle[0] and cycle[1] in c and f"{cycle[1]}:{line} -> " in shown
               for c, shown in found.items()), found
