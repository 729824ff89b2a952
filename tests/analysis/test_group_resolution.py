"""Which ranks a communication group holds when the operator does not write them (a group named
only by its hash), and never a rank list that cannot be the group's.

MindSpore names the groups of its parallel pass ``"{size}-{std::hash(sorted ranks joined by
'-')}"`` (``DeviceManager::GenerateGroupNameByRanks``); MindFormers names its MoE groups
``sha256("-".join(ranks)).hexdigest()[:48]``. Both can be checked against a candidate list.
"""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.comm import RankContext, comm_rows, known_groups, group_ranks
from msinspect.mindspore.comm_groups import mindspore_name, resolve, sha256_name, std_hash, strided_candidates
from msinspect.model import Abstract, IRFile, Node, Subgraph
from msinspect.parser import parse_file
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
INTERLEAVE = Path(__file__).parent / "dumps" / "pipeline_interleave_4rank"
WORLD8 = tuple(range(8))


def test_std_hash_is_libstdcxx():
    """libstdc++'s ``std::hash<std::string>`` (MurmurHash2 64, seed 0xc70f6907) of the empty
    string and of "0-1-2-3": the first is the well-known _Hash_bytes("", 0, 0xc70f6907); the second
    is the hash in the name zoo 01 gives its tensor-parallel group of ranks 0-3
    (``group: "4-6301172352641561019", group_ranks: "0-1-2-3"`` in every rank-0 file)."""
    assert std_hash("") == 6142509188972423790
    assert std_hash("0-1-2-3") == 6301172352641561019
    assert mindspore_name((3, 1, 2, 0)) == "4-6301172352641561019"  # sorted before hashing


def _groups_written(path: Path) -> set[tuple[str, tuple[int, ...]]]:
    """(name, ranks) of every operator of a real file that writes both, the world group aside."""
    found = set()
    for node in parse_file(path).nodes():
        attrs = node.primitive_attrs
        name, text = attrs.get("group"), attrs.get("group_ranks")
        if isinstance(name, str) and name[:1].isdigit() and isinstance(text, str) and text[:1].isdigit():
            found.add((name, tuple(int(r) for r in text.split("-"))))
    return found


