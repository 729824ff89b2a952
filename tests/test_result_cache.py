"""The cache of analysed ranks: a second analysis answers from it without parsing or analysing,
a damaged entry is dropped and computed again, the mode is part of the key, and
MSINSPECT_NO_CACHE turns it off. (A changed file is never served stale:
tests/analysis/test_rank_groups.py changes a rank's strategy between two cached analyses.) A second
`summary` in a fresh process loads neither Lark nor networkx, and no `summary --json` loads pandas
or Rich; the second starts no process pool (nor imports one)."""
from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

import msinspect
from msinspect import cache
from msinspect.analysis import analyse
from msinspect.analysis.job import collect
from tests.conftest import FIXTURES, ROOT

DUMP = FIXTURES / "sharding_propagation_dryrun_8rank"


def _tables(analysis):
    return analysis.strategies().drop(columns=["other_stage"]), analysis.comm().drop(columns=["other_stage"])


def test_a_second_analysis_answers_from_the_cache(tmp_path, monkeypatch):
    store = cache.Store(tmp_path / "results")
    dump = msinspect.load_dump(DUMP)
    first = analyse(dump, cache=store, jobs=1)
    assert len(store.entries()) == len(dump.ranks) == 8

    def no_work(*args, **kwargs):
        raise AssertionError("parsed and analysed again")

    monkeypatch.setattr(collect, "_compute", no_work)
    second = analyse(dump, cache=store, jobs=1)
    for a, b in zip(_tables(first), _tables(second)):
        pd.testing.assert_frame_equal(a, b)
    assert [r.signature for r in second.results] == [r.signature for r in first.results]
    with pytest.raises(AssertionError, match="parsed and analysed again"):
        analyse(dump, cache=store, jobs=1, lenient=True)   # another mode: another entry


def test_a_damaged_entry_is_dropped_and_computed_again(tmp_path):
    store = cache.Store(tmp_path / "results")
    dump = msinspect.load_dump(DUMP)
    first = analyse(dump, cache=store, jobs=1)
    entries = [path for path, _ in store.entries()]
    entries[0].write_bytes(entries[0].read_bytes()[:50])       # cut short
    entries[1].write_bytes(b"not a pickle")
    again = analyse(dump, cache=store, jobs=1)
    for a, b in zip(_tables(first), _tables(again)):
        pd.testing.assert_frame_equal(a, b)
    assert all(cache.Store(tmp_path / "results").load(p.stem) is not None for p in entries)


def test_no_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("MSINSPECT_PARSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MSINSPECT_NO_CACHE", "1")
    analyse(msinspect.load_dump(DUMP), jobs=1)
    assert cache.RESULTS.folder == tmp_path / "cache" / "results"
    assert cache.RESULTS.entries() == [] and cache.PARSED.entries() == []
    monkeypatch.delenv("MSINSPECT_NO_CACHE")
    analyse(msinspect.load_dump(DUMP), jobs=1)
    assert len(cache.RESULTS.entries()) == 8


#: The CLI run in this process, then which of the parser's and the graph's libraries it loaded.
_CLI_THEN_MODULES = """
import runpy, sys
sys.argv = ["msinspect", "summary", sys.argv[1], "--json", "--jobs", "1"]  # parsed in this process
try:
    runpy.run_module("msinspect", run_name="__main__")
except SystemExit:
    pass
print("loaded:", sorted(m for m in ("lark", "networkx", "pandas", "rich", "concurrent.futures.process", "importlib.metadata")
                        if m in sys.modules))
"""


def test_a_second_summary_loads_neither_lark_nor_networkx_and_none_pandas_or_rich(tmp_path):
    env = {**os.environ, "MSINSPECT_PARSE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("MSINSPECT_NO_CACHE", None)
    runs = [subprocess.run([sys.executable, "-c", _CLI_THEN_MODULES, str(DUMP)], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=True).stdout for _ in range(2)]
    first, second = (run.rsplit("loaded:", 1) for run in runs)
    # the first run parsed and built graphs (networkx reads its backends' entry points), printed no table
    assert first[1].strip() == "['importlib.metadata', 'lark', 'networkx']"
    assert second[1].strip() == "[]"  # the second answered from the cache (started no pool, read no distribution)
    assert second[0] == first[0]
