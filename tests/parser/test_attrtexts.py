"""Attribute texts read by their shape (parser/attrtexts.py): the strings of a node's attributes
are holes in a shape Lark reads once. Every node must get the values Lark gives when it reads the
text itself, and anything a shape cannot say must be read by Lark."""
from __future__ import annotations

import pytest

from msinspect.errors import IRParseError
from msinspect.model import canonical
from msinspect.parser import core

HEADER = "# IR entry: @g\n# Total subgraphs: 1\n\nsubgraph attr:\nsubgraph @g(%para1_x) {\n"
FOOTER = "  Return(%1)\n      : (<Tensor[Float32], (2)>)\n}\n\n\n"
TYPES = "      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n"


def _text(*attrs: str) -> str:
    return HEADER + "".join(f"  %{i}(y) = PrimFunc_Foo(%para1_x) {a}\n{TYPES}" for i, a in enumerate(attrs, 1)) + FOOTER


def _read(text: str, lenient: bool, fast: bool, monkeypatch):
    """``text`` read in one reading by that reading's parser of the test (made once a test, as a
    process makes it once for all its files: the shapes the fast reading keeps from one text are
    there for the next, as they are for a job's next file)."""
    monkeypatch.setenv("MSINSPECT_PARSER", "fast" if fast else "reference")
    try:
        return canonical(core.parse_text(text, "a.ir", lenient=lenient))
    except IRParseError as err:
        return "error: " + str(err)


@pytest.fixture(autouse=True)
def _new_parsers():
    """Each test starts from parsers that have read nothing, and leaves none behind."""
    core._parser.cache_clear()
    yield
    core._parser.cache_clear()


CASES = {
    # one shape, other strings; the instance name read on its own
    "strings": ['{instance name: a1} primitive_attrs: {group: "hccl_world_group", id: "17"}',
                '{instance name: b_22} primitive_attrs: {group: "4-6301172352641561019", id: "9"}'],
    # strings in a tuple, a list, a dict inside a dict, single quotes, escapes, empty
    "nested": ['cnode_attrs: {ranks: ("0", "1"), names: [\'a\', "b\\"c"], d: {e: ""}}',
               'cnode_attrs: {ranks: ("2", "3"), names: [\'x\', "y"], d: {e: "z"}}'],
    # a string as a key, and a key given twice (the later pair replaces the earlier)
    "keys": ['primitive_attrs: {"a b": "1", c: "2"}', 'primitive_attrs: {"a c": "3", c: "4"}',
             'primitive_attrs: {k: "first", k: "second"}', 'primitive_attrs: {k: "third", k: "fourth"}'],
    # a quote inside a tensor's value, a string beside a typed scalar and a strategy
    "tensor": ['primitive_attrs: {t: Tensor(shape=[1], dtype=String, value="a"), s: "b"}',
               'primitive_attrs: {t: Tensor(shape=[1], dtype=String, value="c"), s: "d"}',
               '{instance name: 5323172883814874878ReduceScatter11} primitive_attrs: {x: I64(1), g: "g1"} {in_strategy: ((2, 1))}',
               '{instance name: 18183146290410911318} primitive_attrs: {x: I64(2), g: "g2"} {in_strategy: ((1, 2))}'],
    # instance names that are no plain name, a head with nothing after it, a NUL in a string
    "heads": ['{instance name: None}', '{instance name: inf} cnode_attrs: {a: "1"}', '{instance name: }',
              '{instance name: x} {instance name: y}', 'primitive_attrs: {a: "nul\x00"}'],
    # broken: a string that does not close, a group that does not close, after one that reads
    "broken": ['primitive_attrs: {a: "1"}', 'primitive_attrs: {a: "1}', 'primitive_attrs: {a: "2"',
               '{instance name: z} cnode_attrs: {a: "1" b: "2"}'],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_attribute_texts_read_the_same_by_shape_as_by_lark(name, monkeypatch):
    attrs = CASES[name]
    texts = [_text(*attrs)] + [_text(a) for a in attrs]
    for text in texts:
        for lenient in (False, True):
            assert _read(text, lenient, True, monkeypatch) == _read(text, lenient, False, monkeypatch)


def test_one_shape_gives_each_node_its_own_values(monkeypatch):
    # 200 nodes of one shape (by hand: group i % 7, the id i, the ranks (i, i + 1) as strings)
    attrs = [f'{{instance name: op{i}}} primitive_attrs: {{group: "g{i % 7}", n: I64(3)}} '
             f'cnode_attrs: {{id: "{i}", ranks: ("{i}", "{i + 1}")}}' for i in range(200)]
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    core._parser.cache_clear()
    try:
        ir = core.parse_text(_text(*attrs), "a.ir")
        nodes = {n.index: n for n in ir.subgraphs[0].nodes if n.index is not None}
        shapes = core._parser()[1].attr_texts.shapes
        assert len(shapes) == 1  # one text for Lark to read, not 200
        for i in (1, 57, 200):
            node = nodes[i]
            assert node.instance_name == f"op{i - 1}"
            assert node.primitive_attrs == {"group": f"g{(i - 1) % 7}", "n": 3}
            assert node.cnode_attrs == {"id": str(i - 1), "ranks": (str(i - 1), str(i))}
        nodes[1].primitive_attrs["group"] = "changed"  # no two nodes share a dict
        assert nodes[8].primitive_attrs["group"] == "g0"
    finally:
        core._parser.cache_clear()
