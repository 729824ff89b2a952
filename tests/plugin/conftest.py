"""The plugin tests need ``pytester`` and the msinspect plugin in the outer session.

Both are registered here, in ``pytest_configure``, rather than with ``pytest_plugins``: pytest
refuses ``pytest_plugins`` in a conftest below the rootdir when it is collected late (a plain
``pytest`` run from the repository root), and once the ``pytest11`` entry point is installed the
msinspect plugin is already loaded, so it is registered only when it is not.
"""
from __future__ import annotations

from msinspect import pytest_plugin


def pytest_configure(config):
    manager = config.pluginmanager
    manager.import_plugin("pytester")  # a no-op when -p pytester already loaded it
    if not manager.is_registered(pytest_plugin):
        manager.register(pytest_plugin, "msinspect")
