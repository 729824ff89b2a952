"""A dimension of a symbolic shape (``S:[4, s1<[1,inf]>, 2, 2]``) of thousands of digits is an
error at its place, like every other number longer than MindSpore writes, in both readings; never
Python's own ``ValueError`` for integer strings past 4,300 digits (found by bench/fuzz_parse.py,
issue 40 item 13)."""
from __future__ import annotations

import gzip

import pytest

from msinspect import IRParseError, parse_text
from tests.conftest import FIXTURES
from tests.parser.readings import assert_same, reading

#: A real rank of a dynamic-shape network: line 33 is ``      : (S:[4, s1<[1,inf]>, 2, 2]) -> ...``
SOURCE = FIXTURES / "ut" / "b_test_dynamic_shape_graph_utils__test_no_need_to_accomplish" / "rank_0" \
    / "step_parallel_begin_0136.ir.gz"


@pytest.mark.parametrize("how", ["fast", "reference"])
def test_a_5000_digit_dimension_is_a_parse_error(how):
    """The first dimension ``4`` of line 33's symbolic shape made 5,000 nines: the error is at
    line 33, column 13 (after the 12 characters ``      : (S:[``: six spaces, then
    ``: (S:[``), saying how long the number is."""
    lines = gzip.decompress(SOURCE.read_bytes()).decode().split("\n")
    assert lines[32].startswith("      : (S:[4, s1<[1,inf]>")
    lines[32] = lines[32].replace("S:[4,", "S:[" + "9" * 5000 + ",", 1)
    text = "\n".join(lines)
    with reading(how), pytest.raises(IRParseError) as caught:
        parse_text(text, "x.ir")
    assert (caught.value.line, caught.value.column) == (33, 13)
    assert "a number of 5000 characters" in caught.value.message
    with reading(how):
        assert not parse_text(text, "x.ir", lenient=True).complete
    assert_same(text, "x.ir", lenient=False)
