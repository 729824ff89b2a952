"""The pytest plugin (entry point ``pytest11: msinspect``): fixtures for dump folders and the
assertion helpers of :mod:`msinspect.testing`.

Options: ``--msinspect-dumps PATH`` on the command line, or ``msinspect_dumps = PATH`` in the ini
file (relative to it), names the dump root the ``msinspect_dump`` fixture loads.

Fixtures:

``msinspect_dump``
    The configured dump (session-scoped, loaded once); the test is skipped when none is configured.
``load_msinspect_dump``
    ``load_msinspect_dump(path)`` loads another dump, once per path for the whole session.
``msinspect_assert``
    The helpers bound to ``msinspect_dump``: ``msinspect_assert.strategy("matmul", ((2, 4), (4, 1)))``.

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
_CACHE = pytest.StashKey[dict]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("msinspect", "MindSpore IR dumps (msinspect)")
    group.addoption("--msinspect-dumps", dest=OPTION, metavar="PATH", default=None,
                    help="dump root (rank_N/ folders of .ir files) for the msinspect_dump fixture")
    parser.addini(OPTION, "dump root for the msinspect_dump fixture, relative to the ini file", default="")


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


def pytest_report_header(config: pytest.Config) -> str | None:
    path = configured_dump_path(config)
    return f"msinspect dumps: {path}" if path else None


@pytest.fixture(scope="session")
def load_msinspect_dump(pytestconfig: pytest.Config) -> Callable[[str | os.PathLike], Dump]:
    """``load_msinspect_dump(path)``: the dump under ``path`` (relative to where pytest was
    started), loaded once per session so each stage is analysed once."""
    cache = pytestconfig.stash.setdefault(_CACHE, {})

    def load(path: str | os.PathLike) -> Dump:
        from msinspect.dumps import load_dump

        key = Path(pytestconfig.invocation_params.dir, path).resolve()
        if key not in cache:
            cache[key] = load_dump(key)
        return cache[key]

    return load


@pytest.fixture(scope="session")
def msinspect_dump(pytestconfig: pytest.Config, load_msinspect_dump) -> Dump:
    """The dump named by ``--msinspect-dumps`` / ini ``msinspect_dumps``; skips when unset."""
    path = configured_dump_path(pytestconfig)
    if path is None:
        pytest.skip("no msinspect dump configured: pass --msinspect-dumps PATH or set msinspect_dumps in the ini file")
    from msinspect.errors import MsInspectError

    try:
        return load_msinspect_dump(path)
    except MsInspectError as exc:
        pytest.fail(f"--msinspect-dumps / msinspect_dumps: {exc}", pytrace=False)


@pytest.fixture
def msinspect_assert(msinspect_dump: Dump) -> DumpAssertions:
    """The :mod:`msinspect.testing` helpers bound to ``msinspect_dump``."""
    from msinspect.testing import DumpAssertions

    return DumpAssertions(msinspect_dump)
