"""A merged row's ranks (msinspect.rank_merge.Ranks) are kept as runs of consecutive numbers: the
ranks come in order, so a row every rank shares costs one run whatever the job's size, and the
numbers read back are the ones added, in their order."""
from __future__ import annotations

from msinspect.rank_merge import Ranks


def ranks_of(*numbers) -> Ranks:
    out = Ranks()
    for n in numbers:
        out.add(n)
    return out


def test_the_numbers_come_back_in_their_order():
    # 0-3 then 8, 9 then 5: three runs; a rank repeated (two rows of one rank alike) and a file
    # outside rank_N folders (no number) as added
    assert list(ranks_of(0, 1, 2, 3, 8, 9, 5).numbers) == [0, 1, 2, 3, 8, 9, 5]
    assert list(ranks_of(4, 4, 5, "cluster_a", None, float("nan"), 6).numbers) == [4, 4, 5, 6]
    assert list(Ranks().numbers) == []


def test_every_rank_of_a_large_job_is_one_run():
    every = ranks_of(*range(10_000))
    assert len(every._runs) == 2  # one start, one stop
    assert every.listed({}) == list(range(10_000))


def test_equal_lists_share_one_list():
    shared: dict = {}
    a, b, c = ranks_of(0, 1, 2, 7), ranks_of(0, 1, 2, 7), ranks_of(0, 1, 2)
    assert a.listed(shared) is b.listed(shared)
    assert c.listed(shared) == [0, 1, 2] and c.listed(shared) is not a.listed(shared)


def test_a_rank_without_a_number_is_kept_apart_and_comes_last():
    # the memory and wire folds keep each rank of a row this way: numbers as runs, then a file read
    # outside rank_N folders (rank None) as it came; len counts both, a rank repeated twice
    found = ranks_of(4, None, 4, 5, 6)
    assert list(found) == [4, 4, 5, 6, None]
    assert len(found) == 5
    assert list(found.numbers) == [4, 4, 5, 6]  # the merged tables' ranks: numbers only
