"""Golden tests, one analysis fact each: ``golden/NAME.ir`` (a small hand-written IR file) beside
``golden/NAME.toml``, which says which analysis reads it, as which rank of how many, at which
stage, and the rows it must give, worked out by hand in its comments. Only the keys a row names
are compared (``absent`` lists those that must be None: "cannot tell"); the number of rows is
always compared. A new case is two files; this module does not change."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from msinspect import parse_text
from msinspect.analysis.rank.comm import comm_rows
from msinspect.analysis.rank.context import RankContext
from msinspect.analysis.rank.params import param_rows, with_slices
from msinspect.analysis.rank.strategies import strategy_rows

GOLDEN = Path(__file__).parent / "golden"

ANALYSES = {
    "strategies": lambda ir, ctx: strategy_rows(ir, ctx),
    "comm": lambda ir, ctx: comm_rows(ir, ctx),
    "params": lambda ir, ctx: with_slices(param_rows(ir, ctx), ctx),
}


def load(case: Path) -> tuple[dict, list[dict]]:
    """The case's statement and the rows its analysis gives for its snippet. The snippet is read as
    the dump file of its stage would be named (the stage decides whether shapes are global)."""
    spec = tomllib.loads(case.read_text(encoding="utf-8"))
    ir = parse_text(case.with_suffix(".ir").read_text(encoding="utf-8"), f"{spec['stage']}_0001.ir")
    ctx = RankContext(rank=spec["rank"], world=tuple(range(spec["world"])))
    return spec, ANALYSES[spec["analysis"]](ir, ctx)


def plain(value):
    """Tuples as TOML writes them: lists."""
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def cases() -> list[Path]:
    found = sorted(GOLDEN.glob("*.toml"))
    assert found, "the golden cases went missing"
    return found


@pytest.mark.parametrize("case", cases(), ids=lambda p: p.stem)
def test_golden_analysis(case):
    spec, rows = load(case)
    assert len(rows) == len(spec["row"]), [r.get("name") or r.get("param") for r in rows]
    for row, wanted in zip(rows, spec["row"]):
        absent = wanted.get("absent", [])
        named = {k: v for k, v in wanted.items() if k != "absent"}
        assert {k: plain(row[k]) for k in named} == named
        assert {k: row[k] for k in absent} == dict.fromkeys(absent)


def test_every_snippet_has_its_statement():
    assert sorted(p.stem for p in GOLDEN.glob("*.ir")) == [c.stem for c in cases()]
