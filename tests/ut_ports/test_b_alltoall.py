"""Ports of MindSpore's AlltoAll unit tests (tests/ut/python/parallel/test_alltoall.py) through the
dry run: each port's scrubbed dump passes its spec (fixtures/ut/<name>.toml: facts derived by hand
and the UT's own assertions), and the UT's assertions in pytest form. The Layout-extension MoE port
(AlltoAll with enable_alltoall) is in test_b_layout.py. The UT's stand-alone tests (a user's AlltoAll
or NeighborExchange with no parallel mode) are not ported: MindSpore writes no step_parallel IR for
them, so the dry run keeps nothing of the planner to check."""
from __future__ import annotations

import pytest

from tests.ut_ports.b_ports import check_port, dump_of, ports, msinspect_helper

PORTS = ports("test_alltoall__")
WORLD = [list(range(8))]


@pytest.mark.parametrize("name", PORTS)
def test_port_passes_its_spec(name):
    check_port(name)


def test_all_to_all_in_pytest_form():
    """test_alltoall.py::test_all_to_all (lines 110-118): the strategies the UT reads from
    _get_shard_strategy, by op type, then the redistribution derived by hand: with enable_alltoall
    off, AllGathers over the 8 ranks and no AlltoAll, despite the UT's name."""
    dump = dump_of("b_test_alltoall__test_all_to_all")
    assert_strategy = msinspect_helper("assert_strategy")
    assert_strategy(dump, "type:SoftmaxCrossEntropyWithLogits", ((8, 1), (8, 1)), stage="step_parallel_end")
    assert_strategy(dump, "type:OneHot", ((8, 1), (), ()), stage="step_parallel_end")
    assert_strategy(dump, "type:Transpose", ((8, 1),), stage="step_parallel_end")
    assert_strategy(dump, "type:MatMul", ((1, 1), (1, 8)), set_by="user", stage="step_parallel_end")
    msinspect_helper("assert_comm_after")(dump, "AllGather", "matmul", WORLD, stage="step_parallel_end")
    msinspect_helper("assert_comm_before")(dump, "AllGather", "matmul", WORLD, stage="step_parallel_end")
    msinspect_helper("assert_count")(dump, "AllGather", ranks=[0], min=3, max=3, stage="step_parallel_end")
    msinspect_helper("assert_absent")(dump, "type:AlltoAll", stage="step_parallel_end")
