"""Seed 002's two IR blocks exactly as the document prints them, "..." elisions included: lenient
reading costs each elision one line and reads every node shown (facts from the seed's text)."""
from __future__ import annotations

import pytest

from msinspect import IRParseError, parse_file
from tests.conftest import FIXTURES

PRINTED = FIXTURES / "seed_002_as_printed"


def elision_lines(path) -> list[int]:
    return [i for i, line in enumerate(path.read_text().split("\n"), 1) if line.strip() == "..."]


@pytest.mark.parametrize("name, nodes", [
    ("step_parallel_begin_0041", ["matmul", "relu", "[CNode]472", "matmul2"]),
    ("18_execute_0185", ["matmul", "forward_op_11795743325248501408",
                         "redistribution_op_16390315056374637535StridedSlice", "relu", "equiv[CNode]472", "matmul2"]),
])
def test_each_elision_costs_one_line(name, nodes):
    path = PRINTED / f"{name}.excerpt.ir"
    ir = parse_file(path, lenient=True)
    assert [d.line for d in ir.diagnostics] == elision_lines(path) and len(elision_lines(path)) == 2
    assert all(d.end_line == d.line for d in ir.diagnostics)
    assert [n.name for n in ir.nodes()] == nodes
    with pytest.raises(IRParseError) as info:
        parse_file(path)
    assert (info.value.line, info.value.column) == (2, 1)


def test_the_strategies_the_seed_states_are_read():
    ir = parse_file(PRINTED / "step_parallel_begin_0041.excerpt.ir", lenient=True)
    assert ir.node("matmul").strategy.in_strategy == ((2, 4), (4, 1))
    assert ir.node("relu").strategy.in_strategy == ((2, 4),)
    assert ir.node("matmul").strategy.source == "user" and ir.node("relu").strategy.source == "planner"
