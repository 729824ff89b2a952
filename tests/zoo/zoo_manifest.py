"""The zoo's manifest (fixtures/zoo/zoo.toml) for the zoo tests: networks, kept folders, specs."""
from __future__ import annotations

from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ZOO = Path(__file__).resolve().parents[2] / "fixtures" / "zoo"


def networks() -> list[dict]:
    """Every ``[[net]]`` of zoo.toml, as written."""
    return tomllib.loads((ZOO / "zoo.toml").read_text(encoding="utf-8"))["net"]


def kept_files() -> list[Path]:
    """Every IR file the zoo keeps (the network scripts' folder holds none)."""
    return sorted(p for net in networks() for p in (ZOO / net["name"]).rglob("*")
                  if p.name.endswith((".ir", ".ir.gz")))


#: Kept files msinspect's parser cannot read strictly yet, each with the construct it stops at:
#: {path relative to fixtures/zoo: reason}. Their strict-parse tests are expected failures
#: (strict: once the parser reads them the tests say so, and the entry must go); spec entries
#: that read them are too. Everything else in the zoo parses strictly.
PARSER_GAPS: dict[str, str] = {
    f"13_mf_llama_pp_interleave/rank_{r}/21_validate_0093.ir.gz": (
        "parser: a FuncUnion of Partial(@graph) items, `%560(CNode_...) = %559[@FuncUnion(Partial(@..."
        "MFPipelineWithLossScaleCell_construct_14051), Partial(@...))]()` (MindFormers' "
        "MFPipelineWithLossScaleCell, `if not overflow:`; rank 0 line 3407): 'unexpected Partial, "
        "expected a graph reference like @name'")
    for r in (0, 7)
} | {
    f"15_mf_llama_moe_ep8/rank_{r}/21_validate_0095.ir.gz": (
        "parser: a FuncUnion of Partial(@graph) items, `%198(CNode_...) = %197[@FuncUnion(Partial(@..."
        "MFTrainOneStepCell_construct_10481), Partial(@...))]()` (MindFormers' MFTrainOneStepCell, "
        "`if not overflow:`; rank 0 line 19850): 'unexpected Partial, expected a graph reference like @name'")
    for r in (0, 5)
}


def parser_gap(path: Path) -> str | None:
    """Why the parser cannot read this kept file strictly yet (:data:`PARSER_GAPS`), or None."""
    return PARSER_GAPS.get(path.relative_to(ZOO).as_posix())
