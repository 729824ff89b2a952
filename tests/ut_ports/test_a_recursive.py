"""Ports of MindSpore's parallel UTs, recursive programming (SAPP): test_auto_parallel_sapp_gather.py,
test_auto_parallel_sapp_strided_slice.py, test_auto_parallel_sapp_batchparallel.py of
mindspore-ai/mindspore tests/ut/python/parallel/. The UTs assert the strategy the search gives one
operator (``_get_shard_strategy``); each spec (fixtures/ut/<port>.toml) states that and what follows
from it by hand; see tests/ut_ports/ut_a.py."""
from __future__ import annotations

import pytest

from msinspect import testing
from tests.ut_ports.ut_a import assert_port_holds, dump, ports

PORTS = [p for p in ports() if p.startswith("a_test_auto_parallel_sapp_")]


@pytest.mark.parametrize("name", PORTS)
def test_port_holds(name):
    assert_port_holds(name)


def test_sapp_gather_1_in_pytest_form():
    """test_auto_parallel_sapp_gather.py::test_auto_parallel_sapp_gather_1:

        for (k, v) in strategies.items():
            if re.search('Default/Gather-op0', k) is not None:
                assert v == [[1, 1], [8, 1]]
    """
    d = dump("a_test_auto_parallel_sapp_gather__test_auto_parallel_sapp_gather_1")
    testing.assert_strategy(d, "gatherv2", [[1, 1], [8, 1]], set_by="planner")
    testing.assert_shape(d, "gatherv2", inputs=[[64, 64], [8, 64]], output=[8, 64, 64], stage="validate")
