"""Bytes of the communication the planner inserted, at step_parallel_end, where MindSpore prints
the operators it just inserted with no output (``-> (<null>)``) and every activation at its
global (uncut) shape. The tensor at the rank is worked out by hand from the network scripts
(fixtures/zoo/nets/), the device count and MindSpore's definitions, then the ring formulas of
docs/comm.md (S the tensor at the rank, n the group size, float32 = 4 bytes):

    AllReduce and mirror operators: 2 (n - 1) / n * S;  AllGather: (n - 1) * S;
    ReduceScatter and AlltoAll: (n - 1) / n * S;  Send / Receive: S.

What cannot be told stays None ("cannot tell"), never 0.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

import msinspect
from msinspect.analysis import analyse
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
INTERLEAVE = Path(__file__).parent / "dumps" / "pipeline_interleave_4rank"
F32 = 4


def allreduce(n, s):
    return 2 * (n - 1) * s // n


@pytest.fixture(scope="module")
def zoo01_spe():
    return analyse(msinspect.load_dump(ZOO / "01_semi_auto_tp4dp2"), "step_parallel_end").comm()


def _gpt_mirrors(rank: int, layers: int) -> Counter:
    """(group, S, wire bytes) of the gradient AllReduce of every weight of gpt.py with plan "all",
    dp 2 x tp 4 on 8 ranks (zoo 01, 09), for rank r: its tp group is its half {4 (r // 4) ..},
    its dp group {r % 4, r % 4 + 4}.

    - embedding (1024, 512) and position (64, 512): embed_gather ((1, 1), (dp, 1)) and pos_add
      ((dp, 1, 1), (1, 1)) keep them whole, the same on all 8 ranks: the world;
    - LayerNorm gammas and betas (512,): ((dp, 1), (1,), (1,)): whole on all 8: the world;
      2 per LayerNorm, 2 LayerNorms per block and the head's;
    - wq, wk, wv (512, 512) cut (1, tp) -> (512, 128); wo (512, 512) cut (tp, 1) -> (128, 512);
      w_in (512, 2048) cut (1, tp) -> (512, 512); w_out (2048, 512) cut (tp, 1) -> (512, 512);
      lm_head (512, 1024) cut (1, tp) -> (512, 256): each slice is held by the 2 ranks of the
      rank's dp group."""
    world = tuple(range(8))
    dp = (rank % 4, rank % 4 + 4)
    found = Counter()

    def add(group, elements, count=1):
        size = elements * F32
        found[(group, size, allreduce(len(group), size))] += count

    add(world, 1024 * 512)
    add(world, 64 * 512)
    add(world, 512, 4 * layers + 2)
    add(dp, 512 * 128, 4 * layers)  # wq, wk, wv, wo
    add(dp, 512 * 512, 2 * layers)  # w_in, w_out
    add(dp, 512 * 256)
    return found


def _rows(comm, rank, op):
    rows = comm[(comm["rank"] == rank) & (comm["op"] == op)]
    return Counter((tuple(r["group_ranks"]), r["tensor_bytes"], r["wire_bytes"]) for r in rows.to_dict("records"))


@pytest.mark.parametrize("rank", [0, 5])
def test_zoo01_mirror_operators_move_the_ranks_slice(zoo01_spe, rank):
    """Zoo 01 (4 blocks): the 45 mirror operators of a rank, each the gradient AllReduce of the
    weight slice the rank holds (a parameter is cut in place: the file's parameter list shows the
    slice though the mirror's input prints the whole weight)."""
    assert _rows(zoo01_spe, rank, "_MirrorOperator") == _gpt_mirrors(rank, layers=4)


@pytest.mark.parametrize("rank", [0, 5])
def test_zoo01_forward_allreduces(zoo01_spe, rank):
    """Zoo 01: out_matmul and ffn_out_matmul ((dp, tp), (tp, 1)) are row parallel: their (N, 512)
    output (N = batch 8 x sequence 64 = 512 rows) is a partial sum over the tp group, its rows
    cut by dp: (256, 512) at the rank, summed over the rank's tp group (n = 4), once per such
    MatMul: 2 per block, 8. loss_mean ((dp,),) reduces the batch axis cut by dp: a float32 scalar
    summed over the dp group (n = 2): S = 4, 2 * 1 / 2 * 4 = 4 bytes."""
    tp = tuple(range(rank // 4 * 4, rank // 4 * 4 + 4))
    dp = (rank % 4, rank % 4 + 4)
    partial = 256 * 512 * F32
    assert _rows(zoo01_spe, rank, "AllReduce") == Counter({(tp, partial, allreduce(4, partial)): 8,
                                                           (dp, 4, 4): 1})


@pytest.mark.parametrize("rank", [0, 5])
def test_zoo01_head_gather_is_told_by_its_producers_strategy(zoo01_spe, rank):
    """The AllGather giving loss_ce the whole vocabulary prints ``-> (<null>)`` at
    step_parallel_end and feeds a Split / Concat redistribution (no consumer with a strategy), but
    its producer tells it (issue 39, item 4): lm_matmul ((2, 1), (1, 4)) of x (512, 512) by
    lm_head (512, 1024) gives (512, 1024) cut (2, 4) by MatMul's output rule (rows by the first
    input's rows, columns by the weight's columns): (256, 256) float32 = 262,144 bytes at the
    rank, gathered over its tp group of 4 into (1024, 256): a rank sends 3 / 4 of the gathered
    1,048,576 bytes, 786,432 (validate prints the same (256, 256) -> (1024, 256))."""
    tp = tuple(range(rank // 4 * 4, rank // 4 * 4 + 4))
    assert _rows(zoo01_spe, rank, "AllGather") == Counter({(tp, 256 * 256 * F32, 3 * 1024 * 256 * F32 // 4): 1})


def test_zoo09_transformer():
    """Zoo 09: gpt.py with 124 blocks, the layout of zoo 01, rank 0 only (its step_parallel_end is
    the only file kept): 2 + 4 * 124 + 2 + 6 * 124 + 1 = 1245 mirror operators, 2 * 124 = 248
    row-parallel AllReduces of (256, 512) over ranks 0-3, the loss's over {0, 4}."""
    comm = analyse(msinspect.load_dump(ZOO / "09_large_gpt"), "step_parallel_end").comm()
    assert _rows(comm, 0, "_MirrorOperator") == _gpt_mirrors(0, layers=124)
    partial = 256 * 512 * F32
    assert _rows(comm, 0, "AllReduce") == Counter({((0, 1, 2, 3), partial, allreduce(4, partial)): 248,
                                                   ((0, 4), 4, 4): 1})


def test_zoo04_layernorm_weights_are_not_cut_by_the_optimizer():
    """Zoo 04 (hsdp: optimizer parallel): a weight repeated over the 4 ranks of its stage is cut
    by the optimizer only above MindSpore's default threshold (``parallel_optimizer_threshold``,
    64 KB): the LayerNorm gammas and betas (512 float32 = 2 KB) are not. Their
    ``_MicroStepAllGather`` has ``group: ""``, for which comm_ops.py sets ``rank_size = 1``: the
    rank's own (512,), nothing on the wire; the ``_MirrorMicroStepOperator`` after it is the
    gradient AllReduce of that (512,) over the rank's stage (LayerNorm keeps its weights whole:
    all 4 ranks of the stage hold them): S = 2048, 2 * 3 / 4 * 2048 = 3072. Stage 0 (ranks 0-3)
    holds blocks 0-1: 2 blocks x 2 LayerNorms x 2 weights = 8; stage 1 (4-7) blocks 2-3 and the
    head's ln_f: 10."""
    comm = analyse(msinspect.load_dump(ZOO / "04_pipeline_hsdp_recompute"), "step_parallel_end").comm()
    for rank in range(8):
        stage = (0, 1, 2, 3) if rank < 4 else (4, 5, 6, 7)
        count = 8 if rank < 4 else 10
        rows = comm[comm["rank"] == rank]
        alone = rows[(rows["op"] == "_MicroStepAllGather") & (rows["group"] == "")]
        assert Counter((tuple(r["group_ranks"]), r["tensor_bytes"], r["wire_bytes"])
                       for r in alone.to_dict("records")) == Counter({((rank,), 2048, 0): count})
        assert _rows(comm, rank, "_MirrorMicroStepOperator") == Counter({(stage, 2048, 3072): count})


@pytest.mark.parametrize("rank", [0, 5, 15])
def test_zoo05_expert_alltoalls(rank):
    """Zoo 05, 16 ranks (0, 5 and 15 kept), all collectives over the world of 16:

    - proj_a ((16, 1), (1, 1)) gives (1024, 512) rows cut 16: (64, 512); proj_b ((1, 16), (16, 1))
      wants its columns cut: the AlltoAll takes (64, 512) = 131072 bytes, sends 15 / 16 of it;
    - dispatch_transpose ((16, 1, 1),) of the (64, 16, 512) reshape, cut on its first axis, gives
      (16, 4, 512); expert_bmm ((16, 1, 1), ...) wants the experts axis cut: the AlltoAll takes
      (16, 4, 512) = 131072 bytes;
    - wa (512, 512) is held whole by all 16 (proj_a does not cut it): its mirror moves 1 MB;
    - the loss is a float32 scalar summed over 16: S = 4, 2 * 15 / 16 * 4 = 7 (bytes, rounded down);
    - proj_b's output goes into a Reshape (no strategy) but proj_b tells it: it contracts the
      dimension cut 16, so its (1024, 512) output is a partial sum, whole at each rank: 2 MiB summed
      over 16, 2 * 15 / 16 of it on the wire;
    - the way back (combine AlltoAll, into a Reshape) is told by expert_bmm2 ((16, 1, 1), ...):
      (16, 64, 512) cut on the experts axis, (1, 64, 512) = 131072 bytes at the rank, 15 / 16 sent.

    - the vocabulary-parallel Gather's ReduceScatter: every rank looks all 1024 ids (``_VirtualDataset``
      keeps them whole under ``full_batch``) up in its 4096 / 16 = 256 rows of the table, masked:
      (1024, 512) = 2 MiB summed and scattered over 16, 15 / 16 of it sent (test_comm_bytes_left.py).

    Nothing is left untold."""
    comm = analyse(msinspect.load_dump(ZOO / "05_expert_alltoall_16"), "step_parallel_end").comm()
    world = tuple(range(16))
    rows = comm[(comm["rank"] == rank) & comm["moves_data"]]
    known = Counter((r["op"], tuple(r["group_ranks"]), r["tensor_bytes"], r["wire_bytes"])
                    for r in rows.to_dict("records") if pd.notna(r["wire_bytes"]))
    tokens = 64 * 512 * F32
    rows_b = 1024 * 512 * F32
    assert known == Counter({("AlltoAll", world, tokens, 15 * tokens // 16): 3,
                             ("_MirrorOperator", world, 512 * 512 * F32, allreduce(16, 512 * 512 * F32)): 1,
                             ("AllReduce", world, rows_b, allreduce(16, rows_b)): 1,
                             ("AllReduce", world, 4, 7): 1,
                             ("ReduceScatter", world, rows_b, 15 * rows_b // 16): 1})
    assert rows["wire_bytes"].notna().all()


@pytest.mark.parametrize("rank", [0, 5])
def test_zoo11_lazy_inline_blocks(rank):
    """Zoo 11 (its script's hand-derived facts: dp 2 x mp 4 on 8 ranks, ranks 0 and 5 kept):
    each block's w1 (64, 256) cut (1, 4) and w2 (256, 64) cut (4, 1) leave (64, 64) float32 =
    16384 bytes at the rank, repeated over its dp group {r % 4, r % 4 + 4}: 4 mirror operators,
    2 * 1 / 2 * 16384 = 16384 bytes each. ``down`` ((2, 4), (4, 1)) gives partial sums of the
    (16, 64) rows, cut by dp: (8, 64) = 2048 bytes summed over the rank's mp group (n = 4):
    3072 bytes where told (the block's body is a subgraph its weights reach as arguments). The
    loss's mean over the dp-cut rows: a scalar over the dp group, 4 bytes."""
    comm = analyse(msinspect.load_dump(ZOO / "11_lazy_inline_8"), "step_parallel_end").comm()
    dp = (rank % 4, rank % 4 + 4)
    mp = tuple(range(rank // 4 * 4, rank // 4 * 4 + 4))
    assert _rows(comm, rank, "_MirrorOperator") == Counter({(dp, 16384, 16384): 4})
    reduces = _rows(comm, rank, "AllReduce")
    assert reduces[(dp, 4, 4)] == 1
    told = {key for key in reduces if key[0] == mp and pd.notna(key[2])}
    assert told == {(mp, 2048, 3072)}


@pytest.mark.parametrize("rank", [0, 5])
def test_zoo12_mindformers_weights_read_in_a_lazy_inline_body(rank):
    """Zoo 12 (MindFormers' Llama, dp 2 x mp 4 on 8 ranks; its script's hand-derived facts): the
    mirror operators sit in the lazy-inlined model body, on its parameters, which print the whole
    weight (``Ref (512, 512)`` for wq) at step_parallel_end; the weight the parameter names
    (``ref_key``) is cut in place in the file's parameter list. Over the rank's data-parallel
    group {r % 4, r % 4 + 4} (n = 2, wire = S): wq, wk, wv (512, 512) / (4, 1) and wo (512, 512) /
    (1, 4): 128 x 512 float32 = 262144 bytes, 4 a layer; w1, w3 (1536, 512) / (4, 1) and w2
    (512, 1536) / (1, 4): 384 x 512 = 786432 bytes, 3 a layer; lm_head (1024, 512) / (4, 1) and
    the embedding table (1024, 512) / (4, 1): 524288 bytes. The RMSNorm weights (512,), whole on
    all 8 ranks: 2048 bytes, 2 * 7 / 8 * 2048 = 3584, 2 a layer and the final norm. 2 layers."""
    comm = analyse(msinspect.load_dump(ZOO / "12_mf_llama_tp8"), "step_parallel_end").comm()
    dp = (rank % 4, rank % 4 + 4)
    world = tuple(range(8))
    assert _rows(comm, rank, "_MirrorOperator") == Counter({
        (dp, 262144, 262144): 8, (dp, 786432, 786432): 6, (dp, 524288, 524288): 2,
        (world, 2048, allreduce(8, 2048)): 5})


def test_alltoallv_bytes_cannot_be_told():
    """Zoo 15 (MindFormers' MoEV3) at validate: its AlltoAllV send parts whose sizes are given at
    run time (the counts are inputs): what crosses the wire cannot be told, None, never 0 nor an
    even split's."""
    comm = analyse(msinspect.load_dump(ZOO / "15_mf_llama_moe_ep8"), "validate").comm()
    v = comm[comm["op"] == "AlltoAllV"]
    assert len(v) > 0
    assert v["wire_bytes"].isna().all()


def test_zoo13_optimizer_gathers_and_accumulating_mirrors_at_step_parallel_end():
    """Zoo 13 (nets/13_mf_llama_pp_interleave.py), rank 0 at step_parallel_end, where MindSpore
    prints each weight's float16 Cast before its micro-step gather as ``(1)``. By hand: wq (512,
    512) is cut (2, 1) by mp and once more by the optimizer over the data pair {0, 2}: the rank
    holds (128, 512); MindFormers casts it to float16 and ``_MicroStepAllGather`` gathers it over
    {0, 2}: 128 x 512 x 2 = 131,072 bytes in, (2 - 1) x 131,072 on the wire. The RMSNorm weights
    (512,) are neither cut nor optimizer-sharded (``parallel_optimizer`` False): whole on the 4
    ranks of stage 0, their gradient is added into the float32 accumulator ``accu_grads.<weight>``
    each micro-batch and ``_MirrorMicroStepOperator``'s AllReduce over 0-3 moves that
    accumulator (``grad_comm_ops.py``: ``all_reduce(z)``): 512 x 4 = 2,048 bytes in,
    2 x 3 / 4 x 2,048 = 3,072 on the wire, the float32 AllReduce validate shows."""
    comm = analyse(msinspect.load_dump(ZOO / "13_mf_llama_pp_interleave"), "step_parallel_end", only=[0]).comm()
    wq = comm[(comm["op"] == "_MicroStepAllGather") & comm["name"].notna()
              & comm["consumer_scopes"].astype(str).str.contains("attention") & (comm["shape"].astype(str) == "(128, 512)")]
    assert len(wq) > 0
    assert set(map(tuple, wq["group_ranks"])) == {(0, 2)}
    assert set(wq["dtype"]) == {"Float16"} and set(wq["tensor_bytes"]) == {131_072} and set(wq["wire_bytes"]) == {131_072}
    norms = comm[(comm["op"] == "_MirrorMicroStepOperator") & (comm["shape"].astype(str) == "(512,)")]
    assert len(norms) > 0
    assert set(map(tuple, norms["group_ranks"])) == {(0, 1, 2, 3)}
    assert set(norms["dtype"]) == {"Float32"} and set(norms["tensor_bytes"]) == {2_048}
    assert set(norms["wire_bytes"]) == {3_072}


def test_zoo13_embedding_allreduce_at_step_parallel_end():
    """Zoo 13, rank 0 at step_parallel_end: the embedding's AllReduce, which closes the graph
    MindSpore puts in place of a Gather whose table is cut along the gathered axis (``gather_info.cc``:
    each rank looks the ids up in its own rows, masked, and the tensor group sums the parts). By
    hand (nets/13_mf_llama_pp_interleave.py, mf_llama.MODEL): the table (vocab 1024, hidden 512) is
    cut (2, 1) over the tensor pair {0, 1}: 512 rows at the rank; a micro-batch is 2 sequences of
    64 tokens cut (2, 1) by the data axis: (1, 64) ids; so (1, 64, 512) float32, 131,072 bytes,
    and a ring AllReduce over 2 ranks sends 2 x 1 / 2 x 131,072 = 131,072. The file prints the
    chain's shapes ``<null>``, and the table reaches its Gather through ``_VirtualAssignAdd``
    (whose infer returns its first input's shape: ``comm_ops.py``) of a ``Load`` of the body's
    parameter, bound to the weight's micro-step mirror in the caller: each step read at the rank."""
    comm = analyse(msinspect.load_dump(ZOO / "13_mf_llama_pp_interleave"), "step_parallel_end", only=[0]).comm()
    embedding = comm[(comm["op"] == "AllReduce") & comm["consumer_scopes"].astype(str).str.contains("tok_embeddings")
                     | (comm["op"] == "AllReduce") & comm["scope"].astype(str).str.contains("tok_embeddings")]
    assert len(embedding) == 1
    row = embedding.iloc[0]
    assert tuple(row["group_ranks"]) == (0, 1)
    assert tuple(row["shape"]) == (1, 64, 512) and row["dtype"] == "Float32"
    assert row["tensor_bytes"] == 131_072 and row["wire_bytes"] == 131_072


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_pipeline_sends_both_ways(stage):
    """The interleaved pipeline: a micro-batch is 16 / 2 = 8 rows of 64, cut dp 2 inside a stage:
    every Send and Receive moves (4, 64) float32 = 1024 bytes, the gradient's way back included
    (its Sends write ``dtype: Tensor(F32)``, the forward ones ``F32``; both read ``Float32``, as the
    abstracts of every other row spell it)."""
    comm = analyse(msinspect.load_dump(INTERLEAVE), stage).comm()
    pipe = comm[comm["op"].isin(["Send", "Receive"])]
    assert len(pipe) == (8 if stage == "step_parallel_end" else 16)
    assert set(pipe["tensor_bytes"]) == {4 * 64 * F32}
    assert set(pipe["wire_bytes"]) == {4 * 64 * F32}
    assert set(pipe["dtype"]) == {"Float32"}
    assert set(comm["dtype"].dropna()) <= {"Float32", "Float16", "Int32", "Int64", "Bool"}


def test_zoo04_gradient_sends_have_bytes():
    """Zoo 04 at validate: stage 1 sends the gradient of each micro-batch's (128, 512) activation
    back to stage 0 (16 / 4 = 4 sequences x 64 = 256 rows, dp 2): 262144 bytes, like the forward
    Sends, though written ``dtype: Tensor(F32)``."""
    comm = analyse(msinspect.load_dump(ZOO / "04_pipeline_hsdp_recompute"), "validate").comm()
    sends = comm[(comm["op"] == "Send") & (comm["rank"] >= 4)]
    assert len(sends) == 16  # 4 micro-batches on each of ranks 4-7
    assert set(sends["tensor_bytes"]) == {128 * 512 * F32}
    assert set(sends["wire_bytes"]) == {128 * 512 * F32}


@pytest.mark.parametrize("dump", ["01_semi_auto_tp4dp2", "02_sharding_propagation_64", "03_recursive_programming_32",
                                  "04_pipeline_hsdp_recompute", "05_expert_alltoall_16",
                                  "06_control_flow_8", "10_layout_api_8", "11_lazy_inline_8", "12_mf_llama_tp8",
                                  "13_mf_llama_pp_interleave", "14_mf_llama_seq_parallel", "15_mf_llama_moe_ep8",
                                  "16_mf_llama_256", "18_doc_pipeline_parallel", "19_doc_optimizer_parallel",
                                  "20_doc_high_dimension_tp", "21_doc_layout_two_axes"])
def test_step_parallel_end_bytes_are_those_validate_shows(dump):
    """Every size told at step_parallel_end is one MindSpore itself infers for the same rank at
    validate, where the shapes are per rank: for each operator told, an operator of the same type
    (a mirror operator is its gradient's AllReduce there, an optimizer gather an AllGather) and
    group moves the same bytes at validate; or it moves nothing (a group of one rank, gone by
    validate)."""
    analysis = msinspect.load_dump(ZOO / dump)
    end, valid = analyse(analysis, "step_parallel_end").comm(), analyse(analysis, "validate").comm()

    def key(row):
        op = "AllReduce" if "Mirror" in row["op"] else "AllGather" if "StepAllGather" in row["op"] else row["op"]
        return row["rank"], op, tuple(row["group_ranks"]), row["tensor_bytes"], row["wire_bytes"]

    at_validate = {key(r) for r in valid.to_dict("records") if r["moves_data"] and r["group_ranks"] is not None}
    told = [r for r in end.to_dict("records") if r["moves_data"] and pd.notna(r["wire_bytes"])]
    assert told
    for row in told:
        assert row["wire_bytes"] == 0 or key(row) in at_validate, row
