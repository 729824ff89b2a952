"""Bad input: one documented error type naming file, line and column, and lenient diagnostics."""
from __future__ import annotations

import gzip

import pytest

from msinspect import IRParseError, parse_file, parse_text
from msinspect.errors import IRDecodeError
from tests.conftest import FIXTURES

VALIDATE = FIXTURES / "manual_parallel_8rank" / "rank_0" / "21_validate_0076.ir.gz"


def validate_text() -> str:
    return gzip.decompress(VALIDATE.read_bytes()).decode()


def test_unexpected_token_names_line_column_and_expectation():
    text = "# IR entry: @g\n# Total subgraphs: 1\nsubgraph attr:\nsubgraph @g() {\n  %0(x) = Add(%1, ?)\n}\n"
    with pytest.raises(IRParseError) as info:
        parse_text(text, "bad.ir")
    err = info.value
    assert (err.path, err.line, err.column) == ("bad.ir", 5, 19)
    assert err.source_line == "  %0(x) = Add(%1, ?)"
    assert "a node reference like %3" in err.expected
    shown = str(err).splitlines()
    assert shown[0].startswith("bad.ir:5:19: unexpected")
    assert shown[-1] == "  " + " " * 18 + "^"


def test_missing_closing_brace_is_end_of_file():
    text = "# IR entry: @g\n# Total subgraphs: 1\nsubgraph attr:\nsubgraph @g() {\n  Return(%para1_x)\n"
    with pytest.raises(IRParseError) as info:
        parse_text(text, "cut.ir")
    assert info.value.line == 5
    assert "end of file" in info.value.message


def test_deleted_node_line_breaks_the_stated_count():
    lines = validate_text().split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("  %5("))
    del lines[at]
    with pytest.raises(IRParseError, match="states 117 cnodes but 116 were read"):
        parse_text("\n".join(lines), "edited.ir")


def test_truncated_at_a_subgraph_boundary_is_detected():
    text = parse_file(FIXTURES / "manual_parallel_8rank" / "rank_0" / "01_type_inference_0001.ir.gz")
    raw = gzip.decompress((FIXTURES / "manual_parallel_8rank" / "rank_0" / "01_type_inference_0001.ir.gz").read_bytes()).decode()
    cut = raw[: raw.index("\nsubgraph attr:", len(raw) // 2) + 1]
    ir = parse_text(cut, "cut.ir", lenient=True)
    assert not ir.complete
    assert any("subgraphs but" in d.message for d in ir.diagnostics)
    assert text.complete


def test_lenient_costs_one_node_and_keeps_what_can_be_read_of_it():
    raw = gzip.decompress((FIXTURES / "manual_parallel_8rank" / "rank_0" / "01_type_inference_0001.ir.gz").read_bytes()).decode()
    lines = raw.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("  %1(") and " = PrimFunc_" in line and i > 2000)
    original = lines[at]
    lines[at] = lines[at].replace("(", "((", 2)
    ir = parse_text("\n".join(lines), "broken.ir", lenient=True)
    assert not ir.complete and ir.status == "incomplete"
    skipped = [d for d in ir.diagnostics if "skipped line" in d.message]
    assert len(skipped) == 1 and skipped[0].line == at + 1 and skipped[0].text == lines[at]
    # every subgraph and every node is still there: the broken one is kept as an 'unparsed' node
    assert len(ir.subgraphs) == ir.stated_subgraphs and ir.cnode_count == parse_text(raw).cnode_count
    broken = [n for n in ir.nodes() if n.kind == "unparsed"]
    assert len(broken) == 1 and broken[0].line == at + 1 and broken[0].index == 1
    assert broken[0].raw.split("\n")[0] == lines[at]
    op = original.split(" = ", 1)[1].split("(", 1)[0].removeprefix("PrimFunc_")
    assert broken[0].op == op and broken[0].debug_name == "(" + original.split("(", 2)[1].split(")")[0]
    with pytest.raises(IRParseError):
        parse_text("\n".join(lines), "broken.ir")


def test_invalid_utf8_and_empty_files(tmp_path):
    bad = tmp_path / "bad.ir"
    bad.write_bytes(b"# IR entry: @g\n\xff\xfe\n")
    with pytest.raises(IRDecodeError) as info:
        parse_file(bad)
    assert (info.value.line, info.value.column) == (2, 1)
    assert parse_file(bad, lenient=True).status == "incomplete"
    empty = tmp_path / "empty.ir"
    empty.write_bytes(b"")
    with pytest.raises(IRParseError, match="no IR content"):
        parse_file(empty)


def test_corrupt_gzip(tmp_path):
    bad = tmp_path / "x.ir.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(IRDecodeError, match="cannot decompress"):
        parse_file(bad)
