"""A cached parse or analysed rank is never served after msinspect's code changed: every module's
source is in the cache's keys, the parser's accelerators included (fastpath, typelines, attrtexts,
secondsight, compiled were once left out, and an edited fast path served old parses)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT

KEY = ("from msinspect import cache; "
       "print(cache.key('x', False), cache.result_key(__import__('os').devnull, None, ()))")


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """A copy of the package (the grammar where an installed copy has it) to edit."""
    where = tmp_path_factory.mktemp("pkg")
    shutil.copytree(ROOT / "msinspect", where / "msinspect", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "grammars", where / "msinspect" / "grammars", dirs_exist_ok=True)
    return where


def _keys(where, reading: str = "fast") -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(where), MSINSPECT_PARSER=reading, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", KEY], capture_output=True, text=True, env=env, cwd=where, check=True)
    return done.stdout.split()


@pytest.mark.parametrize("module", ["parser/fastpath.py", "parser/typelines.py", "parser/attrtexts.py",
                                    "parser/secondsight.py", "parser/compiled.py", "parser/core.py",
                                    "model.py", "analysis/rank/comm.py", "graph.py"])
def test_an_edit_to_any_module_changes_every_key(copy, module):
    before = _keys(copy)
    source = copy / "msinspect" / module
    kept = source.read_bytes()
    try:
        source.write_bytes(kept + b"\n# edited\n")
        after = _keys(copy)
    finally:
        source.write_bytes(kept)
    assert after[0] != before[0] and after[1] != before[1]
    assert _keys(copy) == before  # the same code again: the same keys


def test_each_reading_has_keys_of_its_own(copy):
    assert _keys(copy, "fast") != _keys(copy, "reference")
