"""The plugin inside a real pytest run (``pytester``): options, fixtures and what a failure looks
like in pytest's output. Inner runs load the plugin through the ``pytest11`` entry point when it is
installed, else with ``-p msinspect.pytest_plugin``."""
from __future__ import annotations

import shutil

import pytest
from plugin_helpers import PLUGIN_MODULE, SEED, entry_point_installed, plugin_args


def literal(text: str) -> str:
    """``text`` as an fnmatch pattern that matches it literally ("[" opens a character class)."""
    return text.replace("[", "[[]")

SEED_TESTS = '''
from msinspect.testing import assert_comm_after, assert_strategy

def test_matmul_as_the_seed_sets_it(msinspect_dump):
    assert_strategy(msinspect_dump, "matmul", ((2, 4), (4, 1)), set_by="user")
    assert_comm_after(msinspect_dump, "AllReduce", "matmul", [[0, 1, 2, 3]])

def test_matmul_wrong_strategy(msinspect_dump):
    assert_strategy(msinspect_dump, "matmul", ((4, 2), (2, 1)))
'''


def test_one_pass_and_one_readable_failure(pytester):
    pytester.makepyfile(test_seed=SEED_TESTS)
    result = pytester.runpytest(*plugin_args(), f"--msinspect-dumps={SEED}")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        f"msinspect dumps: {SEED}",
        "*_ test_matmul_wrong_strategy _*",
        '>*assert_strategy(msinspect_dump, "matmul", ((4, 2), (2, 1)))',
        f"E*msinspect: strategy matmul does not hold in {SEED}",
        "E*expected: ((4, 2), (2, 1))",
        "E*found:    ((2, 4), (4, 1)), set by user*",
        "E*IR:",
        f"E*{SEED}/18_execute_0185.excerpt.ir:1: %12(equivout) = MatMul(%10, %11) {{instance name: matmul}}*",
    ])
    # the helpers hide their own frames: the traceback ends at the test's line
    assert "msinspect/check.py" not in result.stdout.str()


# no msinspect import: collecting it stays quick (no pandas)
NEEDS_DUMP = '''
def test_needs_the_dump(msinspect_dump):
    pass

def test_needs_the_helpers(msinspect_assert):
    pass
'''


def test_unconfigured_dump_fails_saying_what_to_pass(pytester):
    pytester.makepyfile(test_seed=NEEDS_DUMP)
    result = pytester.runpytest(*plugin_args())
    # a CI job that forgot the dump must not pass while testing nothing
    result.assert_outcomes(errors=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*ERROR at setup of test_needs_the_helpers*",
        f"no msinspect dump configured: pass --msinspect-dumps=PATH * or set msinspect_dumps = PATH "
        f"in an ini file (pytest.ini) in {pytester.path}; to skip the tests that need a dump instead, "
        f"pass --msinspect-skip-missing or set msinspect_skip_missing = true",
    ])


@pytest.mark.parametrize("opt_in", ["option", "ini"])
def test_skipping_a_missing_dump_is_opted_into(pytester, opt_in):
    pytester.makepyfile(test_seed=NEEDS_DUMP + "\ndef test_without_dump():\n    pass\n")
    if opt_in == "ini":
        pytester.makeini("[pytest]\nmsinspect_skip_missing = true\n")
    result = pytester.runpytest(*plugin_args(), "-rs", *(["--msinspect-skip-missing"] if opt_in == "option" else []))
    result.assert_outcomes(skipped=2, passed=1)
    result.stdout.fnmatch_lines(["SKIPPED *no msinspect dump configured: pass --msinspect-dumps=PATH*"])


def test_missing_dump_is_an_error(pytester):
    pytester.makepyfile(test_seed=SEED_TESTS)
    result = pytester.runpytest(*plugin_args(), "--msinspect-dumps=no_such_dump")
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*--msinspect-dumps / msinspect_dumps: *no_such_dump: no such file or folder*"])


def test_ini_path_is_relative_to_the_ini_file(pytester, monkeypatch):
    shutil.copytree(SEED, pytester.path / "dumps" / "seed")
    pytester.makeini("[pytest]\nmsinspect_dumps = dumps/seed\n")
    tests = pytester.mkdir("checks")
    (tests / "test_bound.py").write_text('''
def test_bound_helpers(msinspect_assert):
    msinspect_assert.strategy("matmul", ((2, 4), (4, 1)), set_by="user")
    msinspect_assert.comm_after("AllReduce", "matmul", [[0, 1, 2, 3]])

def test_bound_failure(msinspect_assert):
    msinspect_assert.comm_after("AllReduce", "matmul", [[0, 1]])
''', encoding="utf-8")
    monkeypatch.chdir(tests)  # "dumps/seed" does not exist from here: only the ini's folder resolves it
    result = pytester.runpytest(*plugin_args(), "test_bound.py")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        literal("E*expected: AllReduce after matmul in group(s) [(0, 1)]"),
        literal("E*found:    1 AllReduce * in group(s) [(0, 1, 2, 3)]"),
        literal("E*dumps/seed/18_execute_0185.excerpt.ir:7: %13(equiv[CNode]520) = AllReduce(%12)*"),
    ])


def test_help_lists_the_option(pytester):
    result = pytester.runpytest(*plugin_args(), "--help")
    result.stdout.fnmatch_lines(["*--msinspect-dumps=PATH*", "*--msinspect-skip-missing*",
                                 "*msinspect_dumps (string):*", "*msinspect_skip_missing (bool):*"])


def test_entry_point_loads_the_plugin(pytester):
    if not entry_point_installed():
        pytest.skip(f"no pytest11 entry point for {PLUGIN_MODULE} installed (setup.cfg, then pip install -e .)")
    pytester.makepyfile(test_seed=SEED_TESTS)
    result = pytester.runpytest(f"--msinspect-dumps={SEED}")  # no -p: the entry point alone
    result.assert_outcomes(passed=1, failed=1)
