"""Fragments read by template (parser.core): a type line or attribute dict that differs from one
already read only in its digits takes that one's tree with its own tokens. The values must be
those of the line itself, digits that name a type ("I64(") must never be mixed up, and a real
dump must read the same with templates as without."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from msinspect import parse_text
from msinspect.model import canonical
from msinspect.parser import core, typelines

ROOT = Path(__file__).resolve().parents[2]
HEADER = "# IR entry: @g\n# Total subgraphs: 1\n\nsubgraph attr:\nsubgraph @g(%para1_x) {\n"
FOOTER = "  Return(%3)\n      : (<Tensor[Float32], (2)>)\n}\n\n\n"


@pytest.fixture
def fresh_parser(monkeypatch):
    """A fast parser with no fragment or template seen yet, counting template instantiations. Its
    other accelerators are off (node items read by Lark, no attribute shapes, no type-line
    skeletons), so that each fragment is read by template where it can be: the templates are what
    is tested here."""
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    core._parser.cache_clear()
    reads = core._read_range
    monkeypatch.setattr(core, "_read_range", lambda path, text, a, b, lines, fast, unread=0:
                        reads(path, text, a, b, lines, False, unread))
    monkeypatch.setattr(typelines.TypeLines, "line", lambda self, text: None)
    core._parser()[1].attr_texts = None
    calls = []
    real = core._instantiate

    def counted(tree, text, memo):
        calls.append(tree)
        return real(tree, text, memo)

    monkeypatch.setattr(core, "_instantiate", counted)
    yield calls
    core._parser.cache_clear()


def node_text(i: int, a: str, shape: tuple[int, int], strategy: str, ref: int) -> str:
    rows, cols = shape
    return (f"  %{i}(y) = PrimFunc_Foo(%para1_x) primitive_attrs: {{a: {a}, b: ({rows}, {cols})}} "
            f"{{in_strategy: {strategy}}}\n"
            f"      : (<Ref[Tensor[Float32]], ({rows}, {cols}), ref_key=blocks.{ref}.w, is_parameter>) "
            f"-> (<Tensor[Float32], ({rows}, {cols})>)\n")


def test_values_read_by_template_are_each_lines_own(fresh_parser):
    # four lines of one template (digits differ), then one whose digits follow "I": "I65(" is a
    # name, not the typed scalar I64(, so it must not take the template of the lines above
    text = HEADER + "".join([
        node_text(0, "I64(1)", (16, 32), "((2, 4), (4, 1))", 0),
        node_text(1, "I64(7)", (64, 8), "((8, 1), (1, 1))", 17),
        node_text(2, "I64(3)", (12, 96), "((1, 2), (2, 1))", 5),
        node_text(3, "I64(250)", (512, 128), "((4, 2), (2, 4))", 123),
        node_text(4, "I65(2)", (16, 32), "((2, 4), (4, 1))", 0),
    ]) + FOOTER
    ir = parse_text(text)
    nodes = {n.index: n for n in ir.subgraphs[0].nodes if n.index is not None}
    assert fresh_parser, "the lines of one template were not read by template"
    expected = {0: (1, (16, 32), ((2, 4), (4, 1)), "blocks.0.w"),
                1: (7, (64, 8), ((8, 1), (1, 1)), "blocks.17.w"),
                2: (3, (12, 96), ((1, 2), (2, 1)), "blocks.5.w"),
                3: (250, (512, 128), ((4, 2), (2, 4)), "blocks.123.w")}
    for index, (a, shape, strategy, ref_key) in expected.items():
        node = nodes[index]
        assert node.primitive_attrs == {"a": a, "b": shape}
        assert type(node.primitive_attrs["a"]) is int
        assert node.strategy.in_strategy == strategy
        (ref,) = node.input_types
        assert (ref.kind, ref.shape, ref.ref_key) == ("Ref", shape, ref_key)
        assert node.output_types[0].shape == shape
    assert nodes[4].primitive_attrs["a"] == "I65(2)"  # a type written as a call, kept as text


def test_a_dump_reads_the_same_with_templates_as_without(fresh_parser, monkeypatch):
    # a pipeline of repeated layers: its type lines and attribute dicts repeat with other numbers
    path = ROOT / "fixtures/zoo/04_pipeline_hsdp_recompute/rank_0/step_parallel_end_0020.ir.gz"
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    with_templates = parse_text(text, path.name, lenient=True)
    assert len(fresh_parser) > 100, "the dump's repeated fragments were not read by template"
    core._parser.cache_clear()
    monkeypatch.setattr(core, "_template_key", lambda text: text)  # no template: every fragment read directly
    direct = parse_text(text, path.name, lenient=True)
    assert with_templates.cnode_count == direct.cnode_count > 0
    assert canonical(with_templates) == canonical(direct)


def test_the_template_key_is_the_digit_runs_made_zeros():
    # made in bulk (bytes, then the runs after I/U/F/t put back): the same as replacing each run of
    # _DIGIT_RUN one by one, on text with non-ASCII letters, digits of other scripts, a lone surrogate
    import random

    rng = random.Random(13)
    alphabet = "IUFtx0123456789 (,)é٣\udc80"
    by_run = lambda text: core._DIGIT_RUN.sub(lambda m: "0" * len(m.group()), text)  # noqa: E731
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert core._template_key(text) == by_run(text), repr(text)
    assert core._template_key("I64(12) F32(3.5) blocks.74.wq U8 t9x 7") == "I64(00) F32(0.0) blocks.00.wq U8 t9x 0"
