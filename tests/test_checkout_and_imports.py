"""The package runs from a checkout with only its dependencies installed, and importing it (or its
pytest plugin, which every pytest session of an environment with msinspect loads) imports none of
Lark, networkx and pandas."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import FIXTURES, ROOT

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
