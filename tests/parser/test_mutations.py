"""Property tests: mutate real fixtures and check that only IRParseError ever escapes, and that no
mutated file is reported complete when the counts it states no longer hold.

The oracle is independent of the parser: cnode definition lines are counted with a regex."""
from __future__ import annotations

import gzip
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msinspect import IRParseError, parse_text
from tests.conftest import FIXTURES

SOURCES = {
    "2.10": gzip.decompress((FIXTURES / "manual_parallel_8rank" / "rank_0" / "21_validate_0076.ir.gz").read_bytes()),
    "2.2": (FIXTURES / "docs_2_0" / "04_abstract_specialize_0012.ir").read_bytes(),
}
CNODE_LINE = re.compile(r"^\s+(?:%\d+\(|Return\()", re.M)
STATED = re.compile(r"^Total number of cnodes: (\d+)$", re.M)
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(data: bytes) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # decoding errors are covered by parse_file tests; parse_text takes text
    try:
        strict = parse_text(text, "mutated.ir")
    except IRParseError as err:
        assert err.path == "mutated.ir"
        strict = None
    lenient = parse_text(text, "mutated.ir", lenient=True)
    assert lenient.complete == (strict is not None and strict.complete)
    if lenient.complete:
        stated = STATED.search(text)
        if stated:
            assert int(stated.group(1)) == len(CNODE_LINE.findall(text)) == lenient.cnode_count


family = st.sampled_from(sorted(SOURCES))


@SETTINGS
@given(family, st.data())
def test_truncation_at_any_byte(name, data):
    raw = SOURCES[name]
    cut = data.draw(st.integers(0, len(raw) - 1))
    check(raw[:cut])
    if raw[:cut].strip() != raw.strip():
        text = raw[:cut].decode("utf-8", "ignore")
        assert not parse_text(text, "t.ir", lenient=True).complete


@SETTINGS
@given(family, st.data())
def test_flipped_bytes(name, data):
    raw = bytearray(SOURCES[name])
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    check(bytes(raw))


@SETTINGS
@given(family, st.data())
def test_deleted_or_duplicated_lines(name, data):
    lines = SOURCES[name].split(b"\n")
    at = data.draw(st.integers(0, len(lines) - 1))
    if data.draw(st.booleans()):
        mutated = lines[:at] + lines[at + 1:]
    else:
        mutated = lines[:at + 1] + lines[at:]
    joined = b"\n".join(mutated)
    check(joined)
    if CNODE_LINE.match(lines[at].decode()) and STATED.search(SOURCES[name].decode()):
        assert not parse_text(joined.decode(), "m.ir", lenient=True).complete


@SETTINGS
@given(st.binary(max_size=2000))
def test_binary_garbage(blob):
    check(blob)


def test_empty_file():
    try:
        parse_text("", "empty.ir")
    except IRParseError as err:
        assert "no IR content" in err.message
    else:
        raise AssertionError("an empty file must not parse as complete")
    assert not parse_text("", "empty.ir", lenient=True).complete
