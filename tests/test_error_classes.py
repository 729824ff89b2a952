"""One error class per failure, each carrying its exit code (README "Exit codes and errors"):
through the CLI each failure says its message and ends with its own code, and the ``--lenient``
hint comes only under an error ``--lenient`` reads past, only where it was not given."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys

import pytest

from msinspect.errors import (BadArgumentError, ConfigError, IRDecodeError, IRFileError, IRParseError, IRReadError,
                              IRTooLargeError, MsInspectError, WorkerError)
from tests.conftest import FIXTURES, ROOT, invoke

SEED = FIXTURES / "seed_002" / "step_parallel_begin_0041.excerpt.ir"
SP = FIXTURES / "sharding_propagation_dryrun_8rank"
HINT = "use --lenient"


def _invoke(*args):
    return invoke("--no-cache", *args)


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("MSINSPECT_NO_CACHE", "1")  # --no-cache sets it; restored after each test


@pytest.fixture
def files(tmp_path):
    """A file of each kind of fault, by name."""
    lines = SEED.read_text().splitlines()
    lines[3] = lines[3].replace("ReLU(%3)", "ReLU(%3, ?)")
    (tmp_path / "bad.ir").write_text("\n".join(lines) + "\n")                # does not parse
    (tmp_path / "binary.ir").write_bytes(b"\xff\xfe not text\n")              # not UTF-8
    (tmp_path / "broken.ir.gz").write_bytes(b"not gzip at all")                # a damaged .gz
    (tmp_path / "good.ir").write_bytes(SEED.read_bytes())
    return tmp_path


def _refuse_open(*_args, **_kwargs):
    raise PermissionError(13, "Permission denied")


def _die_on_rank_3(tasks, *args, **kwargs):
    """In place of the analysis of a batch of ranks: the worker reading rank 3 dies (killed, out
    of memory). Sent to the workers by name, so a pool started from a fork server runs it too."""
    from msinspect.analysis.job import collect

    if any("rank_3" in task[0] for task in tasks):
        os._exit(9)
    return collect.__dict__.get("_real_batch", collect._analyse_batch)(tasks, *args, **kwargs)


def _expect(result, error: type[MsInspectError], code: int, message: str, hint: bool) -> None:
    output = result.stdout + result.stderr
    assert error.exit_code == code
    assert result.exit_code == code, output
    assert "error: " in result.stderr and message in result.stderr, output
    assert (HINT in result.stderr) == hint, output
    assert "Traceback" not in output and "internal error" not in output, output


def test_a_parse_error_is_a_finding_with_the_hint(files):
    _expect(_invoke("summary", files / "bad.ir"), IRParseError, 1, "bad.ir:4:20: unexpected '?'", hint=True)


def test_bytes_that_are_not_utf8_are_a_finding_that_lenient_reads_past(files):
    _expect(_invoke("summary", files / "binary.ir"), IRDecodeError, 1, "binary.ir:1:1: invalid UTF-8 byte 0xff",
            hint=True)
    assert _invoke("summary", files / "binary.ir", "--lenient").exit_code == 0


def test_a_damaged_gz_is_a_finding_without_a_hint_lenient_cannot_act_on(files):
    _expect(_invoke("summary", files / "broken.ir.gz"), IRDecodeError, 1,
            "broken.ir.gz: cannot decompress: compressed stream is not a valid .gz", hint=False)


def test_a_file_that_cannot_be_read_exits_66_in_both_modes(files, monkeypatch):
    monkeypatch.setattr("msinspect.parser.reading.open", _refuse_open, raising=False)
    for lenient in ((), ("--lenient",)):
        _expect(_invoke("render", files / "good.ir", "-o", files / "g.dot", *lenient), IRReadError, 66,
                "good.ir: cannot read: Permission denied", hint=False)


def test_a_file_the_listing_finds_unreadable_is_a_read_error(files, monkeypatch):
    """(The command line's own check of its arguments refuses such a path first, exit 2.)"""
    from msinspect import load_dump

    monkeypatch.setattr(os, "access", lambda *_: False)
    with pytest.raises(IRReadError, match="good.ir: cannot read: Permission denied"):
        load_dump(files / "good.ir")


def test_a_file_over_the_cap_is_refused_exit_2(files, monkeypatch):
    monkeypatch.setenv("MSINSPECT_MAX_IR_BYTES", "100")
    _expect(_invoke("summary", files / "good.ir"), IRTooLargeError, 2,
            "good.ir: the file is larger than 100 bytes, the most msinspect reads (set MSINSPECT_MAX_IR_BYTES", hint=False)


def test_a_setting_that_cannot_be_used_exits_2(files, monkeypatch):
    monkeypatch.setenv("MSINSPECT_MAX_IR_BYTES", "lots")
    _expect(_invoke("summary", files / "good.ir"), ConfigError, 2,
            "MSINSPECT_MAX_IR_BYTES must be a positive number of bytes, not 'lots'", hint=False)


@pytest.mark.parametrize("args", [["summary", "a\0b"], ["parse", "x.ir\0"], ["render", str(SEED), "-o", "g\0.svg"],
                                  ["strategies", str(SP), "--op", "mat\0mul"]])
def test_a_nul_in_an_argument_is_a_usage_error(args):
    _expect(_invoke(*args), BadArgumentError, 2, "holds a NUL character", hint=False)


def test_a_nul_in_a_path_given_to_the_library_is_a_bad_argument(files):
    from msinspect import load_dump, parse_file

    with pytest.raises(BadArgumentError, match=r"a\\x00b: holds a NUL character"):
        load_dump(files / "a\0b")
    with pytest.raises(BadArgumentError, match="holds a NUL character"):
        parse_file(str(files / "good.ir") + "\0")


def test_a_worker_that_dies_exits_71(monkeypatch):
    from msinspect.analysis.job import collect

    monkeypatch.setattr(collect, "_real_batch", collect._analyse_batch, raising=False)
    monkeypatch.setattr(collect, "_analyse_batch", _die_on_rank_3)
    _expect(_invoke("summary", SP, "--jobs", "2"), WorkerError, 71, "died while reading this file (killed, or out of memory)",
            hint=False)


def test_the_hint_is_not_given_to_a_command_given_lenient(files):
    """``render --lenient`` of a damaged ``.gz`` has nothing to read past: the error, no hint."""
    result = _invoke("render", files / "broken.ir.gz", "-o", files / "g.dot", "--lenient")
    _expect(result, IRDecodeError, 1, "cannot decompress", hint=False)


def test_lenient_still_reads_past_what_does_not_parse(files):
    result = _invoke("summary", files / "bad.ir", "--lenient")
    assert result.exit_code == 0, result.stderr
    assert "bad.ir:4:20: unexpected '?'" in result.stderr and HINT not in result.stderr


@pytest.mark.parametrize("error", [
    IRReadError("rank_0/x.ir", 0, 0, "cannot read: Permission denied"),
    IRDecodeError("rank_0/x.ir.gz", 0, 0, "cannot decompress: compressed stream ends early", lenient_helps=False),
    IRDecodeError("rank_0/x.ir", 3, 7, "invalid UTF-8 byte 0xff", source_line="  %1 = ?"),
    IRTooLargeError("rank_0/x.ir", 0, 0, "the file is larger than 100 bytes"),
    WorkerError("rank_0/x.ir", 0, 0, "the parser process died while reading this file"),
    BadArgumentError("a\\x00b: holds a NUL character, which no path can"),
], ids=lambda e: type(e).__name__)
def test_each_class_pickles_whole_with_its_code(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and vars(back) == vars(error) and str(back) == str(error)
    assert back.exit_code == error.exit_code and back.lenient_helps == error.lenient_helps


def test_the_file_errors_are_not_parse_errors():
    """``except IRParseError`` means the grammar; the other faults of a file are apart from it."""
    for kind in (IRDecodeError, IRReadError, IRTooLargeError, WorkerError):
        assert issubclass(kind, IRFileError) and not issubclass(kind, IRParseError)
    assert [c for c in (IRParseError, IRDecodeError, IRReadError, IRTooLargeError, WorkerError) if c.lenient_helps] \
        == [IRParseError, IRDecodeError]


def test_the_exit_code_table_imports_no_command_module():
    """Each error carries its code: classifying one loads neither rendering nor training."""
    script = ("import sys\nfrom msinspect.cli import exits\nfrom msinspect.errors import MsInspectError\n"
              "assert exits.exit_code(MsInspectError('x')) == 2 and exits.exit_code(ValueError()) == 70\n"
              "print(sorted(m for m in sys.modules if m.startswith(('msinspect.render', 'msinspect.train'))))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
