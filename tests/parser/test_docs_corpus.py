"""MindSpore's own documentation as a second parse corpus: fixtures/docs_ir/.

Made by ``tools/extract_docs_ir.py`` from mindspore-ai/docs (every release branch and tag; where
each sample came from is in ``MANIFEST.toml``). A ``complete/`` sample is a whole dump as
MindSpore printed it and must parse strictly, holding what it states; an ``excerpt/`` sample is a
part of a dump and must parse leniently with diagnostics exactly at its elision lines (``...``),
computed here from the text, never from the parser. Samples a person edited by hand are listed
in the manifest with the reason and not tested.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from msinspect import parse_file
from tests.conftest import FIXTURES, ROOT

DOCS = FIXTURES / "docs_ir"
MANIFEST = tomllib.loads((DOCS / "MANIFEST.toml").read_text(encoding="utf-8"))
COMPLETE = sorted((DOCS / "complete").glob("*.ir"))
EXCERPTS = sorted((DOCS / "excerpt").glob("*.ir"))

# The text's own facts, read with plain regular expressions.
ELISION = re.compile(r"^\s*(?:\.{2,}|…+|⋮|(?:\. ){2,}\.)\s*$")
SUBGRAPH_OPEN = re.compile(r"^subgraph @")
STATED_SUBGRAPHS = re.compile(r"^#\s*Total subgraphs?\s*:\s*(\d+)")
STATED_PARAMS = re.compile(r"^#\s*Total params\s*:\s*(\d+)")
STATED_CNODES = re.compile(r"^Total number of cnodes:\s*(\d+)")
FILE_PARAM = re.compile(r"^%para\d+_")
# Inside a subgraph's braces a node (or the Return) starts at column 3; its abstract and comment
# lines are indented further, '#------------------------>' markers start at column 1.
NODE_START = re.compile(r"^  [^\s#]")
EXCERPT_NODE = re.compile(r"^\s*(?:%\d+\(|Return\()")
ANALYZE_FAIL = re.compile(r"analyze_fail|graph evaluating failed|function graphs evaluation fails")


def _name(path: Path) -> str:
    return path.name


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def _stated(pattern: re.Pattern, lines: list[str]) -> int | None:
    return next((int(m[1]) for line in lines if (m := pattern.match(line))), None)


def _node_lines(lines: list[str]) -> int:
    """Node lines inside subgraph bodies (a body opens at the line ending in '{' after
    'subgraph @', which may span several lines, and closes at '}')."""
    count, inside, opening = 0, False, False
    for line in lines:
        if SUBGRAPH_OPEN.match(line):
            opening = True
        if opening and line.rstrip().endswith("{"):
            inside, opening = True, False
            continue
        if inside and line.startswith("}"):
            inside = False
        elif inside and NODE_START.match(line):
            count += 1
    return count


def _elisions(lines: list[str]) -> set[int]:
    return {n for n, line in enumerate(lines, 1) if ELISION.match(line)}


def test_the_corpus_is_what_the_manifest_lists():
    samples = MANIFEST["sample"]
    counts = MANIFEST["counts"]
    assert len(COMPLETE) == counts["complete"] > 0
    assert len(EXCERPTS) == counts["excerpt"] > 0
    assert sum(1 for s in samples if s["kind"] == "left_out") == counts["left_out"]
    assert sum(len(s["found"]) for s in samples) == counts["places"]
    listed = {s["file"] for s in samples if s["kind"] != "left_out"}
    on_disk = {f"{p.parent.name}/{p.name}" for p in COMPLETE + EXCERPTS}
    assert listed == on_disk
    for s in samples:
        assert s["found"], s["name"]
        assert s["reason"], s["name"]
        if s["kind"] == "left_out":
            assert s["text"] and not s["file"]
        else:
            text = (DOCS / s["file"]).read_bytes()
            assert hashlib.sha256(text).hexdigest()[:12] == s["sha256_12"], s["file"]


def test_excerpt_elisions_in_the_manifest_are_the_texts():
    for s in MANIFEST["sample"]:
        if s["kind"] == "excerpt":
            assert sorted(_elisions(_lines(DOCS / s["file"]))) == s["elision_lines"], s["file"]


def test_no_path_of_this_machine():
    marks = {str(ROOT), str(Path.home()), "/work/"}
    for path in [*COMPLETE, *EXCERPTS, DOCS / "MANIFEST.toml"]:
        text = path.read_text(encoding="utf-8")
        assert not [m for m in marks if m in text], path.name


@pytest.mark.parametrize("path", COMPLETE, ids=_name)
def test_complete_sample_parses_strictly_and_holds_its_counts(path):
    lines = _lines(path)
    assert not _elisions(lines)
    ir = parse_file(path)  # strict: raises IRParseError at the first problem
    assert ir.complete
    shown = sum(1 for line in lines if SUBGRAPH_OPEN.match(line))
    assert len(ir.subgraphs) == shown
    assert ir.cnode_count == _node_lines(lines)
    if not any(ANALYZE_FAIL.search(line) for line in lines[:8]):
        assert _stated(STATED_SUBGRAPHS, lines) == shown
    stated_params = _stated(STATED_PARAMS, lines)
    if stated_params is not None:
        assert len(ir.params) == stated_params == sum(1 for line in lines if FILE_PARAM.match(line))
    stated_cnodes = _stated(STATED_CNODES, lines)
    if stated_cnodes is not None:
        assert ir.cnode_count == stated_cnodes


@pytest.mark.parametrize("path", EXCERPTS, ids=_name)
def test_excerpt_parses_leniently_with_diagnostics_at_the_elisions(path):
    lines = _lines(path)
    ir = parse_file(path, lenient=True)
    at_lines = sorted(d.line for d in ir.diagnostics if d.line)
    assert at_lines == sorted(_elisions(lines)), [f"{d.line}:{d.column}: {d.message}" for d in ir.diagnostics]
    # Whole-file diagnostics (line 0) only where the sample states counts its cut breaks.
    whole_file = [d.message for d in ir.diagnostics if not d.line]
    states = any(STATED_SUBGRAPHS.match(line) or STATED_CNODES.match(line) for line in lines)
    assert states or not whole_file, whole_file


@pytest.mark.parametrize("path", EXCERPTS, ids=_name)
def test_excerpt_keeps_every_node_it_shows(path):
    shown = sum(1 for line in _lines(path) if EXCERPT_NODE.match(line))
    assert shown > 0
    ir = parse_file(path, lenient=True)
    assert ir.cnode_count == shown
