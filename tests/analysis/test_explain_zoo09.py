"""``explain`` on zoo 09 (fixtures/zoo/nets/09_large_gpt.py): gpt.py's plan "all" with 124 blocks,
dp 2 x tp 4 on 8 ranks (zoo 01's layout), full batch 8 x sequence 64 = 512 rows, hidden 512,
vocabulary 1024, one AdamWeightDecay step. The zoo keeps rank 0's step_parallel_end file only:
the gradient graph, built after it, is in no file read. Derived by hand from the script, gpt.py's
table of strategies and MindSpore's rules before explain ran on it:

- A MatMul ((2, 1), (1, 4)) has device matrix (2, 1, 4), last axis fastest: rank = 4 dp + tp;
  rank 0's tensor group is 0-3, its dp pair 0, 4.
- Every operator of the table is ``shard()``ed: every strategy is the user's.
- out_matmul and ffn_out_matmul ((2, 4), (4, 1)) contract a dimension cut 4 ways: an
  AllReduce(sum) over 0-3 after each, kind ``forward``, 4 parts, read by attn_add and ffn_add:
  124 of each, one answer each with 124 lines.
- loss_mean ((2,),) reduces the 512 per-row losses cut 2: an AllReduce(sum) over 0, 4, 2 parts,
  read by ReduceMeanInfo's own RealDiv.
- lm_matmul gives the logits (512, 1024) cut (2, 4), loss_ce ((2, 1), (2, 1)) needs each row's
  vocabulary whole: an AllGather of dimension 1 over 0-3, 4 parts, then Split and Concat.
- embed_gather ((1, 1), (2, 1)) wants the ids (8, 64), read whole (full batch), cut by batch in
  2: a StridedSlice, rank 0 keeps rows 0:4.
- Mirrors (no optimizer shard): per block wq, wk, wv, w_in (cut (1, 4)) and wo, w_out (cut
  (4, 1)) are cut by tp only: replicas 0, 4; plus lm_head ((1, 4)): 6 x 124 + 1 = 745. The
  LayerNorms' gamma and beta ((1,) each, 4 per block, 2 of ln_f), the embedding table (read
  whole by embed_gather) and the position table (read whole by pos_add): replicas 0-7, 4 x 124
  + 2 + 2 = 500.
- Backward: not in the file read. A mirror says its gradient is summed in the backward pass (a
  fact of what a _MirrorOperator becomes), nothing more; a selector of backward collectives only
  (type:ReduceScatter, the bprop of the vocabulary AllGather) selects nothing, and the error must
  say the gradient graph is not in the files read, not only that nothing matched.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain
from msinspect.errors import NoMatchError

from tests.analysis.explain_helpers import ZOO, read, step

ZOO09 = ZOO / "09_large_gpt"


@pytest.fixture(scope="module")
def zoo09():
    return read(ZOO09, "step_parallel_end")


def test_forward_sums(zoo09):
    found = explain(zoo09, "type:AllReduce", rank=0)
    tp, dp = (0, 1, 2, 3), (0, 4)
    got = sorted((e.producer, e.consumer if e.parts == 4 else e.consumer.startswith("forward_op_"),
                  len(e.lines), e.action, e.parts, tuple(e.group_ranks)) for e in found)
    assert got == sorted([("out_matmul", "attn_add", 124, "sum", 4, tp), ("ffn_out_matmul", "ffn_add", 124, "sum", 4, tp),
                          ("loss_mean", True, 1, "sum", 2, dp)])
    for e in found:
        assert e.kind == "forward"
        assert tuple(e.predicted_group) == tuple(e.group_ranks)
        assert not e.cannot_tell


def test_vocabulary_gathered_for_the_loss(zoo09):
    found = [e for e in explain(zoo09, "type:AllGather", rank=0)]
    assert len(found) == 1
    e = found[0]
    assert (e.kind, e.producer, e.consumer) == ("redistribution", "lm_matmul", "loss_ce")
    assert (e.producer_layout, e.consumer_layout) == ((2, 4), (2, 1))
    assert step(e) == ("gather", (1,), 4)
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 1, 2, 3)
    assert {"AllGather", "Split", "Concat"} <= set(e.chain)
    assert not e.cannot_tell


def test_ids_sliced_for_the_lookup(zoo09):
    e = next(e for e in explain(zoo09, "type:StridedSlice", rank=0) if e.consumer == "embed_gather")
    assert (e.kind, e.action, e.dims, e.parts) == ("local", "split", (0,), 2)
    assert e.kept == ((0, 4), (0, 64))


def test_mirrors(zoo09):
    found = explain(zoo09, "type:_MirrorOperator", rank=0)
    groups = sorted(tuple(e.group_ranks) for e in found for _ in e.lines)
    assert groups == sorted([(0, 4)] * 745 + [tuple(range(8))] * 500)
    for e in found:
        assert (e.kind, e.action) == ("gradient", "replicas")
        assert tuple(e.predicted_group) == tuple(e.group_ranks)
        assert not e.cannot_tell


@pytest.mark.parametrize("name, strategy", [("q_matmul", ((2, 1), (1, 4))), ("out_matmul", ((2, 4), (4, 1))),
                                            ("softmax", ((2, 4, 1, 1),)), ("loss_ce", ((2, 1), (2, 1))),
                                            ("loss_mean", ((2,),))])
def test_strategies_are_the_users(zoo09, name, strategy):
    found = explain(zoo09, name, rank=0)
    assert {(e.verdict, e.in_strategy) for e in found} == {("user", strategy)}


def test_a_backward_selector_says_the_gradient_graph_is_not_read():
    with pytest.raises(NoMatchError) as caught:
        explain(ZOO09, "type:ReduceScatter", rank=0)
    assert "the files read hold no gradient graph" in str(caught.value)
