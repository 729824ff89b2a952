"""The last data-moving collectives of the zoo whose tensor at the rank step_parallel_end did not
tell: each derived by hand from its network script, the device count and the strategies first
(the docstrings), then read off msinspect. The ring formulas are docs/comm.md's (S the tensor
at the rank, n the group size): AllGather (n - 1) S, ReduceScatter (n - 1) / n S. validate, where
MindSpore prints the rank's shapes, is the second opinion (test_comm_bytes.py holds every size
told at step_parallel_end to validate's)."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.comm import RankShapes
from msinspect.analysis.rank.context import RankContext
from msinspect.graph import node_id, to_networkx
from msinspect.parser import parse_file
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
F32 = 4


def _named(dump: str, name: str, only: list[int]):
    comm = analyse(msinspect.load_dump(ZOO / dump), "step_parallel_end", only=only).comm()
    return comm[comm["name"] == name]


@pytest.mark.parametrize("rank", [0, 5, 15])
def test_zoo05_vocabulary_gather_reduce_scatter(rank):
    """Zoo 05 (nets/05_expert_alltoall_16.py, 16 ranks): ``vocab_gather`` is a Gather of the
    (4096, 512) float32 table cut ((16, 1), (1,)) by 1024 token ids. MindSpore replaces it
    (``gather_info.cc``, the table cut along the gathered axis) by a masked lookup: each rank
    holds 4096 / 16 = 256 rows of the table; the ids come through ``_VirtualDataset``, whose
    strategy under ``full_batch`` is all ones ((1,): ``virtual_dataset_info.cc``), so every rank
    has all 1024 ids; the ids are shifted by the rank's first row, clipped to its 256 rows and
    looked up: (1024, 512), masked to zero where an id is not the rank's, then reduce-scattered
    over the world (rank_size 16) to the (64, 512) rows proj_a ((16, 1), ...) wants. So the
    ReduceScatter takes (1024, 512) float32 = 2,097,152 bytes and sends 15 / 16 of it:
    1,966,080."""
    rows = _named("05_expert_alltoall_16", "7206914136160063563ReduceScatter11", [rank])
    assert len(rows) == 1
    row = rows.iloc[0]
    assert tuple(row["group_ranks"]) == tuple(range(16))
    assert tuple(row["shape"]) == (1024, 512) and row["dtype"] == "Float32"
    assert row["tensor_bytes"] == 1024 * 512 * F32
    assert row["wire_bytes"] == 15 * 1024 * 512 * F32 // 16


@pytest.mark.parametrize("rank", [0, 31, 63])
def test_zoo02_head_logits_second_gather(rank):
    """Zoo 02 (nets/02_sharding_propagation_64.py, gpt.py's head, 64 ranks): ``lm_matmul`` of
    the (1024, 512) rows by ``lm_head`` (512, 1024), strategy ((8, 1), (1, 8)): its (1024, 1024)
    logits are cut (8, 8) on the device matrix (8, 1, 8): (128, 128) at the rank. The
    redistribution to the loss's layout reshapes them to (1, 128, 1, 128) (its Reshape states
    that), gathers 2 along the first axis ((2, 128, 1, 128)), splits that axis back into its 2
    parts ((1, 128, 1, 128) each) and concatenates them along axis 3: (1, 128, 1, 256). The
    AllGather over 4 (``0-2-4-6`` for rank 0) then takes (1, 128, 1, 256) float32 = 131,072 bytes
    and sends (4 - 1) x 131,072 = 393,216."""
    rows = _named("02_sharding_propagation_64", "redistribution_op_13097867041105372658AllGather_", [rank])
    assert len(rows) == 1
    row = rows.iloc[0]
    assert row["group_size"] == 4
    assert tuple(row["shape"]) == (1, 128, 1, 256) and row["dtype"] == "Float32"
    assert row["tensor_bytes"] == 128 * 256 * F32
    assert row["wire_bytes"] == 3 * 128 * 256 * F32


@pytest.mark.parametrize("rank", [0, 5])
@pytest.mark.parametrize("name", ["redistribution_op_8070879722073729898AllGather_",
                                  "redistribution_op_14003534047204544477AllGather_"])
def test_zoo15_router_input_gather(rank, name):
    """Zoo 15 (nets/15_mf_llama_moe_ep8.py, dp 4 x mp 2 on 8 ranks, global batch 4 of 64
    tokens, hidden 512): each layer's ffn_norm output, (4, 64, 512) float16 cut ((4, 1, 1), (1,))
    by ``mul2``, is (1, 64, 512) at the rank, the same on the two ranks of a tensor pair. MoEV3
    treats the dp x mp = 8 ranks as data parallel for the tokens (``self.dp = data_parallel *
    model_parallel``): 256 / 8 = 32 tokens a rank, so the redistribution reshapes the rank's
    (1, 64, 512) to (2, 32, 512) and slices out its half, (1, 32, 512) (its StridedSlice states
    it); MoEV3 casts the router's input to float32 (``astype(self.router_dense_type)``): (1, 32,
    512) float32, and that is what the AllGather over the tensor pair ({0, 1} for rank 0, {4, 5}
    for rank 5) takes: 65,536 bytes, (2 - 1) x 65,536 on the wire. One a layer, 2 layers."""
    rows = _named("15_mf_llama_moe_ep8", name, [rank])
    assert len(rows) == 1
    row = rows.iloc[0]
    pair = rank // 2 * 2
    assert tuple(row["group_ranks"]) == (pair, pair + 1)
    assert tuple(row["shape"]) == (1, 32, 512) and row["dtype"] == "Float32"
    assert row["tensor_bytes"] == 32 * 512 * F32 and row["wire_bytes"] == 32 * 512 * F32


def test_a_dataset_input_cut_by_its_strategy_feeds_a_replacement_graph():
    """The UT port test_field_split_dim_1x1 (fixtures/ut/..._test_field_split_dim_1x1.toml has the
    derivation), rank 0 of 8 at step_parallel_end: the default dataset strategy (data parallel)
    cuts the (16,) indices ((8,), (8, 1)): (2,) at each rank, which ``_VirtualDataset``'s
    ``TupleGetItem`` gives out though the file prints (16). The table gather_param (64,) is split
    by hand along the gathered axis; rank 0 holds rows 0-4, (5,). The field-split Gather
    (``gather_info.cc``: Sub of the rank's offset, Gather of its own rows) looks the rank's 2 ids up
    in its 5 rows: (2,) float32 (validate prints (5) and (2) in, (2) out). No collective follows
    it in this network, so the walk that sizes a collective's input is asked directly."""
    path = FIXTURES / "ut" / "a_test_gather_field_split__test_field_split_dim_1x1" / "rank_0"
    ir = parse_file(next(path.glob("step_parallel_end_*")))
    gather = next(n for n in ir.nodes() if n.op == "Gather")
    shapes = RankShapes(ir, to_networkx(ir), RankContext(0, world=tuple(range(8))))
    assert shapes._replaced(node_id(gather)) == ((2,), "Float32")
