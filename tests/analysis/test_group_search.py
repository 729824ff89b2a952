"""A group name that contradicts its stated ranks is searched for once, not once per rank
(issue 40, item 11), and the answer is the one the search of each rank would give.

MindSpore names the groups of its parallel pass ``"{size}-{std::hash(sorted ranks joined by
'-')}"`` (``DeviceManager::GenerateGroupNameByRanks``), so a name stands for one rank list on
every rank of a job, and a rank is in every group it communicates in: what the search from one
rank that uses a name finds (or does not find) is what the search from any other would.
"""
from __future__ import annotations

from msinspect.analysis.rank.comm import shared_groups
from msinspect.mindspore.comm_groups import (StridedSearch, mindspore_name, resolve, std_hash,
                                             strided_candidates)

WORLD = tuple(range(2048))
#: A name of MindSpore's form whose hash is std::hash("8-9-10-11") + 1: the hash of no list a
#: search tries (a 64-bit hash; the test below checks the lists holding rank 8 and 9 by hand).
CONTRADICTING = f"4-{(std_hash('8-9-10-11') + 1) % (1 << 64)}"


def test_a_name_that_hashes_to_no_list_is_searched_once():
    """Ranks 8..11 each name the group CONTRADICTING (stating, say, rank 0's list 0-1-2-3, which
    holds none of them): no strided list of the 2,048 holding rank 8 hashes to it, so the answer is
    "cannot tell" (None) for every rank that uses it, and only the first rank searches."""
    assert resolve(CONTRADICTING, strided_candidates(8, 4, WORLD), rank=8) is None  # the search itself
    assert resolve(CONTRADICTING, strided_candidates(9, 4, WORLD), rank=9) is None
    search = StridedSearch()
    assert [search.find(CONTRADICTING, 4, r, WORLD) for r in (8, 9, 10, 11)] == [None] * 4
    assert search.searches == 1


def test_a_name_found_once_answers_each_rank_of_its_list():
    """The tensor-parallel group of ranks 4-7 in a world of 2,048, named as MindSpore names it:
    rank 5's search finds (4, 5, 6, 7); ranks 4, 6 and 7 read the same list without searching; rank
    9 (not in the list; it cannot use the group) gets None, as its own search would (no other list
    hashes to the name)."""
    name = mindspore_name((4, 5, 6, 7))
    search = StridedSearch()
    assert search.find(name, 4, 5, WORLD) == (4, 5, 6, 7)
    assert [search.find(name, 4, r, WORLD) for r in (4, 6, 7)] == [(4, 5, 6, 7)] * 3
    assert search.searches == 1
    assert search.find(name, 4, 9, WORLD) is None
    assert resolve(name, strided_candidates(9, 4, WORLD), rank=9) is None
    # a name of another size than the one asked for is no list of that size
    assert search.find(name, 2, 5, WORLD) is None


def _row(rank: int, name: str, ranks=None) -> dict:
    return {"rank": rank, "op": "AllReduce", "group": name, "group_ranks": ranks, "group_size": 4,
            "moves_data": True, "tensor_bytes": 400}


def test_across_ranks_the_contradicting_name_stays_cannot_tell():
    """Across 8 ranks (``analyse``'s shared groups, synthetic rows): ranks 0-3 state 0-1-2-3 for
    CONTRADICTING (their rows keep it); ranks 8-11 name it without a list they can use. Their
    group cannot be told (no list holding them hashes to the name): None, with no wire bytes made
    up. Ranks 4-7 name their group by its hash only and get 4-7, the list it is made from
    (wire bytes of an AllReduce of 400 bytes over 4 ranks: 2 (n - 1) / n * S = 600)."""
    told = [[_row(r, CONTRADICTING, (0, 1, 2, 3))] for r in range(4)]
    unknown = [[_row(r, CONTRADICTING)] for r in range(8, 12)]
    hashed = [[_row(r, mindspore_name((4, 5, 6, 7)))] for r in range(4, 8)]
    shared_groups(told + unknown + hashed, WORLD)
    assert [rows[0]["group_ranks"] for rows in told] == [(0, 1, 2, 3)] * 4
    assert [rows[0]["group_ranks"] for rows in unknown] == [None] * 4
    assert all(rows[0].get("wire_bytes") is None for rows in unknown)
    assert [rows[0]["group_ranks"] for rows in hashed] == [(4, 5, 6, 7)] * 4
    assert [rows[0]["wire_bytes"] for rows in hashed] == [600] * 4
