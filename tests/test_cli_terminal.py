"""The tables as a 120-column terminal shows them: run in a real pseudo-terminal of 120 x 40
(``COLUMNS`` unset, so the width is the terminal's own), no line is wider than the terminal, no
file name or shape is cut across lines, nothing reads ``NaN`` or ``None``, rows equal on every
rank but the rank are one row with the ranks, and the columns left out are named with the way
to see them. JSON keeps one row per rank.

Expected facts by hand from the network scripts and the device counts:

- ``train_jobs/manual_parallel.py`` on 8 ranks: every rank runs the same script on its slice of
  the batch, so the ranks' files and counts agree: one summary row, ranks 0-7;
- ``train_jobs/sharding_propagation.py`` (``networks.Net``) on 8 ranks: ``matmul`` carries the
  user's ((2, 4), (4, 1)) on every rank; its inputs (16, 32) and (32, 16) cut so are (8, 8) and
  (8, 16) on each: one row, ranks 0-7;
- zoo 04 (``fixtures/zoo/nets/04_pipeline_hsdp_recompute.py``): 2 pipeline stages on 8 ranks,
  ranks 0-3 and 4-7, the same program on each rank of a stage, other layers on the other: two
  summary rows, 0-3 and 4-7.
"""
from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import sys
import termios

import pytest
from rich.cells import cell_len

from tests.conftest import FIXTURES, ROOT
from tests.test_cli_parse import msinspect

WIDTH, HEIGHT = 120, 40
MANUAL = FIXTURES / "manual_parallel_8rank"
SP = FIXTURES / "sharding_propagation_dryrun_8rank"
ZOO04 = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def in_terminal(*args, width: int = WIDTH) -> tuple[list[str], int]:
    """Run ``msinspect ARGS`` in a pseudo-terminal of ``width`` x 40: the lines it shows (colours
    and the progress bar's redrawn lines taken out) and its exit code."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal's own size, not COLUMNS, sets the width
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        env["TERM"] = "xterm-256color"
        os.chdir(ROOT)
        os.execve(sys.executable, [sys.executable, "-m", "msinspect", *map(str, args)], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", HEIGHT, width, 0, 0))
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 300)
        if not ready:
            break
        try:
            data = os.read(fd, 1 << 16)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        out += data
    _, status = os.waitpid(pid, 0)
    text = _ESCAPE.sub("", out.decode("utf-8", "replace")).replace("\r\n", "\n")
    lines = [line.split("\r")[-1] for line in text.split("\n")]
    return [line for line in lines if not line.startswith("analysing ")], os.waitstatus_to_exitcode(status)


def body_rows(lines: list[str]) -> list[list[str]]:
    """The table's rows as cells (a row's continuation lines are rows with an empty first cell)."""
    return [[c.strip() for c in line.strip("│").split("│")] for line in lines if line.startswith("│")]


def header(lines: list[str]) -> str:
    """The table's column names, each as one word (a name broken after ``_`` joined back)."""
    rows = [[c.strip() for c in line.strip("┃").split("┃")] for line in lines if line.startswith("┃")]
    return " ".join("".join(parts) for parts in zip(*rows))


def _fits(lines: list[str]) -> None:
    wide = [line for line in lines if cell_len(line) > WIDTH]
    assert wide == [], "lines wider than the terminal"
    assert not [line for line in lines if re.search(r"\b(NaN|nan|None)\b", line)]


@pytest.fixture(scope="module")
def summary_manual():
    return in_terminal("summary", MANUAL)


def test_summary_fits_the_terminal_and_keeps_file_names_whole(summary_manual):
    lines, code = summary_manual
    assert code == 0, "\n".join(lines)
    _fits(lines)
    # the file each rank reads, named by the dump itself: whole on one line
    names = {p.name for p in MANUAL.glob("rank_*/*validate*.ir*")}
    assert names and all(any(name in line for line in lines) for name in names)


def test_summary_merges_the_ranks_that_agree(summary_manual):
    lines, _ = summary_manual
    ranks = [row[0] for row in body_rows(lines) if row[0]]
    assert ranks == ["0-7"]


