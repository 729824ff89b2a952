"""``compare_runs``: two configurations of zoo 01, compared at rank 0.

Left: ``fixtures/zoo/01_semi_auto_tp4dp2`` (MP 4 x DP 2, the zoo's dump). Right:
``tests/analysis/jobdiff/zoo01_mp1`` (rank 0 only of 8: the same script dry-run with ``MP=1``, DP
left at 2, by ``msinspect sweep``; validate, step_parallel_begin / end, scrubbed).

Everything below was worked out by hand from ``fixtures/zoo/nets/gpt.py`` (the strategy table of
its docstring, ``plan="all"``) and MindSpore's rules, before the MP=1 run was made:

Strategies. With tp 1 every ``tp`` in a strategy becomes 1 and nothing else moves; per block
(4 blocks):
  q/k/v_matmul, ffn_in_matmul  MatMul ((2, 1), (1, 4)) -> ((2, 1), (1, 1))   4 a block + lm_matmul
  out_matmul, ffn_out_matmul   MatMul ((2, 4), (4, 1)) -> ((2, 1), (1, 1))   2 a block
  q/k/v_transpose              Transpose ((2, 1, 4, 1),) -> ((2, 1, 1, 1),)  3 a block
  merge_transpose              Transpose ((2, 4, 1, 1),) -> ((2, 1, 1, 1),)  1 a block
  score_bmm, context_bmm       BatchMatMul ((2, 4, 1, 1), (2, 4, 1, 1)) -> ((2, 1, 1, 1), (2, 1, 1, 1))  2
  scale_mul                    Mul ((2, 4, 1, 1), ()) -> ((2, 1, 1, 1), ())  1
  softmax                      Softmax ((2, 4, 1, 1),) -> ((2, 1, 1, 1),)    1
  gelu                         GeLU ((2, 4),) -> ((2, 1),)                   1
so 4 x 15 + 1 = 61 forward operators change; embed_gather, pos_add, the LayerNorms, the residual
Adds, loss_ce and loss_mean carry no tp and do not.

Communication at rank 0. tp 4 puts rank 0 in the tensor-parallel group 0-3; with tp 1 no tensor is
cut but along the batch, so every collective of that group goes:
  forward AllReduce of out_matmul's partial sums (attention scope)      4 -> 0  removed
  forward AllReduce of ffn_out_matmul's partial sums (ffn scope)        4 -> 0  removed
  AllGather of lm_matmul's vocabulary for loss_ce (head scope)          1 -> 0  removed
  no collective of the right side has the group 0-3, none is of kind backward (the input
  gradients dy @ w^T of a whole w are whole: no partial sum);
  loss_mean's AllReduce over the batch (dp group 0, 4)                  1 -> 1  same group
  the gradient mirrors: one AllReduce per trained weight, 45 on both sides (per block wq wk wv wo
  w_in w_out and two LayerNorms' gamma and beta = 10, x 4, + embedding, position, ln_f gamma /
  beta, lm_head). Left: the 25 weights cut by tp (6 a block + lm_head) are mirrored over the dp
  group 0, 4, the 20 whole ones over 0-7; right: every weight is whole on every rank, all 45 over
  0-7.

Memory at rank 0 (float32). Weights, MP 4: a block's matrices 4 x 512^2 + 2 x 512 x 2048 =
3,145,728 / 4 = 786,432 plus 2,048 LayerNorm = 788,480, x 4 = 3,153,920; embedding 1024 x 512 =
524,288 and position 64 x 512 = 32,768 whole, ln_f 1,024, lm_head 512 x 1024 / 4 = 131,072:
3,843,072 values = 15,372,288 bytes. MP 1: 4 x 3,147,776 + 524,288 + 32,768 + 1,024 + 524,288 =
13,673,472 values = 54,693,888 bytes. Gradients: one per weight, as large (no optimizer shard);
AdamWeightDecay's states: two per weight.

Bytes per step on the data axis at rank 0 (ring AllReduce: 2 (n - 1) / n of the tensor): MP 1:
the 45 mirrors of the whole weights over 8 ranks, 1.75 x 54,693,888 = 95,714,304, plus loss_mean's
AllReduce of a float32 over 2 ranks, 4: 95,714,308; no tensor-axis bytes.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from msinspect.analysis.compare.runs import compare_runs

ROOT = Path(__file__).resolve().parents[2]
MP4 = ROOT / "fixtures" / "zoo" / "01_semi_auto_tp4dp2"
MP1 = Path(__file__).resolve().parent / "jobdiff" / "zoo01_mp1"

FORWARD_CHANGES = {
    ("MatMul", ((2, 1), (1, 4)), ((2, 1), (1, 1))): 17,
    ("MatMul", ((2, 4), (4, 1)), ((2, 1), (1, 1))): 8,
    ("Transpose", ((2, 1, 4, 1),), ((2, 1, 1, 1),)): 12,
    ("Transpose", ((2, 4, 1, 1),), ((2, 1, 1, 1),)): 4,
    ("BatchMatMul", ((2, 4, 1, 1), (2, 4, 1, 1)), ((2, 1, 1, 1), (2, 1, 1, 1))): 8,
    ("Mul", ((2, 4, 1, 1), ()), ((2, 1, 1, 1), ())): 4,
    ("Softmax", ((2, 4, 1, 1),), ((2, 1, 1, 1),)): 4,
    ("GeLU", ((2, 4),), ((2, 1),)): 4,
}


@pytest.fixture(scope="module")
def result():
    return compare_runs(MP4, MP1)


def test_the_rank_compared_is_the_lowest_both_hold(result):
    assert result.rank == 0 and result.left_world == 8 and result.right_world == 8
    assert {"name": "$MP", "left": None, "right": "1"} in result.settings


def test_forward_strategies_change_where_tp_was(result):
    forward = result.strategies[~result.strategies["gradient"].astype(bool)]
    found = Counter()
    for row in forward.to_dict("records"):
        found[(row["op"], tuple(row["left_strategy"]), tuple(row["right_strategy"]))] += row["n"]
    assert dict(found) == FORWARD_CHANGES
    assert sum(found.values()) == 61


def _row(result, kind, op, scope_end):
    rows = [r for r in result.comm.to_dict("records")
            if r["kind"] == kind and r["op"] == op and r["scope"].endswith(scope_end)]
    assert len(rows) == 1, (kind, op, scope_end, rows)
    return rows[0]


def test_the_tensor_parallel_collectives_are_removed(result):
    for scope in ("attention-Attention", "ffn-FeedForward"):
        row = _row(result, "forward", "AllReduce", scope)
        assert (row["change"], row["left_count"], row["right_count"], row["left_groups"]) == ("removed", 4, 0, "0-3")
    gather = _row(result, "redistribution", "AllGather", "head-Head")
    assert (gather["change"], gather["left_count"], gather["right_count"]) == ("removed", 1, 0)
    right = result.comm[result.comm["right_count"] > 0]
    assert not (right["right_groups"].str.contains("0-3")).any()
    assert not (right["kind"] == "backward").any()


def test_the_batch_reduction_stays_and_mirrors_regroup(result):
    loss = _row(result, "forward", "AllReduce", "network-GPT/head-Head")
    assert (loss["change"], loss["left_groups"], loss["right_groups"]) == ("same", "0, 4", "0, 4")
    mirrors = result.comm[(result.comm["kind"] == "gradient") & (result.comm["op"] == "AllReduce")]
    assert mirrors["left_count"].sum() == 45 and mirrors["right_count"].sum() == 45
    assert set(mirrors["right_groups"]) == {"0-7"}
    assert set(mirrors["left_groups"]) >= {"0, 4", "0-7"}


def test_memory_and_bytes_before_and_after(result):
    assert (result.memory_why, result.axes_why) == ("", "")
    memory = {r["part"]: (r["left_bytes"], r["right_bytes"]) for r in result.memory.to_dict("records")}
    assert memory["weights"] == (15_372_288, 54_693_888)
    assert memory["gradients"] == (15_372_288, 54_693_888)
    assert memory["states"] == (2 * 15_372_288, 2 * 54_693_888)
    axes = {r["axis"]: r["right_bytes"] for r in result.axes.to_dict("records")}
    assert axes["data"] == 95_714_308
    assert axes.get("tensor") in (None, 0)


def test_a_rank_one_side_lacks_is_refused():
    from msinspect.errors import NoMatchError

    with pytest.raises(NoMatchError, match="no rank 3"):
        compare_runs(MP4, MP1, rank=3)
