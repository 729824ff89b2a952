"""Strategies wherever MindSpore 2.10 writes them, with who set each, on the model zoo: the
trailing braces (the strategy used), the primitive's ``in_strategy`` (the user's ``shard()``: alone
at ``step_parallel_begin`` of a semi-auto job), a ``mindspore.parallel.Layout`` and
``cnode_attrs``. Expected strategies come from the network scripts (fixtures/zoo/nets/gpt.py:
every LayerNorm ((dp, 1), (1,), (1,)), lm_matmul ((dp, 1), (1, tp))) with dp 2, tp 4."""
from __future__ import annotations

import shutil

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.strategies import layout_strategy, strategy_of, strategy_rows
from msinspect.model import Node
from msinspect.parser import parse_file
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"


@pytest.fixture(scope="module")
def tp4dp2():
    return msinspect.load_dump(ZOO / "01_semi_auto_tp4dp2")


def test_semi_auto_step_parallel_begin_has_the_users_strategies(tp4dp2):
    rows = analyse(tp4dp2, "step_parallel_begin").strategies()
    assert set(rows["rank"]) == set(range(8))
    ln1 = rows[rows["name"] == "ln1"]
    assert len(ln1) == 8 * 4  # 4 blocks on each of 8 ranks
    assert set(ln1["in_strategy"]) == {((2, 1), (1,), (1,))}
    assert set(ln1["set_by"]) == {"user"}
    lm = rows[rows["name"] == "lm_matmul"]
    assert set(lm["in_strategy"]) == {((2, 1), (1, 4))}
    assert set(lm["stage"]) == {"step_parallel_begin"}


def test_layout_api_gives_the_strategy_of_its_device_matrix():
    """zoo 10: Layout((2, 4), ("dp", "tp")): "dp" is axis 1 from the right (2 ways), "tp" axis 0
    (4 ways), ("dp", "tp") both (8 ways)."""
    assert layout_strategy({"device_matrix": (2, 4), "tensor_map": (1, -1)}) == (2, 1)
    assert layout_strategy({"device_matrix": (2, 4), "tensor_map": (-1, 0)}) == (1, 4)
    assert layout_strategy({"device_matrix": (2, 4), "tensor_map": ((1, 0), -1)}) == (8, 1)
    rows = analyse(msinspect.load_dump(ZOO / "10_layout_api_8"), "step_parallel_end").strategies()
    col = rows[rows["name"] == "col_matmul"]
    assert set(col["in_strategy"]) == {((2, 1), (1, 4))} and set(col["set_by"]) == {"user"}
    flat = rows[rows["name"] == "flat_matmul"]
    assert set(flat["in_strategy"]) == {((8, 1), (1, 1))}
    virtual = rows[rows["op"] == "_VirtualDataset"]
    assert set(virtual["set_by"]) <= {"planner"}  # inserted by the parallel pass, not a shard()


def _node(**attrs) -> Node:
    return Node(graph="g", index=1, debug_name="x", op=attrs.pop("op", "MatMul"), kind="call_primitive",
                callee="MatMul", inputs=(), line=1, **attrs)


def test_every_place_a_strategy_is_written():
    trailing = _node(trailing_attrs={"in_strategy": ((2, 4), (4, 1))})
    assert strategy_of(trailing).in_strategy == ((2, 4), (4, 1))
    assert strategy_of(trailing).source == "planner"
    assert strategy_of(trailing, keeps_user=False).source == "unknown"
    primitive = _node(primitive_attrs={"in_strategy": ((2, 1), (1,), (1,))})
    assert strategy_of(primitive).in_strategy == ((2, 1), (1,), (1,)) and strategy_of(primitive).source == "user"
    cnode = _node(cnode_attrs={"in_strategy": ((1, 8),)})
    assert strategy_of(cnode).in_strategy == ((1, 8),)
    assert strategy_of(_node()) is None


def test_get_next_with_no_input_to_cut_has_an_empty_strategy():
    get_next = _node(op="GetNext", trailing_attrs={"in_strategy": ()})
    assert strategy_of(get_next).in_strategy == ()


def test_set_by_cannot_be_told_in_a_file_that_keeps_no_user_attribute(tmp_path):
    """zoo 03 (recursive programming, no shard() at all): its validate file is a stage known to keep
    the user's attribute, so every strategy is the planner's; the same text under the name of a
    stage not known to keep it cannot tell."""
    validate = next((ZOO / "03_recursive_programming_32" / "rank_0").glob("*validate*"))
    assert {r["set_by"] for r in strategy_rows(parse_file(str(validate)))} == {"planner"}
    renamed = tmp_path / "hwopt_d_end_graph_0.ir.gz"
    shutil.copy(validate, renamed)
    assert {r["set_by"] for r in strategy_rows(parse_file(str(renamed)))} == {"unknown"}
