"""The ranks of a comm total (msinspect.analysis.job.comm_totals.RankSet): each rank once, as a set of
them says, kept as bits from the lowest rank's byte: the report keeps one per kind and per group
shape, and a set of 10,000 rank numbers held some 500 kB."""
from __future__ import annotations

import sys

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.comm import comm_totals
from msinspect.analysis.job.comm_totals import CommTotals, RankSet, Total

from tests.conftest import FIXTURES


def test_zoo_04s_stages_rank_by_rank_and_out_of_order():
    # zoo 04 (fixtures/zoo/nets/04_pipeline_hsdp_recompute.py): 2 stages of 4 ranks, ranks 0-3 and
    # 4-7, which pass each micro-batch's activation (and its gradient) to each other: pipeline
    # operators on each of the 8 ranks
    analysis = analyse(msinspect.load_dump(FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"))
    comm = analysis.comm()
    pipeline = comm[comm["kind"] == "pipeline"]
    stage0, stage1 = pipeline[pipeline["rank"] < 4], pipeline[pipeline["rank"] >= 4]
    by_kind = CommTotals("kind")
    for rows in (stage1, stage0):  # stage 1's ranks first: the bits grow down to rank 0
        by_kind.add(rows.to_dict("records"))
    whole = dict(by_kind.items())["pipeline"]
    assert (len(whole.ranks), whole.ranks_text()) == (8, "0-7")
    assert comm_totals(comm, "kind").set_index("kind").loc["pipeline", "rank_count"] == 8
    first, second = Total(), Total()
    for row in stage0.to_dict("records"):
        first.add(row)
    for row in stage1.to_dict("records"):
        second.add(row)
    assert (first.ranks_text(), second.ranks_text(), len(first.ranks)) == ("0-3", "4-7", 4)
    second.merge(first)
    assert (len(second.ranks), second.ranks_text()) == (8, "0-7")

def test_a_rank_outside_rank_folders_counts_and_is_not_numbered():
    # a file read outside rank_N folders has its folder's name for a rank: counted, never written
    ranks = RankSet()
    for rank in (3, 3.0, "cluster_a", 5, 3):
        ranks.add(rank)
    assert len(ranks) == 3 and ranks.numbers() == [3, 5]


def test_ten_thousand_ranks_in_bits():
    ranks = RankSet()
    for rank in range(10_000):
        ranks.add(rank)
    assert len(ranks) == 10_000 and ranks.numbers() == list(range(10_000))
    assert sys.getsizeof(ranks._bits) < 2_000  # 10,000 bits: 1,250 bytes
