"""The rules of :mod:`msinspect.mindspore.vocabulary`, each on real IR nodes of the zoo where one
shows it: who inserted a collective (:func:`kind_of`), which operators stand in for another
(:func:`stands_in`), the loss-scale check, the sizes a primitive states, and the names a spec may
count (:func:`check_kind`).

Where each fact comes from:

- instance names: ``redistribution_op_*`` and ``grad_redistribution_op_*`` (tensor
  redistribution and its gradient), ``forward_op_*`` (an operator's own communication),
  ``*mirror*`` (a mirror operator's gradient AllReduce), ``parallel_optimizer*`` (optimizer
  parallel), ``PARALLEL_GLOBALNORM_*`` (``InsertAllReduceToNodeInput``), and the replacement graph's
  ``HashName(instance) + op + index`` (``GenerateGraph::NewOpInst``, ``graph_util/generate_graph.cc``;
  ``HashName`` is a ``std::hash``, a 64-bit ``size_t``);
- the loss-scale check: ``flag_reduce = self.allreduce(flag_sum)`` in
  ``mindspore/nn/wrap/loss_scale.py`` (``TrainOneStepWithLossScaleCell``), which zoo 12 (MindFormers'
  train step cell) runs once a step;
- ``rank_size`` (AllGather, ReduceScatter, AlltoAll) and ``dev_num`` (the mirrors) in
  ``mindspore/python/mindspore/ops/operations/comm_ops.py``.
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache

import pytest

from msinspect.mindspore.vocabulary import (VOCABULARY, _one_edit, acting_as, check_kind, int_attr,
                                            is_redistribution_step, kind_of, loss_scale_check, stands_in,
                                            stated_size, wire_bytes_for)
from msinspect.model import Node
from msinspect.parser import parse_file
from msinspect.spec import expectation_from
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
#: 2.10's dynamic-shape redistribution (UT port): a Split named ``redistribution_allsplit``.
DYNAMIC = FIXTURES / "ut" / "b_test_dynamic_shape_graph_utils__test_not_equal_cast_mul_need_allgather_dyn"


@lru_cache(maxsize=None)
def _nodes(folder: str, stage: str) -> tuple[Node, ...]:
    root = ZOO / folder if (ZOO / folder).is_dir() else FIXTURES / "ut" / folder
    return tuple(parse_file(next((root / "rank_0").glob(f"*{stage}_*.ir.gz"))).nodes())


def _node(folder: str, stage: str, op: str, name: str | None = None, **where) -> Node:
    return next(n for n in _nodes(folder, stage) if n.op == op and (name is None or n.instance_name == name)
                and all(getattr(n, k) == v for k, v in where.items()))


@pytest.fixture(scope="module")
def loss_scale() -> Node:
    """Zoo 12's overflow check: the AllReduce of ``loss_scale.py``'s ``self.allreduce(flag_sum)``."""
    return next(n for n in _nodes("12_mf_llama_tp8", "step_parallel_end")
                if n.op == "AllReduce" and "loss_scale.py" in (n.source_line or ""))


@pytest.fixture(scope="module")
def reused() -> Node:
    """Zoo 14's AllReduce of a forward AllReduce's gradient (``grad_comm_ops.py``'s
    ``all_reduce_grad``), to which the comm-op reuse pass gave the loss-scale primitive's name
    ``allreduce``: no overflow check."""
    return next(n for n in _nodes("14_mf_llama_seq_parallel", "validate")
                if n.op == "AllReduce" and n.instance_name == "allreduce" and "grad_comm_ops.py" in (n.source_line or ""))


def test_the_overflow_check_is_told_by_its_line(loss_scale, reused):
    assert loss_scale.instance_name == "allreduce"
    assert loss_scale_check(loss_scale)
    assert kind_of(loss_scale, False, True) == "loss-scale"
    assert not loss_scale_check(reused)
    assert kind_of(reused, True, True) == "backward"  # in the gradient graph, its name telling nothing


def test_a_users_own_allreduce_attribute_is_no_overflow_check(loss_scale):
    """A user's cell may call its AllReduce ``self.allreduce(...)`` too: only the one in MindSpore's
    ``loss_scale.py`` is the check; and the line of that call on another operator is no AllReduce's."""
    own = dataclasses.replace(loss_scale, sources=("/home/me/train.py:40, 8~30/    flag = self.allreduce(flag)/",))
    assert not loss_scale_check(own)
    assert kind_of(own, False, False) == "user"
    assert not loss_scale_check(dataclasses.replace(loss_scale, op="ReduceScatter"))
    assert not loss_scale_check(dataclasses.replace(loss_scale, sources=()))


