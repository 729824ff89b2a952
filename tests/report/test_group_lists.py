"""The report's communication groups (msinspect.report.group_shapes.GroupLists): one tuple per rank
list, and what the report asks of each (its shape, each rank's place in it sorted) the same whether
kept or made again. Only the facts of the groups asked for last are kept (KEPT_FACTS) and those of
a big group (BIG_GROUP) all along: kept for every group they grew with the ranks."""
from __future__ import annotations

import pytest

from msinspect.analysis import analyse
from msinspect.report import group_shapes
from msinspect.report.group_shapes import GroupLists, shape_of


@pytest.fixture(scope="module")
def groups(analysed):
    """Zoo 01's rank lists of its communication rows that name one, every rank's, as the rows give them."""
    comm = analyse(analysed("zoo/01_semi_auto_tp4dp2")).comm()
    return [g for g in comm["group_ranks"] if isinstance(g, (tuple, list))]


def facts(lists: GroupLists, group: tuple) -> tuple:
    return lists.shape(group), dict(lists.position(group)), list(lists.ordered(group))


def test_facts_made_again_are_the_facts_kept(groups, monkeypatch):
    # TP4 x DP2 on 8 ranks (fixtures/zoo/nets/01_semi_auto_tp4dp2.py): the tensor groups 0-3 and
    # 4-7, the data-parallel pairs (0, 4) ... (3, 7), the 8 ranks together
    kept, forgetting = GroupLists(), GroupLists()
    monkeypatch.setattr(group_shapes, "KEPT_FACTS", 1)  # every other group's facts made again
    seen = {}
    for ranks in groups:
        a, b = kept.one(ranks), forgetting.one(ranks)
        monkeypatch.setattr(group_shapes, "KEPT_FACTS", 1 << 20)
        seen[a] = facts(kept, a)
        monkeypatch.setattr(group_shapes, "KEPT_FACTS", 1)
        assert facts(forgetting, b) == seen[a]
    assert len(forgetting._facts) == 1
    assert seen[(0, 1, 2, 3)] == ("4 ranks, stride 1", {0: 0, 1: 1, 2: 2, 3: 3}, [0, 1, 2, 3])
    assert seen[(4, 5, 6, 7)][1] == {4: 0, 5: 1, 6: 2, 7: 3}
    assert seen[(1, 5)] == ("2 ranks, stride 4", {1: 0, 5: 1}, [1, 5])
    assert seen[tuple(range(8))][0] == "8 ranks, stride 1"
    assert set(seen) == {(0, 1, 2, 3), (4, 5, 6, 7), (0, 4), (1, 5), (2, 6), (3, 7), tuple(range(8))}


def test_a_big_groups_facts_stay_and_shapes_are_shared(monkeypatch):
    # the world group of a 10,000-rank job: sorted and indexed once, whatever else is asked for
    monkeypatch.setattr(group_shapes, "KEPT_FACTS", 1)
    lists = GroupLists()
    world = lists.one(tuple(range(10_000)))
    position = lists.position(world)
    for start in range(0, 40, 4):
        lists.position(lists.one(tuple(range(start, start + 4))))
    assert lists.position(world) is position and position[9_999] == 9_999
    assert len(lists._facts) == 1 and len(lists._big) == 1
    # 2,500 tensor groups of one shape: one string of words
    assert shape_of((0, 1, 2, 3)) is shape_of((9_996, 9_997, 9_998, 9_999)) == "4 ranks, stride 1"
