"""Every fixture, of both IR families, parses completely with the counts it states."""
from __future__ import annotations

import gzip

import pytest

from msinspect import parse_file, parse_text
from tests.conftest import FIXTURES, fixture_files


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_parses_completely(path):
    ir = parse_file(path, lenient=True)
    assert ir.diagnostics == []
    assert ir.status in ("complete", "excerpt")
    if ir.stated_cnodes is not None:
        assert ir.cnode_count == ir.stated_cnodes
    if ir.stated_subgraphs is not None:
        assert len(ir.subgraphs) == ir.stated_subgraphs
    assert ir.cnode_count > 0


def test_both_families_are_present():
    # lenient, as test_fixture_parses_completely reads them: the parse cache answers
    families = {parse_file(p, lenient=True).family for p in fixture_files()}
    assert {"2.10", "2.2", "excerpt"} <= families


def test_gz_reads_the_same_as_plain(tmp_path):
    gz = FIXTURES / "manual_parallel_8rank" / "rank_0" / "21_validate_0076.ir.gz"
    plain = tmp_path / "21_validate_0076.ir"
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    a, b = parse_file(gz), parse_file(plain)
    assert [(n.line, n.op, n.inputs) for n in a.nodes()] == [(n.line, n.op, n.inputs) for n in b.nodes()]
    assert a.stage == b.stage == "validate"


def test_2_10_header_is_read():
    ir = parse_file(FIXTURES / "manual_parallel_8rank" / "rank_0" / "21_validate_0076.ir.gz")
    assert ir.family == "2.10"
    assert ir.stated_params == len(ir.params) == 23
    weight = next(p for p in ir.params if p.short_name == "layer1.weight")
    assert weight.has_default
    assert weight.abstract.kind == "Ref"
    assert weight.abstract.shape == (512, 784)
    assert weight.abstract.dtype == "Float32"
    assert weight.abstract.ref_key == "layer1.weight"
    assert ir.attrs["training"] == "1"
    assert ir.jit_config["exc_mode"] == "auto"
    assert ir.entry == ir.subgraphs[0].name


def test_2_2_header_is_read():
    ir = parse_file(FIXTURES / "docs_2_0" / "04_abstract_specialize_0012.ir")
    assert ir.family == "2.2"
    assert ir.entry == "1_Default_wrapper.24"
    assert [g.name for g in ir.subgraphs] == ["2_Default.23", "3_func.22", "1_Default_wrapper.24"]
    sub = ir.node("sub")
    assert sub.scope == "Default"
    assert sub.sources == ("testir1.py:20/        a = self.sub(x, 1)/",)
    assert ir.graph("2_Default.23").attrs == {"undeterminate": "0"}


def test_multi_line_tensor_value_is_one_argument():
    text = (FIXTURES / "manual_parallel_8rank" / "rank_0" / "01_type_inference_0001.ir.gz")
    ir = parse_file(text)
    tensors = [v for n in ir.nodes() for v in n.inputs if type(v).__name__ == "TensorValue"]
    multi = [t for t in tensors if "\n" in t.value_text]
    assert multi, "the fixture holds tensors printed over several lines"
    assert all(t.shape == (4, 1) and t.dtype == "Float32" for t in multi)


def test_parse_text_of_a_minimal_file():
    ir = parse_text(
        "# IR entry: @g\n# Total subgraphs: 1\n\nsubgraph attr:\nsubgraph @g() {\n"
        "  %0(x) = PrimFunc_Add(I64(1), I64(2))\n      : (<Int64, NoShape>, <Int64, NoShape>) -> (<Int64, NoShape>)\n"
        "  Return(%0)\n      : (<Int64, NoShape>)\n}\n\n\n"
    )
    assert ir.complete
    node = ir.subgraphs[0].nodes[0]
    assert (node.op, node.inputs, node.line) == ("Add", (1, 2), 6)
