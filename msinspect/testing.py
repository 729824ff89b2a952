"""Assertion helpers for tests of a parallel job's IR dump.

Each helper states one expectation of the spec format (:mod:`msinspect.spec`) in Python, checks
it with :class:`msinspect.check.Checker` (the same code as ``msinspect check``), and raises
:class:`ExpectationFailed` (an :class:`AssertionError`) when the dump does not show it. The message
says what was expected, what was found, and the IR lines (``file:line: text``) that show it::

    from msinspect.testing import assert_comm_after, assert_strategy

    def test_matmul_is_split_as_asked():
        dump = msinspect.load_dump("dumps/")
        assert_strategy(dump, "matmul", ((2, 4), (4, 1)), set_by="user")
        assert_comm_after(dump, "AllReduce", "matmul", groups=[[0, 1, 2, 3], [4, 5, 6, 7]])

Every helper takes a :class:`~msinspect.dumps.Dump` or a path (loaded each call: pass a Dump, or
use the pytest plugin's fixtures, to analyse each stage once) and returns the passing
:class:`~msinspect.check.Outcome`. Operators are named as in specs: an instance name
(``matmul``), ``scope-suffix/name`` or a scope. ``stage`` picks the IR file read (by default
``validate``, else ``step_parallel_end``, ``execute``, ``step_parallel_begin``); ``ranks`` limits
the ranks looked at. Malformed arguments raise :class:`ValueError`, never an assertion failure.

The helpers of every kind of :mod:`msinspect.expectations` are defined here, each tied to its kind
by ``@assertion(Kind)``: this module sits above the spec reader and the checker it calls.
"""
from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from msinspect.check import MAX_EVIDENCE, CheckReport, Checker, Outcome, check  # noqa: F401 (names helpers' users import)
from msinspect.dumps import Dump, load_dump
from msinspect.expectations import KINDS, assertion
from msinspect.expectations.absent import Absent
from msinspect.expectations.attrs import Attrs
from msinspect.expectations.comm import Comm
from msinspect.expectations.count import Count
from msinspect.expectations.feeds import Feeds
from msinspect.expectations.inputs import Inputs
from msinspect.expectations.layout import Layout as LayoutKind
from msinspect.expectations.no_redistribution import NoRedistribution
from msinspect.expectations.shape import Shape
from msinspect.expectations.strategy import Strategy
from msinspect.ranks_text import ranks_text
from msinspect.schema import plain
from msinspect.spec import Expectation, Spec, expectation_from

DumpLike = Dump | str | os.PathLike
Layout = Sequence[Sequence[int]]


class ExpectationFailed(AssertionError):
    """The dump does not show what a helper asserted; ``outcomes`` holds the failed verdicts."""

    def __init__(self, message: str, outcomes: list[Outcome]):
        super().__init__(message)
        self.outcomes = outcomes


def as_dump(dump: DumpLike) -> Dump:
    """``dump`` itself, or the dump found under a path."""
    return dump if isinstance(dump, Dump) else load_dump(dump)


def describe(outcome: Outcome, indent: str = "  ") -> list[str]:
    """Expected, found and the IR evidence of an outcome, one item a line."""
    lines = [f"{indent}expected: {outcome.expected}", f"{indent}found:    {outcome.found}"]
    if not outcome.evidence:
        lines.append(f"{indent}IR:       no line shows it")
        return lines
    lines.append(f"{indent}IR:")
    for ev in outcome.evidence[:MAX_EVIDENCE]:
        lines.append(f"{indent}  {ev.format()}")
    if len(outcome.evidence) > MAX_EVIDENCE:
        lines.append(f"{indent}  ... and {len(outcome.evidence) - MAX_EVIDENCE} more line(s)")
    return lines


def headline(e: Expectation) -> str:
    """``strategy matmul @ validate on ranks 0-1  [basis]``."""
    stage = f" @ {e.stage}" if e.stage else ""
    ranks = f" on {ranks_text(e.ranks, word=True)}" if e.ranks else ""
    basis = f"  [{e.basis}]" if e.basis else ""
    return f"{e.kind} {e.target}{stage}{ranks}{basis}"


