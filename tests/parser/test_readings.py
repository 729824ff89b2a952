"""The parser's two readings (``MSINSPECT_PARSER=fast|reference``, :mod:`msinspect.parser_mode`)
give the same model, or the same error at the same line and column, on the IR files the
repository holds: fixtures, the model zoo, the documentation corpus and the golden constructs,
strict and lenient (a lenient read differs from a strict one only where the strict read fails:
there both are compared). Mutated files are compared in ``test_mutations.py``.

The ranks of one dump run one network: their files at one pass differ in rank-specific values
(group names, slices, ranks) and, under pipeline parallel, in which stage's part of the network
they hold, written with the same constructs. ``make test`` compares the lowest rank's file of
each dump and pass (and every file not in a rank folder), but for zoo 09's largest file and two
MindFormers dumps that repeat a third's constructs (:data:`SAME_CONSTRUCTS`); ``make readings``
(``MSINSPECT_READINGS=every``) compares every rank's file as well."""
from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys

import pytest

from msinspect.errors import ConfigError
from msinspect.parser import core
from tests.conftest import FIXTURES, ROOT
from tests.parser.readings import both, reading

GOLDEN = ROOT / "tests" / "parser" / "golden"
EVERY = sorted(p for p in [*FIXTURES.rglob("*"), *GOLDEN.glob("*")] if p.name.endswith((".ir", ".ir.gz")))
_RANK = re.compile(r"rank_(\d+)")


def _lowest_ranks(paths) -> list:
    """Of each dump's files of one pass (one name in its rank folders), the lowest rank's; a file
    not in a rank folder stands for itself."""
    lowest: dict[tuple, tuple] = {}
    for path in paths:
        rank = _RANK.fullmatch(path.parent.name)
        key, number = ((str(path.parent.parent), path.name), int(rank.group(1))) if rank else ((str(path),), -1)
        if key not in lowest or number < lowest[key][0]:
            lowest[key] = (number, path)
    return sorted(path for _, path in lowest.values())


#: Files over this many bytes of text are compared by ``make readings`` only: one file, zoo 09's
#: 10.6 MB step_parallel_end of a large GPT, written with the constructs the other files of that
#: pass hold; read both ways it took a sixth of the suite's comparisons.
IN_SUITE_BYTES = 4 << 20


def _text_bytes(path) -> int:
    raw = path.read_bytes()
    return len(gzip.decompress(raw)) if path.name.endswith(".gz") else len(raw)


#: MindFormers dumps of one model (LLaMA) whose files at each pass hold no attribute, primitive
#: or type that the dump named beside them lacks (test_the_dumps_left_out_add_no_construct): the
#: suite compares that dump's files for theirs (14 MB of the 62 MB it would read both ways);
#: ``make readings`` compares them as well.
SAME_CONSTRUCTS = {"12_mf_llama_tp8": "14_mf_llama_seq_parallel", "16_mf_llama_256": "14_mf_llama_seq_parallel"}


def _left_to_make_readings(path) -> bool:
    return _text_bytes(path) > IN_SUITE_BYTES or any(name in path.parts for name in SAME_CONSTRUCTS)


FILES = EVERY if os.environ.get("MSINSPECT_READINGS") == "every" else [
    p for p in _lowest_ranks(EVERY) if not _left_to_make_readings(p)]


