"""Expectation kinds: one module each (``strategy``, ``shape``, ``comm``, ``count``,
``no_redistribution``), registered in :data:`KINDS` by name.

To add a kind, add one module here with an :class:`~msinspect.expectations.base.ExpectationKind`
subclass decorated with ``@register`` and its ``assert_<...>`` helpers decorated with
``@assertion(Kind)``: the spec reader (:mod:`msinspect.spec`), the checker (:mod:`msinspect.check`),
:mod:`msinspect.testing` and ``DumpAssertions`` find it by itself.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Callable

from msinspect.expectations.base import KINDS, ExpectationKind, assertion, register

_NOT_KINDS = {"assertions", "base", "evidence", "values"}

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module not in _NOT_KINDS:
        importlib.import_module(f"{__name__}.{_module}")

#: Every assertion helper of every kind, by its name (``assert_strategy`` ...).
ASSERTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for kind in KINDS.values() for f in kind.assertions}

__all__ = ["ASSERTIONS", "KINDS", "ExpectationKind", "assertion", "register"]
