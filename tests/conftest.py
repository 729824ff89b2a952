"""Shared test helpers: where the fixtures are."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def fixture_files() -> list[Path]:
    """Every IR fixture in the repository, but the documentation corpus (fixtures/docs_ir/:
    excerpts with elisions, tested by tests/parser/test_docs_corpus.py)."""
    return sorted(p for p in FIXTURES.rglob("*")
                  if p.name.endswith((".ir", ".ir.gz")) and "docs_ir" not in p.relative_to(FIXTURES).parts)


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
