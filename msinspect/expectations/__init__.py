"""Expectation kinds: one module each (``strategy``, ``shape``, ``comm``, ``count``,
``no_redistribution``, ``layout``, ``inputs``, ``attrs``, ``feeds``, ``absent``), registered in
:data:`KINDS` by name.

To add a kind, add one module here with an :class:`~msinspect.expectations.base.ExpectationKind`
subclass decorated with ``@register``: the spec reader (:mod:`msinspect.spec`) and the checker
(:mod:`msinspect.check`) find it by itself. Its ``assert_<...>`` helpers go in
:mod:`msinspect.testing`, decorated with ``@assertion(Kind)``; ``DumpAssertions`` binds them.

This package imports neither the spec reader, the checker nor the helpers (they import it), and
importing it loads neither pandas nor the parser: reading a spec stays light.
"""
from __future__ import annotations

import importlib
import pkgutil

from msinspect.expectations.base import KINDS, ExpectationKind, assertion, register

_NOT_KINDS = {"base", "evidence", "values"}

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    if _module not in _NOT_KINDS:
        importlib.import_module(f"{__name__}.{_module}")

__all__ = ["KINDS", "ExpectationKind", "assertion", "register"]
