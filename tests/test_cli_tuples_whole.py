"""A 120-column terminal wraps text between words, never a tuple: a strategy or a shape stays
on one line (issue 40, item 6: ``((2, 1), (1,`` / ``4))`` was shown while ``op`` kept
``SoftmaxCrossEntropyWithLogits`` whole).

Expected facts by hand from ``fixtures/zoo/nets/gpt.py``'s strategy table with zoo 01's
``dp = 2``, ``tp = 4`` (``fixtures/zoo/nets/01_semi_auto_tp4dp2.py``), hidden 512, heads 8,
sequence 64, global batch 8:

- ``context_bmm``: ``((dp, tp, 1, 1), (dp, tp, 1, 1))`` = ``((2, 4, 1, 1), (2, 4, 1, 1))``,
  28 characters, wider than the 14 a wrapping column may shrink to;
- ``q_matmul``: ``((dp, 1), (1, tp))`` = ``((2, 1), (1, 4))``, the cell of the issue;
- ``loss_ce`` is ``SoftmaxCrossEntropyWithLogits``, so the op column is that name's 29 columns.
"""
from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.test_cli_terminal import WIDTH, body_rows, in_terminal

ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"


@pytest.fixture(scope="module")
def strategies_120():
    lines, code = in_terminal("strategies", ZOO01)
    assert code == 0, "\n".join(lines)
    return lines


def _balanced(cell: str) -> bool:
    return cell.count("(") == cell.count(")")


def test_no_tuple_is_cut_across_lines(strategies_120):
    rows = body_rows(strategies_120)
    assert rows, "\n".join(strategies_120)
    for row in rows:
        for cell in row:
            # a tuple cut across lines leaves "((2, 1), (1," on one line and "4))" on the next
            assert _balanced(cell), f"tuple cut across lines: {cell!r} in {row}"
    assert max(len(line) for line in strategies_120) <= WIDTH


def test_the_strategies_of_the_issue_read_whole(strategies_120):
    cells = {(row[1], row[3]) for row in body_rows(strategies_120) if len(row) > 3}
    assert ("q_matmul", "((2, 1), (1, 4))") in cells
    assert ("context_bmm", "((2, 4, 1, 1), (2, 4, 1, 1))") in cells
    assert any(c == "SoftmaxCrossEntropyWithLogits" for row in body_rows(strategies_120) for c in row)


def test_a_tuple_is_one_word_and_text_wraps_between_words():
    from msinspect.cli.display import unbroken

    assert unbroken("((2, 4, 1, 1), (2, 4, 1, 1))") == 28
    assert unbroken("((1024, 512), (-1, 64))") == len("((1024, 512), (-1, 64))")
    assert unbroken("chosen by the planner") == len("planner")
