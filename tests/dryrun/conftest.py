"""Fixtures for the compile-only dry-run tests.

Every test here carries the ``dryrun`` marker (``pytest -m dryrun`` / ``-m "not dryrun"``).
Tests that run MindSpore skip with the reason when the ``dryrun`` extra is not installed;
they prepare their own dry-run CUDA_HOME in a temporary folder (never the user's cache).
Seed 002's network is dry-run once per session on 8 ranks and shared by all assertions.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dryrun_helpers import RANKS, SEED002, SEED002_RANKS


def pytest_configure(config):
    config.addinivalue_line("markers", "dryrun: compile-only dry-run tests (need the msinspect[dryrun] extra to run)")


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.dryrun)


def _why_not_runnable() -> str | None:
    if importlib.util.find_spec("mindspore") is None:
        return 'MindSpore is not installed (pip install "msinspect[dryrun]")'
    from msinspect.dryrun import check_prerequisites

    problems = check_prerequisites(need_compiler=True)
    if problems:
        return "dry-run environment cannot be prepared: " + "; ".join(p.what for p in problems)
    return None


@pytest.fixture(scope="session")
def dryrun_env(tmp_path_factory):
    """A dry-run environment prepared in a temporary CUDA_HOME (skips when impossible)."""
    reason = _why_not_runnable()
    if reason:
        pytest.skip(reason)
    from msinspect.dryrun import default_cuda_home, detect_real_accelerator, setup_environment

    accel = detect_real_accelerator()
    if accel:
        pytest.skip(f"a real accelerator is present ({accel}); msrun is the tool there")
    xdg = tmp_path_factory.mktemp("xdg-cache")
    return setup_environment(default_cuda_home(cache=xdg)).environment


@pytest.fixture()
def dryrun_xdg(dryrun_env, monkeypatch):
    """Point XDG_CACHE_HOME at the session's prepared environment (for the CLI, which uses the default)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(dryrun_env.cuda_home.parents[2]))
    return dryrun_env


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("dryrun-runs")


@pytest.fixture(scope="session")
def seed002_report(dryrun_env, runs_root):
    from msinspect.dryrun import run_dryrun

    return run_dryrun(SEED002, RANKS, only=list(SEED002_RANKS), out_root=runs_root, jobs=2, environment=dryrun_env,
                      timeout=300)
