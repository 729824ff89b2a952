"""What every assertion helper does: build the expectation a spec entry with the same keys would
give (validated the same way), check it with the same code as ``msinspect check``, and raise
:class:`ExpectationFailed` with what was expected, what was found and the IR lines."""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from msinspect.expectations.evidence import MAX_EVIDENCE, Outcome

if TYPE_CHECKING:
    from msinspect.dumps import Dump
    from msinspect.spec import Expectation

Layout = Sequence[Sequence[int]]


class ExpectationFailed(AssertionError):
    """The dump does not show what a helper asserted; ``outcomes`` holds the failed verdicts."""

    def __init__(self, message: str, outcomes: list[Outcome]):
        super().__init__(message)
        self.outcomes = outcomes


def as_dump(dump: Dump | str | os.PathLike) -> Dump:
    """``dump`` itself, or the dump found under a path."""
    from msinspect.dumps import Dump, load_dump

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
    """``strategy matmul @ validate on ranks 0, 1  [basis]``."""
    stage = f" @ {e.stage}" if e.stage else ""
    ranks = f" on ranks {', '.join(map(str, e.ranks))}" if e.ranks else ""
    basis = f"  [{e.basis}]" if e.basis else ""
    return f"{e.kind} {e.target}{stage}{ranks}{basis}"


def expect(helper: str, kind: str, values: dict[str, Any], stage: str | None,
           ranks: Iterable[int] | None, basis: str | None) -> Expectation:
    """The expectation a spec entry with these keys would give (validated the same way);
    ValueError, naming ``helper``, for a malformed argument."""
    from msinspect.schema import plain
    from msinspect.spec import expectation_from

    raw = {k: plain(v) for k, v in values.items() if v is not None}  # tuples -> lists: as a spec holds them
    ranks = None if ranks is None else list(ranks)
    if ranks == []:
        raise ValueError(f"{helper}: ranks must name at least one rank (or be None for every rank)")
    for key, value in (("stage", stage), ("ranks", ranks), ("basis", basis)):
        if value is not None:
            raw[key] = value
    try:
        return expectation_from(kind, 0, raw, helper)
    except ValueError as exc:
        raise ValueError(f"{helper}: {exc}") from None


def verify(dump: Dump | str | os.PathLike, e: Expectation) -> Outcome:
    """Run the checker on one expectation; raise :class:`ExpectationFailed` if it fails."""
    __tracebackhide__ = True
    from msinspect.check import Checker
    from msinspect.spec import Spec

    dump = as_dump(dump)
    spec = Spec(Path(f"<{e.kind} assertion>"), None, None, None, [e])
    outcome = Checker(spec, dump).run().outcomes[0]
    if not outcome.passed:
        lines = [f"msinspect: {headline(e)} does not hold in {dump.path}", *describe(outcome)]
        raise ExpectationFailed("\n".join(lines), [outcome])
    return outcome
