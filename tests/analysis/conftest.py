"""Fixtures of the analysis tests: dump roots loaded once per session."""
from __future__ import annotations

import pytest

import msinspect

from tests.conftest import FIXTURES


@pytest.fixture(scope="session")
def sharding():
    return msinspect.load_dump(FIXTURES / "sharding_propagation_dryrun_8rank")


@pytest.fixture(scope="session")
def pipeline():
    return msinspect.load_dump(FIXTURES / "recursive_pipeline_dryrun_8rank")


@pytest.fixture(scope="session")
def manual():
    return msinspect.load_dump(FIXTURES / "manual_parallel_8rank")
