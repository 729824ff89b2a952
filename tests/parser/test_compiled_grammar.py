"""The grammar's built parser kept in the cache folder (msinspect.parser.compiled): built and
written once, loaded after (Lark builds nothing), the same readings either way; a damaged file is
built again and replaced; another grammar never meets it; --no-cache writes nothing; `cache clear`
and the bound remove it."""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
from importlib import resources

import pytest
from lark import Lark

from msinspect import cache
from msinspect.parser import compiled
from msinspect.parser.core import GRAMMAR
from tests.conftest import ROOT

TEXT = "%para1_w: <Tensor[Float32], (4, 8)>\n"
OPTIONS = dict(parser="lalr", lexer="contextual", start=["start", "types_fragment"], maybe_placeholders=False)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MSINSPECT_PARSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MSINSPECT_NO_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def grammar() -> str:
    return resources.files("msinspect.grammars").joinpath(GRAMMAR).read_text(encoding="utf-8")


@pytest.fixture
def no_build(monkeypatch):
    """Make building tables fail: what is made after this was loaded from a file."""
    def refuse(self):
        raise AssertionError("Lark built the parser instead of loading it")
    return lambda: monkeypatch.setattr(Lark, "_build_parser", refuse)


def test_built_once_then_loaded_with_the_same_readings(cache_dir, grammar, no_build):
    plain = Lark(grammar, **OPTIONS).parse(TEXT, start="start")
    built = compiled.lark(grammar, **OPTIONS)
    [(path, _)] = cache.grammar_files()
    assert path.parent == cache_dir / "grammar" and path.stat().st_size > 1000
    assert not list(path.parent.glob(".tmp-*"))          # the private name was renamed, not left
    no_build()
    loaded = compiled.lark(grammar, **OPTIONS)
    assert loaded is not built
    assert loaded.parse(TEXT, start="start") == built.parse(TEXT, start="start") == plain


@pytest.mark.parametrize("damage", [b"", b"not a hash\n\x80\x04garbage", "cut"])
def test_a_damaged_file_is_built_again_and_replaced(cache_dir, grammar, no_build, damage):
    compiled.lark(grammar, **OPTIONS)
    [(path, _)] = cache.grammar_files()
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2] if damage == "cut" else damage)
    again = compiled.lark(grammar, **OPTIONS)
    assert again.parse(TEXT, start="start") == Lark(grammar, **OPTIONS).parse(TEXT, start="start")
    assert path.stat().st_size > len(good) // 2          # rewritten whole (pickled sets vary in order)
    no_build()
    assert compiled.lark(grammar, **OPTIONS).parse(TEXT, start="start") == again.parse(TEXT, start="start")


def test_another_grammar_or_options_get_their_own_file(cache_dir, grammar):
    compiled.lark(grammar, **OPTIONS)
    other = grammar + "\n// one more line\n"
    compiled.lark(other, **OPTIONS)
    compiled.lark(grammar, **{**OPTIONS, "start": ["start"]})
    assert len(cache.grammar_files()) == 3
    # the transformer is given at each load, not built: it does not make another file
    assert cache.grammar_entry(grammar, {**OPTIONS, "transformer": object()}) == cache.grammar_entry(grammar, OPTIONS)


def test_no_cache_writes_nothing(cache_dir, grammar, monkeypatch):
    monkeypatch.setenv("MSINSPECT_NO_CACHE", "1")
    assert compiled.lark(grammar, **OPTIONS).parse(TEXT, start="start")
    assert not (cache_dir / "grammar").exists()


def test_the_bound_and_cache_clear(cache_dir, grammar):
    for n in range(cache.GRAMMARS_KEPT + 2):
        compiled.lark(grammar + f"\n// variant {n}\n", **OPTIONS)
    assert len(cache.grammar_files()) == cache.GRAMMARS_KEPT
    done = subprocess.run([sys.executable, "-m", "msinspect", "cache", "clear"], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert f"removed {cache.GRAMMARS_KEPT} built grammars" in done.stdout
    assert cache.grammar_files() == []


#: In a fresh process: forbid building tables, read a file with msinspect's parser, print the model pickled.
_LOADED_ONLY = """
import pickle, sys
from lark import Lark
def refuse(self):
    raise AssertionError("Lark built the parser instead of loading it")
Lark._build_parser = refuse
from msinspect.parser import parse_file
sys.stdout.buffer.write(pickle.dumps(parse_file(sys.argv[1], cache=False)))
"""


def test_the_parser_of_a_later_process_is_loaded_and_reads_the_same_model(cache_dir):
    from msinspect.parser import parse_file
    from tests.conftest import FIXTURES

    validate = FIXTURES / "manual_parallel_8rank" / "rank_0" / "21_validate_0076.ir.gz"
    env = {**os.environ, "MSINSPECT_PARSE_CACHE_DIR": str(cache_dir)}
    first = subprocess.run([sys.executable, "-c", "from msinspect.parser.core import _parser; _parser()"],
                           cwd=ROOT, env=env, check=True)
    assert first.returncode == 0 and len(cache.grammar_files()) == 1   # one file for both instances
    done = subprocess.run([sys.executable, "-c", _LOADED_ONLY, str(validate)], cwd=ROOT, env=env,
                          capture_output=True, check=True)
    assert pickle.loads(done.stdout) == parse_file(validate, cache=False)


def test_a_write_that_fails_leaves_nothing_behind(cache_dir, grammar, monkeypatch):
    def full_disk(self, f, exclude_options=()):
        f.write(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Lark, "save", full_disk)
    built = compiled.lark(grammar, **OPTIONS)
    assert built.parse(TEXT, start="start") == Lark(grammar, **OPTIONS).parse(TEXT, start="start")
    assert list((cache_dir / "grammar").iterdir()) == []   # no entry, no private file
