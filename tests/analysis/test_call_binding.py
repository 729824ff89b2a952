"""Calls are followed the way MindSpore binds them: an argument reaches the callee's parameter, a
callee's ``Return`` is the call's value; a ``Partial`` binds the first parameters, a
``Switch`` + ``FuncUnion`` call may be either branch (msinspect.graph, analysis.dataflow.flow).

Expected facts are read by hand from the network scripts and the dumps' own lines."""
from __future__ import annotations

import pytest

from msinspect import find_nodes, parse_file, to_networkx
from msinspect.analysis.dataflow.flow import consumers, producer
from msinspect.graph import RETURNED
from tests.conftest import FIXTURES

ZOO06 = FIXTURES / "zoo/06_control_flow_8/rank_0/21_validate_0080.ir.gz"
TYPE_INFERENCE = FIXTURES / "manual_parallel_8rank/rank_0/01_type_inference_0001.ir.gz"


@pytest.fixture(scope="module")
def branches():
    ir = parse_file(ZOO06)
    return ir, to_networkx(ir)


def _one(graph, **criteria) -> str:
    (key,) = find_nodes(graph, **criteria)
    return key


def test_the_branch_input_reaches_both_branches(branches):
    """zoo 06's script: x after the third residual_add goes to ``pos_relu`` if the mean is
    positive, else to ``neg_scale``. In the dump the main graph writes Partial(@✓, %17),
    Partial(@✗, %17), Switch(...), then calls the FuncUnion of both."""
    ir, graph = branches
    residual = f"{ir.entry}/%17"
    assert graph.nodes[residual]["node"].instance_name == "residual_add"
    found = consumers(graph, residual)
    assert _one(graph, name="pos_relu") in found and _one(graph, name="neg_scale") in found
    assert not any(graph.nodes[k]["op"] in ("Partial", "Switch") for k in found)


def test_a_call_of_either_branch_is_its_own_producer(branches):
    """head_in (%27: at validate every MatMul of the main graph prints as head_in) takes the
    call %25 of @FuncUnion(@✓, @✗): which branch ran is not in the dump, so its producer is the
    call itself, and the call's value comes from both Returns."""
    ir, graph = branches
    head_in = f"{ir.entry}/%27"
    assert graph.nodes[head_in]["op"] == "MatMul"
    call = producer(graph, head_in)
    assert graph.nodes[call]["node"].index == 25 and graph.nodes[call]["node"].callee_graphs
    returns = sorted(u for u, _, d in graph.in_edges(call, data=True) if d["position"] == RETURNED)
    assert [graph.nodes[r]["graph"][:2] for r in returns] == ["27", "28"]


def test_a_branch_parameter_is_fed_by_the_partial_argument(branches):
    ir, graph = branches
    relu = _one(graph, name="pos_relu")
    assert producer(graph, relu) == f"{ir.entry}/%17"  # through %para6_x, bound by Partial(@✓, %17)


def test_calls_of_helpers_are_walked_into_and_out_of():
    """manual parallel's type-inference dump: @31__tensor_add_tensor_59(%para35_x, %para36_y)
    calls @32_add_48(%para35_x, %para36_y), whose %0 is PrimFunc_Add(%para33_input, ...);
    @30_6↓_nll_loss_147's %2 calls @31 with (%0, %1)."""
    graph = to_networkx(parse_file(TYPE_INFERENCE))
    assert consumers(graph, "param:para35_x") == ["32_add_48/%0"]
    assert graph.nodes["32_add_48/%0"]["op"] == "Add"
    assert producer(graph, "31__tensor_add_tensor_59/Return") == "32_add_48/%0"
    nll = "30_6↓_nll_loss_147"
    assert producer(graph, f"{nll}/Return") == "32_add_48/%0"
    # the argument %0 of that call (a call of @33__scalar_mul_tensor_53, whose Muls scales the loss)
    assert graph.nodes[producer(graph, "param:para35_x")]["op"] == "Muls"


def test_a_call_is_named_by_what_it_calls(branches):
    """A call has no instance name; its debug name (CNode_167) says nothing: it is shown by the
    graphs it may call."""
    from msinspect.analysis.dataflow.file_view import label

    ir, graph = branches
    assert label(graph, f"{ir.entry}/%25") == ("call @27_24_14_✓↓__main___ControlFlowNet_construct_165"
                                               " | @28_25_15_✗↓__main___ControlFlowNet_construct_166")
    assert label(graph, f"{ir.entry}/%27") == "head_in"
