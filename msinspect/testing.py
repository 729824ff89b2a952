"""Assertion helpers for tests of a parallel job's IR dump.

Each helper states one expectation of the spec format (:mod:`msinspect.spec`) in Python, checks
it with :class:`msinspect.check.Checker` (the same code as ``msinspect check``), and raises
:class:`ExpectationFailed` (an :class:`AssertionError`) when the dump does not show it. The message
says what was expected, what was found, and the IR lines (``file:line: text``) that show it::

    from msinspect.testing import assert_comm_after, assert_strategy

    def test_matmul_is_split_as_asked():
        dump = msinspect.load_dump("dumps/")
        assert_strategy(dump, "matmul", ((2, 4), (4, 1)), source="user")
        assert_comm_after(dump, "AllReduce", "matmul", groups=[[0, 1, 2, 3], [4, 5, 6, 7]])

Every helper takes a :class:`~msinspect.dumps.Dump` or a path (loaded each call: pass a Dump, or
use the pytest plugin's fixtures, to analyse each stage once) and returns the passing
:class:`~msinspect.check.Outcome`. Operators are named as in specs: an instance name
(``matmul``), ``scope-suffix/name`` or a scope. ``stage`` picks the IR file read (by default
``validate``, else ``step_parallel_end``, ``execute``, ``step_parallel_begin``); ``ranks`` limits
the ranks looked at. Malformed arguments raise :class:`ValueError`, never an assertion failure.
"""
from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import Any, Callable

from msinspect.check import MAX_EVIDENCE, CheckReport, Outcome, check  # noqa: F401 (names helpers' users import)
from msinspect.dumps import Dump
from msinspect.expectations import ASSERTIONS
from msinspect.expectations.assertions import ExpectationFailed, Layout, as_dump, describe, headline  # noqa: F401
from msinspect.spec import Spec

DumpLike = Dump | str | os.PathLike

# Every kind's helpers (assert_strategy, assert_shape, assert_comm_after, ...), defined beside
# the kind in msinspect/expectations/, are this module's names.
globals().update(ASSERTIONS)

__all__ = ["DumpAssertions", "ExpectationFailed", *sorted(ASSERTIONS), "assert_spec"]


def assert_spec(dump: DumpLike, spec: str | os.PathLike | Spec) -> CheckReport:
    """Every expectation of a spec file holds; the failure lists each one that does not."""
    __tracebackhide__ = True
    report = check(spec, as_dump(dump))
    if not report.ok:
        failed = report.failed
        lines = [f"msinspect: {len(failed)} of {len(report.outcomes)} expectation(s) of {report.spec.path} "
                 f"fail on {report.dump}"]
        for outcome in failed:
            lines.append(f"FAIL {outcome.expectation.label} {headline(outcome.expectation)}")
            lines.extend(describe(outcome, "    "))
        raise ExpectationFailed("\n".join(lines), failed)
    return report


def _bound(helper: Callable[..., Any]) -> Callable[..., Any]:
    """``helper`` as a method of :class:`DumpAssertions`: the bound dump is its first argument."""
    @functools.wraps(helper)
    def method(self: DumpAssertions, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return helper(self.dump, *args, **kwargs)

    method.__doc__ = f":func:`{helper.__name__}` on the bound dump."
    del method.__wrapped__  # its signature is the helper's without ``dump``
    signature = inspect.signature(helper)
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(parameters=[self_param, *list(signature.parameters.values())[1:]])
    return method


class DumpAssertions:
    """The helpers bound to one dump (the plugin's ``msinspect_assert`` fixture):
    ``msinspect_assert.strategy("matmul", ((2, 4), (4, 1)))``; one method per helper, named
    without its ``assert_`` (``strategy``, ``shape``, ``comm_after``, ``comm_before``, ``count``,
    ``no_redistribution``, ``spec``)."""

    def __init__(self, dump: DumpLike, root: str | os.PathLike | None = None):
        self.dump = as_dump(dump)
        #: The folder a relative spec path is read from (the plugin gives pytest's rootdir);
        #: None: the current folder.
        self.root = Path(root) if root is not None else None

    def spec(self, spec: str | os.PathLike | Spec) -> CheckReport:
        """:func:`assert_spec` on the bound dump; a relative spec path is read from :attr:`root`."""
        __tracebackhide__ = True
        if self.root is not None and isinstance(spec, (str, os.PathLike)):
            spec = self.root / spec  # an absolute spec stays itself
        return assert_spec(self.dump, spec)


for _name, _helper in ASSERTIONS.items():
    setattr(DumpAssertions, _name.removeprefix("assert_"), _bound(_helper))
