"""The other rank of each pipeline Send / Receive, on real dumps of both of MindSpore's pipeline
passes, with the peers worked out by hand from the network scripts and the device count.

MindSpore's two passes write a Send's peer differently:

- ``PipelineTransformer`` (``pipeline_transformer.cc``, zoo 04 and the recursive pipeline run):
  ``dest_rank`` is the global rank, ``global_rank + (user_stage - stage) * ranks_per_stage``,
  over the world group (the node's ``cnode_primal_attrs`` carry the stage as ``dest_rank``);
- ``PipelineInterleave`` (``pipeline_interleave.cc``, ``pipeline(interleave=True)``:
  tests/analysis/dumps/pipeline_interleave_4rank): ``dest_rank`` / ``src_rank`` is the peer's
  *stage*, its index in the stage group ``GetDeviceListBetweenStage()`` (the ranks with the
  rank's place in every stage, stage by stage), and ``dst_global_rank`` / ``src_global_rank`` the
  global rank; the group is named ``GenerateGroupNameByRanks(list) + "Send"``, with no rank list
  on the node before ``validate``.

Either way the peer of rank r in a job of S stages of P ranks is r + P (forward, to the next
stage) or r - P (the gradient coming back).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.comm import RankContext, group_ranks, peer_of
from msinspect.mindspore.comm_groups import mindspore_name, sha256_name
from msinspect.parser import parse_file
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
INTERLEAVE = Path(__file__).parent / "dumps" / "pipeline_interleave_4rank"


def _pipeline_rows(dump, stage):
    comm = analyse(msinspect.load_dump(dump), stage).comm()
    return comm[comm["op"].isin(["Send", "Receive"])]


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_zoo04_peers_are_four_ranks_apart(stage):
    """Zoo 04: 8 ranks in 2 stages of 4 (embedding, blocks 0-1 on ranks 0-3; blocks 2-3 and the
    head on 4-7). Rank r of stage 0 sends its activations to r + 4 and gets their gradient back
    from r + 4; rank r of stage 1 receives from r - 4 and sends the gradient to r - 4. The pair
    is the operator's ranks. At step_parallel_end only the forward half exists (Sends on 0-3,
    Receives on 4-7); at validate the gradient graph adds the way back."""
    rows = _pipeline_rows(ZOO / "04_pipeline_hsdp_recompute", stage)
    assert len(rows) > 0
    for row in rows.to_dict("records"):
        rank = row["rank"]
        expected = rank + 4 if rank < 4 else rank - 4
        assert row["peer"] == expected, row
        assert tuple(row["group_ranks"]) == tuple(sorted((rank, expected)))
        if row["op"] == "Send":
            assert row["consumers"] == (f"rank {expected}",)
        else:
            assert row["producer"] == f"rank {expected}"
    if stage == "step_parallel_end":
        assert set(rows[rows["op"] == "Send"]["rank"]) == {0, 1, 2, 3}
        assert set(rows[rows["op"] == "Receive"]["rank"]) == {4, 5, 6, 7}
    else:
        assert {op: set(rows[rows["op"] == op]["rank"]) for op in ("Send", "Receive")} == {
            "Send": set(range(8)), "Receive": set(range(8))}


def test_recursive_pipeline_peers():
    """train_jobs/recursive_pipeline.py: 8 ranks, 2 stages (layer1 on ranks 0-3, layer2 / layer3
    on 4-7): the same pairs r <-> r + 4."""
    rows = _pipeline_rows(FIXTURES / "recursive_pipeline_dryrun_8rank", "validate")
    assert len(rows) > 0
    for row in rows.to_dict("records"):
        rank = row["rank"]
        assert row["peer"] == (rank + 4 if rank < 4 else rank - 4), row


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_interleave_peer_is_the_global_rank_not_the_stage(stage):
    """The interleaved pipeline (tests/analysis/dumps/interleave_pipeline.py): 4 ranks, 2 stages of
    2 (layer0 on 0-1, layer1 and the loss on 2-3), 2 micro-batches. Rank r's stage group is
    [r % 2, r % 2 + 2]; its Sends write ``dest_rank: 1`` (stage 1) and the peer is r + 2, never
    rank 1. Each micro-batch crosses once forward; at validate its gradient crosses back: per rank
    2 operators at step_parallel_end (Sends on 0-1, Receives on 2-3), 4 at validate (2 Sends and
    2 Receives on every rank)."""
    rows = _pipeline_rows(INTERLEAVE, stage)
    per_rank = rows.groupby("rank").size().to_dict()
    if stage == "step_parallel_end":
        assert per_rank == {0: 2, 1: 2, 2: 2, 3: 2}
        assert set(rows[rows["op"] == "Send"]["rank"]) == {0, 1}
        assert set(rows[rows["op"] == "Receive"]["rank"]) == {2, 3}
    else:
        assert per_rank == {0: 4, 1: 4, 2: 4, 3: 4}
    for row in rows.to_dict("records"):
        rank = row["rank"]
        expected = rank + 2 if rank < 2 else rank - 2
        assert row["peer"] == expected, row
        assert tuple(row["group_ranks"]) == tuple(sorted((rank, expected)))
        # the stage group MindSpore made for the rank: its name is the hash of [r % 2, r % 2 + 2]
        assert row["group"] == mindspore_name((rank % 2, rank % 2 + 2), "Send")


def _first(path: Path, op: str):
    return next(n for n in parse_file(path).nodes() if n.op == op)


def test_stage_relative_rank_alone_is_read_through_the_stage_group():
    """A Send of the interleaved pipeline with its ``dst_global_rank`` taken away (a node of the
    real rank-0 dump, changed with the model's dataclasses): ``dest_rank: 1`` is stage 1, the
    second rank of its stage group. At step_parallel_end the group is named only by its hash:
    the rank list [0, 2] is the one strided list of the world holding rank 0 that hashes to it;
    at validate the node writes it (``group_rank_ids: (0, 2)``). Either way the peer is 2."""
    for path in sorted((INTERLEAVE / "rank_0").glob("*.ir.gz")):
        if "step_parallel_begin" in path.name:
            continue
        send = _first(path, "Send")
        attrs = {k: v for k, v in send.primitive_attrs.items() if k != "dst_global_rank"}
        bare = dataclasses.replace(send, primitive_attrs=attrs)
        assert attrs["dest_rank"] == 1
        assert group_ranks(bare, RankContext(0, (0, 1, 2, 3))) == (0, 2)
        # no world, no rank list on the node: the stage cannot be turned into a rank
        if "group_rank_ids" not in attrs:
            assert group_ranks(bare, RankContext(0, None)) is None
            assert peer_of(bare, None) is None


def test_world_group_rank_is_the_global_rank():
    """Zoo 04's first Send on rank 0 (``PipelineTransformer``): ``dest_rank: 4`` over
    ``nccl_world_group``, whose group ranks are the global ranks: the peer is 4 with or without
    the world known."""
    path = next((ZOO / "04_pipeline_hsdp_recompute" / "rank_0").glob("step_parallel_end_*.ir.gz"))
    send = _first(path, "Send")
    assert peer_of(send, None) == 4
    assert group_ranks(send, RankContext(0, None)) == (0, 4)


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_mindformers_interleaved_pipeline_peers(stage):
    """Zoo 13 (MindFormers' Llama, interleaved pipeline, 2 stages of 4 ranks: stage s is ranks
    4s .. 4s + 3; its script's hand-derived facts): rank 0 (stage 0) sends to and receives from
    rank 4, rank 7 (stage 1) from and to rank 3; the Sends write ``dest_rank: 1`` (stage 1) or
    ``dest_rank: 0``, the global rank apart. MindSpore 2.10 names the stage group [0, 4] by the
    sha256 of its ranks with the ``Send`` suffix, and [3, 7] likewise."""
    rows = _pipeline_rows(ZOO / "13_mf_llama_pp_interleave", stage)
    assert set(rows["rank"]) == {0, 7}
    for row in rows.to_dict("records"):
        peer = 4 if row["rank"] == 0 else 3
        assert row["peer"] == peer, row
        assert tuple(row["group_ranks"]) == tuple(sorted((row["rank"], peer)))
        assert row["group"] == sha256_name(sorted((row["rank"], peer))) + "Send"