def expect(helper: str, kind: str, values: dict[str, Any], stage: str | None,
           ranks: Iterable[int] | None, basis: str | None, graph: str | int | None = None) -> Expectation:
    """The expectation a spec entry with these keys would give (validated the same way);
    ValueError, naming ``helper``, for a malformed argument."""
    raw = {k: plain(v) for k, v in values.items() if v is not None}  # tuples -> lists: as a spec holds them
    ranks = None if ranks is None else list(ranks)
    if ranks == []:
        raise ValueError(f"{helper}: ranks must name at least one rank (or be None for every rank)")
    for key, value in (("stage", stage), ("ranks", ranks), ("basis", basis), ("graph", graph)):
        if value is not None:
            raw[key] = value
    try:
        return expectation_from(kind, 0, raw, helper)
    except ValueError as exc:
        raise ValueError(f"{helper}: {exc}") from None


def verify(dump: DumpLike, e: Expectation) -> Outcome:
    """Run the checker on one expectation; raise :class:`ExpectationFailed` if it fails."""
    __tracebackhide__ = True
    dump = as_dump(dump)
    spec = Spec(Path(f"<{e.kind} assertion>"), None, None, None, [e])
    outcome = Checker(spec, dump).run().outcomes[0]
    if not outcome.passed:
        lines = [f"msinspect: {headline(e)} does not hold in {dump.path}", *describe(outcome)]
        raise ExpectationFailed("\n".join(lines), [outcome])
    return outcome


