"""A new per-rank pass is one registry entry (docs/contributing.md, "Where to add"): a pass the
test registers through ``msinspect.analysis.rank.passes.registered``, and nothing else, comes out of
``analyse()`` in every rank's result (``result.rows[name]``, ``result.<name>``) and as one table
(``Analysis.table(name)``), for one rank, for every rank read in full or by what differs from
another, with the rows held in memory or spooled to disk, and is never answered from a cache made
without it.

The dump: zoo 01 (fixtures/zoo/nets/01_semi_auto_tp4dp2.py: 8 ranks, ``rank_0`` .. ``rank_7``,
each folder holding one ``validate`` file, ``21_validate_0082.ir.gz``, the stage read by default).
The pass makes one row a rank: its rank, its file, the stage of the file it parsed (and that
file's path, a key the table hides). So every rank has exactly one row: rank N,
``rank_N/21_validate_0082.ir.gz``, stage ``validate``, and the table holds 8 rows, ranks 0-7 in
order.
"""
from __future__ import annotations

import multiprocessing

import pytest

from msinspect import cache as caches
from msinspect import executors, parser_mode
from msinspect.analysis import analyse
from msinspect.analysis.rank import passes
from msinspect.analysis.rank.passes import RankInput, RankPass
from msinspect.dumps import load_dump
from msinspect.errors import MsInspectError
from tests.conftest import FIXTURES

DUMP = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"
FILE = "21_validate_0082.ir.gz"


def _where(rank: RankInput) -> list[dict]:
    """One row: the rank, its file, and the stage and path of the file the pass was handed (for a
    rank read by what differs, the other rank's parse made this rank's)."""
    return [{"rank": rank.ctx.rank, "file": rank.path, "parsed": str(rank.ir.path), "stage": rank.ir.stage,
             "line": 0}]


WHERE = RankPass("where_read", _where, ("rank", "file", "stage"), hidden=("parsed",))


def _expected(rank: int) -> dict:
    path = str(DUMP / f"rank_{rank}" / FILE)
    # the pass's own row, plus `complete` (every row of a pass with complete=True carries it: the
    # file read whole, not --lenient)
    return {"rank": rank, "file": path, "parsed": path, "stage": "validate", "line": 0, "complete": True}


@pytest.fixture
def where_read():
    with passes.registered(WHERE) as registered:
        yield registered
    assert "where_read" not in passes.names()


@pytest.mark.parametrize("spool", [False, True])
def test_a_registered_pass_comes_out_of_every_rank(where_read, spool):
    analysis = analyse(load_dump(DUMP), jobs=1, cache=False, spool=spool)
    results = analysis.results
    assert [r.rank for r in results] == list(range(8))
    # ranks 1-7 have the file name of rank 0: under the fast reader they are read by what differs
    # from it (the alike reading), so the pass ran on rank 0's parse made theirs; Lark alone
    # (MSINSPECT_PARSER=reference) reads each in full
    alike = parser_mode.current() == parser_mode.FAST
    assert [r.read_by for r in results] == [None] + (["rank_0"] if alike else [None]) * 7
    for result in results:
        assert result.rows["where_read"] == [_expected(result.rank)], result.label
        assert result.where_read == [_expected(result.rank)], result.label
    table = analysis.table("where_read")
    # its columns first, the row's other keys after them but the hidden one, then other_stage
    assert list(table.columns) == ["rank", "file", "stage", "line", "complete", "other_stage"]
    assert table["rank"].tolist() == list(range(8))
    assert table["file"].tolist() == [str(DUMP / f"rank_{n}" / FILE) for n in range(8)]
    assert set(table["stage"]) == {"validate"} and not table["other_stage"].any()


def test_a_registered_pass_on_one_rank(where_read):
    analysis = analyse(load_dump(DUMP), jobs=1, cache=False, only=[5])
    assert [r.where_read for r in analysis.results] == [[_expected(5)]]
    assert analysis.table("where_read")["rank"].tolist() == [5]


def test_worker_processes_forked_after_it_run_it(where_read, monkeypatch):
    monkeypatch.setattr(executors, "_start_method", lambda: multiprocessing.get_context("fork"))
    analysis = analyse(load_dump(DUMP), jobs=2, cache=False)
    assert [r.where_read for r in analysis.results] == [[_expected(n)] for n in range(8)]


def test_a_worker_without_the_pass_is_an_error_not_an_empty_table(where_read, monkeypatch):
    # a worker from a fork server imports msinspect afresh: the pass registered here is not in it
    monkeypatch.setattr(executors, "_start_method", lambda: multiprocessing.get_context("forkserver"))
    with pytest.raises(MsInspectError, match=r"rank_\d: the process that analysed it has no per-rank pass where_read"):
        analyse(load_dump(DUMP), jobs=2, cache=False)


def test_a_cache_made_without_the_pass_does_not_answer_it(tmp_path):
    store = caches.Store(tmp_path / "results")
    analyse(load_dump(DUMP), jobs=1, cache=store, only=[2])  # kept without the pass
    with passes.registered(WHERE):
        again = analyse(load_dump(DUMP), jobs=1, cache=store, only=[2])
        assert again.results[0].where_read == [_expected(2)]


def test_the_built_in_passes_are_the_result_s_rows():
    # the five tables a rank's file gives (docs/contributing.md): each pass's rows are the result's
    assert passes.names() == ("comm", "strategies", "params", "ops", "held")
    analysis = analyse(load_dump(DUMP), jobs=1, cache=False, only=[0])
    result = analysis.results[0]
    assert set(result.rows) == set(passes.names())
    assert result.comm is result.rows["comm"] and result.held is result.rows["held"]


def test_a_pass_name_a_result_holds_otherwise_is_refused():
    for taken in ("rank", "signature", "rows", "comm"):
        with pytest.raises(ValueError, match=repr(taken)):
            passes.register(RankPass(taken, _where, ("rank",)))
    assert passes.names() == ("comm", "strategies", "params", "ops", "held")
