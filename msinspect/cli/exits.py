"""Exit codes and the one place that turns an error into a message and an exit code.

Every command ends through here: an error msinspect raises on bad input
(:class:`~msinspect.errors.MsInspectError` and its subclasses) becomes ``error: <message>`` on
stderr and the exit code the error's class carries (``exit_code``, the table in
:mod:`msinspect.errors`); any other exception is a bug and becomes ``internal error: ...`` with a
request to report it (the traceback only under ``msinspect --debug``).
"""
from __future__ import annotations

import contextlib
import sys
import traceback
from typing import Callable, Iterator

import click

from msinspect.errors import (EXIT_CANNOT_READ, EXIT_FINDING, EXIT_INTERNAL, EXIT_INTERRUPTED,  # noqa: F401
                              EXIT_MISSING_TOOL, EXIT_OK, EXIT_USAGE, EXIT_WORKER_DIED, MsInspectError)

#: The hint under an error that ``--lenient`` reads past, for a command that has it and was not given it.
LENIENT_HINT = "(use --lenient to read past errors and list every unparsed span)"


def exit_code(error: BaseException) -> int:
    """The exit code of an error: the one its class carries for a msinspect error, else
    :data:`EXIT_INTERNAL`."""
    return error.exit_code if isinstance(error, MsInspectError) else EXIT_INTERNAL


def _debug() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().params.get("debug"))


def _lenient_not_given() -> bool:
    """Whether the command running has ``--lenient`` and was not given it."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx and any(p.name == "lenient" for p in ctx.command.params) and not ctx.params.get("lenient"))


def report(error: BaseException) -> int:
    """Print ``error`` for a person and return the exit code to end with."""
    if isinstance(error, MsInspectError):
        click.echo(f"error: {error}", err=True)
        if error.lenient_helps and _lenient_not_given():
            click.echo(LENIENT_HINT, err=True)
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
