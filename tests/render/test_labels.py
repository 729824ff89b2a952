"""The text of a picture's labels: a communication group said in ranks a reader can take in, and
never longer than Graphviz takes (a 10,000-rank group's list overran its 16,384 characters)."""
from __future__ import annotations

from msinspect.render.labels import LABEL_RUNS, group_text


def test_a_group_of_consecutive_ranks_is_one_run():
    assert group_text((0, 1, 2, 3)) == "0-3"
    assert group_text(tuple(range(10_000))) == "0-9999"


def test_a_strided_group_is_listed_while_short():
    assert group_text((0, 4)) == "0, 4"
    eight = tuple(range(0, 8 * LABEL_RUNS, 8))  # 8 runs of one rank each: listed whole
    assert group_text(eight) == ", ".join(str(r) for r in eight)


def test_a_long_group_is_said_by_its_ends_and_size():
    # data parallel across 10,000 ranks with 4-way tensor parallel: every 4th rank, 2,500 of them
    text = group_text(tuple(range(0, 10_000, 4)))
    assert text == "0, 4, 8, ... 9996 (2,500 ranks)"
    assert len(group_text(tuple(range(1, 20_000, 2)))) < 100
