"""``explain`` on zoo 06 (fixtures/zoo/nets/06_control_flow_8.py): three unrolled feed-forward
residual blocks and a tensor-conditioned ``if``, semi-auto on 8 ranks, dp 2 x tp 4, 256 rows of
512, full batch. MindSpore 2.10 does not compile its training step (the script's docstring), so
the dump holds the forward network only: no gradient graph, no mirrors. Derived by hand from the
script and MindSpore's rules before explain ran on it (nets/06_control_flow_8.toml derives the
same groups):

- ffn_in ((2, 1), (1, 4)) has device matrix (2, 1, 4), last axis fastest: rank = 4 dp + tp; rank
  0's tp group is 0-3, its dp pair 0, 4.
- Every strategy is the user's (``shard()`` on each operator the script names).
- ffn_out and head_out ((2, 4), (4, 1)) contract a dimension cut 4 ways: partial sums, an
  AllReduce(sum) over 0-3 after each (kind ``forward``, 4 parts); ffn_out's sums go to
  residual_add ((2, 1), (2, 1)) (3 unrolled copies), head_out's to square ((2, 1),).
- cond_mean and loss_mean ((2, 1),) reduce every axis of rows cut 2: each rank sums its 128 rows,
  an AllReduce(sum) over the dp pair 0, 4 adds the 2 halves (2 parts).
- x: full batch, every rank reads the 256 rows; ffn_in and residual_add want them cut 2: rank 0
  (dp 0) keeps rows 0:128, a StridedSlice (kind ``local``, action ``split``, dimension 0, 2
  parts), nothing on the wire.
- Without a gradient graph, no collective of kind ``backward`` or ``gradient`` exists, also where
  explain reads validate for them.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain

from tests.analysis.explain_helpers import ZOO, read

ZOO06 = ZOO / "06_control_flow_8"


@pytest.mark.parametrize("name, strategy", [
    ("ffn_in", ((2, 1), (1, 4))), ("gelu", ((2, 4),)), ("ffn_out", ((2, 4), (4, 1))),
    ("residual_add", ((2, 1), (2, 1))), ("cond_mean", ((2, 1),)), ("pos_relu", ((2, 1),)),
    ("neg_scale", ((2, 1), ())), ("head_in", ((2, 1), (1, 4))), ("head_out", ((2, 4), (4, 1))),
    ("square", ((2, 1),)), ("loss_mean", ((2, 1),))])
def test_every_strategy_is_the_users(name, strategy):
    found = explain(read(ZOO06, "step_parallel_end"), name, rank=0)
    assert {(e.verdict, e.in_strategy) for e in found} == {("user", strategy)}


def test_forward_sums_at_step_parallel_end():
    # The means' sums go to ReduceMeanInfo's own RealDiv by the dp count 2, an operator the
    # parallel pass inserts under a forward_op_ name (step_parallel_end line 159:
    # `PrimFunc_RealDiv(%26, Tensor(shape=[], dtype=Float32, value=2)) {instance name:
    # forward_op_25310309465733376}`), whose op the test reads from the file.
    analysis = read(ZOO06, "step_parallel_end")
    found = explain(analysis, "type:AllReduce", rank=0)
    ops = {e.consumer: _op(analysis, e.consumer) for e in found}
    got = sorted((e.producer, ops[e.consumer], e.action, e.parts, tuple(e.group_ranks)) for e in found for _ in e.lines)
    tp, dp = (0, 1, 2, 3), (0, 4)
    assert got == sorted([("ffn_out", "Add", "sum", 4, tp)] * 3 + [("head_out", "Square", "sum", 4, tp)]
                         + [("cond_mean", "RealDiv", "sum", 2, dp), ("loss_mean", "RealDiv", "sum", 2, dp)])
    for e in found:
        assert e.kind == "forward"
        assert tuple(e.predicted_group) == tuple(e.group_ranks)
        assert not e.cannot_tell


def _op(analysis, name):
    """The primitive of the operator named ``name`` on rank 0 (its one answer)."""
    return {e.op for e in explain(analysis, name, rank=0)}.pop()


def test_forward_sums_at_validate():
    # At validate remove_dup_value gives ffn_out and head_out one instance name (the toml's note),
    # so the 4 tensor-group sums are counted by consumer: residual_add 3, square 1. (cond_mean and
    # loss_mean, both ReduceMean ((2, 1),), share one name there too.)
    found = [e for e in explain(read(ZOO06, "validate"), "type:AllReduce", rank=0) if e.parts == 4]
    assert sorted(e.consumer for e in found for _ in e.lines) == ["residual_add"] * 3 + ["square"]
    for e in found:
        assert (e.kind, e.action) == ("forward", "sum")
        assert tuple(e.group_ranks) == tuple(e.predicted_group) == (0, 1, 2, 3)
        assert not e.cannot_tell


@pytest.mark.parametrize("stage, count", [("step_parallel_end", 2), ("validate", 1)])
def test_full_batch_rows_are_sliced(stage, count):
    # One StridedSlice per consumer of x at step_parallel_end (ffn_in and residual_add of the first
    # block); at validate the two equal slices of x are one (common subexpressions merged).
    found = explain(read(ZOO06, stage), "type:StridedSlice", rank=0)
    assert sum(len(e.lines) for e in found) == count
    for e in found:
        assert (e.kind, e.action, e.dims, e.parts) == ("local", "split", (0,), 2)
        assert e.kept == ((0, 128), (0, 512))


def test_no_gradient_graph_no_backward_answer():
    found = explain(ZOO06, "type:AllReduce", rank=0)
    assert {e.kind for e in found} == {"forward"}


def test_each_mean_is_completed_by_its_own_division():
    # MindSpore's ReduceMeanInfo, reducing a cut dimension, lets each rank average its own 128 rows,
    # sums the 2 averages over the dp pair 0, 4 (the AllReduce above) and divides by the 2 parts: a
    # RealDiv by 2 it inserts after the AllReduce (forward_op_ name, step_parallel_end lines 159 and
    # 216). cond_mean's and loss_mean's: no strategy of their own, yet the parallel pass put them
    # there for the mean's step; never "nothing the planner decided here".
    found = explain(read(ZOO06, "step_parallel_end"), "type:RealDiv", rank=0)
    assert sorted(e.producer for e in found for _ in e.lines) == ["cond_mean", "loss_mean"]
    for e in found:
        assert (e.kind, e.parts) == ("local", 2)
        assert tuple(e.group_ranks) == (0, 4)
        assert "divides by 2" in e.headline
        assert not e.cannot_tell
