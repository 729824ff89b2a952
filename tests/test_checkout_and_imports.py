"""The package runs from a checkout with only its dependencies installed, and importing it (or its
pytest plugin, which every pytest session of an environment with msinspect loads) imports none of
Lark, networkx and pandas; reading a spec neither. Modules that once imported each other (check,
spec and the expectation kinds; dumps and selection; collect and groups) import one way only
(tests/test_layers.py: no module imports one that imports it)."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import FIXTURES, ROOT
from tests.import_graph import import_graph, reached, within

# An installed msinspect (editable or not) is hidden: its finders and any site-packages copy
# are dropped, so only the checkout on sys.path can answer for 'msinspect'.
HIDE_INSTALLED = """
import sys
def installed(finder):
    module = getattr(finder, "__module__", None) or type(finder).__module__
    return "editable" in module.lower()
sys.meta_path[:] = [f for f in sys.meta_path if not installed(f)]
sys.path_hooks[:] = [h for h in sys.path_hooks if not installed(h)]
sys.path[:] = [p for p in sys.path if not p.endswith("site-packages") or not any(
    __import__("os").path.exists(__import__("os").path.join(p, n)) for n in ("msinspect", "msinspect.py"))]
sys.path_importer_cache.clear()
sys.path.insert(0, sys.argv.pop(1))
"""


def run(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", HIDE_INSTALLED + code, str(ROOT), *args],
                          capture_output=True, text=True, timeout=300)


def test_parse_runs_from_a_checkout():
    done = run("import runpy; sys.argv[0] = 'msinspect'; runpy.run_module('msinspect', run_name='__main__')",
               "parse", str(FIXTURES / "seed_002"), "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert sorted(r["stage"] for r in rows) == ["execute", "step_parallel_begin"]
    located = run("import msinspect, msinspect.grammars; print(msinspect.__file__); print(list(msinspect.grammars.__path__)[0])")
    package, grammars = located.stdout.split()
    assert package.startswith(str(ROOT)) and grammars.startswith(str(ROOT))


def test_importing_the_package_and_its_pytest_plugin_stays_light():
    done = run("import msinspect, msinspect.pytest_plugin; "
               "print(sorted(m for m in ('lark', 'networkx', 'pandas') if m in sys.modules))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    used = run("import msinspect; msinspect.parse_file; print('lark' in sys.modules)")
    assert used.stdout.strip() == "True"


def test_mindspores_facts_stand_alone():
    """``msinspect.mindspore`` is MindSpore's facts with no pandas and no parser: importing every
    module of it loads neither (nor Lark or networkx), nor any analysis."""
    modules = sorted(p.stem for p in (ROOT / "msinspect" / "mindspore").glob("*.py") if p.stem != "__init__")
    assert {"vocabulary", "layouts", "comm_groups", "records"} <= set(modules)
    done = run(f"import importlib; [importlib.import_module('msinspect.mindspore.' + m) for m in {modules!r}]; "
               "print(sorted(m for m in sys.modules if m in ('lark', 'networkx', 'pandas') "
               "or m.startswith(('msinspect.parser', 'msinspect.analysis'))))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_command_list_and_an_error_stay_light():
    """``msinspect --help`` lists every command (importing each) and a command's error is handled
    (its table of errors names the render errors): neither loads Lark, networkx, pandas or graphviz."""
    code = ("import runpy; sys.argv[0] = 'msinspect'\n"
            "try:\n    runpy.run_module('msinspect', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print('loaded:', sorted(m for m in ('lark', 'networkx', 'pandas', 'graphviz') if m in sys.modules))")
    listed = run(code, "--help")
    assert "summary" in listed.stdout and "render" in listed.stdout, listed.stderr
    assert listed.stdout.rsplit("loaded:", 1)[1].strip() == "[]"
    failed = run(code, "summary", str(FIXTURES / "no_such_dump"))
    assert "error:" in failed.stderr
    assert failed.stdout.rsplit("loaded:", 1)[1].strip() == "[]"


EVERY_KIND = """
[job]
ranks = 8
[[expect.strategy]]
op = "matmul"
in_strategy = [[2, 4], [4, 1]]
[[expect.shape]]
op = "matmul"
inputs = [[8, 8], [8, 16]]
[[expect.comm]]
kind = "AllReduce"
after = "matmul"
groups = [[0, 1, 2, 3], [4, 5, 6, 7]]
[[expect.count]]
kind = "Send"
ranks = [0, 1]
min = 4
[[expect.no_redistribution]]
between = ["relu", "matmul2"]
"""


def test_reading_a_spec_loads_neither_pandas_nor_lark(tmp_path):
    """A spec with an entry of every kind is read and validated by the kinds' own code, which the
    checker and the pytest helpers import, never the reverse."""
    spec = tmp_path / "every_kind.toml"
    spec.write_text(EVERY_KIND)
    done = run("import msinspect.spec as spec; read = spec.load_spec(sys.argv[1]); "
               "print(sorted(e.kind for e in read.expectations), sorted(m for m in ("
               "'lark', 'networkx', 'pandas', 'msinspect.parser', 'msinspect.check', 'msinspect.testing') "
               "if m in sys.modules))", str(spec))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['comm', 'count', 'no_redistribution', 'shape', 'strategy'] []"


KNOTS = [("msinspect.check", "msinspect.expectations"), ("msinspect.spec", "msinspect.expectations"),
         ("msinspect.check", "msinspect.spec"), ("msinspect.dumps", "msinspect.selection"),
         ("msinspect.analysis.job.collect", "msinspect.analysis.job.rank_groups")]


def test_the_knots_are_cut():
    """At run time, in a function or not, each pair imports one way; the expectation kinds reach
    neither the spec reader nor the checker by any path, even for their type hints; the dump reaches
    no selection and, of the analyses, only what matches an operator by name (``RankDump.node``:
    node_facts and the element sizes it reads); collect reaches groups by no path, even for its
    type hints."""
    runtime, typed = import_graph(), import_graph(typed=True)
    for a, b in KNOTS:
        a_imports_b = any(within(n, b) for m in runtime if within(m, a) for n in runtime.successors(m))
        b_imports_a = any(within(n, a) for m in runtime if within(m, b) for n in runtime.successors(m))
        assert not (a_imports_b and b_imports_a), (a, b)
    kinds = reached(typed, "msinspect.expectations")
    assert not {"msinspect.check", "msinspect.spec", "msinspect.testing"} & kinds
    assert "msinspect.check" not in reached(typed, "msinspect.spec")
    dump = reached(typed, "msinspect.dumps")
    assert "msinspect.selection" not in dump
    assert {m for m in dump if within(m, "msinspect.analysis")} == {"msinspect.analysis.dataflow.node_facts"}
    assert {m for m in dump if within(m, "msinspect.mindspore")} == {"msinspect.mindspore.dtypes"}
    assert not any(within(m, "msinspect.analysis.job.rank_groups") for m in reached(typed, "msinspect.analysis.job.collect"))
    signature = set(runtime.predecessors("msinspect.analysis.rank.signature"))
    assert {"msinspect.analysis.job.collect", "msinspect.analysis.job.rank_groups"} <= signature
