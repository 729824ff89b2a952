"""Ports of MindSpore's Layout-extension unit tests (tests/ut/python/parallel/test_layout_extend.py)
through the dry run: each port's scrubbed dump passes its spec (fixtures/ut/<name>.toml: device
matrices, tensor maps, slices and communication groups derived by hand from each Layout, and the
UT's own check_parameter_shape / check_parameter_layout / check_node_inputs_has), and two of them
in pytest form. test_layout_extend_moe is also the AlltoAll port of enable_alltoall."""
from __future__ import annotations

import pytest

from tests.ut_ports.b_ports import check_known_gap, check_port, dump_of, gaps_of, ports, msinspect_helper

PORTS = ports("test_layout_extend__")


@pytest.mark.parametrize("name", PORTS)
def test_port_passes_its_spec(name):
    check_port(name)


@pytest.mark.xfail(reason="a known gap of msinspect (tests/ut_ports/b_ports.py KNOWN_GAPS)", strict=False)
@pytest.mark.parametrize(("name", "label"), gaps_of(PORTS))
def test_known_gap_entry_holds(name, label):
    check_known_gap(name, label)


def test_layout_extend_base_reduce_scatter_in_pytest_form():
    """test_layout_extend.py::test_layout_extend_base_reduce_scatter, lines 145-146: w1's slice is
    (512, 512) and ReduceScatter-0 takes the MatMul; by hand, over sp: ranks 0 and 2."""
    dump = dump_of("b_test_layout_extend__test_layout_extend_base_reduce_scatter")
    msinspect_helper("assert_layout")(dump, "w1", slice_shape=[512, 512], stage="step_parallel_end")
    msinspect_helper("assert_inputs")(dump, "ReduceScatter-0", ["MatMul"], stage="step_parallel_end")
    msinspect_helper("assert_comm_after")(dump, "ReduceScatter", "matmul1", [[0, 2]], stage="step_parallel_end")


def test_layout_extend_moe_in_pytest_form():
    """test_layout_extend.py::test_layout_extend_moe, line 367: the weight's slice (2, 1024, 256);
    by hand, enable_alltoall moves gelu's cut to matmul1's with two AlltoAlls, one per device axis."""
    dump = dump_of("b_test_layout_extend__test_layout_extend_moe")
    msinspect_helper("assert_layout")(dump, "network.network.w", slice_shape=[2, 1024, 256], stage="step_parallel_end")
    msinspect_helper("assert_count")(dump, "AlltoAll", ranks=[0], min=2, max=2, stage="step_parallel_end")
    msinspect_helper("assert_comm_before")(dump, "AlltoAll", "matmul1", [[0, 4], [0, 8]], stage="step_parallel_end")
