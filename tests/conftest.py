"""Shared test helpers: where the fixtures are."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


#: Fixture folders of text as printed in documents, "..." elisions included: read leniently
#: (tests/parser/test_docs_corpus.py, tests/parser/test_seed_as_printed.py), not whole.
AS_PRINTED = frozenset({"docs_ir", "seed_002_as_printed"})


def fixture_files() -> list[Path]:
    """Every IR fixture in the repository but the text as printed (:data:`AS_PRINTED`)."""
    return sorted(p for p in FIXTURES.rglob("*")
                  if p.name.endswith((".ir", ".ir.gz")) and not AS_PRINTED & set(p.relative_to(FIXTURES).parts))


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES
