"""The parser's one eviction rule (msinspect.parser.bounded): a table keeps at most its size,
starting again when full; a size of 0 keeps nothing."""
from __future__ import annotations

from msinspect.parser.bounded import Bounded


def test_a_full_table_starts_again():
    table = Bounded(3)
    assert [table.put(k, k * 10) for k in range(3)] == [0, 10, 20]
    assert dict(table) == {0: 0, 1: 10, 2: 20}
    assert table.put(3, 30) == 30 and dict(table) == {3: 30}


def test_a_table_of_size_0_keeps_nothing():
    table = Bounded(0)
    assert table.put("x", 1) == 1 and len(table) == 0 and table.get("x") is None
