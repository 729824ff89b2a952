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
