"""Where the plugin's paths lead, in real pytest runs (``pytester``): ``--msinspect-dumps PATH``
written with a space leaves pytest's rootdir and ini file where they belong, and paths written in
tests (spec files, ``load_msinspect_dump``) are read from the rootdir wherever pytest is started.

The project's ini file says something a run can only pass with: ``--strict-markers`` and the marker
``seed`` the test uses. The facts checked on the dump are the seed document's (matmul split
((2, 4), (4, 1)) by the user, AllReduce over ranks 0-3 after it), as in test_plugin_helpers.py.
"""
from __future__ import annotations

import shutil

import pytest
from plugin_helpers import PLUGIN_MODULE, SEED, entry_point_installed, plugin_args

#: would deselect every test, and does not know the marker
OTHER_INI = "[pytest]\naddopts = -k no_such_test\nmarkers =\n    other: x\n"
PROJECT_INI = "[pytest]\naddopts = --strict-markers\nmarkers =\n    seed: checks of the seed dump\n"

ROOT_TESTS = '''
import pytest
from msinspect.testing import assert_strategy

@pytest.mark.seed
def test_seed_from_the_project(pytestconfig, msinspect_dump):
    print("ROOTDIR", pytestconfig.rootpath, "INIFILE", pytestconfig.inipath)
    assert pytestconfig.inipath == pytestconfig.rootpath / "pytest.ini"
    assert_strategy(msinspect_dump, "matmul", ((2, 4), (4, 1)), set_by="user")
'''


def load(how: str, monkeypatch) -> list[str]:
    """The arguments that load the plugin ``how``: by its entry point alone, or by ``-p`` with
    entry points off."""
    if how == "entry point":
        if not entry_point_installed():
            pytest.skip(f"no pytest11 entry point for {PLUGIN_MODULE} installed")
        return []
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return ["-p", PLUGIN_MODULE]


@pytest.fixture
def project(pytester, monkeypatch):
    """``project/`` (its pytest.ini, its tests; pytest is started there) beside ``runs/seed``."""
    project = pytester.mkdir("project")
    (project / "pytest.ini").write_text(PROJECT_INI, encoding="utf-8")
    (project / "test_root.py").write_text(ROOT_TESTS, encoding="utf-8")
    shutil.copytree(SEED, pytester.path / "runs" / "seed")
    monkeypatch.chdir(project)
    return project


@pytest.mark.parametrize(("how", "dump_folder_ini"), [("entry point", None), ("-p", "tox.ini")])
def test_dumps_option_with_a_space_keeps_the_projects_ini(pytester, project, monkeypatch, how, dump_folder_ini):
    if dump_folder_ini:  # an ini file above the dump that is not the project's: its addopts must go too
        (pytester.path / "runs" / dump_folder_ini).write_text(OTHER_INI, encoding="utf-8")
    result = pytester.runpytest(*load(how, monkeypatch), "--msinspect-dumps", "../runs/seed", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"msinspect dumps: {project}/../runs/seed",
                                 f"rootdir: {project}", "configfile: pytest.ini",
                                 f"*ROOTDIR {project} INIFILE {project / 'pytest.ini'}"])


def test_dumps_option_with_a_space_and_a_test_path(pytester, project):
    # pytest looks for an ini file above each path given, the dump's first
    (pytester.path / "runs" / "tox.ini").write_text(OTHER_INI, encoding="utf-8")
    sub = project / "checks"
    sub.mkdir()
    (project / "test_root.py").rename(sub / "test_root.py")
    result = pytester.runpytest(*plugin_args(), "--msinspect-dumps", "../runs/seed", "checks/test_root.py", "-s")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([f"*ROOTDIR {project} INIFILE {project / 'pytest.ini'}"])


def test_an_ini_above_the_dump_that_acted_is_refused_clearly(pytester, project):
    # pytest has put this file's pythonpath on sys.path before any plugin is loaded: that cannot be undone
    (pytester.path / "runs" / "pytest.ini").write_text("[pytest]\npythonpath = seed\n", encoding="utf-8")
    result = pytester.runpytest(*plugin_args(), "--msinspect-dumps", "../runs/seed")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        f"ERROR: --msinspect-dumps ../runs/seed: pytest read ../runs/seed as a test path when it chose its "
        f"rootdir and ini file * so it took {pytester.path / 'runs' / 'pytest.ini'}; that file set pythonpath, "
        f"which pytest has acted on. Write --msinspect-dumps=../runs/seed (with '='), or set msinspect_dumps "
        f"in the ini file."])
    # with '=' the same run is right
    result = pytester.runpytest(*plugin_args(), "--msinspect-dumps=../runs/seed")
    result.assert_outcomes(passed=1)


SPEC = """
[[expect.strategy]]
op = "matmul"
in_strategy = [[2, 4], [4, 1]]
source = "user"

[[expect.comm]]
kind = "AllReduce"
after = "matmul"
groups = [[0, 1, 2, 3]]
"""

NESTED_TESTS = '''
def test_spec_from_the_rootdir(msinspect_assert):
    report = msinspect_assert.spec("specs/seed.toml")
    assert len(report.outcomes) == 2

def test_dump_from_the_rootdir(load_msinspect_dump, msinspect_dump):
    assert load_msinspect_dump("dumps/seed") is msinspect_dump
'''


def test_paths_in_tests_are_read_from_the_rootdir(pytester, monkeypatch):
    pytester.makeini("[pytest]\nmsinspect_dumps = dumps/seed\n")
    shutil.copytree(SEED, pytester.path / "dumps" / "seed")
    (pytester.mkdir("specs") / "seed.toml").write_text(SPEC, encoding="utf-8")
    tests = pytester.mkdir("checks")
    (tests / "test_nested.py").write_text(NESTED_TESTS, encoding="utf-8")
    monkeypatch.chdir(tests)  # neither specs/ nor dumps/ is below the folder pytest starts in
    result = pytester.runpytest(*plugin_args(), "test_nested.py")
    result.assert_outcomes(passed=2)
