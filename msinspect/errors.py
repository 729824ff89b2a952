"""One error hierarchy for msinspect. Every error the package raises on bad input derives from
:class:`MsInspectError`, so callers (and the CLI) can catch one type."""
from __future__ import annotations

from dataclasses import dataclass


class MsInspectError(Exception):
    """Base of every error msinspect raises on bad input."""


class DumpNotFoundError(MsInspectError):
    """A path holds no MindSpore IR dump (no ``.ir`` / ``.ir.gz`` files, or no such stage)."""


@dataclass(eq=False)
class IRParseError(MsInspectError):
    """A ``.ir`` file does not follow the grammar.

    ``str()`` gives ``path:line:col: message``, the offending line and a caret under the column.
    """

    path: str
    """File that failed to parse."""
    line: int
    """1-based line of the offending text."""
    column: int
    """1-based column of the offending text."""
    message: str
    """What went wrong, in words."""
    expected: tuple[str, ...] = ()
    """What the grammar would have accepted at that point, in readable form."""
    source_line: str = ""
    """The text of the offending line (without its newline)."""

    def __post_init__(self) -> None:
        super().__init__(str(self))

    def __str__(self) -> str:
        head = f"{self.path}:{self.line}:{self.column}: {self.message}"
        if self.expected:
            head += "\n  expected: " + ", ".join(self.expected)
        if not self.source_line and self.line <= 0:
            return head
        shown = self.source_line
        col = self.column
        if len(shown) > 160:  # keep long IR lines readable: a window around the column
            start = max(0, col - 80)
            shown = ("..." if start else "") + shown[start:start + 160] + "..."
            col = col - start + (3 if start else 0)
        return f"{head}\n  {shown}\n  {' ' * max(col - 1, 0)}^"