@pytest.mark.parametrize("rank", range(8))
def test_zoo01_group_names_are_the_hash_of_their_ranks(rank):
    """Zoo 01 (dp 2 x tp 4 on 8 ranks, rank = 4 * dp index + tp index): rank r's tensor-parallel
    group is the 4 ranks of its half, its data-parallel group {r % 4, r % 4 + 4}; MindSpore names
    each by the hash of its ranks."""
    path = next((ZOO / "01_semi_auto_tp4dp2" / f"rank_{rank}").glob("step_parallel_end_*.ir.gz"))
    written = _groups_written(path)
    tp = tuple(range(rank // 4 * 4, rank // 4 * 4 + 4))
    dp = (rank % 4, rank % 4 + 4)
    assert {ranks for _, ranks in written} == {tp, dp}
    for name, ranks in written:
        assert name == mindspore_name(ranks)


@pytest.mark.parametrize("rank", range(8))
def test_zoo01_hash_only_groups_resolve_to_their_ranks(rank):
    """Every communication operator of zoo 01's rank r at step_parallel_end with its rank list
    taken away (the real node, changed with the model's dataclasses): what the tool finds from the
    group's name alone is the list worked out above (tp: r's half; dp: {r % 4, r % 4 + 4}; the
    world group: all 8), for a world of 8 ranks. Without the world nothing can be tried: cannot
    tell (None), never a made-up list."""
    path = next((ZOO / "01_semi_auto_tp4dp2" / f"rank_{rank}").glob("step_parallel_end_*.ir.gz"))
    tp = tuple(range(rank // 4 * 4, rank // 4 * 4 + 4))
    dp = (rank % 4, rank % 4 + 4)
    expected = {mindspore_name(tp): tp, mindspore_name(dp): dp, "nccl_world_group": WORLD8}
    checked = 0
    for node in parse_file(path).nodes():
        name = node.primitive_attrs.get("group")
        if name not in expected:
            continue
        attrs = {k: v for k, v in node.primitive_attrs.items()
                 if k not in ("group_ranks", "group_rank_ids", "rank_list")}
        bare = dataclasses.replace(node, primitive_attrs=attrs)
        assert group_ranks(bare, RankContext(rank, WORLD8)) == expected[name]
        if name != "nccl_world_group":
            assert group_ranks(bare, RankContext(rank, None)) is None
        checked += 1
    # 45 mirror operators (embedding, position, 18 LayerNorm gammas / betas, 4 x 6 block weights,
    # lm_head), the 8 AllReduces of the blocks' row-parallel MatMuls (out, ffn_out), the loss's
    # AllReduce over dp, and the AllGather giving loss_ce the whole vocabulary over tp
    assert checked == 45 + 8 + 1 + 1


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_every_zoo_group_is_told(stage):
    """Every operator that moves data in zoo 01, 04 and the interleaved pipeline has its group's
    ranks told: each writes them, names the world group, or (the interleaved pipeline's stage
    groups at step_parallel_end, ``"2-5208665662337742843Send"`` with no list) is named by the
    hash of its one rank list."""
    for dump in (ZOO / "01_semi_auto_tp4dp2", ZOO / "04_pipeline_hsdp_recompute", INTERLEAVE):
        comm = analyse(msinspect.load_dump(dump), stage).comm()
        moving = comm[comm["moves_data"]]
        assert len(moving) > 0
        assert moving["group_ranks"].notna().all(), moving[moving["group_ranks"].isna()]


def test_interleave_stage_group_named_by_hash_only():
    """The interleaved pipeline's stage group of rank 0 is [0, 2] (rank 0 and the rank with its
    place in stage 1); at step_parallel_end its Sends name it ``"2-5208665662337742843Send"``
    and write no list. The name is the hash of "0-2" plus the ``Send`` suffix of
    ``PipelineInterleave::CreateSendReceiveGroup``; the one strided list of 0..3 holding rank 0
    that hashes to it is [0, 2]."""
    assert mindspore_name((0, 2), "Send") == "2-5208665662337742843Send"
    assert resolve("2-5208665662337742843Send", strided_candidates(0, 2, (0, 1, 2, 3)), rank=0) == (0, 2)


# ------------------------------------------------------------------ MindFormers' sha256 names
def _node(index: int, op: str, attrs: dict, shape=(64, 128)) -> Node:
    tensor = Abstract("Tensor", "Float32", shape, f"<Tensor[Float32], {shape}>")
    return Node(graph="g", index=index, debug_name=f"n{index}", op=op, kind="call_primitive", callee=op,
                inputs=(), line=index + 1, instance_name=f"{op.lower()}_{index}", primitive_attrs=attrs,
                input_types=(tensor,), output_types=(tensor,))


def _file(*nodes: Node) -> IRFile:
    return IRFile(path="rank_5/21_validate_0001.ir", family="2.10",
                  subgraphs=[Subgraph(name="g", params=(), line=1, nodes=list(nodes))])


EP_NAME = hashlib.sha256(b"4-5-6-7").hexdigest()[:48]


def test_sha256_name_settles_a_group_the_reuse_pass_wrote_as_the_world():
    """A synthetic rank-5 file of 8 ranks, built with the model's dataclasses (no real dump has
    such a group): MindFormers' expert group of ranks 4-7 (expert parallel 4: rank 5's block of 4)
    is named ``sha256("4-5-6-7")[:48]``; MindSpore's comm-op reuse wrote the whole world as its
    ``rank_list`` / ``group_rank_ids`` though ``rank_size: 4``. The world cannot be a group of 4;
    the file's other group of 4 holding rank 5 (a tensor-parallel AllReduce over 4-7, named the
    MindSpore way) is the list the sha256 name is made from: the group is 4-7."""
    assert sha256_name((4, 5, 6, 7)) == EP_NAME
    tp = _node(0, "AllReduce", {"group": mindspore_name((4, 5, 6, 7)), "group_ranks": "4-5-6-7", "op": "sum"})
    a2a = _node(1, "AlltoAll", {"group": EP_NAME, "rank_size": 4, "rank_list": WORLD8,
                                "group_rank_ids": WORLD8, "split_count": 4, "split_dim": 0, "concat_dim": 1})
    ir = _file(tp, a2a)
    ctx = RankContext(5, None)
    assert group_ranks(a2a, ctx, known_groups(ir, ctx)) == (4, 5, 6, 7)
    rows = {row["op"]: row for row in comm_rows(ir, ctx)}
    assert rows["AlltoAll"]["group_ranks"] == (4, 5, 6, 7)
    assert rows["AlltoAll"]["group_size"] == 4


def test_sha256_name_with_no_candidate_cannot_tell():
    """The same AlltoAll alone in its file, its world unknown: no list of 4 holding rank 5 to try
    against the name: cannot tell (None), never the world it writes. With the world known (8
    ranks), the strided lists of 4 holding rank 5 are tried: 4-7 hashes to the name."""
    a2a = _node(1, "AlltoAll", {"group": EP_NAME, "rank_size": 4, "rank_list": WORLD8, "group_rank_ids": WORLD8})
    assert group_ranks(a2a, RankContext(5, None), known_groups(_file(a2a), RankContext(5, None))) is None
    assert group_ranks(a2a, RankContext(5, WORLD8)) == (4, 5, 6, 7)


def test_a_list_against_the_groups_size_is_never_reported():
    """A group of the user's own name (nothing to check it against) whose operator writes the
    world though ``rank_size: 4``: cannot tell, not the world."""
    node = _node(0, "AllGather", {"group": "my_group", "rank_size": 4, "rank_list": WORLD8})
    assert group_ranks(node, RankContext(5, WORLD8)) is None
    fine = _node(1, "AllGather", {"group": "my_group", "rank_size": 4, "rank_list": (4, 5, 6, 7)})
    assert group_ranks(fine, RankContext(5, WORLD8)) == (4, 5, 6, 7)


def test_a_list_without_the_rank_is_not_its_group():
    """Rank 5 communicates only in groups it is in: a list of 4 without it is not its group."""
    node = _node(0, "AllReduce", {"group": "my_group", "rank_size": 4, "group_rank_ids": (0, 1, 2, 3)})
    assert group_ranks(node, RankContext(5, WORLD8)) is None


def test_another_ranks_list_names_a_hash_group():
    """Across ranks (``analyse``): rank 0 names a group by hash only, rank 4 writes its ranks
    [0, 4] for the same MindSpore name (a name made from one rank list): rank 0's row takes
    them. Synthetic rows."""
    from msinspect.analysis.rank.comm import shared_groups

    name = mindspore_name((0, 4))
    hashed = {"rank": 0, "op": "AllReduce", "group": name, "group_ranks": None, "group_size": 2,
              "moves_data": True, "tensor_bytes": 400}
    written = {"rank": 4, "op": "AllReduce", "group": name, "group_ranks": (0, 4), "group_size": 2,
               "moves_data": True, "tensor_bytes": 400}
    shared_groups([[hashed], [written]], None)
    assert hashed["group_ranks"] == (0, 4)
    assert hashed["wire_bytes"] == 400  # 2 (n - 1) / n * S, n = 2


def test_mindformers_expert_group_written_as_the_world():
    """Zoo 15 at validate (MindFormers' MoEV3, expert parallel 4 on 8 ranks; its script's
    hand-derived facts): the experts' AlltoAll / AlltoAllV run over ``FFN._get_ep_group_name``'s
    group, ranks rank // 4 * 4 .. + 3, named by MindFormers ``sha256("0-1-2-3")[:48]`` (rank 0)
    and ``sha256("4-5-6-7")[:48]`` (rank 5). MindSpore's comm-op reuse writes the world (0-7) as
    their ``rank_list`` / ``group_rank_ids`` (the AlltoAll with ``rank_size: 4``): the group is
    the four ranks the name is made from, never the world."""
    comm = analyse(msinspect.load_dump(ZOO / "15_mf_llama_moe_ep8"), "validate").comm()
    experts = comm[comm["op"].isin(["AlltoAll", "AlltoAllV"])]
    assert set(experts["rank"]) == {0, 5}
    for row in experts.to_dict("records"):
        ep = tuple(range(row["rank"] // 4 * 4, row["rank"] // 4 * 4 + 4))
        assert row["group"] == sha256_name(ep)
        assert tuple(row["group_ranks"]) == ep, row
        assert row["group_size"] == 4
