"""Exit codes and the one place that turns an error into a message and an exit code.

Every command ends through here: an error msinspect raises on bad input
(:class:`~msinspect.errors.MsInspectError` and its subclasses) becomes ``error: <message>`` on
stderr and the exit code of :data:`EXIT_CODES`; any other exception is a bug and becomes
``internal error: ...`` with a request to report it (the traceback only under ``msinspect --debug``).
"""
from __future__ import annotations

import contextlib
import sys
import traceback
from typing import Callable, Iterator

import click

#: 0 fine.
EXIT_OK = 0
#: A finding: a failed expectation, a shape mismatch, IR that does not parse, ranks that could
#: not be read, a training job that failed.
EXIT_FINDING = 1
#: Bad input: no such path, no IR files, a bad spec, an output that exists or is a folder, a Dask
#: scheduler that cannot be reached or used (``--scheduler``), a setting of the environment that
#: cannot be used (:class:`~msinspect.errors.ConfigError`).
EXIT_USAGE = 2
#: A program msinspect needs is missing (Graphviz's ``dot``).
EXIT_MISSING_TOOL = 3
#: A bug in msinspect (an exception it did not expect).
EXIT_INTERNAL = 70
#: Stopped by Ctrl-C.
EXIT_INTERRUPTED = 130


def exit_code(error: BaseException) -> int:
    """The exit code of a msinspect error: the one table, first match wins."""
    from msinspect.errors import IRParseError, MsInspectError
    from msinspect.render import DotNotFoundError
    from msinspect.train.launcher import TrainError

    for kind, code in ((IRParseError, EXIT_FINDING), (DotNotFoundError, EXIT_MISSING_TOOL),
                       (TrainError, EXIT_FINDING), (MsInspectError, EXIT_USAGE)):
        if isinstance(error, kind):
            return code
    return EXIT_INTERNAL


def _debug() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().params.get("debug"))


def _has_option(name: str) -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and any(p.name == name for p in ctx.command.params))


def report(error: BaseException) -> int:
    """Print ``error`` for a person and return the exit code to end with."""
    from msinspect.errors import IRParseError, MsInspectError

    if isinstance(error, MsInspectError):
        click.echo(f"error: {error}", err=True)
        if isinstance(error, IRParseError) and _has_option("lenient"):
            click.echo("(use --lenient to read past errors and list every unparsed span)", err=True)
        if _debug():
            traceback.print_exception(error, file=sys.stderr)
        return exit_code(error)
    if isinstance(error, KeyboardInterrupt):
        click.echo("interrupted", err=True)
        return EXIT_INTERRUPTED
    if isinstance(error, BrokenPipeError):  # the reader went away (| head): not a bug
        _silence_stdout()
        return EXIT_OK
    click.echo(f"internal error: {type(error).__name__}: {error}\n"
               "This is a bug in msinspect; please report it with the command you ran"
               + (" and the traceback above." if _debug() else
                  " (run it again as 'msinspect --debug ...' to see the traceback)."), err=True)
    if _debug():
        traceback.print_exception(error, file=sys.stderr)
    return EXIT_INTERNAL


def final_code(code) -> int:
    """The exit code a command ends with: its own, except that a command that ended fine but could
    not read part of its input (:mod:`msinspect.cli.reads`) ends with :data:`EXIT_FINDING`."""
    from msinspect.cli.reads import incomplete

    code = EXIT_OK if code is None else code
    if not isinstance(code, int):  # sys.exit("message")
        click.echo(str(code), err=True)
        return EXIT_FINDING
    if code == EXIT_OK and incomplete():
        return EXIT_FINDING
    return code


def _silence_stdout() -> None:
    """Point stdout at /dev/null so that Python's final flush does not fail a second time."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def handled(error: BaseException) -> bool:
    """Whether ``error`` is for :func:`report`: not click's own control flow or an exit."""
    return not isinstance(error, (click.exceptions.ClickException, click.exceptions.Exit, click.Abort,
                                  SystemExit, GeneratorExit))


@contextlib.contextmanager
def errors() -> Iterator[None]:
    """Inside a command: a msinspect error becomes its message and exit code here (anything else
    is a bug, reported by the command group as an internal error)."""
    from msinspect.errors import MsInspectError

    try:
        yield
    except MsInspectError as error:
        sys.exit(report(error))


@contextlib.contextmanager
def launcher_errors(on_interrupt: Callable[[KeyboardInterrupt], None]) -> Iterator[None]:
    """Around a launcher's run (``dryrun``, ``train``): an interruption, after which the launcher
    has stopped every process it started, prints what the run left (``on_interrupt``) and exits
    :data:`EXIT_INTERRUPTED`; a msinspect error ends as in every command (:func:`errors`)."""
    with errors():
        try:
            yield
        except KeyboardInterrupt as interrupted:
            on_interrupt(interrupted)
            sys.exit(EXIT_INTERRUPTED)
