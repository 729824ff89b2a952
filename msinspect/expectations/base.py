"""What an expectation is: one entry of a spec (:class:`Expectation`), the kind that reads its
``[[expect.NAME]]`` table, names its target and checks a dump (:class:`ExpectationKind`, registered
in :data:`KINDS`), the verdict a check gives back (:class:`Outcome`), and what a kind reads of the
checker running it (:class:`Checking`). The spec reader (:mod:`msinspect.spec`) and the checker
(:mod:`msinspect.check`) import this module; it imports neither."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol

if TYPE_CHECKING:
    from msinspect.analysis.job.collect import Analysis
    from msinspect.dumps import Dump
    from msinspect.expectations.evidence import Evidence

#: Every kind by its name in a spec, filled by :func:`register` as the kind modules are imported.
KINDS: dict[str, "ExpectationKind"] = {}


@dataclass(frozen=True)
class Expectation:
    """One ``[[expect.KIND]]`` entry."""

    kind: str
    index: int
    """Position among the entries of its kind (0-based)."""
    values: dict[str, Any]
    stage: str | None
    ranks: tuple[int, ...] | None
    basis: str | None
    graph: str | int | None = None
    """The subgraph the entry's selectors look in: its name, or its position N in the file
    (0 the first written, as ParallelValidator's ``@graph_N``); None: every graph."""

    @property
    def label(self) -> str:
        """``expect.strategy[2]``: where the entry is in the spec."""
        return f"expect.{self.kind}[{self.index}]"

    @property
    def target(self) -> str:
        """The operator or kind the entry is about, for messages."""
        kind = KINDS.get(self.kind)
        return kind.target(self.values) if kind is not None else str(self.values["op"])


@dataclass
class Outcome:
    """The verdict on one expectation."""

    expectation: Expectation
    passed: bool
    expected: str
    found: str
    evidence: list[Evidence] = field(default_factory=list)

    def to_dict(self) -> dict:
        e = self.expectation
        return {"entry": e.label, "kind": e.kind, "target": e.target, "basis": e.basis,
                "stage": e.stage, "passed": self.passed, "expected": self.expected, "found": self.found,
                "evidence": [ev.__dict__ for ev in self.evidence]}


class Checking(Protocol):
    """What a kind's :meth:`~ExpectationKind.check` reads of the checker running it
    (:class:`msinspect.check.Checker`)."""

    dump: Dump
    """The dump checked."""
    jobs: int | None
    """Processes for what the kind parses itself (None: every core)."""
    scheduler: str | None
    """The Dask scheduler to parse on (:mod:`msinspect.executors`), or None."""

    def stage(self, e: Expectation) -> str | None:
        """The stage ``e`` reads: its own, else the spec's (None: the default one)."""

    def analysis(self, e: Expectation) -> Analysis:
        """The analysis of the stage ``e`` reads, made once per stage."""


class ExpectationKind:
    """One kind of expectation. Subclass it in a module of :mod:`msinspect.expectations`, set the
    class attributes, override :meth:`check` (and :meth:`validate` / :meth:`target` where the
    defaults do not fit) and decorate the class with :func:`register`; its helpers, in
    :mod:`msinspect.testing`, with :func:`assertion`."""

    name: ClassVar[str]
    """The kind's name in a spec (``[[expect.NAME]]``) and in messages."""
    required: ClassVar[frozenset[str]]
    """Keys an entry must have (besides ``stage``, ``ranks``, ``basis``, ``note``)."""
    optional: ClassVar[frozenset[str]] = frozenset()
    """Keys an entry may have."""
    text_keys: ClassVar[tuple[str, ...]] = ()
    """Keys whose values must be strings."""
    needs_ranks: ClassVar[bool] = False
    """Whether an entry must name its ``ranks``."""
    assertions: ClassVar[tuple[Callable[..., Any], ...]] = ()
    """The kind's pytest assertion helpers (``assert_<...>(dump, ...)``), set by :func:`assertion`
    as :mod:`msinspect.testing` defines them."""

    def validate(self, values: dict[str, Any]) -> dict[str, Any]:
        """The entry's own values (common keys removed) as the check uses them; ValueError says
        what is wrong. Keys present and their string types are checked before this runs."""
        return values

    def target(self, values: dict[str, Any]) -> str:
        """The operator or kind the entry is about, for messages."""
        return str(values["op"])

    def operators(self, values: dict[str, Any]) -> tuple[str, ...]:
        """The operator selectors the entry names (the report draws the graph around them)."""
        return (str(values["op"]),) if values.get("op") else ()

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        """The verdict on ``e`` for the checker's dump."""
        raise NotImplementedError


def register(cls: type[ExpectationKind]) -> type[ExpectationKind]:
    """Class decorator: put a kind into :data:`KINDS` under its name."""
    if cls.name in KINDS:
        raise ValueError(f"expectation kind {cls.name!r} registered twice")
    KINDS[cls.name] = cls()
    return cls


def assertion(kind: type[ExpectationKind]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Function decorator: the function is one of ``kind``'s assertion helpers (exported by
    :mod:`msinspect.testing` under its name and bound by ``DumpAssertions`` without ``assert_``)."""
    def add(function: Callable[..., Any]) -> Callable[..., Any]:
        kind.assertions = (*kind.assertions, function)
        return function
    return add
