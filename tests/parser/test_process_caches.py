"""The parser keeps what it has read (fragments, shapes, templates, comment blocks) for the rest of
the process: a worker reads rank after rank, a CLI run file after file. A file must read the same
in a process that has read others first as in a fresh one."""
from __future__ import annotations

from pathlib import Path

from msinspect.errors import IRParseError
from msinspect.model import canonical
from msinspect.parser import core
from msinspect.parser.reading import read_text

ROOT = Path(__file__).resolve().parents[2]


def _files() -> list[Path]:
    """Dumps of under 800 kB of text, of every family and release (the documentation's, the jobs', the zoo's),
    spread over the tree, and one that met a cache's stale entry before (a comment block of a
    Return node whose first line another file's block begins with)."""
    files = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.name.endswith((".ir", ".ir.gz"))
                   and len(read_text(p)[0]) < 800_000)
    chosen = files[::max(1, len(files) // 24)]
    chosen += [ROOT / "fixtures/docs_ir/complete/r2.3.0_mindir_en_entry_main_Net_construct_304_b4.ir",
               ROOT / "fixtures/manual_parallel_8rank/rank_0/01_type_inference_0001.ir.gz"]
    return chosen


def _read(path: Path, lenient: bool):
    try:
        return canonical(core.parse_text(read_text(path)[0], path.name, lenient=lenient))
    except IRParseError as err:
        return "error: " + str(err)


def test_a_file_reads_the_same_after_others_as_in_a_fresh_process():
    files = _files()
    assert len(files) > 20
    core._parser.cache_clear()
    try:
        one_process = [(_read(p, False), _read(p, True)) for p in files]
        for path, read in zip(files, one_process):
            core._parser.cache_clear()
            assert read == (_read(path, False), _read(path, True)), path
    finally:
        core._parser.cache_clear()


def test_a_text_is_kept_from_its_second_sight_on(monkeypatch):
    """Comment blocks and attribute texts are kept for the rest of the process only once seen
    twice; the same file read again reads the same, from what is then kept (the fast reading's
    tables: the reference reading keeps nothing)."""
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    path = ROOT / "fixtures/zoo/01_semi_auto_tp4dp2/rank_0/step_parallel_end_0020.ir.gz"
    text = read_text(path)[0]
    core._parser.cache_clear()
    try:
        transformer = core._parser()[1]
        first = canonical(core.parse_text(text, path.name))
        blocks, plans = transformer._note_blocks, transformer._attr_plans
        once = len(blocks.seen) - len(blocks.kept)
        assert once > 0 and len(plans.seen) > 0
        kept_before = set(blocks.kept)
        assert canonical(core.parse_text(text, path.name)) == first
        assert len(blocks.kept) == len(blocks.seen) and len(plans.kept) == len(plans.seen)
        assert len(blocks.kept) - len(kept_before) == once  # each seen once before, kept now
        assert canonical(core.parse_text(text, path.name)) == first
    finally:
        core._parser.cache_clear()
