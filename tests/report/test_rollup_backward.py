"""The report's cost fold keeps each rank's "no backward" sentence (msinspect.analysis.job.cost.
why_no_backward) as one string per stage name, shared by the ranks read at it: formatted anew for
each rank, 10,000 ranks held 10,000 copies of one sentence (some 2 MB)."""
from __future__ import annotations


import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD, backward_missing
from msinspect.report.cost_section import cost_section
from msinspect.report.rollup import roll_up

from tests.conftest import FIXTURES, dump_without


@pytest.fixture(scope="module")
def analysis(tmp_path_factory):
    """Zoo 01 (TP4 x DP2 on 8 ranks) without its validate files: read at step_parallel_end,
    which MindSpore writes before it expands the backward (its J node still there)."""
    root = dump_without(FIXTURES / "zoo" / "01_semi_auto_tp4dp2", tmp_path_factory.mktemp("no_validate") / "zoo01", "rank_*/*validate*")
    return analyse(msinspect.load_dump(root))


def test_one_sentence_for_the_ranks_of_a_stage(analysis):
    missing = backward_missing(analysis)
    sentence = NO_BACKWARD.format(stage="step_parallel_end")
    assert sorted(missing) == list(range(8)) and set(missing.values()) == {sentence}
    assert len({id(why) for why in missing.values()}) == 1  # one object, not eight equal ones


def test_the_cost_section_says_it_once_for_every_rank(analysis):
    rolled = roll_up(analysis, many=False)
    assert len({id(why) for why in rolled.cost.missing.values()}) == 1
    said = cost_section(rolled)["missing"]
    assert said == [f"0-7: {NO_BACKWARD.format(stage='step_parallel_end')}"]
