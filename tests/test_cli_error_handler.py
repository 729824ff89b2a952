"""The one CLI error handler: msinspect's errors become a message and the documented exit code;
anything else is an internal error with a request to report it, and the traceback only under
``msinspect --debug``."""
from __future__ import annotations

import pytest

from msinspect.cli.exits import (EXIT_CANNOT_READ, EXIT_FINDING, EXIT_INTERNAL, EXIT_MISSING_TOOL, EXIT_USAGE,
                                 EXIT_WORKER_DIED, exit_code)
from msinspect.errors import (BadArgumentError, ConfigError, DumpNotFoundError, IRDecodeError, IRParseError,
                              IRReadError, IRTooLargeError, MsInspectError, WorkerError)
from msinspect.render import DotNotFoundError
from msinspect.train.launcher import TrainError
from tests.conftest import FIXTURES, invoke

SEED = FIXTURES / "seed_002"


def _invoke(*args):
    return invoke(*args)


def _break_analysis(monkeypatch, error: BaseException):
    """Make the analysis under ``summary`` raise ``error``, as a bug deep inside would."""
    def broken(*_args, **_kwargs):
        raise error
    monkeypatch.setattr("msinspect.cli.output.load_dump", broken)


@pytest.mark.parametrize("error", [KeyError("rank"), TypeError("unsupported operand"), ZeroDivisionError("x")])
def test_a_bug_is_an_internal_error_without_traceback(monkeypatch, error):
    _break_analysis(monkeypatch, error)
    result = _invoke("summary", SEED)
    assert result.exit_code == EXIT_INTERNAL
    assert f"internal error: {type(error).__name__}" in result.stderr
    assert "please report it" in result.stderr and "--debug" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


def test_debug_shows_the_traceback(monkeypatch):
    _break_analysis(monkeypatch, KeyError("rank"))
    result = _invoke("--debug", "summary", SEED)
    assert result.exit_code == EXIT_INTERNAL
    assert "Traceback (most recent call last)" in result.stderr and "internal error: KeyError" in result.stderr


def test_a_msinspect_error_is_a_message_and_exit_2(monkeypatch):
    _break_analysis(monkeypatch, DumpNotFoundError("somewhere: no IR files"))
    result = _invoke("summary", SEED)
    assert result.exit_code == EXIT_USAGE and result.stderr.strip() == "error: somewhere: no IR files"


@pytest.mark.parametrize("error, code", [
    (IRParseError("x.ir", 3, 4, "unexpected '?'"), EXIT_FINDING),
    (IRDecodeError("x.ir", 3, 4, "invalid UTF-8 byte 0xff"), EXIT_FINDING),
    (IRReadError("x.ir", 0, 0, "cannot read: Permission denied"), EXIT_CANNOT_READ),
    (IRTooLargeError("x.ir", 0, 0, "the file is larger than 100 bytes"), EXIT_USAGE),
    (WorkerError("x.ir", 0, 0, "the parser process died"), EXIT_WORKER_DIED),
    (ConfigError("x"), EXIT_USAGE),
    (BadArgumentError("x"), EXIT_USAGE),
    (DotNotFoundError("x.dot", "svg"), EXIT_MISSING_TOOL),
    (TrainError("sharding_propagation: timed out"), EXIT_FINDING),
    (DumpNotFoundError("x"), EXIT_USAGE),
    (MsInspectError("x"), EXIT_USAGE),
    (ValueError("x"), EXIT_INTERNAL),
])
def test_exit_code_table(error, code):
    assert exit_code(error) == code


def test_help_documents_exit_codes_and_debug():
    result = _invoke("--help")
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "--debug" in text and "2 bad input" in text and "3 a program msinspect needs is missing" in text


def test_a_reader_that_goes_away_is_not_a_bug():
    """``msinspect comm DUMP --csv | head -1``: the pipe closes early; no internal error."""
    import subprocess
    import sys

    run = subprocess.Popen([sys.executable, "-m", "msinspect.cli", "comm", str(SEED), "--csv"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.close()
    stderr = run.stderr.read().decode()
    assert run.wait() == 0, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr and "Exception ignored" not in stderr
