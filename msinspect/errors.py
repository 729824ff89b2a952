"""One error hierarchy for msinspect. Every error the package raises on bad input derives from
:class:`MsInspectError`, so callers (and the CLI) can catch one type."""
from __future__ import annotations

import re
from dataclasses import dataclass

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shown_path(path: str) -> str:
    """``path`` for a message: control characters (a newline in a file name) written as escapes,
    so the message stays one line per item and cannot be split inside the path."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], str(path))


def _rebuild(cls: type, args: tuple, state: dict) -> "MsInspectError":
    """Unpickle an error without calling its ``__init__`` (whose signature may differ from
    ``args``): the exception's ``args`` and every attribute come back as they were."""
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class MsInspectError(Exception):
    """Base of every error msinspect raises on bad input.

    Every subclass pickles with all its fields (``__reduce__`` below), so an error raised in a
    worker of a process pool comes back whole instead of breaking the pool.
    """

    def __reduce__(self):
        return _rebuild, (type(self), self.args, dict(self.__dict__))


class ConfigError(MsInspectError):
    """A setting msinspect reads from the environment has a value it cannot use."""


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
        path = shown_path(self.path)
        where = f"{path}:{self.line}:{self.column}" if self.line > 0 else path
        head = f"{where}: {self.message}"
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
