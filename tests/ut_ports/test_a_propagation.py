"""Ports of MindSpore's parallel UTs, sharding propagation: test_auto_parallel_shard_propagation.py,
test_auto_parallel_shard_propagation3.py and the sharding-propagation tests of test_stridedslice.py
(new / shrink axis masks, 16 to 1,024 devices) of mindspore-ai/mindspore
tests/ut/python/parallel/. Each port's dump (rank 0) is checked against its spec
(fixtures/ut/<port>.toml): the UT's own assertions on the propagated strategies and the facts
derived by hand; see tests/ut_ports/ut_a.py."""
from __future__ import annotations

import pytest

from msinspect import testing
from tests.ut_ports.ut_a import assert_port_holds, dump, ports

PORTS = [p for p in ports() if p.startswith("a_test_auto_parallel_shard_propagation")
         or p in ("a_test_stridedslice__test_new_axis_mask", "a_test_stridedslice__test_shrink_axis_mask",
                  "a_test_stridedslice__test_new_axis_mask_and_shrink_axis_mask")]


@pytest.mark.parametrize("name", PORTS)
def test_port_holds(name):
    assert_port_holds(name)


def test_new_axis_mask_in_pytest_form():
    """test_stridedslice.py::test_new_axis_mask, its assertion as a pytest assertion:

        for (k, v) in strategies.items():
            if re.search("ReLU", k) is not None:
                assert v == [[1, 1, 1, 2, 4, 8, 16]]

    (the ReLU has no strategy of its own: the planner propagated it from the StridedSlice's)."""
    d = dump("a_test_stridedslice__test_new_axis_mask")
    testing.assert_strategy(d, "relu", [[1, 1, 1, 2, 4, 8, 16]], set_by="planner")
    testing.assert_no_redistribution(d, "strided_slice", "relu")


def test_activation1_propagates_without_redistribution_in_pytest_form():
    """test_auto_parallel_shard_propagation.py::test_auto_parallel_activation1: Mul ((4, 4),
    (4, 4)) set by the user; Sigmoid and ReLU get ((4, 4),) from the propagation, nothing moved."""
    d = dump("a_test_auto_parallel_shard_propagation__test_auto_parallel_activation1")
    testing.assert_strategy(d, "sigmoid", [[4, 4]], set_by="planner")
    testing.assert_no_redistribution(d, "mul", "sigmoid")
    testing.assert_no_redistribution(d, "sigmoid", "relu")
