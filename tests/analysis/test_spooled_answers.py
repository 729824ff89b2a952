"""Ranks whose rows wait on disk (msinspect.analysis.engine.spool) give the answers of ranks held whole:
every table, the summary and the rank groups, on every fixture of several ranks (issue 28)."""
from __future__ import annotations

import json
import pickle
import shutil
import tempfile

import pytest

from msinspect import cache as caches
from msinspect import parser_mode
from msinspect.analysis import analyse, rank_groups
from msinspect.analysis.job.collect import Gathered, RankResult
from msinspect.analysis.engine.spool import Spool
from msinspect.analysis.engine.spooled_results import SpooledResult
from msinspect.mindspore.comm_groups import mindspore_name
from msinspect.analysis.job.summary import iter_summary_rows, summary_rows
from msinspect.analysis.engine.tally import tally_of
from msinspect.dumps import load_dump
from msinspect.schema import json_pieces, jsonl_lines, to_json
from tests.conftest import FIXTURES

MULTI_RANK = sorted([p for p in FIXTURES.glob("*_8rank")]
                    + [p for p in (FIXTURES / "zoo").iterdir()
                       if p.is_dir() and len(list(p.glob("rank_*"))) > 1], key=lambda p: p.name)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One result cache for the module: the second analysis of a dump reads its ranks back."""
    return caches.Store(tmp_path_factory.mktemp("results"))


def _json(rows) -> str:
    """Rows as ``--jsonl`` writes them (the values of ``--json``, compact: ``1`` and ``1.0``,
    ``true`` and ``1`` still differ, without the indented encoder's cost)."""
    return "".join(jsonl_lines(rows))


def answers(analysis) -> dict:
    """Every answer of an analysis, as JSON text."""
    groups = rank_groups(analysis)
    return {
        "summary": _json(summary_rows(analysis, groups)), "groups": json.dumps(groups.to_dict()),
        "strategies": _json(analysis.strategies()), "comm": _json(analysis.comm()),
        "shapes": _json(analysis.shapes()), "slices": _json(analysis.slices()),
        "operators": _json(analysis.operators()), "gradient_sync": _json(analysis.gradient_sync()),
        "world": repr(analysis.world), "stages": repr(analysis.stages), "complete": repr(analysis.complete),
        "skipped": repr(analysis.skipped),
    }


def test_every_multi_rank_fixture_is_here():
    names = {p.name for p in MULTI_RANK}
    assert {"sharding_propagation_dryrun_8rank", "01_semi_auto_tp4dp2", "16_mf_llama_256"} <= names
    assert len(MULTI_RANK) >= 15


@pytest.mark.parametrize("root", MULTI_RANK, ids=lambda p: p.name)
def test_spooled_ranks_answer_as_ranks_held_whole(root, store):
    whole = analyse(load_dump(root), jobs=1, cache=store, spool=False)
    spooled = analyse(load_dump(root), jobs=1, cache=store, spool=True)
    assert all(type(r) is RankResult for r in whole.results)
    assert all(type(r) is SpooledResult and not hasattr(r, "__dict__") for r in spooled.results)
    assert answers(spooled) == answers(whole)
    import pickle

    assert [pickle.loads(pickle.dumps(r)) for r in spooled.results] == whole.results  # field by field
    # the counts the summary prints, made by the worker (msinspect.analysis.engine.tally), are the rows'
    assert all(r.tally is not None and r.tally == tally_of(r.strategies, r.comm, r.params) for r in spooled.results)


def test_a_world_told_by_the_files_and_groups_named_by_hash_only(tmp_path, store):
    """Zoo 16's three ranks of 256 without their run record: the world comes from what the files
    state, and groups a rank names by hash only are found from the others (the fill made once
    every rank has arrived, on the spooled rows as on the held ones)."""
    root = tmp_path / "some_ranks"
    shutil.copytree(FIXTURES / "zoo" / "16_mf_llama_256", root, ignore=shutil.ignore_patterns("config.json"))
    whole = analyse(load_dump(root), jobs=1, cache=store, spool=False)
    spooled = analyse(load_dump(root), jobs=1, cache=store, spool=True)
    assert whole.world == tuple(range(256))
    assert answers(spooled) == answers(whole)


def test_a_spooled_rank_reads_back_pickles_whole_and_takes_new_rows(store):
    analysis = analyse(load_dump(FIXTURES / "sharding_propagation_dryrun_8rank"), jobs=1, cache=store, spool=True)
    result = analysis.results[3]
    assert result.comm == result.comm and result.comm is not result.comm  # a new list each time
    import pickle

    plain = pickle.loads(pickle.dumps(result))
    assert type(plain) is RankResult and plain.strategies == result.strategies and plain.rank == 3
    result.comm = result.comm[:1]
    assert len(result.comm) == 1


def test_the_summary_streamed_is_the_summary(store):
    analysis = analyse(load_dump(FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"), jobs=1, cache=store, spool=True)
    rows = summary_rows(analysis)
    assert "".join(json_pieces(iter_summary_rows(analysis))) == json.dumps(json.loads(to_json(rows)), indent=2,
                                                                            ensure_ascii=False)
    assert [json.loads(line) for line in jsonl_lines(iter_summary_rows(analysis))] == json.loads(to_json(rows))
    # 04 is a two-stage pipeline on 8 ranks (fixtures/zoo/nets/04_pipeline_hsdp_recompute.py): the
    # stages are written as ranges, one string a stage, not a list of the stage's ranks a row
    assert [row["stage_ranks"] for row in rows] == ["0-3"] * 4 + ["4-7"] * 4


def _rank(rank: int, comm: list[dict]) -> RankResult:
    return RankResult(rank=rank, label=f"rank_{rank}", file=f"rank_{rank}/x.ir", stage="validate", family="",
                      status="ok", rows={"comm": comm}, world_size=8, highest_named=4)


@pytest.mark.parametrize("spool", [False, True])
def test_groups_filled_once_every_rank_arrived(spool):
    """Rank 0 names a group by its hash only and uses the world group without its ranks (its file
    told neither, the world unknown when it was read); rank 4 writes the group's ranks. Once both
    arrived, rank 0's rows take the group's ranks from rank 4 and the world the files state, held
    or spooled alike."""
    name = mindspore_name((0, 4))
    hashed = {"rank": 0, "op": "AllReduce", "group": name, "group_ranks": None, "group_size": 2,
              "moves_data": True, "tensor_bytes": 400, "wire_bytes": None}
    world_row = {"rank": 0, "op": "AllReduce", "group": "hccl_world_group", "group_ranks": None, "group_size": None,
                 "moves_data": True, "tensor_bytes": 400, "wire_bytes": None}
    written = {**hashed, "rank": 4, "group_ranks": (0, 4), "wire_bytes": 400}
    gathered = Gathered(2, spool)
    gathered.arrive(1, _rank(4, [written]))
    gathered.arrive(0, _rank(0, [hashed, world_row]))
    results, world = gathered.finish(None)
    assert world == tuple(range(8))
    assert [type(r) for r in results] == [SpooledResult if spool else RankResult] * 2
    first, second = results[0].comm
    assert (first["group_ranks"], first["wire_bytes"]) == ((0, 4), 400)
    assert (second["group_ranks"], second["group_size"]) == (tuple(range(8)), 8)
    assert results[1].comm == [written]


def test_rows_put_by_pool_workers_answer_as_ranks_held_whole(store, tmp_path, monkeypatch):
    """With a process pool, each worker puts its ranks' rows in its own file of the spool's folder
    and sends where they are (msinspect.analysis.engine.spool.shelve): the same answers as ranks held
    whole, nothing of the rows left in the results' heads, the folder gone once the run ends."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    root = FIXTURES / "zoo" / "10_layout_api_8"  # 8 ranks, two workers: four ranks each
    whole = analyse(load_dump(root), jobs=1, cache=store, spool=False)
    pooled = analyse(load_dump(root), jobs=2, cache=False, spool=True)
    assert all(type(r) is SpooledResult and r.rows_at is None and r.groups_seen is None for r in pooled.results)
    assert pooled.results[0]._spool.workers >= 1  # the rows came from the workers' files
    assert answers(pooled) == answers(whole)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("msinspect-rows-")]


def test_a_follower_rows_go_in_as_a_delta_of_its_exemplar(tmp_path):
    """A rank's lists derived from the exemplar's go in its worker's file as where the exemplar's
    are and what differs; read back, they are the rows."""
    from msinspect.analysis.engine.spool import Derived, close_shelf, column, derived, shelve

    folder = str(tmp_path)
    base = [{"line": 10 + i, "rank": 0, "file": "rank_0/x.ir", "op": f"Op{i}", "note": "x" * 40} for i in range(200)]
    changed = {"line": 13, "rank": 1, "file": "rank_1/x.ir", "op": "Other", "note": ""}
    try:
        path, (base_at,) = shelve(folder, [base])
        rows = derived(base, {"rank": 1, "file": "rank_1/x.ir"}, {3: changed})
        made = list(rows)
        assert isinstance(rows, Derived) and made[3] is changed and made[4]["rank"] == 1 and base[4]["rank"] == 0
        # counted by its columns, without its rows made; pickled, a list
        for name in ("rank", "op", "note"):
            assert column(rows, name) == [row[name] for row in made]
        assert pickle.loads(pickle.dumps(rows)) == made
        same_path, (delta_at,) = shelve(folder, [rows])
        _, (whole_at,) = shelve(folder, [list(rows)])  # the same rows, as a plain list
        # not derived from the lists put last: a plain list (and a list pickles as one)
        _, (plain_at,) = shelve(folder, [derived([{"line": 1}], {"rank": 2}, {})])
    finally:
        close_shelf()
    assert same_path == path
    assert delta_at[1] - delta_at[0] < (whole_at[1] - whole_at[0]) / 4  # the rows are not in it
    spool = Spool()
    try:
        first = spool.adopt(path, [base_at, delta_at, whole_at, plain_at])
        assert spool.get(first) == base
        assert spool.get(first + 1) == list(rows) and spool.get(first + 1) == spool.get(first + 2)
        assert spool.get(first + 3) == [{"line": 1, "rank": 2}]
    finally:
        spool.close()


@pytest.mark.skipif(parser_mode.current() == parser_mode.REFERENCE,
                    reason="reading ranks by what differs is the fast reading's")
def test_followers_spooled_as_deltas_answer_as_every_rank_read_in_full(store):
    root = FIXTURES / "zoo" / "10_layout_api_8"  # one program on 8 ranks: 1-7 read by what differs
    full = analyse(load_dump(root), jobs=1, cache=False, spool=False, alike=False)
    alike = analyse(load_dump(root), jobs=1, cache=False, spool=True, alike=True)
    assert [r.read_by for r in alike.results][1:] == ["rank_0"] * 7
    assert answers(alike) == answers(full)


def test_the_reference_reading_reads_every_rank_in_full(monkeypatch):
    """MSINSPECT_PARSER=reference is Lark alone: no rank is read by what differs (that rereads a
    follower's nodes with the fast reading's reader, which the reference reading has not; every
    follower failed with an AttributeError before), and the answers are the fast reading's. The
    8-rank dry run of the sharding-propagation job: its ranks run one program, read alike."""
    root = FIXTURES / "sharding_propagation_dryrun_8rank"
    monkeypatch.setenv(parser_mode.VARIABLE, parser_mode.FAST)
    fast = analyse(load_dump(root), jobs=1, cache=False, spool=True)
    assert [r.read_by for r in fast.results][1:] == ["rank_0"] * 7
    monkeypatch.setenv(parser_mode.VARIABLE, parser_mode.REFERENCE)
    reference = analyse(load_dump(root), jobs=1, cache=False, spool=True)
    assert [r.read_by for r in reference.results] == [None] * 8
    assert answers(reference) == answers(fast)


def test_the_spool_index_holds_offsets_past_4_gib():
    """The index holds offsets in 4 bytes each until one passes 4 GiB, then in 8: what was put
    before reads back, and the offsets after are whole."""
    spool = Spool()
    try:
        first = spool.put([{"rank": 0}])
        assert spool._end.typecode == "I"
        spool._add(0, 2 ** 32 + 10, 2 ** 32 + 20)  # as a worker's file past 4 GiB is adopted
        assert spool._end.typecode == "Q" and (spool._start[-1], spool._end[-1]) == (2 ** 32 + 10, 2 ** 32 + 20)
        assert spool.get(first) == [{"rank": 0}]
        assert spool.get(spool.put([{"rank": 1}])) == [{"rank": 1}]
    finally:
        spool.close()


def test_what_ranks_tell_of_groups_waits_in_the_spool_until_asked():
    """Spooled, the groups 600 ranks tell (more than two logged values of LOGGED ranks, and some
    waiting) are put in the spool, not held, and a group named by hash only is filled from them
    as from the groups held in memory."""
    from msinspect.analysis.rank.comm import LOGGED, SharedGroups

    def told(rank: int) -> list[dict]:
        tp = tuple(range(rank - rank % 4, rank - rank % 4 + 4))
        dp = (rank % 300, rank % 300 + 300)
        return [{"rank": rank, "op": "AllReduce", "group": mindspore_name(ranks), "group_ranks": ranks}
                for ranks in (tp, dp)]

    def hashed() -> list[dict]:  # rank 601 of the world of 604 names its groups by hash only
        return [{"rank": 601, "op": "AllGather", "group": mindspore_name(ranks), "group_ranks": None,
                 "group_size": len(ranks), "moves_data": True, "tensor_bytes": 64, "wire_bytes": None}
                for ranks in ((600, 601, 602, 603), (301, 601))]

    assert 600 > 2 * LOGGED
    spool = Spool()
    try:
        logged, held = SharedGroups(log=spool), SharedGroups()
        for rank in range(600):
            logged.add(told(rank))
            held.add(told(rank))
        logged.add(told(600) + told(602))  # as a rank that tells two groups more
        held.add(told(600) + told(602))
        assert spool.size > 0 and not logged._lists  # on disk, nothing held
        mine, theirs = hashed(), hashed()
        logged.fill(mine, tuple(range(604)))
        held.fill(theirs, tuple(range(604)))
    finally:
        spool.close()
    assert mine == theirs
    assert [row["group_ranks"] for row in mine] == [(600, 601, 602, 603), (301, 601)]


def test_a_spooled_ranks_fields_set_are_its_own(store):
    """A spooled rank's label, file and counts are made from its plan entry and the tuple of fields
    the ranks that agree share; set on one rank, they are that rank's and no other's, and it
    pickles with them."""
    import pickle

    analysis = analyse(load_dump(FIXTURES / "zoo" / "01_semi_auto_tp4dp2"), jobs=1, cache=store, spool=True)
    one, other = analysis.results[2], analysis.results[3]
    assert (one.label, one.rank, other.label) == ("rank_2", 2, "rank_3")
    assert one.file == analysis.plan.read[2].read_from and one.file.split("/")[-2] == "rank_2"
    assert one == analysis.results[2] and one != other  # the same rank, read twice
    before = (other.label, other.status, other.highest_named)
    assert one.status == other.status  # the ranks agree
    one.label, one.status, one.highest_named = "renamed", "odd", 6
    assert (one.label, one.status, one.highest_named, one.rank) == ("renamed", "odd", 6, 2)
    assert (other.label, other.status, other.highest_named) == before
    plain = pickle.loads(pickle.dumps(analysis.results[2]))
    assert (plain.label, plain.status, plain.file) == ("renamed", "odd", one.file)
