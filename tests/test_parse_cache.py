"""The cache of parsed files: the same text answers from the cache with the same model, a changed
file is parsed again, a damaged entry is dropped and re-parsed, the cache keeps to its bound, and
the CLI's --no-cache and `cache clear` do what they say."""
from __future__ import annotations

import gzip
import os
import subprocess
import sys

import pytest

from msinspect import cache
from msinspect.parser import parse_file, parse_text
from tests.conftest import FIXTURES

VALIDATE = FIXTURES / "manual_parallel_8rank" / "rank_0" / "21_validate_0076.ir.gz"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MSINSPECT_PARSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MSINSPECT_NO_CACHE", raising=False)
    return tmp_path / "cache"


def test_the_same_text_answers_from_the_cache(cache_dir, tmp_path):
    first = parse_file(VALIDATE)
    assert len(cache.entries()) == 1
    copy = tmp_path / "copy" / VALIDATE.name          # same text under another path
    copy.parent.mkdir()
    copy.write_bytes(VALIDATE.read_bytes())
    second = parse_file(copy)
    assert len(cache.entries()) == 1                   # answered, not stored again
    assert second.path == str(copy)
    second.path = first.path
    assert second == first and second is not first
    assert parse_file(VALIDATE, cache=False) == first


def test_a_changed_file_is_never_served_stale(cache_dir, tmp_path):
    text = gzip.decompress(VALIDATE.read_bytes()).decode()
    path = tmp_path / "21_validate_0076.ir"
    path.write_text(text)
    before = parse_file(path)
    changed = text.replace("{instance name: ", "{instance name: renamed_", 1)
    path.write_text(changed)
    after = parse_file(path)
    assert after == parse_text(changed, str(path)) and after != before
    assert len(cache.entries()) == 2


def test_a_damaged_entry_is_dropped_and_parsed_again(cache_dir):
    good = parse_file(VALIDATE)
    (entry, _), = cache.entries()
    entry.write_bytes(entry.read_bytes()[:100])         # cut short
    again = parse_file(VALIDATE)
    assert again == good
    (entry, _), = cache.entries()
    entry.write_bytes(b"not a pickle at all")
    assert parse_file(VALIDATE) == good


def test_another_lark_never_meets_an_old_entry(cache_dir, monkeypatch, tmp_path):
    """Another Lark installed (here a package named lark first on the path, stating another
    version) changes every entry's name; the Lark in use again, the names come back."""
    text = "x"
    before = cache.key(text, False)
    (tmp_path / "lark").mkdir()
    (tmp_path / "lark" / "__init__.py").write_text('__version__: str = "0.0.0-other"\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "lark")  # found where it is installed, not where it was loaded from
    cache._fixed_salt.cache_clear()
    try:
        assert cache.parser_libraries()[0] != "?"
        assert cache.key(text, False) != before
    finally:
        monkeypatch.undo()
        cache._fixed_salt.cache_clear()
    assert cache.key(text, False) == before


def test_strict_and_lenient_are_kept_apart_and_the_bound_holds(cache_dir, monkeypatch):
    parse_file(VALIDATE)
    parse_file(VALIDATE, lenient=True)
    assert len(cache.entries()) == 2
    monkeypatch.setenv("MSINSPECT_PARSE_CACHE_MB", "0")
    assert cache.trim() == 2 and cache.entries() == []


def test_cli_no_cache_and_clear(cache_dir):
    env = {**os.environ, "MSINSPECT_PARSE_CACHE_DIR": str(cache_dir)}
    run = lambda *args: subprocess.run([sys.executable, "-m", "msinspect", *args], capture_output=True,
                                       text=True, env=env, timeout=300)
    assert run("--no-cache", "parse", str(VALIDATE)).returncode == 0
    assert not list(cache_dir.glob("*/*.pickle"))
    assert run("parse", str(VALIDATE)).returncode == 0
    assert len(list(cache_dir.glob("*/*.pickle"))) == 1
    shown = run("cache", "info")
    assert "1 parsed files" in shown.stdout
    cleared = run("cache", "clear")
    assert cleared.returncode == 0 and "removed 1 parsed files" in cleared.stdout
    assert not list(cache_dir.glob("*/*.pickle"))
