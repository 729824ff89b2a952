"""Operands and attributes nested deeper than any value MindSpore writes are an error at the
node's line and column, the same in both readings, strict and lenient, never a RecursionError
("internal error") from a step that walks the value; nesting up to the limit is read."""
from __future__ import annotations

import pickle

import pytest

from msinspect.parser.transformer import MAX_VALUE_DEPTH
from tests.parser.readings import both

HEAD = "# IR entry: @g\n# Total subgraphs: 1\n\nsubgraph attr:\nsubgraph @g(%para1_x) {\n"
TAIL = ("      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n  Return(%9999)\n"
        "      : (<Tensor[Float32], (2)>)\n}\n\n\n")
MESSAGE = f"values nested more than {MAX_VALUE_DEPTH} brackets deep"


def _operands(depth: int) -> str:
    return HEAD + "  %9999(x) = Foo(" + "(" * depth + ")" * depth + ")\n" + TAIL


def _attribute(depth: int) -> str:
    return HEAD + "  %9999(x) = Foo(%para1_x) primitive_attrs: {a: " + "(" * depth + "1" + ")" * depth + "}\n" + TAIL


def _strategy(depth: int) -> str:
    return HEAD + "  %9999(x) = Foo(%para1_x) {in_strategy: " + "(" * depth + "1" + ")" * depth + "}\n" + TAIL


# 20,000: twenty times Python's recursion limit, as any recursive reading would meet it; the
# fuzz bench (bench/fuzz_parse.py) and test_mutations' bracket runs go to 100,000 brackets
@pytest.mark.parametrize("depth", [MAX_VALUE_DEPTH + 1, 1_000, 20_000])
@pytest.mark.parametrize("make", [_operands, _attribute, _strategy])
def test_too_deep_is_an_error_at_the_node(make, depth):
    strict = both(make(depth), "deep.ir", lenient=False)
    assert strict["fast"] == strict["reference"]
    assert strict["fast"].startswith(f"error: deep.ir:6:3: {MESSAGE}")
    lenient = both(make(depth), "deep.ir", lenient=True)
    assert lenient["fast"] == lenient["reference"]
    assert MESSAGE in str(lenient["fast"]) and "skipped lines 6-7" in str(lenient["fast"])


@pytest.mark.parametrize("make", [_operands, _attribute, _strategy])
def test_nesting_up_to_the_limit_is_read_and_kept(make):
    from msinspect import parse_text

    found = both(make(MAX_VALUE_DEPTH), "deep.ir", lenient=False)
    assert found["fast"] == found["reference"] and not str(found["fast"]).startswith("error")
    ir = parse_text(make(MAX_VALUE_DEPTH), "deep.ir")
    assert pickle.loads(pickle.dumps(ir)).cnode_count == 2  # %9999 and Return; the parse cache keeps it
