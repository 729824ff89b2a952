"""Abstracts of any depth: a result or the documented error, never RecursionError, and time linear
in the depth (no text re-escaped at every level)."""
from __future__ import annotations

import pytest

from msinspect import IRParseError, parse_text
from msinspect.model import Abstract
from msinspect.parser.abstracts import COMMA, NESTED_TEXT_MAX, make_abstract, render
from tests.conftest import FIXTURES

DEPTH = 100_000
FILE_DEPTH = 10_000  # ten times Python's recursion limit; bench/fuzz_parse.py runs 100,000 in files
BASE = (FIXTURES / "seed_002" / "18_execute_0185.excerpt.ir").read_text()
FIRST = "<Tensor[Float32], (8, 8)>"


def test_render_and_make_abstract_at_depth_100000():
    parts = ["16"]
    for _ in range(DEPTH):
        parts = [("(", parts)]
    text = render(parts)
    assert text == "(" * DEPTH + "16" + ")" * DEPTH
    abstract = make_abstract(["Tensor", ("[", ["Float32"]), COMMA] + parts)
    assert (abstract.kind, abstract.dtype, abstract.shape) == ("Tensor", "Float32", None)
    assert abstract.text == "<Tensor[Float32], " + text + ">"


def test_nested_abstracts_keep_a_plain_kind_and_bounded_text():
    inner = make_abstract(["Tensor", ("[", ["Float32"]), COMMA, ("(", ["8", COMMA, "8"])])
    for _ in range(2_000):
        inner = make_abstract([inner])
        assert inner.kind == "null"            # not the repr of the abstract inside, re-escaped
        assert len(inner.text) <= NESTED_TEXT_MAX + 2 + 80
    assert isinstance(inner, Abstract)


@pytest.mark.parametrize("run", ["(" * FILE_DEPTH + ")" * FILE_DEPTH, "[" * FILE_DEPTH,
                                 "<" * FILE_DEPTH + "Tensor" + ">" * FILE_DEPTH], ids=["parens", "open", "abstracts"])
def test_deep_runs_in_a_file_parse_or_give_the_documented_error(run):
    text = BASE.replace(FIRST, "<Tensor[Float32], " + run + ">", 1)
    assert text != BASE
    try:
        ir = parse_text(text, "deep.ir")
    except IRParseError as err:
        assert err.path == "deep.ir" and err.line == 2
    else:
        assert ir.subgraphs
    assert parse_text(text, "deep.ir", lenient=True) is not None
