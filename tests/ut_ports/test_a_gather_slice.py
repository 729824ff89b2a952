"""Ports of MindSpore's parallel UTs, Gather / GatherD / StridedSlice under semi-auto: test_gather_v2.py,
test_gatherd.py and test_stridedslice.py of mindspore-ai/mindspore tests/ut/python/parallel/. Each
port's dump (rank 0) is checked against its spec (fixtures/ut/<port>.toml: the UT's own
ParallelValidator assertions where it has some, and the facts derived by hand); see
tests/ut_ports/ut_a.py. The assertions of test_stridedslice_layout that do not hold on MindSpore
2.10 itself are shown failing here, with the IR lines."""
from __future__ import annotations

import gzip

import pytest

import msinspect
from msinspect import testing
from tests.ut_ports.ut_a import UT, assert_port_holds, dump, ports, split_spec

PORTS = [p for p in ports() if p.startswith(("a_test_gather_v2__", "a_test_gatherd__"))
         or p in ("a_test_stridedslice__test_stridedslice_layout", "a_test_stridedslice__test_stridedslice_parameter")]

LAYOUT = "a_test_stridedslice__test_stridedslice_layout"


@pytest.mark.parametrize("name", PORTS)
def test_port_holds(name):
    assert_port_holds(name)


def test_stridedslice_layout_ut_assertions_that_do_not_hold_on_2_10():
    """test_stridedslice.py::test_stridedslice_layout asserts, and MindSpore 2.10 does not give:

    - ``check_node_attrs('StridedSlice-1', {'begin_mask': 1, 'end_mask': 2, 'ellipsis_mask': 0})``:
      in 2.10 the masks are the node's inputs, not primitive attributes,
      step_parallel_end_0114.ir.gz:52:
      ``%6(out) = PrimFunc_StridedSlice(%5, (I64(127), I64(0), I64(0)), (I64(128), I64(64), I64(32)),
      (I64(1), I64(1), I64(1)), I64(1), I64(2), I64(0), I64(0), I64(0)) {instance name: strided_slice}
      primitive_attrs: {in_strategy: ((1, 4, 2))} {in_strategy: ((1, 4, 2))}``
      (MindSpore's own graph info for StridedSlice-1: ``'attrs': {'in_strategy': '((1, 4, 2))'}``);
    - sub_graph ``'Split-1': ['AllGather-1']``: step_parallel_end_0114.ir.gz:87:
      ``%16(CNode_35) = PrimFunc_Split(%15, I64(0), I64(4))`` (axis and output count are inputs);
    - sub_graph ``'Concat-1': ['MakeTuple-2']``: step_parallel_end_0114.ir.gz:105:
      ``%22(CNode_41) = PrimFunc_Concat(%21, I64(2))`` (the axis is an input).

    Every entry of the .not_on_2_10 spec, the UT's assertions as written, must fail."""
    split = split_spec(UT / f"{LAYOUT}.not_on_2_10.toml")
    if split.waiting:
        pytest.xfail("waits for the expectation language: " + "; ".join(split.waiting))
    report = msinspect.check_dump(split.spec, dump(LAYOUT))
    report.outcomes = [o for o in report.outcomes if o.expectation.kind != "record"]  # MindSpore's own, if kept
    held = [o.expectation.label for o in report.outcomes if o.passed]
    assert not held, f"UT assertions thought not to hold on 2.10 hold: {held}"
    assert len(report.outcomes) == 3


def test_stridedslice_layout_node_has_nine_inputs_on_2_10():
    """The UT's ``check_node_inputs_fuzzy_match('StridedSlice-1', ['Load-0', '((127, 0, 0))',
    '((128, 64, 32))', '((1, 1, 1))'])`` wants four inputs; on 2.10 the node has nine (the five
    masks are inputs) and prints its tuples as ``(I64(127), I64(0), I64(0))``, step_parallel_end:52
    (quoted in the test above). The language has no tuple constant, so this is read from the IR."""
    path = next((UT / LAYOUT / "rank_0").glob("step_parallel_end_*.ir.gz"))
    line = gzip.decompress(path.read_bytes()).decode().splitlines()[51]
    assert "{instance name: strided_slice}" in line
    args = line.split("PrimFunc_StridedSlice(", 1)[1].split(") {instance name", 1)[0]
    assert args == ("%5, (I64(127), I64(0), I64(0)), (I64(128), I64(64), I64(32)), (I64(1), I64(1), I64(1)), "
                    "I64(1), I64(2), I64(0), I64(0), I64(0)")
    assert "begin_mask" not in line


def test_gathernd_axis_in_pytest_form():
    """test_gatherd.py::test_gathernd_axis, its four ParallelValidator assertions:

        assert validator.check_node_inputs_has('Neg-0', ['_VirtualDiv-0'], graph_id=1)
        assert validator.check_node_inputs_has('AllReduce-0', ['Mul-0'], graph_id=1)
        assert validator.check_node_inputs_has('Mul-0', ['GatherD-0', 'Cast-0'], graph_id=1)
        assert validator.check_node_inputs_has('GatherD-0', ['Minimum-0'], graph_id=1)
    """
    if not hasattr(testing, "assert_inputs"):
        pytest.xfail("waits for the expectation language: assert_inputs")
    d = dump("a_test_gatherd__test_gathernd_axis")
    # ParallelValidator reads the graph as step_parallel leaves it: the _VirtualDiv (it only scales
    # the gradient) is gone by validate, where the pytest helpers look by default.
    stage = "step_parallel_end"
    testing.assert_inputs(d, "Neg-0", ["_VirtualDiv-0"], stage=stage)
    testing.assert_inputs(d, "AllReduce-0", ["Mul-0"], stage=stage)
    testing.assert_inputs(d, "Mul-0", ["GatherD-0", "Cast-0"], stage=stage)
    testing.assert_inputs(d, "GatherD-0", ["Minimum-0"], stage=stage)


def test_gatherv2_out_strategy_reducescatter_in_pytest_form():
    """test_gather_v2.py::test_gatherv2_out_strategy_reducescatter: a Gather cut along its axis in 8
    with out_strategy ((8, 1, 1),) sums and scatters its masked rows at once (ReduceScatter over all
    8 ranks), where out_strategy ((1, 1, 1),) would AllReduce."""
    d = dump("a_test_gather_v2__test_gatherv2_out_strategy_reducescatter")
    testing.assert_strategy(d, "gatherv2", [[8, 1], [1, 1]], out_strategy=[[8, 1, 1]], set_by="user",
                            stage="step_parallel_begin")
    # the forward graph (validate also holds the gradient's collectives)
    testing.assert_count(d, "AllReduce", ranks=[0], min=0, max=0, stage="step_parallel_end")
    testing.assert_count(d, "ReduceScatter", ranks=[0], min=1, max=1, stage="step_parallel_end")
