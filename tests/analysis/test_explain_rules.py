"""``explain`` where it gave up on a rule it has, or stated what is not so (issue 39, item 5), on
the zoo's real dumps. Each expectation is worked out by hand from the network script named in its
fixture's docstring and MindSpore's rules, in the comment above it.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.answers import explain

from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"


def _zoo(name: str, stage: str, rank: int = 0):
    return analyse(msinspect.load_dump(ZOO / name), stage, only=[rank])


@pytest.fixture(scope="module")
def zoo10_end():
    """Zoo 10 (fixtures/zoo/nets/10_layout_api_8.py): Layout((2, 4), ("dp", "tp")) on 8 ranks,
    rank = dp * 4 + tp. col_matmul ((2, 1), (1, 4)), act ((2, 4),), row_matmul ((2, 4), (4, 1)),
    flat_matmul ((8, 1), (1, 1)), square ((8, 1),), loss_mean ReduceMean(x, ()) ((8, 1),);
    256 rows, hidden 512 -> 2048 -> 512 -> 512; AdamWeightDecay on w1, w2, w3."""
    return _zoo("10_layout_api_8", "step_parallel_end")


@pytest.fixture(scope="module")
def zoo10_validate():
    return _zoo("10_layout_api_8", "validate")


def _one(found, **where):
    hits = [e for e in found if all(getattr(e, k) == v for k, v in where.items())]
    assert len(hits) == 1, f"{len(hits)} of {[(e.name, e.producer, e.consumer) for e in found]} have {where}"
    return hits[0]


# ------------------------------------------------------------------ (a) a reduction over every axis
def test_reduce_mean_over_empty_axis_tuple_gives_a_scalar(zoo10_end):
    # loss_mean = ReduceMean(square, ()) with keep_dims False: an empty axis tuple reduces every
    # dimension of the (256, 512) input, so the output is a scalar: its cut is () (no dimension
    # left), not the input's (8, 1) nor "(8,)". The rows are cut 8 ways (strategy ((8, 1),) on 8
    # devices, no repeat axis): each rank holds the sum of its 32 rows, an AllReduce(sum) over the
    # 8 ranks 0-7 makes the whole.
    e = _one(explain(zoo10_end, "type:AllReduce", rank=0), producer="loss_mean")
    assert e.producer_layout == ()
    assert any("over every dimension: the output is a scalar" in t for t in e.reconstruction)
    assert (e.action, e.parts) == ("sum", 8)
    assert tuple(e.group_ranks) == tuple(range(8))
    assert tuple(e.predicted_group) == tuple(range(8))


# ------------------------------------------------------------------ (d) a mirror at validate
@pytest.mark.parametrize("weight, reader, replicas", [
    # w1 (512, 2048) is input 1 of col_matmul ((2, 1), (1, 4)): device matrix (2, 1, 4), w1's map
    # uses the middle (size 1) and last (tp, 4) axes; the dp axis (2, stride 4) leaves it whole:
    # rank 0's replicas are 0 and 4.
    ("w1", "col_matmul", (0, 4)),
    # w2 (2048, 512) is input 1 of row_matmul ((2, 4), (4, 1)): matrix (2, 4, 1), w2 cut by tp
    # only: replicas along dp, 0 and 4.
    ("w2", "row_matmul", (0, 4)),
    # w3 (512, 512) is input 1 of flat_matmul ((8, 1), (1, 1)): whole on every rank: 0-7.
    ("w3", "flat_matmul", tuple(range(8))),
])
def test_mirror_at_validate_is_named_after_its_weight(zoo10_validate, weight, reader, replicas):
    # At validate a mirror is the gradient's AllReduce (grad_mirror_MirrorOperator under
    # Gradients/), fed by the gradient's MatMul (Grad_MatMul/MatMul-op2 for w1) and feeding
    # AdamWeightDecay: the weight is the one MindSpore records (mirror_user_id: "w1"), never the
    # gradient MatMul, and its replicas follow from the forward operator that reads it.
    found = explain(zoo10_validate, "type:AllReduce", rank=0)
    e = _one(found, kind="gradient", consumer=reader)
    assert f"same slice of {weight} " in e.headline
    assert "MatMul-op" not in e.headline
    assert e.action == "replicas"
    assert tuple(e.group_ranks) == replicas
    assert tuple(e.predicted_group) == replicas
    assert not e.cannot_tell


# ------------------------------------------------------------------ (b) partial results of a producer
@pytest.fixture(scope="module")
def zoo12():
    """Zoo 12 (fixtures/zoo/nets/12_mf_llama_tp8.py): MindFormers Llama, dp 2 x mp 4 on 8 ranks,
    rank = dp * 4 + mp; every Linear is MatMul(transpose_b=True) named ``matmul``; rows 4 x 64 =
    256, hidden 512, FFN 1536, vocabulary 1024."""
    return _zoo("12_mf_llama_tp8", "step_parallel_end")


def test_row_parallel_matmul_with_out_strategy_sums_over_tp_group(zoo12):
    # wo and w2 are ((2, 4), (1, 4)) with out_strategy ((2, 1),): x (rows, in) cut (2, 4) times
    # the weight (out, in) transposed, cut (1, 4) on `in`: device matrix (dp 2, in 4, out 1), the
    # contracted `in` cut 4 ways leaves partial sums on the middle axis (stride 1): rank 0 sums
    # with 0-3. The out_strategy (2, 1) asks for whole rows per dp part, which is what the sum
    # gives: an AllReduce (not a ReduceScatter), and the residual add ((2, 1, 1), (2, 1, 1))
    # after a Reshape takes it. w2 has no out_strategy: the same sum by the rule alone. Two
    # answers (wo's facts name its out_strategy), each for the two layers.
    found = [e for e in explain(zoo12, "type:AllReduce", rank=0) if e.producer == "matmul" and e.consumer == "add"]
    assert len(found) == 2
    assert sum(any("out_strategy ((2, 1),)" in t for t in e.facts) for e in found) == 1
    for e in found:
        assert len(e.lines) == 2
        assert (e.kind, e.action, e.parts) == ("forward", "sum", 4)
        assert e.producer_layout == (2, 1)
        assert tuple(e.group_ranks) == (0, 1, 2, 3)
        assert tuple(e.predicted_group) == (0, 1, 2, 3)
        assert not e.cannot_tell


def test_reduce_max_over_cut_vocabulary_takes_the_max(zoo12):
    # The loss's ReduceMax ((2, 4),) over the vocabulary (dimension 1, cut 4 ways by mp): each
    # rank holds the max of its 256 classes only; the max over all 1024 is the max of the four
    # ranks' maxima: AllReduce(max). The device matrix is the strategy (2, 4) itself (8
    # devices, no repeat), the vocabulary's axis has stride 1: ranks 0-3. A sum would be wrong.
    e = _one(explain(zoo12, "type:AllReduce", rank=0), producer="max")
    assert (e.action, e.parts) == ("max", 4)
    assert "max of its part" in e.headline and "partial sum" not in e.headline
    assert tuple(e.group_ranks) == (0, 1, 2, 3)
    assert tuple(e.predicted_group) == (0, 1, 2, 3)


def test_sequence_parallel_reduce_scatter_keeps_a_part_of_the_sum():
    # Zoo 14 (14_mf_llama_seq_parallel.py: dp 1 x mp 4 with use_seq_parallel on 4 ranks): wo and
    # w2 are ((1, 4), (1, 4)) with out_strategy ((4, 1),): the contracted `in` is cut 4 ways
    # (partial sums over ranks 0-3) and the out_strategy cuts the rows 4 ways where the in_strategy
    # leaves them whole (x's rows cut 1): a ReduceScatter that sums and leaves each rank a quarter
    # of the rows, dimension 0. Two layers x (wo, w2): 4 operators.
    e = _one(explain(_zoo("14_mf_llama_seq_parallel", "step_parallel_end"), "type:ReduceScatter", rank=0),
             producer="matmul")
    assert len(e.lines) == 4
    assert (e.action, e.parts, e.dims) == ("sum", 4, (0,))
    assert "needs the whole sum" not in e.headline
    assert tuple(e.group_ranks) == (0, 1, 2, 3)
    assert tuple(e.predicted_group) == (0, 1, 2, 3)


def test_sum_ext_with_dim_none_sums_every_dimension():
    # Zoo 19 (19_doc_optimizer_parallel.py: no shard(), semi-auto, 8 ranks, 32 rows each): the
    # loss's mean is SumExt(x, None, False) with the default strategy ((8,),): dim None reduces
    # every dimension, so the output is a scalar, and each rank holds the sum of its 32 rows; the
    # AllReduce(sum) over the world (matrix (8,), ranks 0-7) makes the whole. Two such SumExts
    # (the loss and its smoothing term) a loss, ((8,),) and ((8, 1),).
    found = explain(_zoo("19_doc_optimizer_parallel", "step_parallel_end"), "type:AllReduce", rank=0)
    summed = [e for e in found if e.action == "sum"]
    assert len(summed) == len(found) == 4
    for e in summed:
        assert e.producer_layout == ()
        assert e.parts == 8
        assert tuple(e.predicted_group) == tuple(range(8))
        assert not e.cannot_tell


# ------------------------------------------------------------------ (e) every AllReduce comm lists
def test_explain_of_a_dump_answers_for_every_allreduce_of_the_step():
    # Zoo 10 (docstring above) has, per rank, 6 AllReduces in the whole step (what `comm` lists at
    # validate): forward, row_matmul's partial sums over tp (0-3) and loss_mean's over all 8;
    # backward, one: flat_matmul wants rows cut 8 where row_matmul's AllReduce leaves them cut 2
    # (a local StridedSlice), whose gradient is padded back (StridedSliceGrad) and summed by the
    # forward AllReduce's own gradient, an AllReduce over the same 0-3; gradient, one mirror per
    # weight: w1 and w2 over 0, 4, w3 over 0-7. step_parallel_end, explain's default, holds the
    # forward two only (the gradient graph is built after it); the rest come from validate.
    found = explain(ZOO / "10_layout_api_8", "type:AllReduce", rank=0)
    assert sum(len(e.lines) for e in found) == 6
    kinds = sorted((e.kind, tuple(e.group_ranks)) for e in found)
    assert kinds == sorted([("forward", (0, 1, 2, 3)), ("forward", tuple(range(8))), ("backward", (0, 1, 2, 3)),
                            ("gradient", (0, 4)), ("gradient", (0, 4)), ("gradient", tuple(range(8)))])
    forward = [e for e in found if e.kind == "forward"]
    assert {e.file.split("/")[-1].split("_0")[0] for e in forward} == {"step_parallel_end"}
    assert {e.producer for e in forward} == {"row_matmul", "loss_mean"}  # the forward's own names
    # read at a stage named: that file only
    assert sum(len(e.lines) for e in explain(ZOO / "10_layout_api_8", "type:AllReduce", rank=0,
                                             stage="step_parallel_end")) == 2


# ------------------------------------------------------------------ (f) a Receive's producer
def test_pipeline_receive_has_no_producer_in_its_own_file():
    # Zoo 04 (04_pipeline_hsdp_recompute.py): 2 stages of 4 ranks, blocks 0-1 on stage 0 (ranks
    # 0-3), blocks 2-3 and the head on stage 1 (ranks 4-7), 4 micro-batches. Rank 4 (stage 1, place
    # 0) receives block 1's output from rank 0 once per micro-batch, for blocks.2's ln1 (and the
    # residual attn_add). The data comes from rank 0's Send: no operator of rank 4's file produced
    # it; MindSpore hangs the Receive on a parameter (blocks.2.ln1_gamma) only to order it.
    found = explain(ZOO / "04_pipeline_hsdp_recompute", "type:Receive", rank=4)
    forward = [e for e in found if "step_parallel_end" in e.file]
    assert len(forward) == 1
    e = forward[0]
    assert len(e.lines) == 4  # one per micro-batch
    assert e.action == "receive"
    assert e.producer is None
    assert e.consumer == "ln1"
    assert e.chain == ("Receive",)
    assert not any("ln1_gamma" in t for t in [e.headline, *e.facts])
    assert "Receive from rank 0" in e.headline and "previous pipeline stage" in e.headline


# ------------------------------------------------------------------ (c) an AllGather's dimension
@pytest.fixture(scope="module")
def zoo14():
    """Zoo 14 (14_mf_llama_seq_parallel.py): MindFormers Llama, dp 1 x mp 4 with use_seq_parallel
    on 4 ranks; between layers the activation (2, 64, 512) is cut along the sequence in 4 (the
    RMSNorms (1, 4, 1)); wq / wk / wv / w1 / w3 ((1, 1), (4, 1)) take x (128, 512) whole."""
    return _zoo("14_mf_llama_seq_parallel", "step_parallel_end")


def test_sequence_parallel_allgather_names_the_sequence_dimension(zoo14):
    # The RMSNorm's last Mul (mul2, (1, 4, 1)) gives (2, 64, 512) cut (1, 4, 1); wq's MatMul
    # reads it reshaped to (128, 512) and cut (1, 1): whole. The collective runs before the
    # Reshape, on the 3-d tensor: the sequence, dimension 1, is gathered from 4 parts, over the
    # axis of mul2's device matrix (1, 4, 1) that cuts it, stride 1: ranks 0-3. MindSpore's
    # AllGather concatenates on dimension 0; its Split and Concat move the parts to dimension 1.
    # Once before the attention's and once before the FFN's column MatMuls of each of 2 layers.
    found = [e for e in explain(zoo14, "type:AllGather", rank=0) if e.producer == "mul2" and e.consumer == "matmul"]
    assert len(found) == 1
    e = found[0]
    assert (e.action, e.dims, e.parts) == ("gather", (1,), 4)
    assert e.producer_layout == (1, 4, 1) and e.consumer_layout == (1, 1)
    assert tuple(e.group_ranks) == (0, 1, 2, 3)
    assert tuple(e.predicted_group) == (0, 1, 2, 3)
    assert not e.cannot_tell


def test_allgather_after_a_cast_without_strategy_reads_the_cast_input(zoo14):
    # The Cast of the last residual add carries no strategy (the parallel pass gave it no operator
    # info), so the redistribution after it starts from the layout before it: the add's
    # sequence-cut (1, 4, 1). The final norm's Mul and Square take the (2, 64, 512) whole:
    # dimension 1 gathered from 4 parts over 0-3.
    found = [e for e in explain(zoo14, "type:AllGather", rank=0) if e.producer == "cast"]
    assert {e.consumer for e in found} == {"mul", "square"}
    for e in found:
        assert (e.action, e.dims, e.parts) == ("gather", (1,), 4)
        assert tuple(e.group_ranks) == (0, 1, 2, 3)
        assert not e.cannot_tell
