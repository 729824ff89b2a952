"""Quiet by default (issue 40, item 1): an analysis says on stderr which ranks it read and at
which stage, and nothing of how msinspect read the files (ranks read by what differs from
another, a rank read in full because a line departs): that is said under ``msinspect -v``.

Expected by hand: zoo 02 (``fixtures/zoo/nets/02_sharding_propagation_64.py``) ran 64 ranks of
which ranks 0, 31 and 63 were kept (fixtures/README.md); the analyses read ``validate`` by
default (the first pass with per-rank shapes, docs/analyses.md)."""
from __future__ import annotations

import os
from types import SimpleNamespace

import click
import pytest
from click.testing import CliRunner

from msinspect import parser_mode
from msinspect.analysis.job.collect import READ_EVERY_RANK_ENV
from msinspect.cli import main
from msinspect.cli.reads import tell_alike
from tests.conftest import FIXTURES

ZOO02 = FIXTURES / "zoo" / "02_sharding_propagation_64"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def said(done) -> list[str]:
    """The lines on stderr (the progress bar leaves an empty one)."""
    return [line for line in done.stderr.splitlines() if line.strip()]


@pytest.mark.parametrize("command", ["summary", "strategies", "comm"])
def test_an_analysis_says_the_ranks_read_and_no_reading_notes(command):
    done = run(command, ZOO02)
    assert done.exit_code == 0, done.output
    assert said(done) == ["read 3 rank(s) at validate: 0, 31, 63"]


def test_verbose_says_more_and_never_less():
    quiet, loud = run("summary", ZOO02), run("-v", "summary", ZOO02)
    assert loud.exit_code == 0 and loud.stdout == quiet.stdout
    lines = said(loud)
    assert lines[0] == "read 3 rank(s) at validate: 0, 31, 63"
    assert all(line.startswith(("note: ", "  ")) for line in lines[1:])
    if parser_mode.current() == parser_mode.FAST and not os.environ.get(READ_EVERY_RANK_ENV):
        assert lines[1:], "the fast reading reads ranks 31 and 63 by what differs, or says why it read them in full"


def _ranks():
    def rank(n, signature, read_by=None, departure=None, departed_from=None):
        return SimpleNamespace(label=f"rank_{n}", signature=signature, read_by=read_by, departure=departure,
                               departed_from=departed_from)

    return [rank(0, "A"), rank(1, "A", read_by="rank_0"),
            rank(2, "A", departure="read in full: line 9 differs", departed_from="rank_1"),
            rank(3, "B", departure="read in full: line 4 differs", departed_from="rank_2")]


@pytest.mark.parametrize("verbose", [False, True])
def test_how_the_ranks_were_read_is_said_under_verbose_only(capsys, verbose):
    """How many ranks were read by what differs, and each rank read in full because its text
    departed from the rank before it, where the two have one signature (ranks whose answers
    differ are told apart by the rank groups): under -v; nothing without."""
    with click.Context(main, info_name="msinspect") as ctx:
        ctx.params["verbose"] = verbose
        tell_alike(_ranks())
    said = capsys.readouterr().err.splitlines()
    assert said == (["note: 1 of 4 ranks read by what differs from a rank read in full (the same answers; "
                     "MSINSPECT_READ_EVERY_RANK=1 reads each in full)",
                     "note: rank_2: read in full: line 9 differs"] if verbose else [])
