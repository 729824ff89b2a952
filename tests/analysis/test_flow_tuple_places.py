"""A value put in a tuple reaches the readers of its own place only (flow.consumers), through the
``Return`` of a called graph and the call: zoo 11 (``@lazy_inline`` blocks) at validate, rank 0.

By hand, from the network (fixtures/zoo/nets/11_lazy_inline_8.py: each Block computes
``down(act(up(x, w1)), w2)``) and MindSpore's automatic differentiation of a lazy-inlined cell: the
bprop of a Block is a subgraph of its own that returns one tuple, ``(0, dw2, dw1, dx, 0)``, and the
train step takes each element out by its index (``TupleGetItem``): dw2 and dw1, each summed over
the block's replicas by its mirror (``grad_mirror_*`` AllReduce), go to that weight's optimizer
update (``ApplyMomentum``, instance name ``opt``) and nowhere else; dx goes to the bprop of the
block before it, never to an optimizer. Before, every element was taken to reach every reader
of the tuple: the mirror of dw2 "fed" both updates and the next block's MatMuls.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from msinspect.analysis.dataflow.file_view import view_of
from msinspect.analysis.dataflow.flow import consumers
from msinspect.graph import node_id

FILE = Path(__file__).resolve().parents[2] / "fixtures/zoo/11_lazy_inline_8/rank_0/21_validate_0093.ir.gz"


@pytest.fixture(scope="module")
def view():
    return view_of(FILE)


def _bprop_tuple(view):
    """The MakeTuple each Block bprop returns, with its elements' producers by place."""
    tuples = [n for n in view.by_line.values() if n.op == "MakeTuple" and len(n.inputs) == 5
              and n.inputs[0] == 0 and n.inputs[4] == 0]
    assert len(tuples) == 2  # one per Block
    return tuples


def _weight_updated(view, key):
    """The weight an ApplyMomentum updates (its first input's name)."""
    node = view.node(key)
    assert node.op == "ApplyMomentum"
    return node.inputs[0].short_name


def test_each_weights_gradient_reaches_its_own_update_only(view):
    seen = []
    for made in _bprop_tuple(view):
        by_place = view.input_nodes(made)
        for place, weight in ((1, "w2"), (2, "w1")):
            mirror = by_place[place]
            assert mirror.op == "AllReduce" and mirror.instance_name.startswith("grad_mirror")
            users = consumers(view.graph, node_id(mirror))
            assert len(users) == 1
            updated = _weight_updated(view, users[0])
            assert updated.endswith(f".{weight}")
            seen.append(updated)
    assert sorted(seen) == ["blocks.0.w1", "blocks.0.w2", "blocks.1.w1", "blocks.1.w2"]


def test_the_input_gradient_reaches_the_bprop_before_it(view):
    # block 1's dx is block 0's output gradient: its bprop's MatMuls read it (past the AllReduce of
    # the forward AllReduce's gradient); block 0 returns no dx (the network's input needs none)
    dx = {made.line: view.input_nodes(made)[3] for made in _bprop_tuple(view)}
    assert sum(node is None for node in dx.values()) == 1
    (node,) = [node for node in dx.values() if node is not None]
    users = [view.node(u) for u in consumers(view.graph, node_id(node))]
    assert users and all(u.op == "MatMul" and u.graph != node.graph for u in users)
    assert all(u.fullname.startswith("Gradients/Default/network-Net/blocks-CellList/0-Block/") for u in users)