def _text(path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8", "replace")


def test_every_file_is_compared():
    # by hand: the tree holds the fixtures of every family, the zoo and the documentation corpus
    folders = {p.relative_to(FIXTURES).parts[0] for p in FILES if FIXTURES in p.parents}
    assert {"zoo", "docs_ir", "docs_2_0", "manual_parallel_8rank", "seed_002_as_printed"} <= folders
    assert len(FILES) > 200 and any(GOLDEN in p.parents for p in FILES)
    if FILES is EVERY:
        return
    # zoo 01's 8 ranks and zoo 13's two pipeline stages (ranks 0-3 and 4-7): rank 0's files stand
    # for the others'
    assert {p.parent.name for p in FILES if "01_semi_auto_tp4dp2" in p.parts} == {"rank_0"}
    assert {p.parent.name for p in FILES if "13_mf_llama_pp_interleave" in p.parts} == {"rank_0"}
    left = [p for p in _lowest_ranks(EVERY) if p not in FILES]
    assert {p.parts[-3] for p in left} == {"09_large_gpt", *SAME_CONSTRUCTS}
    assert [p for p in left if "09_large_gpt" in p.parts] == sorted(
        (FIXTURES / "zoo/09_large_gpt").rglob("step_parallel_end_*.ir.gz"))


_CONSTRUCTS = (re.compile(r"[{,] ?(\w+): "), re.compile(r"= (\w+)\("), re.compile(r"<(\w+)[\[,>]"))


def _constructs(path) -> list[set]:
    """The attribute names, the primitives called and the abstract types a file writes."""
    text = _text(path)
    return [set(pattern.findall(text)) for pattern in _CONSTRUCTS]


@pytest.mark.parametrize("left, compared", sorted(SAME_CONSTRUCTS.items()))
def test_the_dumps_left_out_add_no_construct(left, compared):
    """Each pass of rank 0 of a dump the suite leaves to ``make readings`` writes no attribute,
    primitive or type that the same pass of the dump compared in its place lacks."""
    files = sorted((FIXTURES / "zoo" / left / "rank_0").glob("*.ir.gz"))
    assert files
    for path in files:
        twin = FIXTURES / "zoo" / compared / "rank_0" / path.name
        assert twin in FILES or FILES is EVERY
        for mine, theirs in zip(_constructs(path), _constructs(twin)):
            assert mine <= theirs, (path.name, sorted(mine - theirs)[:10])



@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_file_reads_the_same_both_ways(path):
    text = _text(path)
    strict = both(text, path.name, lenient=False)
    assert strict["fast"] == strict["reference"]
    if isinstance(strict["fast"], str):  # an error: the lenient reads go past it, each its own way
        lenient = both(text, path.name, lenient=True)
        assert lenient["fast"] == lenient["reference"]


def test_the_reference_reading_uses_no_accelerator(monkeypatch):
    """Reference: no fast reader, no type-line skeletons, no attribute shapes, no templates, and
    nothing kept per text (the same comment block made anew for each node)."""
    core._parser.cache_clear()
    with reading("reference"):
        lark, transformer = core._parser()
        assert transformer.attr_texts is None and not hasattr(transformer, "fast_reader")
        monkeypatch.setattr(core, "_instantiate", lambda *a: pytest.fail("a template was used"))
        ir = core.parse_text(_text(FIXTURES / "zoo/01_semi_auto_tp4dp2/rank_0/step_parallel_end_0020.ir.gz"))
        assert ir.cnode_count > 100
        assert transformer._note_blocks.kept == {} and transformer._attr_plans.kept == {}
        assert not transformer._note_lines
    core._parser.cache_clear()


def test_an_unknown_reading_is_a_config_error(monkeypatch):
    monkeypatch.setenv("MSINSPECT_PARSER", "quick")
    with pytest.raises(ConfigError, match="MSINSPECT_PARSER must be one of fast, reference, not 'quick'"):
        core.parse_text("")


def test_the_cli_says_so_and_exits_2():
    env = dict(os.environ, MSINSPECT_PARSER="quick")
    done = subprocess.run([sys.executable, "-m", "msinspect.cli", "parse", str(FIXTURES / "seed_002")],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.strip() == "error: MSINSPECT_PARSER must be one of fast, reference, not 'quick'"


@pytest.mark.parametrize("text", ["\x0b", "\x0c\n", "  \x85\n", "\n\x1c", "\r", "  \r  "])
def test_characters_python_calls_blank_are_the_grammars_to_judge(text):
    """Found by the mutation tests: the fast reading skipped a run Python's ``str.strip`` calls
    blank (a vertical tab; then a carriage return not before a line end) where the grammar skips
    only spaces, tabs and line ends (``\\r?\\n``); by hand, Lark refuses such a character where it
    stands, and both readings now say so."""
    found = both(text, "x.ir", lenient=False)
    assert found["fast"] == found["reference"]
    assert found["fast"].startswith("error: x.ir:") and "unexpected" in found["fast"]


@pytest.mark.parametrize("text", ["\r\n", "\n\r", " \r\n", "\t\r\n\r\r  \n"])
def test_carriage_returns_of_line_ends_are_blank_in_both(text):
    found = both(text, "x.ir", lenient=False)
    assert found["fast"] == found["reference"] == "error: x.ir: no IR content: neither an '# IR entry' header nor any node"