def test_the_columns_left_out_are_named_with_the_way_to_see_them(summary_manual):
    lines, _ = summary_manual
    shown = header(lines).split()
    note = " ".join(line.strip() for line in lines if line.startswith("left out") or "--json" in line)
    assert note.startswith(f"left out to fit {WIDTH} columns: ") and "--wide" in note and "--columns" in note
    left_out = note.split(": ", 1)[1].split(" (", 1)[0].split(", ")
    every = ["rank", "file", "stage", "family", "status", "strategies", "set_by_user", "comm", "by_kind",
             "wire_bytes", "wire_unknown", "weights", "sharded_weights", "stage_ranks", "complete", "rank_group"]
    assert sorted(shown + left_out) == sorted(every) and "file" in shown and "by_kind" in shown


def test_strategies_of_one_operator_on_eight_agreeing_ranks_is_one_row():
    lines, code = in_terminal("strategies", SP, "--op", "matmul")
    assert code == 0, "\n".join(lines)
    _fits(lines)
    rows = [row for row in body_rows(lines) if row[0]]
    assert len(rows) == 1
    (row,) = rows
    cells = dict(zip(header(lines).split(), row))
    assert cells["rank"] == "0-7" and cells["name"] == "matmul" and cells["set_by"] == "user"
    assert cells["in_strategy"] == "((2, 4), (4, 1))" and cells["rank_inputs"] == "((8, 8), (8, 16))"
    # merging is for the terminal: JSON keeps a row per rank
    assert len(json.loads(msinspect("strategies", SP, "--op", "matmul", "--json").stdout)) == 8


def test_pipeline_stages_stay_apart_and_each_stage_is_one_row():
    lines, code = in_terminal("summary", ZOO04)
    assert code == 0, "\n".join(lines)
    _fits(lines)
    assert [row[0] for row in body_rows(lines) if row[0]] == ["0-3", "4-7"]


def test_wide_and_columns_choose_the_columns():
    lines, code = in_terminal("summary", MANUAL, "--columns", "rank,family,stage,file")
    assert code == 0 and header(lines).split() == ["rank", "family", "stage", "file"]
    assert not any(line.startswith("left out") for line in lines)
    lines, code = in_terminal("summary", MANUAL, "--wide")
    assert code == 0 and "sharded_weights" in header(lines).split()
    assert not any(line.startswith("left out") for line in lines)


def test_comm_prints_no_nan_where_a_value_is_missing():
    # group ranks and shapes of local redistribution steps, micro-batches outside a pipeline: missing
    lines, code = in_terminal("comm", SP)
    assert code == 0
    _fits(lines)
    assert body_rows(lines)


def test_a_missing_value_reads_as_a_dash_at_any_depth():
    from msinspect.cli.display import cell

    assert cell(None) == cell(float("nan")) == "-"
    assert cell(((16, 32), None)) == "((16, 32), -)"
    assert cell((8, float("nan"))) == "(8, -)" and cell((4,)) == "(4,)"
    assert cell({"forward": 2, "local": None}) == "forward 2, local -"


def test_only_rows_of_different_ranks_merge():
    """zoo 01 (``fixtures/zoo/nets/gpt.py``, 4 blocks, tp 4 x dp 2, one program on all 8 ranks):
    each block has 6 MatMuls (q, k, v, out, ffn_in, ffn_out) and the head one (lm_matmul), 25 a
    rank. A block's q_matmul reads like the other blocks' but for its block once scope and line are left out: the
    4 stay 4 rows, each merged over ranks 0-7, never one row standing for 32 operators."""
    lines, code = in_terminal("strategies", FIXTURES / "zoo" / "01_semi_auto_tp4dp2", "--op", "MatMul",
                              "--columns", "rank,name,in_strategy")
    assert code == 0
    rows = [row for row in body_rows(lines) if row[0]]
    assert len(rows) == 4 * 6 + 1 and {row[0] for row in rows} == {"0-7"}
    # each block's q_matmul is named by its block (0-Block/.../q_matmul ...), as --op takes it back
    assert sorted(row[1] for row in rows if row[1].endswith("q_matmul")) == [f"{b}-Block/.../q_matmul"
                                                                               for b in range(4)]
