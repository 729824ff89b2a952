"""``explain`` of a mirror whose weight no operator with a strategy reads (issue 39, item 5): the
weight's layout is the user's ``Layout``, found in the rank's weight rows at step_parallel_end,
or, at ``validate`` (where MindSpore has expanded the operator that read it), in those of the
step_parallel_end file beside it. Each expectation is worked out by hand from the network script,
in the comment above it.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.answers import explain

from tests.conftest import FIXTURES

ZOO15 = FIXTURES / "zoo" / "15_mf_llama_moe_ep8"


@pytest.fixture(scope="module")
def zoo15():
    return msinspect.load_dump(ZOO15)


# Zoo 15 (fixtures/zoo/nets/15_mf_llama_moe_ep8.py): MoEV3's FFN lays its expert weights w1
# (4, 512, 3072) and w2 (4, 1536, 512) out ("inner_dp", "mp0", "mp1") over the device matrix
# (2, 4, 1, 1, 1) (outer_dp 2, inner_dp = ep 4, the rest 1): rank = 4 outer_dp + inner_dp, one
# expert a rank. Only inner_dp cuts them, so the ranks holding the same slice differ in outer_dp
# alone: {0, 4} for rank 0, {1, 5} for rank 5, 2 replicas. A mirror per expert weight and layer:
# 2 layers x (w1, w2) = 4; at validate each is the gradient's AllReduce over the same ranks.
@pytest.mark.parametrize("stage, selector", [("step_parallel_end", "type:_MirrorOperator"),
                                             ("validate", "type:AllReduce")])
@pytest.mark.parametrize("rank, replicas", [(0, (0, 4)), (5, (1, 5))])
def test_expert_weight_mirror_by_the_users_layout(zoo15, stage, selector, rank, replicas):
    analysis = analyse(zoo15, stage, only=[rank])
    found = [e for e in explain(analysis, selector, rank=rank) if ".feed_forward.ffn.w" in e.headline]
    names = sorted(e.headline.split("same slice of ")[1].split(" ")[0] for e in found)
    assert names == [f"model.layers.{layer}.feed_forward.ffn.{w}" for layer in (0, 1) for w in ("w1", "w2")]
    for e in found:
        assert e.action == "replicas"
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == replicas
        assert e.parts == 2
        assert not e.cannot_tell
        # dimension 0 on inner_dp (tensor-map entry 3: the 4th axis from the right); the other
        # two on the size-1 mp axes, in whichever order
        assert any("Layout (2, 4, 1, 1, 1), tensor map (3, " in t for t in e.facts)