# Each kind's helpers (``@assertion(Kind)`` ties a helper to its kind, :mod:`msinspect.expectations`).
@assertion(Strategy)
def assert_strategy(dump: DumpLike, op: str, in_strategy: Layout, *,
                    out_strategy: Layout | None = None, set_by: str | None = None, stage: str | None = None,
                    ranks: Iterable[int] | None = None, basis: str | None = None,
                    graph: str | int | None = None, source: str | None = None) -> Outcome:
    """Every operator matching ``op`` has ``in_strategy`` (and ``out_strategy``); ``set_by``
    ``"user"`` or ``"planner"`` also asserts who set it, as a spec's ``set_by`` and the
    ``set_by`` of ``strategies --json`` say (``source``: its older name, still taken)."""
    __tracebackhide__ = True
    e = expect("assert_strategy", "strategy",
               {"op": op, "in_strategy": in_strategy, "out_strategy": out_strategy, "set_by": set_by,
                "source": source}, stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(Shape)
def assert_shape(dump: DumpLike, op: str, *, inputs: Layout | None = None,
                 output: Sequence[int] | None = None, stage: str | None = None,
                 ranks: Iterable[int] | None = None, basis: str | None = None,
                 graph: str | int | None = None) -> Outcome:
    """Every forward operator matching ``op`` sees these per-rank input shapes (the first
    ``len(inputs)`` tensor inputs) and/or gives this output shape."""
    __tracebackhide__ = True
    e = expect("assert_shape", "shape", {"op": op, "inputs": inputs, "output": output}, stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(Comm)
def assert_comm_after(dump: DumpLike, kind: str, op: str, groups: Layout | None = None, *,
                      group_size: int | None = None, stage: str | None = None,
                      ranks: Iterable[int] | None = None, basis: str | None = None,
                      graph: str | int | None = None) -> Outcome:
    """A ``kind`` communication (``AllReduce`` ...) takes the output of ``op`` (a selector) on every
    rank that has ``op``; its groups are exactly ``groups`` and / or of ``group_size`` ranks,
    where given."""
    __tracebackhide__ = True
    e = expect("assert_comm_after", "comm",
               {"kind": kind, "after": op, "groups": groups, "group_size": group_size}, stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(Comm)
def assert_comm_before(dump: DumpLike, kind: str, op: str, groups: Layout | None = None, *,
                       group_size: int | None = None, stage: str | None = None,
                       ranks: Iterable[int] | None = None, basis: str | None = None,
                       graph: str | int | None = None) -> Outcome:
    """A ``kind`` communication feeds ``op`` on every rank that has ``op``; its groups are exactly
    ``groups`` and / or of ``group_size`` ranks, where given."""
    __tracebackhide__ = True
    e = expect("assert_comm_before", "comm",
               {"kind": kind, "before": op, "groups": groups, "group_size": group_size}, stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(Count)
def assert_count(dump: DumpLike, kind: str | None = None, *, op: str | None = None,
                 count: int | None = None, min: int | None = None, max: int | None = None,
                 ranks: Iterable[int] | None = None, stage: str | None = None,
                 basis: str | None = None, graph: str | int | None = None) -> Outcome:
    """Each of ``ranks`` (default: every rank read) has ``count`` (or between ``min`` and ``max``)
    operators of the communication ``kind``, or that the selector ``op`` names (``type:Cast``)."""
    __tracebackhide__ = True
    e = expect("assert_count", "count", {"kind": kind, "op": op, "count": count, "min": min, "max": max},
               stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(LayoutKind)
def assert_layout(dump: DumpLike, param: str, *, device_matrix: Sequence[int] | None = None,
                  tensor_map: Sequence[int] | None = None, slice_shape: Sequence[int] | None = None,
                  field_size: int | None = None, uniform_split: bool | None = None,
                  opt_shard_group: str | None = None, stage: str | None = None,
                  ranks: Iterable[int] | None = None, basis: str | None = None,
                  graph: str | int | None = None) -> Outcome:
    """The weight ``param`` has this layout on each rank, in MindSpore's terms (the fields of
    ``parameter_layout_dict`` given)."""
    __tracebackhide__ = True
    e = expect("assert_layout", "layout",
               {"param": param, "device_matrix": device_matrix, "tensor_map": tensor_map, "slice_shape": slice_shape,
                "field_size": field_size, "uniform_split": uniform_split, "opt_shard_group": opt_shard_group},
               stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(Inputs)
def assert_inputs(dump: DumpLike, op: str, include: Sequence[Any], *, exact: bool = False,
                  stage: str | None = None, ranks: Iterable[int] | None = None,
                  basis: str | None = None, graph: str | int | None = None) -> Outcome:
    """The operators ``op`` selects take each of ``include`` (a node's ``Type-N`` name, a weight's
    name, a constant), as ParallelValidator lists inputs; ``exact``: exactly these, in order."""
    __tracebackhide__ = True
    e = expect("assert_inputs", "inputs", {"op": op, "include": list(include), "exact": exact},
               stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(Attrs)
def assert_attrs(dump: DumpLike, op: str, attrs: dict[str, Any], *, stage: str | None = None,
                 ranks: Iterable[int] | None = None, basis: str | None = None,
                 graph: str | int | None = None) -> Outcome:
    """The operators ``op`` selects carry these primitive attribute values."""
    __tracebackhide__ = True
    e = expect("assert_attrs", "attrs", {"op": op, "attrs": dict(attrs)}, stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(Feeds)
def assert_feeds(dump: DumpLike, first: str, second: str, *, through: Sequence[str] = (),
                 stage: str | None = None, ranks: Iterable[int] | None = None,
                 basis: str | None = None, graph: str | int | None = None) -> Outcome:
    """``first`` feeds ``second``: directly, or through only the kinds of node ``through`` names
    (``comm``, ``redistribution``, ``virtual``, primitive names)."""
    __tracebackhide__ = True
    e = expect("assert_feeds", "feeds", {"from": first, "to": second, "through": list(through)},
               stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(Absent)
def assert_absent(dump: DumpLike, op: str, *, stage: str | None = None, ranks: Iterable[int] | None = None,
                  basis: str | None = None, graph: str | int | None = None) -> Outcome:
    """No operator ``op`` selects is on the ranks (``type:AllGather``: none was inserted)."""
    __tracebackhide__ = True
    e = expect("assert_absent", "absent", {"op": op}, stage, ranks, basis, graph)
    return verify(dump, e)


@assertion(NoRedistribution)
def assert_no_redistribution(dump: DumpLike, first: str, second: str, *,
                             stage: str | None = None, ranks: Iterable[int] | None = None,
                             basis: str | None = None, graph: str | int | None = None) -> Outcome:
    """``first`` feeds ``second`` with no communication or redistribution operator between them."""
    __tracebackhide__ = True
    e = expect("assert_no_redistribution", "no_redistribution", {"between": [first, second]},
               stage, ranks, basis, graph)
    return verify(dump, e)


#: Every assertion helper of every kind, by its name (``assert_strategy`` ...).
ASSERTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f for kind in KINDS.values() for f in kind.assertions}

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
