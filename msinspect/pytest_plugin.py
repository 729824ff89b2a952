"""The pytest plugin (entry point ``pytest11: msinspect``): fixtures for dump folders and the
assertion helpers of :mod:`msinspect.testing`.

Options: ``--msinspect-dumps PATH`` on the command line (relative to where pytest was started), or
``msinspect_dumps = PATH`` in the ini file (relative to it), names the dump root the
``msinspect_dump`` fixture loads. A test that needs it when neither is given fails, saying what to
pass; ``--msinspect-skip-missing`` or ``msinspect_skip_missing = true`` skips such tests instead.
``--msinspect-dumps PATH`` with a space would make pytest take PATH for a test path when it picks
its rootdir and ini file: :mod:`msinspect.pytest_setup` puts that right.

Fixtures:

``msinspect_dump``
    The configured dump (session-scoped, loaded once).
``load_msinspect_dump``
    ``load_msinspect_dump(path)`` loads another dump, once per path for the whole session; a
    relative path is taken from pytest's rootdir.
``msinspect_assert``
    The helpers bound to ``msinspect_dump``: ``msinspect_assert.strategy("matmul", ((2, 4), (4, 1)))``;
    ``msinspect_assert.spec("specs/job.toml")`` reads a relative spec path from pytest's rootdir.

Paths written in tests are taken from the rootdir (the ini file's folder, as a rule) so that a test
reads the same files wherever pytest is started from.

Without the entry point installed, load it with ``-p msinspect.pytest_plugin``. The module holds
no ``assert``; PYTEST_DONT_REWRITE spares it pytest's "already imported" rewrite warning.

Every pytest session of an environment where msinspect is installed loads this module, so it
imports nothing heavy (Lark, networkx, pandas) until a fixture is used.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

if TYPE_CHECKING:
    from msinspect.dumps import Dump
    from msinspect.testing import DumpAssertions

OPTION = "msinspect_dumps"
SKIP_OPTION = "msinspect_skip_missing"
_CACHE = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("msinspect", "MindSpore IR dumps (msinspect)")
    group.addoption("--msinspect-dumps", dest=OPTION, metavar="PATH", default=None,
                    help="dump root (rank_N/ folders of .ir files) for the msinspect_dump fixture")
    group.addoption("--msinspect-skip-missing", dest=SKIP_OPTION, action="store_true", default=None,
                    help="skip tests that use msinspect_dump when no dump is configured (default: they fail)")
    parser.addini(OPTION, "dump root for the msinspect_dump fixture, relative to the ini file", default="")
    parser.addini(SKIP_OPTION, "skip tests that use msinspect_dump when no dump is configured "
                  "(default: they fail)", type="bool", default=False)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, args: list[str]) -> None:
    from msinspect.pytest_setup import repair

    repair(early_config, args)


def configured_dump_path(config: pytest.Config) -> Path | None:
    """The dump root named on the command line (relative to where pytest was started) or in the
    ini file (relative to that file); None when neither names one."""
    # getoption with a default: the option is absent when the plugin was registered after parsing.
    given = config.getoption(OPTION, None)
    if given:
        return Path(config.invocation_params.dir, given)
    ini = config.getini(OPTION)
    if ini:
        base = config.inipath.parent if config.inipath else config.rootpath
        return Path(base, ini)
    return None


def skip_missing(config: pytest.Config) -> bool:
    """Whether tests that need the dump are skipped, rather than failed, when none is configured."""
    given = config.getoption(SKIP_OPTION, None)
    return bool(given) or bool(config.getini(SKIP_OPTION))


def missing_dump_message(config: pytest.Config) -> str:
    ini = f"in {config.inipath}" if config.inipath else f"in an ini file (pytest.ini) in {config.rootpath}"
    return (f"no msinspect dump configured: pass --msinspect-dumps=PATH (a folder of .ir files, or of "
            f"rank_N/ folders of them) or set msinspect_dumps = PATH {ini}; to skip the tests that need "
            f"a dump instead, pass --msinspect-skip-missing or set msinspect_skip_missing = true")


def pytest_report_header(config: pytest.Config) -> str | None:
    path = configured_dump_path(config)
    return f"msinspect dumps: {path}" if path else None


@pytest.fixture(scope="session")
def load_msinspect_dump(pytestconfig: pytest.Config) -> Callable[[str | os.PathLike], Dump]:
    """``load_msinspect_dump(path)``: the dump under ``path`` (relative to pytest's rootdir),
    loaded once per session so each stage is analysed once."""
    cache = pytestconfig.stash.setdefault(_CACHE, {})

    def load(path: str | os.PathLike) -> Dump:
        from msinspect.dumps import load_dump

        key = Path(pytestconfig.rootpath, path).resolve()
        if key not in cache:
            cache[key] = load_dump(key)
        return cache[key]

    return load


@pytest.fixture(scope="session")
def msinspect_dump(pytestconfig: pytest.Config, load_msinspect_dump) -> Dump:
    """The dump named by ``--msinspect-dumps`` / ini ``msinspect_dumps``; when neither names one
    the test fails (or is skipped, with ``--msinspect-skip-missing``) saying what to pass."""
    path = configured_dump_path(pytestconfig)
    if path is None:
        if skip_missing(pytestconfig):
            pytest.skip(missing_dump_message(pytestconfig))
        pytest.fail(missing_dump_message(pytestconfig), pytrace=False)
    from msinspect.errors import MsInspectError

    try:
        return load_msinspect_dump(path)
    except MsInspectError as exc:
        pytest.fail(f"--msinspect-dumps / msinspect_dumps: {exc}", pytrace=False)


@pytest.fixture
def msinspect_assert(msinspect_dump: Dump, pytestconfig: pytest.Config) -> DumpAssertions:
    """The :mod:`msinspect.testing` helpers bound to ``msinspect_dump``; relative spec paths are
    read from pytest's rootdir."""
    from msinspect.testing import DumpAssertions

    return DumpAssertions(msinspect_dump, root=pytestconfig.rootpath)
