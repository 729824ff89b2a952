"""``parse_file`` reads a file in pieces and parses it window by window, never holding its whole
text: what it returns must be what ``parse_text`` makes of the whole text, wherever the pieces
and windows fall; a file that changes between its two reads, or that reading has something to
say about, is read whole."""
from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest

from msinspect import cache
from msinspect.errors import MsInspectError
from msinspect.model import canonical
from msinspect.parser import core, reading
from msinspect.parser.reading import read_text

ROOT = Path(__file__).resolve().parents[2]
#: The semi-auto job's rank 0 after the parallel pass (a 2.10 dump of 0.4 MB).
SEMI_AUTO = ROOT / "fixtures/zoo/01_semi_auto_tp4dp2/rank_0/step_parallel_end_0020.ir.gz"
#: The same rule as the parser's, written out here: a window may begin at a subgraph's attribute
#: line, a node line or a Return line, indented at most two spaces.
CUT = re.compile(r"^(?:subgraph attr:| {0,2}%\d+\(| {0,2}Return\()", re.M)


def _files() -> list[Path]:
    """Dumps of every family (documentation excerpts, analyze_fail reports, each job's stages,
    the zoo's), small enough to parse many times."""
    files = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.name.endswith((".ir", ".ir.gz"))
                   and p.stat().st_size < 60_000)
    return files[::max(1, len(files) // 30)]


def _outcome(read) -> object:
    try:
        return canonical(read())
    except MsInspectError as err:
        return f"error: {err}"


@pytest.fixture(scope="module")
def whole() -> dict:
    """What parse_text makes of each file's whole text, windows of the usual size."""
    return {(p, lenient): _outcome(lambda: core.parse_text(read_text(p, lenient=lenient)[0], str(p), lenient=lenient))
            for p in _files() for lenient in (False, True)}


@pytest.mark.parametrize("piece_bytes, window_chars", [(1 << 18, 1 << 18), (97, 300), (4096, 1)])
def test_a_file_read_in_pieces_parses_as_its_whole_text(monkeypatch, whole, piece_bytes, window_chars):
    monkeypatch.setattr(reading, "PIECE_BYTES", piece_bytes)
    monkeypatch.setattr(core, "_WINDOW_CHARS", window_chars)
    for (path, lenient), expected in whole.items():
        assert _outcome(lambda: core.parse_file(path, lenient=lenient, cache=False)) == expected, (path, lenient)


@pytest.mark.parametrize("piece", [1, 7, 97, 4096, None])
def test_windows_cut_where_the_rule_says_whatever_the_pieces(monkeypatch, piece):
    monkeypatch.setattr(core, "_WINDOW_CHARS", 2000)
    text = read_text(SEMI_AUTO)[0][:200_000]
    pieces = [text] if piece is None else [text[i:i + piece] for i in range(0, len(text), piece)]
    windows = [(held[start:end], lines, len(held)) for held, start, end, lines in core._windows(pieces)]
    assert "".join(w for w, _, _ in windows) == text
    cuts, expected = [0], [0]
    for window, _, _ in windows[:-1]:
        cuts.append(cuts[-1] + len(window))
    while (found := CUT.search(text, expected[-1] + 2000)) is not None:
        expected.append(found.start())
    assert cuts == expected and len(cuts) > 10
    assert [lines for _, lines, _ in windows] == [text.count("\n", 0, cut) for cut in cuts]
    if piece is not None:  # what is held: at most about twice the longest window, never the text
        longest_line = max(map(len, text.split("\n"))) + 1
        most = max(held for _, _, held in windows)
        assert most <= 2 * (max(len(w) for w, _, _ in windows) + longest_line) + piece and most < len(text) // 2


def test_a_large_file_is_never_held_whole(monkeypatch):
    """Zoo 09's 10.6 MB rank: the longest text the windows hold is a small part of it."""
    path = ROOT / "fixtures/zoo/09_large_gpt/rank_0/step_parallel_end_0132.ir.gz"
    held = []
    windows = core._windows

    def spy(pieces):
        for window in windows(pieces):
            held.append(len(window[0]))
            yield window

    monkeypatch.setattr(core, "_windows", spy)
    ir = core.parse_file(path, cache=False)
    assert ir.status == "complete" and ir.size > 10_000_000
    assert len(held) > 30 and max(held) < ir.size // 8


def _rewritten_before_the_second_read(monkeypatch, path: Path, text: str) -> list:
    """``path`` given ``text`` as the parser begins its second read of it; the list of its reads."""
    calls = []
    pieces = reading.text_pieces

    def rewriting(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            path.write_text(text)
        return pieces(*args, **kwargs)

    monkeypatch.setattr(core, "text_pieces", rewriting)
    return calls


def test_a_file_changed_between_its_reads_is_read_again_whole(tmp_path, monkeypatch):
    """The second read differs from the first (a dump being rewritten): the result is the new
    text's, and the cache keeps it under the new text's name only."""
    monkeypatch.setenv("MSINSPECT_PARSE_CACHE_DIR", str(tmp_path / "cache"))
    old = gzip.decompress(SEMI_AUTO.read_bytes()).decode()
    new = old.replace("# Scope: (", "# Scope: (Changed/", 1)
    assert new != old
    path = tmp_path / "step_parallel_end_0020.ir"
    path.write_text(old)
    calls = _rewritten_before_the_second_read(monkeypatch, path, new)
    ir = core.parse_file(path, cache=True)
    assert len(calls) == 2
    assert canonical(ir) == canonical(core.parse_text(new, str(path)))
    assert cache.load(cache.key(new, False)) is not None
    assert cache.load(cache.key(old, False)) is None


def test_a_dump_finished_between_its_reads_is_not_called_cut(tmp_path, monkeypatch):
    """The first read sees a dump still being written (no blank line after its last block), the
    second the finished file: what the first read saw is no error of the file now read."""
    whole = gzip.decompress(SEMI_AUTO.read_bytes()).decode()
    path = tmp_path / "step_parallel_end_0020.ir"
    path.write_text(whole.rstrip("\n") + "\n")
    with pytest.raises(MsInspectError, match="truncated dump"):
        core.parse_file(path, cache=False)
    _rewritten_before_the_second_read(monkeypatch, path, whole)
    ir = core.parse_file(path, cache=False)
    assert ir.status == "complete"
    assert canonical(ir) == canonical(core.parse_text(whole, str(path)))


def test_what_reading_reports_is_reported_as_before(tmp_path):
    """Bytes that are not UTF-8 and a cut .gz reach the reader's own errors and diagnostics."""
    text = gzip.decompress(SEMI_AUTO.read_bytes())
    bad = tmp_path / "step_parallel_end_0020.ir"
    bad.write_bytes(text[:5000] + b"\xff" + text[5000:])
    with pytest.raises(MsInspectError, match="invalid UTF-8 byte 0xff"):
        core.parse_file(bad, cache=False)
    lenient = core.parse_file(bad, lenient=True, cache=False)
    assert any("invalid UTF-8" in d.message for d in lenient.diagnostics)
    cut = tmp_path / "cut" / "step_parallel_end_0020.ir.gz"
    cut.parent.mkdir()
    shutil.copy(SEMI_AUTO, cut)
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])
    with pytest.raises(MsInspectError, match="truncated .gz"):
        core.parse_file(cut, cache=False)
    assert core.parse_file(cut, lenient=True, cache=False).status == "incomplete"


def test_where_windows_fall_changes_no_lenient_reading(monkeypatch):
    """A lenient parse skips the item an error sits in, whichever window the item begins: here
    the type line under every 40th node is broken halfway along, and every item is a window of
    its own (the item's first line, the node's, is its window's first)."""
    text = read_text(SEMI_AUTO)[0]
    lines = text.split("\n")
    types = [i for i, line in enumerate(lines) if line.startswith("      : (<Tensor[")]
    for i in types[::40]:
        lines[i] = lines[i].replace("<Tensor[", "<Tensor[[", 1)
    broken = "\n".join(lines)
    expected = core.parse_text(broken, "step_parallel_end_0020.ir", lenient=True)
    skipped = [d for d in expected.diagnostics if "skipped lines" in d.message]
    assert len(skipped) >= 5 and all(f"skipped lines {d.line - 1}-" in d.message for d in skipped)  # from its node line
    monkeypatch.setattr(core, "_WINDOW_CHARS", 1)
    assert canonical(core.parse_text(broken, "step_parallel_end_0020.ir", lenient=True)) == canonical(expected)
