"""The 2.10 dry run of train_jobs/recursive_pipeline.py (seeds 000/001): 8 ranks, 2 pipeline
stages (config.json beside the ranks), so ranks 0-3 form stage 0 (layer1) and 4-7 stage 1
(layer2, layer3); 4 micro-batches; rank r of stage 0 sends to rank r + 4."""
from __future__ import annotations

import json

import pytest

from msinspect.analysis import analyse
from msinspect.analysis.compare.ranks import diff_ranks
from msinspect.cli.diff_cmd import stage_line
from tests.conftest import FIXTURES

ROOT = FIXTURES / "recursive_pipeline_dryrun_8rank"
CONFIG = json.loads((ROOT / "config.json").read_text())
STAGES = 2
PER_STAGE = CONFIG["ranks"] // STAGES
MICRO = 4


def stage_ranks(r: int) -> tuple[int, ...]:
    first = (r // PER_STAGE) * PER_STAGE
    return tuple(range(first, first + PER_STAGE))


def test_stages_seen_in_the_dump_match_the_configuration(pipeline):
    analysis = analyse(pipeline)
    assert analysis.world == tuple(range(CONFIG["ranks"]))
    for r in range(CONFIG["ranks"]):
        assert analysis.context(r).stage_ranks == stage_ranks(r)


@pytest.mark.parametrize("rank", range(PER_STAGE))
def test_stage_0_sends_forward_once_per_micro_batch(pipeline, rank):
    comm = analyse(pipeline).comm()
    sends = comm[(comm["rank"] == rank) & (comm["op"] == "Send") & (comm["scope"] == "Default")]
    assert len(sends) == MICRO
    assert set(sends["peer"]) == {rank + PER_STAGE}
    assert set(sends["kind"]) == {"pipeline"}
    assert set(sends["group_ranks"]) == {(rank, rank + PER_STAGE)}


@pytest.mark.parametrize("rank", range(PER_STAGE, 2 * PER_STAGE))
def test_stage_1_receives_from_its_partner(pipeline, rank):
    comm = analyse(pipeline).comm()
    receives = comm[(comm["rank"] == rank) & (comm["op"] == "Receive") & (comm["scope"] == "Default")]
    assert len(receives) == MICRO
    assert set(receives["producer"]) == {f"rank {rank - PER_STAGE}"}


def test_diff_of_ranks_in_different_stages_shows_the_stage_difference():
    d = diff_ranks(ROOT / "rank_0", ROOT / "rank_4")
    assert d.same_stage is False
    assert "different pipeline stages" in stage_line(d)
    only = d.only
    forward = only[~only["gradient"]]
    layer1 = forward[(forward["name"] == "matmul") & forward["scope"].str.endswith("layer1-Dense")]
    layer2 = forward[(forward["name"] == "matmul") & forward["scope"].str.endswith("layer2-Dense")]
    assert (layer1.iloc[0]["left_count"], layer1.iloc[0]["right_count"]) == (MICRO, 0)
    assert (layer2.iloc[0]["left_count"], layer2.iloc[0]["right_count"]) == (0, MICRO)
    # each weight and, under the pipeline's gradient accumulation, its accumulator accu_grads.<weight>
    weights = {"layer1.weight", "layer1.bias", "layer2.weight", "layer2.bias", "layer3.weight", "layer3.bias"}
    assert set(d.slices["param"]) == weights | {f"accu_grads.{w}" for w in weights}


def test_diff_within_a_stage_shows_only_slices_and_groups():
    d = diff_ranks(ROOT / "rank_0", ROOT / "rank_1")
    assert d.same_stage is True
    assert d.only.empty and d.shapes.empty and d.strategies.empty
    w = d.slices[d.slices["param"] == "layer1.weight"].iloc[0]
    # layer1's weight (512, 784), stored (out, in), is cut in 4 along out within the stage
    assert (w["left_slice"], w["right_slice"]) == ("[0:128, 0:784]", "[128:256, 0:784]")


def test_diff_to_json_is_serialisable():
    d = diff_ranks(ROOT / "rank_0", ROOT / "rank_4")
    text = json.dumps(d.to_dict())
    assert json.loads(text)["same_stage"] is False
