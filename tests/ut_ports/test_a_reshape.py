"""Ports of MindSpore's parallel UTs, reshape and redistribution: test_reshape.py (a reshape to and
from a MatMul cut along its contracted axis, 16 devices) and test_auto_parallel_reshape.py (a
reshaped weight, a reshape behind a Depend) of mindspore-ai/mindspore tests/ut/python/parallel/.
These UTs assert only that the compile succeeds; each spec (fixtures/ut/<port>.toml) states what
the planner must have done, derived by hand; see tests/ut_ports/ut_a.py."""
from __future__ import annotations

import pytest

from msinspect import testing
from tests.ut_ports.ut_a import assert_port_holds, dump, ports

PORTS = [p for p in ports() if p.startswith(("a_test_reshape__", "a_test_auto_parallel_reshape__"))]


@pytest.mark.parametrize("name", PORTS)
def test_port_holds(name):
    assert_port_holds(name)


def test_reshape_net1_2_in_pytest_form():
    """test_reshape.py::test_reshape_net1_2: MatMul ((1, 8), (8, 2)) on 16 devices sums over
    {0, 2, ..., 14} (rank 0); flattening its column-cut product needs the two halves gathered."""
    d = dump("a_test_reshape__test_reshape_net1_2")
    testing.assert_comm_after(d, "AllReduce", "matmul", [[0, 2, 4, 6, 8, 10, 12, 14]])
    testing.assert_count(d, "AllGather", ranks=[0], min=1, max=1)
