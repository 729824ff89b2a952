"""``explain`` on zoo 17 (fixtures/zoo/nets/17_dynamic_shape_8.py): x (None, 64) of a dynamic
batch, semi-auto on 8 ranks, full batch, one Momentum step (issue 39: every zoo network with a
backward pass). Derived by hand from the script (its docstring derives the layouts) and
MindSpore's rules before explain ran on it; ranks 0 and 3 are in the zoo:

- ``mm`` MatMul ((1, 1), (1, 4)) and ``relu`` ((1, 4),) are the user's; ``mean`` (ReduceMean, no
  axis, no ``shard()``) gets MindSpore's default under semi_auto_parallel. Its rows are dynamic
  and cannot be cut, and under full batch the loss's operator gets the stand-alone strategy
  (every dimension whole): ((1, 1),), set by ``default``.
- mm's device matrix [1, 1, 4] uses 4 of 8 devices: a repeated axis of 2 on the right,
  [1, 1, 4, 2]; rank r sits at (0, 0, r // 2, r % 2). mm gives (-1, 128) cut (1, 4), the columns
  by the axis of stride 2: rank 0 holds columns 0:32 with rank 1, rank 3 columns 32:64 with
  rank 2. relu reads it as it is.
- relu -> mean: mean needs the columns whole, relu gives them cut 4: an AllGather of dimension 1
  over the ranks holding the 4 column parts, the axis of stride 2: ranks 0, 2, 4, 6 for rank 0,
  1, 3, 5, 7 for rank 3 (kind ``redistribution``, action ``gather``, dims (1,), 4 parts);
  MindSpore's AllGather concatenates dimension 0, so a Split and Concat follow it.
- x: full batch, every rank reads it whole, mm wants it whole: no step.
- w (64, 128) is cut by columns only: ranks 2k and 2k + 1 hold the same slice, its mirror sums
  the gradient over the pair: 0, 1 for rank 0, 2, 3 for rank 3 (action ``replicas``).
- The gradient graph (validate): the bprop of the AllGather is a ReduceScatter(sum) over the same
  ranks giving each its quarter of dimension 1 back (action ``sum``, dims (1,), 4 parts).
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain

from tests.analysis.explain_helpers import ZOO, backward, read, step

ZOO17 = ZOO / "17_dynamic_shape_8"
STAGES = ("validate", "step_parallel_end")
GATHER = {0: (0, 2, 4, 6), 3: (1, 3, 5, 7)}
PAIR = {0: (0, 1), 3: (2, 3)}


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("name, verdict, strategy", [("mm", "user", ((1, 1), (1, 4))),
                                                     ("relu", "user", ((1, 4),)),
                                                     ("mean", "default", ((1, 1),))])
def test_who_set_each_strategy(stage, name, verdict, strategy):
    found = explain(read(ZOO17, stage), name, rank=0)
    assert {(e.verdict, e.in_strategy) for e in found} == {(verdict, strategy)}


@pytest.mark.parametrize("stage", STAGES)
@pytest.mark.parametrize("rank", [0, 3])
def test_columns_gathered_for_the_mean(stage, rank):
    found = [e for e in explain(read(ZOO17, stage, rank), "type:AllGather", rank=rank) if e.kind == "redistribution"]
    assert len(found) == 1
    e = found[0]
    assert (e.producer, e.consumer) == ("relu", "mean")
    assert (e.producer_layout, e.consumer_layout) == ((1, 4), (1, 1))
    assert step(e) == ("gather", (1,), 4)
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == GATHER[rank]
    assert {"AllGather", "Split", "Concat"} <= set(e.chain)
    assert not e.cannot_tell


@pytest.mark.parametrize("stage, selector", [("validate", "type:AllReduce"),
                                             ("step_parallel_end", "type:_MirrorOperator")])
@pytest.mark.parametrize("rank", [0, 3])
def test_w_is_mirrored_over_its_pair(stage, selector, rank):
    found = [e for e in explain(read(ZOO17, stage, rank), selector, rank=rank) if e.kind == "gradient"]
    assert len(found) == 1
    e = found[0]
    assert e.action == "replicas"
    assert "same slice of w " in e.headline
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == PAIR[rank]
    assert not e.cannot_tell


@pytest.mark.parametrize("rank", [0, 3])
def test_gradient_of_the_gather_is_a_reduce_scatter(rank):
    found = backward(explain(read(ZOO17, "validate", rank), "type:ReduceScatter", rank=rank))
    assert len(found) == 1
    e = found[0]
    assert e.forward.startswith("the AllGather after relu ")
    assert step(e) == ("sum", (1,), 4)
    assert tuple(e.group_ranks) == tuple(e.predicted_group) == GATHER[rank]
    assert not e.cannot_tell


@pytest.mark.parametrize("op, count", [("Concat", 1), ("Slice", 4)])
def test_gradients_of_the_gathers_split_and_concat_are_local(op, count):
    # The gather's Split (dimension 0, 4 parts) and Concat (dimension 1) are steps on the rank's own
    # data; MindSpore's bprop of a Split (get_bprop_split) concatenates the parts' gradients on the
    # axis it cut, its bprop of a Concat (get_bprop_concat) slices the gradient into the parts the
    # Concat joined, one Slice a part: 1 Concat and 4 Slices, nothing on the wire (action "none"),
    # each naming the forward step. Under a dynamic shape these carry no instance name (validate
    # line 304: `PrimFunc_Concat(%35, I64(0)) cnode_attrs: {checkpoint: Bool(1)} cnode_primal_attrs:
    # {forward_comm_node_unique_id: "3513", forward_node_name: "Split_3604", forward_unique_id:
    # "3604"}`), yet the file tells whose gradient they are.
    forward = {"Concat": "the Split after relu ", "Slice": "the Concat after relu "}[op]
    found = explain(read(ZOO17, "validate"), f"type:{op}", rank=0)
    found = [e for e in found if e.forward]
    assert sum(len(e.lines) for e in found) == count
    for e in found:
        assert e.forward.startswith(forward)
        assert (e.kind, e.action) == ("local", "none")
        assert not e.cannot_tell
