"""What an expectation kind is: one class that reads its ``[[expect.NAME]]`` entry, names its
target, checks a dump and lists its pytest assertion helpers; and the registry of kinds."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, ClassVar

if TYPE_CHECKING:
    from msinspect.check import Checker
    from msinspect.expectations.evidence import Outcome
    from msinspect.spec import Expectation

#: Every kind by its name in a spec, filled by :func:`register` as the kind modules are imported.
KINDS: dict[str, "ExpectationKind"] = {}


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

    def check(self, checker: Checker, e: Expectation) -> Outcome:
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
