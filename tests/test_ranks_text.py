"""One text for a set of ranks everywhere (messages, tables, the report): ``0-3, 6``."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from msinspect.analysis.job.rank_groups import RankGroup
from msinspect.dumps import Run, load_dump
from msinspect.expectations.evidence import rank_cells_text
from msinspect.ranks_read import plan_reads
from msinspect.ranks_text import ranks_text
from tests.conftest import FIXTURES


@pytest.mark.parametrize("ranks, text, words", [
    ([0, 1, 2, 3, 6], "0-3, 6", "ranks 0-3, 6"),
    ([4], "4", "rank 4"),
    ([0, 4, 1, 5], "0-1, 4-5", "ranks 0-1, 4-5"),
    ((0, 31, 63), "0, 31, 63", "ranks 0, 31, 63"),
    ([3, 3, 2.0], "2-3", "ranks 2-3"),  # each rank once; a float cell of a frame is its rank
    ([], "", "no rank"),
])
def test_runs_of_consecutive_ranks_read_first_last(ranks, text, words):
    assert ranks_text(ranks) == text
    assert ranks_text(ranks, word=True) == words


@given(st.sets(st.integers(min_value=0, max_value=2000), min_size=1, max_size=60))
def test_the_text_reads_back_to_the_ranks(ranks):
    numbers = sorted(ranks)
    text = ranks_text(reversed(numbers), word=True)
    head, _, spans = text.partition(" ")
    assert head == ("rank" if len(numbers) == 1 else "ranks")
    back = set()
    for span in spans.split(", "):
        first, _, last = span.partition("-")
        back |= set(range(int(first), int(last or first) + 1))
    assert back == ranks
    assert len(spans.split(", ")) == 1 + sum(1 for a, b in zip(numbers, numbers[1:]) if b != a + 1)


def test_every_place_that_names_ranks_uses_it():
    assert Run(Path("runs/a"), tuple(range(8))).format() == "runs/a (8 rank(s): 0-7)"
    assert Run(Path("runs/b"), (0, 31, 63)).format() == "runs/b (3 rank(s): 0, 31, 63)"
    assert rank_cells_text([0.0, 1.0, float("nan"), 3.0]) == "ranks 0-1, 3"
    assert rank_cells_text([None, float("nan")]) == "the dump's files"
    assert rank_cells_text([]) == "no rank"
    group = RankGroup("A", ["rank_0", "rank_1", "rank_2", "rank_3", "rank_8"], [0, 1, 2, 3, 8])
    assert group.heading() == "ranks 0-3, 8: group A"
    loose = RankGroup("B", ["rank_4", "rank_5", "copy"], [4, 5, None])
    assert loose.ranks_text() == "ranks 4-5, copy"
    assert RankGroup("C", ["copy"], [None]).ranks_text() == "rank copy"
    read = plan_reads(load_dump(FIXTURES / "sharding_propagation_dryrun_8rank"))
    assert read.format() == ["read 8 rank(s) at validate: 0-7"]
