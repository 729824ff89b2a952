"""Property tests: mutate real fixtures and check that only IRParseError ever escapes, and that no
mutated file is reported complete when the counts it states no longer hold.

The oracle is independent of the parser: cnode definition lines are counted with a regex; and
the parser's two readings (fast and reference) must agree on every mutated file.
Sources: a 2.10 dump and a 2.0 documentation file always, and every file under ``fixtures/zoo/``
of 1 MiB or less when that folder exists (:data:`IN_SUITE`). ``bench/fuzz_parse.py`` runs the
same kinds of mutation at scale, on every file."""
from __future__ import annotations

import gzip
import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from msinspect import IRParseError, parse_file, parse_text
from msinspect.errors import MsInspectError
from tests.conftest import FIXTURES
from tests.parser.readings import assert_same


def _read(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()


SOURCES = {
    "2.10": _read(FIXTURES / "manual_parallel_8rank" / "rank_0" / "21_validate_0076.ir.gz"),
    "2.2": _read(FIXTURES / "docs_2_0" / "04_abstract_specialize_0012.ir"),
}
ZOO = FIXTURES / "zoo"
SOURCES.update({f"zoo/{p.relative_to(ZOO)}": _read(p) for p in sorted(ZOO.rglob("*"))
                if p.name.endswith((".ir", ".ir.gz"))} if ZOO.is_dir() else {})
SMALL = (FIXTURES / "seed_002" / "18_execute_0185.excerpt.ir").read_bytes()  # for the costly mutations
NUMBER = re.compile(rb"(?<![\w%#.])\d+(?![\w.])")
ABSTRACT = re.compile(rb"<Tensor\[\w+\], ")
CNODE_LINE = re.compile(r"^\s+(?:%\d+\(|Return\()", re.M)
STATED = re.compile(r"^Total number of cnodes: (\d+)$", re.M)
STATED_BYTES = re.compile(rb"^Total number of cnodes: (\d+)$", re.M)
#: Draws per property in the suite: each draw parses a mutated file in both readings, strict and
#: lenient; bench/fuzz_parse.py draws 10,000 per file of the corpus.
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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
    for mode in (False, True):  # the parser's two readings agree on it, errors and all
        assert_same(text, "mutated.ir", lenient=mode)
    if lenient.complete:
        stated = STATED.search(text)
        if stated:
            assert int(stated.group(1)) == len(CNODE_LINE.findall(text)) == lenient.cnode_count


#: The files a whole-file mutation is drawn from in the suite: those of 1 MiB or less (167 of the
#: 217; the MindFormers and large-GPT dumps, 1-10 MB, add no construct the smaller zoo files lack
#: and cost up to 40x a draw). bench/fuzz_parse.py mutates every file, 10,000 times.
IN_SUITE = sorted(name for name, text in SOURCES.items() if len(text) <= 1 << 20)
family = st.sampled_from(IN_SUITE)


def test_sources_always_hold_the_2_10_and_2_0_fixtures():
    assert {"2.10", "2.2"} <= set(IN_SUITE) and all(SOURCES.values())
    if ZOO.is_dir():
        assert any(name.startswith("zoo/") for name in IN_SUITE)


def check_file(name: str, data: bytes, original: bytes) -> None:
    """``data`` as a file named ``name``: strict and lenient give the documented error or a
    result; a complete result holds the original text's counts."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        for lenient in (False, True):
            try:
                ir = parse_file(path, lenient=lenient)
            except MsInspectError as err:
                assert str(path) in str(err)
                continue
            if ir.complete:
                stated = STATED_BYTES.search(original)
                assert stated is None or int(stated.group(1)) == ir.cnode_count


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


# each example parses a whole file twice; bench/fuzz_parse.py runs thousands of such mutations
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(family, st.data())
def test_corrupt_gzip_streams(name, data):
    original = SOURCES[name]
    raw = bytearray(gzip.compress(original))
    how = data.draw(st.sampled_from(["byte", "truncate", "trailer", "append"]))
    if how == "byte":
        raw[data.draw(st.integers(0, len(raw) - 1))] ^= data.draw(st.integers(1, 255))
    elif how == "truncate":
        raw = raw[:data.draw(st.integers(0, len(raw) - 1))]
    elif how == "trailer":                      # CRC32 or size no longer match
        raw[data.draw(st.integers(len(raw) - 8, len(raw) - 1))] ^= 0xFF
    else:
        raw += data.draw(st.binary(min_size=1, max_size=64))
    check_file("21_validate_0076.ir.gz", bytes(raw), original)


@FEW
@given(st.sampled_from("([{<"), st.booleans(), st.data())
def test_bracket_runs_of_100000(opener, closed, data):
    closer = {"(": ")", "[": "]", "{": "}", "<": ">"}[opener]
    run = (opener * 100_000 + (closer * 100_000 if closed else "")).encode()
    at = data.draw(st.sampled_from([m.end() for m in ABSTRACT.finditer(SMALL)]))
    check(SMALL[:at] + run + SMALL[at:])


@FEW
@given(st.sampled_from([5_000, 40_000]), st.data())
def test_huge_numbers(digits, data):
    # every number token of a node line (not the stated counts at the top: test_huge_stated_count)
    spots = [m for m in NUMBER.finditer(SMALL)]
    spot = data.draw(st.sampled_from(spots))
    check(SMALL[:spot.start()] + b"9" * digits + SMALL[spot.end():])


def test_one_megabyte_line():
    line = next(m for m in re.finditer(rb"(?m)^ *%\d+\(.*$", SMALL))
    for extra in (b" " + b"x" * (1 << 20), b' {note: "' + b"y" * (1 << 20) + b'"}'):
        check(SMALL[:line.end()] + extra + SMALL[line.end():])


def test_huge_stated_count():
    text = SOURCES["2.2"].replace(b"#Total params  : 2", b"#Total params  : " + b"9" * 5_000)
    assert text != SOURCES["2.2"]
    check(text)