@pytest.mark.parametrize("folder, stage, op, name, backward, planner, kind", [
    ("12_mf_llama_tp8", "validate", "AllGather", "redistribution_op_10448160633829699112AllGather_", False, True,
     "redistribution"),
    # the gradient of a redistribution's AllGather is its ReduceScatter: told by the name, wherever it is
    ("12_mf_llama_tp8", "validate", "ReduceScatter", "grad_redistribution_op_10448160633829699112AllGather_", False,
     None, "backward"),
    ("13_mf_llama_pp_interleave", "validate", "AllReduce", "grad_mirror_MirrorMicroStepOperator", True, True,
     "gradient"),
    ("19_doc_optimizer_parallel", "validate", "AllGather", "parallel_optimizer_allgather_not_recompute", False, True,
     "optimizer"),
    ("19_doc_optimizer_parallel", "validate", "ReduceScatter", "grad_parallel_optimizer_allgather_not_recompute",
     True, True, "optimizer"),
    ("14_mf_llama_seq_parallel", "validate", "ReduceScatter", "forward_op_10638029259427706542", False, True,
     "forward"),
    ("13_mf_llama_pp_interleave", "step_parallel_end", "AllReduce", "PARALLEL_GLOBALNORM_IN_STAGES", False, True,
     "forward"),
    ("13_mf_llama_pp_interleave", "step_parallel_end", "AllReduce", "PARALLEL_GLOBALNORM_IN_STAGES", False, None,
     "forward"),
    # enable_nd_tp's MatMul: forward_op + HashName("MatMul's instance") + op + index
    ("20_doc_high_dimension_tp", "validate", "AllGather", "forward_op3815130986688897272AllGather1", False, None,
     "forward"),
    # the kind the primitive fixes, whatever the name
    ("10_layout_api_8", "step_parallel_end", "_MirrorOperator", "_MirrorOperator", False, True, "gradient"),
    ("10_layout_api_8", "step_parallel_end", "_VirtualDiv", None, False, True, "virtual"),
    ("13_mf_llama_pp_interleave", "step_parallel_end", "Send", None, False, True, "pipeline"),
    ("13_mf_llama_pp_interleave", "step_parallel_end", "Receive", None, False, True, "pipeline"),
    # a redistribution's steps that compute on the rank's own data
    (DYNAMIC.name, "step_parallel_end", "Split", "redistribution_allsplit", False, True, "local"),
    (DYNAMIC.name, "step_parallel_end", "Concat", None, False, True, "local"),
])
def test_kind_from_the_names_mindspore_gives(folder, stage, op, name, backward, planner, kind):
    assert kind_of(_node(folder, stage, op, name), backward, planner) == kind


def test_a_dynamic_redistributions_split_is_one_of_its_steps():
    """2.10 cuts a dynamic tensor with a Split named ``redistribution_allsplit`` (before the
    ``redistribution_op_*`` AllGather): a step of the redistribution, as its other operators are."""
    split = _node(DYNAMIC.name, "step_parallel_end", "Split", "redistribution_allsplit")
    assert is_redistribution_step(split)
    gather = _node(DYNAMIC.name, "step_parallel_end", "AllGather")
    assert gather.instance_name.startswith("redistribution_op_") and is_redistribution_step(gather)
    assert not is_redistribution_step(dataclasses.replace(split, instance_name="allsplit"))
    assert not is_redistribution_step(dataclasses.replace(split, instance_name=None))


def test_replacement_graphs_operators_stand_in():
    """Zoo 20's nd-tp MatMul replacement graph: ``622579306631221945Split2`` (hash, op, index)
    and ``6225793066312219455`` (2.10 writes no op name for its Concat: hash, index 5)."""
    split = _node("20_doc_high_dimension_tp", "validate", "Split", "622579306631221945Split2")
    concat = _node("20_doc_high_dimension_tp", "validate", "Concat", "6225793066312219455")
    assert stands_in(split) and stands_in(concat)
    assert not stands_in(dataclasses.replace(split, op="Concat"))  # the name is a Split's
    assert not stands_in(dataclasses.replace(split, instance_name=None))
    assert not stands_in(None)


@pytest.mark.parametrize("name, stands", [
    (f"{(1 << 64) - 1}AllReduce3", True),   # the largest 64-bit hash
    (f"{1 << 64}AllReduce3", False),        # one more: no size_t
    (f"{1 << 65}AllReduce3", False),
    ("7206914136160063563AllReduce3", True),
])
def test_the_hash_is_64_bits(loss_scale, name, stands):
    node = dataclasses.replace(loss_scale, instance_name=name, sources=())
    assert stands_in(node) is stands
    assert kind_of(node, False, None) == ("forward" if stands else "unknown")


@pytest.mark.parametrize("op, like", [
    ("AllReduce", "AllReduce"), ("AllToAll", "AlltoAll"), ("_HostAllGather", "AllGather"),
    ("ReduceScatterV", "ReduceScatter"), ("NeighborExchange", "AlltoAll"),
    ("_MirrorOperator", "_MirrorOperator"),  # rules of its own
    ("MatMul", "MatMul"),                    # no collective
])
def test_acting_as(op, like):
    assert acting_as(op) == like


