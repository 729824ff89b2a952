"""``explain`` of the steps of a redistribution that had been left "cannot tell" (issue 39,
item 5), on the zoo's real dumps. Each expectation is worked out by hand from the network script
named in its fixture's docstring and MindSpore's rules, in the comment above it.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain import explain

from tests.analysis.explain_helpers import ZOO, read


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_flatten_to_matmul1_is_an_exchange_through_three_alltoalls(stage):
    # Zoo 21 (fixtures/zoo/nets/21_doc_layout_two_axes.py), rank 0 of 8: flatten ((8, 1, 1, 1),),
    # batch parallel (batch_parallel_info.cc), gives x (256, 784) with its rows cut 8 ways: rank r
    # holds rows 32r .. 32r + 31, every column. matmul1 ((2, 4), (4, 1)) has device matrix
    # (2, 4, 1): rank r reads rows block r // 4 of 2 and columns block r % 4 of 4, so rank 0 needs
    # rows 0:128 (held by ranks 0-3) and columns 0:196: dimension 0 gathered from 8 parts to 2,
    # dimension 1 cut from whole to 4, an exchange, 4 parts. MindSpore does it with three
    # AlltoAlls, over ranks 0, 4 then 0, 2 then 0-1, which reach ranks 0-7 together: more than
    # the ranks 0-3 holding the rows, never "the reconstruction is off" nor "cannot tell".
    found = [e for e in explain(read(ZOO / "21_doc_layout_two_axes", stage), "type:AlltoAll", rank=0)
             if e.producer == "flatten"]
    assert sorted(tuple(e.group_ranks) for e in found) == [(0, 1), (0, 2), (0, 4)]
    for e in found:
        assert e.consumer == "matmul1"
        assert (e.producer_layout, e.consumer_layout) == ((8, 1), (2, 4))
        assert (e.action, e.dims, e.parts) == ("exchange", (0, 1), 4)
        assert e.predicted_group == (0, 1, 2, 3)
        said = " ".join(e.reconstruction)
        assert "reach ranks 0-7 together, more than those" in said and "is off here" not in said
        assert not e.cannot_tell
