"""Output at thousands of ranks (issue 28): a terminal table stays a few rows (ranks that agree
are one row, and past 1,000 rows, rows that differ only in each rank's own group or file too);
``--jsonl`` gives the rows of ``--json`` one per line, written as they are made."""
from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from msinspect.cli import main
from msinspect.cli import output
from msinspect.cli.display import FOLD_ROWS, lay_out
from tests.conftest import FIXTURES

ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"
ZOO04 = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.parametrize("command", [["summary"], ["strategies"], ["comm"], ["comm", "--by", "group"], ["shapes"],
                                     ["shapes", "--params"]], ids=" ".join)
def test_jsonl_is_the_json_one_row_a_line(command):
    whole, lines = run(*command, ZOO04, "--json"), run(*command, ZOO04, "--jsonl")
    assert lines.exit_code == whole.exit_code
    rows = json.loads(whole.stdout)
    assert rows and lines.stdout.endswith("}\n")
    assert [json.loads(line) for line in lines.stdout.splitlines()] == rows
    assert len(lines.stdout.splitlines()) == len(rows)


def test_two_output_formats_are_a_usage_error():
    done = run("summary", ZOO01, "--json", "--jsonl")
    assert done.exit_code == 2 and "--json and --jsonl: give one output format" in done.output


def test_rows_slow_to_come_are_written_as_they_come(monkeypatch):
    written = []
    monkeypatch.setattr(output.click, "echo", lambda text, nl=True: written.append(text))

    def slow():
        for i in range(3):
            time.sleep(0.12)
            yield f"row {i}\n"

    output.write(slow())
    assert written == ["row 0\n", "row 1\n", "row 2\n"]


def _comm_rows(ranks: int) -> list[dict]:
    """A TP4 x DP job's communication, per rank: an AllReduce over its tensor-parallel group and
    a mirror over its data-parallel group, each rank's group its own."""
    rows = []
    for rank in range(ranks):
        tp = tuple(range(rank // 4 * 4, rank // 4 * 4 + 4))
        dp = (rank // 8 * 8 + rank % 4, rank // 8 * 8 + rank % 4 + 4)
        rows.append({"rank": rank, "op": "AllReduce", "kind": "forward", "group_ranks": "-".join(map(str, tp)),
                     "line": 40})
        rows.append({"rank": rank, "op": "_MirrorOperator", "kind": "gradient",
                     "group_ranks": "-".join(map(str, dp)), "line": 50 + rank % 2})
    return rows


def test_a_thousand_ranks_are_a_few_rows_in_a_terminal(capsys):
    rows = _comm_rows(2000)
    columns = ["rank", "op", "kind", "group_ranks", "line"]
    layout = lay_out(rows, columns, width=160, merge=True, fold=["group_ranks", "line"])
    assert layout.folded == ["group_ranks", "line"]
    assert layout.rows == [["0-1999", "AllReduce", "forward", "500 groups: (0-1-2-3) (4-5-6-7) ...", "40"],
                           ["0-1999", "_MirrorOperator", "gradient", "1000 groups: (0-4) (1-5) ...",
                            "2 lines: (50) (51)"]]
    output.emit(rows, as_json=False, as_csv=False, title="communication", columns=columns, merge=True,
                fold=["group_ranks", "line"])
    shown = capsys.readouterr().out
    assert ("(4000 rows, 2 shown: ranks that agree are one row, and rows that differ only in group_ranks, line)"
            in " ".join(shown.split()))
    assert len(shown.splitlines()) < 20


def test_a_thousand_ranks_summary_folds_the_files():
    rows = [{"rank": r, "file": f"step_parallel_end_{r % 3:04}.ir", "strategies": 83} for r in range(1500)]
    layout = lay_out(rows, ["rank", "file", "strategies"], width=160, merge=True, fold=["file"])
    assert not layout.folded and len(layout.rows) == 3  # three files, three rows: nothing to fold
    rows = [{**row, "file": f"step_parallel_end_{row['rank']:04}.ir"} for row in rows]
    layout = lay_out(rows, ["rank", "file", "strategies"], width=160, merge=True, fold=["file"])
    assert layout.rows == [["0-1499", "1500 files: (step_parallel_end_0000.ir) (step_parallel_end_0001.ir) ...",
                            "83"]]


def test_up_to_a_thousand_rows_each_group_keeps_its_row(capsys):
    """Eight ranks of TP4 x DP2: the AllReduce of ranks 0-3 and that of 4-7 are two rows, as
    before; folding is for tables that would be unreadable."""
    rows = _comm_rows(8)
    assert len(rows) < FOLD_ROWS
    output.emit(rows, as_json=False, as_csv=False, title="communication", columns=["rank", "op", "group_ranks"],
                merge=True, fold=["group_ranks"])
    shown = capsys.readouterr().out
    assert "groups:" not in shown and "differ only" not in shown
    assert "0-1-2-3" in shown and "4-5-6-7" in shown and "0-4" in shown and "3-7" in shown