def test_sizes_the_primitives_state():
    """Zoo 10's mirror: ``dev_num`` 2, ``fusion`` 1, ``mean_flag`` False (a boolean, no integer),
    ``group`` a name; zoo 19's optimizer AllGather: ``rank_size`` 8."""
    mirror = _node("10_layout_api_8", "step_parallel_end", "_MirrorOperator")
    assert stated_size(mirror) == 2
    assert int_attr(mirror, "fusion") == 1 and int_attr(mirror, "dev_num") == 2
    assert mirror.primitive_attrs["mean_flag"] is False and int_attr(mirror, "mean_flag") is None
    assert int_attr(mirror, "group") is None and int_attr(mirror, "split_count") is None
    gather = _node("19_doc_optimizer_parallel", "validate", "AllGather")
    assert stated_size(gather) == 8
    attrs = {k: v for k, v in gather.primitive_attrs.items() if k != "rank_size"}
    assert stated_size(dataclasses.replace(gather, primitive_attrs={**attrs, "rank_size": 1})) == 1
    assert stated_size(dataclasses.replace(gather, primitive_attrs={**attrs, "rank_size": 0})) is None
    assert stated_size(dataclasses.replace(gather, primitive_attrs={**attrs, "rank_size": 0, "dev_num": 4})) == 4
    assert stated_size(dataclasses.replace(gather, primitive_attrs={**attrs, "rank_size": True})) is None
    assert stated_size(dataclasses.replace(gather, primitive_attrs=attrs)) is None


def test_send_and_receive_move_their_tensor_once():
    """The pipeline's point-to-point operators send (or receive) the tensor once, whatever the
    group (docs/comm.md)."""
    assert wire_bytes_for("Send", 1_200, None) == 1_200
    assert wire_bytes_for("Receive", 1_200, 2) == 1_200


@pytest.mark.parametrize("a, b, one", [
    ("allreduce", "allreduce", False),    # the same
    ("allreduce", "allreduc", True),      # a letter dropped
    ("allreduc", "allreduce", True),      # ... or added
    ("allgather", "allgathr", True),      # dropped, the shorter word sorting after the longer
    ("reduce", "educe", True),            # the first
    ("allreduce", "allredu", False),      # two dropped
    ("allgather", "allgahex", False),     # one dropped, one changed
    ("allreduce", "allreduse", True),     # one changed
    ("allreduce", "alxreduse", False),    # two changed, apart
    ("allreduce", "allrexyce", False),    # two changed, neighbours
    ("allreduce", "allerduce", True),     # neighbours swapped
    ("send", "sned", True),
    ("send", "xsnd", False),              # s moved right, but e replaced
    ("send", "exnd", False),              # e moved left, but s replaced
    ("send", "dens", False),              # a swap, but not of neighbours
])
def test_one_typo(a, b, one):
    assert _one_edit(a, b) is one


def test_a_spec_may_count_any_operator_but_a_typo_of_a_collective():
    """Counting operators (``[[expect.count]]``): any type MindSpore has may be named; a name one
    typo from a collective's is refused with it, from four letters on (shorter names are too
    close to each other: ``Sen`` is not taken for ``Send``)."""
    for kind in ("MatMul", "AllReduce", "allreduce", "Sen", "Add"):
        check_kind(kind, communication=False)
    for kind, said in [("AllReduc", "AllReduce"), ("Sned", "Send"), ("AlltoAl", "AlltoAll"),
                       ("AllGatherX", "AllGather or AllGatherV")]:  # one typo from both
        with pytest.raises(ValueError) as error:
            check_kind(kind, communication=False)
        assert str(error.value) == f"kind {kind!r} is not an operator MindSpore has; did you mean {said}?"


def test_a_spec_reader_refuses_the_typo():
    with pytest.raises(ValueError, match=r"^kind 'AllReduc' is not an operator MindSpore has; did you mean AllReduce\?$"):
        expectation_from("count", 0, {"kind": "AllReduc", "ranks": [0], "min": 1})


def test_a_communication_kind_must_be_a_collective():
    """``[[expect.comm]]`` names a communication primitive: matched without case (``AllToAll`` is
    ``AlltoAll``); otherwise the three closest names by difflib's ratio (2 M / T over matched
    letters M): for ``allgathr`` (8 letters) allgather 16/17, allgatherv 16/18, _hostallgather
    16/22, then _ministepallgather 16/26 (0.62, fourth, left out); with none close, every name."""
    for kind in ("AllToAll", "alltoall", "_MirrorOperator", "Send"):
        check_kind(kind, communication=True)
    with pytest.raises(ValueError) as error:
        check_kind("AllGathr", communication=True)
    assert str(error.value) == ("kind 'AllGathr' is not a communication operator MindSpore has; "
                                "did you mean AllGather or AllGatherV or _HostAllGather?")
    with pytest.raises(ValueError) as error:
        check_kind("MatMul", communication=True)
    assert str(error.value) == (f"kind 'MatMul' is not a communication operator MindSpore has "
                                f"(they are: {', '.join(VOCABULARY)})")
    assert "AllReduce, AllGather, AllGatherV, ReduceScatter" in str(error.value)
