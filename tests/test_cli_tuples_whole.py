"""A 120-column terminal wraps text between words, never a tuple: a strategy or a shape stays
on one line (issue 40, item 6: ``((2, 1), (1,`` / ``4))`` was shown while ``op`` kept
``SoftmaxCrossEntropyWithLogits`` whole).

Expected facts by hand from ``fixtures/zoo/nets/gpt.py``'s strategy table with zoo 01's
``dp = 2``, ``tp = 4`` (``fixtures/zoo/nets/01_semi_auto_tp4dp2.py``), hidden 512, heads 8,
sequence 64, global batch 8:

- ``context_bmm``: ``((dp, tp, 1, 1), (dp, tp, 1, 1))`` = ``((2, 4, 1, 1), (2, 4, 1, 1))``,
  28 characters, wider than the 14 a wrapping column may shrink to;
- ``q_matmul``: ``((dp, 1), (1, tp))`` = ``((2, 1), (1, 4))``, the cell of the issue;
- ``loss_ce`` is ``SoftmaxCrossEntropyWithLogits``, so the op column is that name's 29 columns;
- each of the 4 blocks (``blocks``: a SequentialCell of ``Block`` cells, scopes ``.../0-Block/...``
  to ``.../3-Block/...``) has its own ``q_matmul`` in ``attention-Attention``: a person's table
  tells them apart by the block, ``0-Block/.../q_matmul`` (which ``--op`` takes back).
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
    assert {name for name, _ in cells if name.endswith("/q_matmul")} == {f"{b}-Block/.../q_matmul" for b in range(4)}
    assert ("0-Block/.../q_matmul", "((2, 1), (1, 4))") in cells
    assert ("0-Block/.../context_bmm", "((2, 4, 1, 1), (2, 4, 1, 1))") in cells
    assert any(c == "SoftmaxCrossEntropyWithLogits" for row in body_rows(strategies_120) for c in row)


def test_a_tuple_is_one_word_and_text_wraps_between_words():
    from msinspect.cli.display import unbroken

    assert unbroken("((2, 4, 1, 1), (2, 4, 1, 1))") == 28
    assert unbroken("((1024, 512), (-1, 64))") == len("((1024, 512), (-1, 64))")
    assert unbroken("chosen by the planner") == len("planner")


def test_a_slice_is_one_word():
    from msinspect.cli.display import unbroken

    assert unbroken("[0:256, 256:512]") == len("[0:256, 256:512]")


def test_names_in_several_scopes_are_told_apart_by_the_nearest_part_that_differs():
    """Three Dense cells each with a ``matmul`` (a user's MLP), and the four blocks of gpt.py."""
    from msinspect.cli.display import named_apart

    mlp = ["Default/net-MLP/fc1-Dense", "Default/net-MLP", "Default/net-MLP/fc2-Dense"]
    assert named_apart(["matmul", "act", "matmul"], mlp) == ["fc1-Dense/matmul", "act", "fc2-Dense/matmul"]
    blocks = [f"Default/blocks-SequentialCell/{b}-Block/attention-Attention" for b in (0, 1)]
    assert named_apart(["q_matmul", "q_matmul"], blocks) == ["0-Block/.../q_matmul", "1-Block/.../q_matmul"]
    # the same name twice in one scope (a Primitive called twice) needs no prefix
    assert named_apart(["ffn_add", "ffn_add"], ["Default/0-Block"] * 2) == ["ffn_add", "ffn_add"]
    # no single part differs: as many last parts as tell them apart
    odd = ["Default/a/x/y", "Default/b/x/y", "Default/a/z/y"]
    assert named_apart(["m", "m", "m"], odd) == ["a/x/y/m", "b/x/y/m", "a/z/y/m"]


def test_the_told_apart_name_selects_its_operator_back():
    from msinspect.analysis.dataflow.node_facts import selector_matches

    scope = "Default/blocks-SequentialCell/0-Block/attention-Attention"
    assert selector_matches("q_matmul", scope, "0-Block/.../q_matmul")
    assert not selector_matches("q_matmul", scope.replace("0-Block", "1-Block"), "0-Block/.../q_matmul")
    assert selector_matches("q_matmul", scope, "attention-Attention/MatMul", op="MatMul")
    # without "..." a scope-qualified name is one whose scope ends so, as before
    assert not selector_matches("q_matmul", scope, "0-Block/q_matmul")
    assert selector_matches("q_matmul", scope, "0-Block/attention-Attention/q_matmul")


def test_the_comm_table_tells_each_blocks_producer_apart():
    """zoo 01's out_matmul is row parallel ((dp, tp), (tp, 1)) in each of the 4 blocks, so each
    block's forward AllReduce has its own out_matmul as producer: four producers, by block."""
    lines, code = in_terminal("comm", ZOO01, "--rank", "0", "--kind", "forward", "--columns", "rank,op,producer")
    assert code == 0, "\n".join(lines)
    producers = {row[2] for row in body_rows(lines) if len(row) > 2 and row[2].endswith("out_matmul")}
    assert {f"{b}-Block/.../out_matmul" for b in range(4)} <= producers, producers
