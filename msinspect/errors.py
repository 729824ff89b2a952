"""One error hierarchy for msinspect. Every error the package raises on bad input derives from
:class:`MsInspectError`, so callers (and the CLI) can catch one type; each class carries the exit
code the command line ends with (:attr:`MsInspectError.exit_code`, the table below).

=====================  ====  ==========================================================
class                  exit  when
=====================  ====  ==========================================================
MsInspectError         2     bad input in general (the default of a subclass)
BadArgumentError       2     an argument no call can use (a path holding a NUL)
ConfigError            2     a setting of the environment msinspect cannot use
DumpNotFoundError      2     no such path, no IR files, no such stage or rank
NoMatchError           2     a selector (``--rank``, ``--op``, ``--param``) naming nothing there
IRTooLargeError        2     an IR file over the size cap (``MSINSPECT_MAX_IR_BYTES``)
IRParseError           1     an IR file that does not follow the grammar (``file:line:col``)
IRDecodeError          1     an IR file whose bytes are not UTF-8, or a damaged ``.gz``
IRReadError            66    an IR file that is there but cannot be read (permissions, I/O)
WorkerError            71    the process reading a file died (killed, out of memory)
=====================  ====  ==========================================================
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import ClassVar

#: 0 fine.
EXIT_OK = 0
#: A finding: a failed expectation, a shape mismatch, IR that does not parse or decode, ranks that
#: could not be read, a training job that failed.
EXIT_FINDING = 1
#: Bad input: no such path, no IR files, a bad spec or argument, an output that exists, a setting
#: that cannot be used, a file over the size cap.
EXIT_USAGE = 2
#: A program msinspect needs is missing (Graphviz's ``dot``).
EXIT_MISSING_TOOL = 3
#: An IR file that is there cannot be read (permissions, an I/O error): sysexits' EX_NOINPUT.
EXIT_CANNOT_READ = 66
#: A bug in msinspect (an exception it did not expect): sysexits' EX_SOFTWARE.
EXIT_INTERNAL = 70
#: A process msinspect started to read files died (killed, out of memory): sysexits' EX_OSERR.
EXIT_WORKER_DIED = 71
#: Stopped by Ctrl-C.
EXIT_INTERRUPTED = 130

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

    exit_code: ClassVar[int] = EXIT_USAGE
    """The exit code a command ends with on this error."""
    lenient_helps: ClassVar[bool] = False
    """Whether reading with ``lenient`` goes past this error (the CLI then suggests ``--lenient``
    to a command that has it and was not given it)."""

    def __reduce__(self):
        return _rebuild, (type(self), self.args, dict(self.__dict__))


class BadArgumentError(MsInspectError, ValueError):
    """An argument no call could use, whatever the files: a path holding a NUL character."""


def check_path(path: str | os.PathLike) -> None:
    """:class:`BadArgumentError` when ``path`` holds a NUL character, which no file name can."""
    text = os.fspath(path)
    if ("\0" if isinstance(text, str) else b"\0") in text:
        raise BadArgumentError(f"{shown_path(os.fsdecode(text))}: holds a NUL character, which no path can")


class ConfigError(MsInspectError):
    """A setting msinspect reads from the environment has a value it cannot use."""


class DumpNotFoundError(MsInspectError):
    """A path holds no MindSpore IR dump (no ``.ir`` / ``.ir.gz`` files, or no such stage)."""


class NoMatchError(MsInspectError, KeyError):
    """A selector that names nothing the input holds (``--rank 9`` on ranks 0-7, ``--op
    matmull``, ``--param ww``, a column): bad input, whose message names what there is and the
    close names (:func:`msinspect.analysis.job.op_rows.no_match`). A KeyError too, for a caller that
    looks a name up; ``str()`` is the message, unquoted."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(eq=False)
class IRFileError(MsInspectError):
    """A problem with one IR file, naming it: the base of :class:`IRParseError`,
    :class:`IRDecodeError`, :class:`IRReadError`, :class:`IRTooLargeError` and
    :class:`WorkerError`.

    ``str()`` gives ``path:line:col: message``, the offending line and a caret under the column;
    ``path: message`` where no line is at fault (``line`` 0).
    """

    path: str
    """File at fault."""
    line: int
    """1-based line of the offending text; 0 when the fault is not at a line."""
    column: int
    """1-based column of the offending text; 0 when the fault is not at a line."""
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


class IRParseError(IRFileError):
    """A ``.ir`` file does not follow the grammar (or a count it states does not hold): a finding
    about the dump, at ``path:line:col``; ``lenient`` reads past it."""

    exit_code = EXIT_FINDING
    lenient_helps = True


@dataclass(eq=False)
class IRDecodeError(IRFileError):
    """A file's bytes are not text: not UTF-8 (at their line and column), or a ``.gz`` stream that
    is damaged or cut short. A finding about the dump, like :class:`IRParseError`."""

    exit_code = EXIT_FINDING
    lenient_helps: bool = True
    """Whether ``lenient`` reads past it: bytes that are not UTF-8 are replaced, a damaged ``.gz``
    keeps the text before the damage (none when the damage is at its start)."""


class IRReadError(IRFileError):
    """A file that is there cannot be read (permissions, an I/O error, not a regular file)."""

    exit_code = EXIT_CANNOT_READ


class IRTooLargeError(IRFileError):
    """A file's text (decompressed) is larger than the cap msinspect reads
    (``MSINSPECT_MAX_IR_BYTES``): input refused as asked, whatever the mode."""


class WorkerError(IRFileError):
    """The process reading a file (a worker of the local pool or of a Dask cluster) died: killed,
    or out of memory."""

    exit_code = EXIT_WORKER_DIED
