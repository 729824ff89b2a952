"""Ports of MindSpore's optimizer-shard unit tests (tests/ut/python/parallel/test_parallel_optimizer.py)
through the dry run: each port's scrubbed dump passes its spec (fixtures/ut/<name>.toml: each
weight's layout and optimizer-shard group derived by hand, and the UT's own assertions on
parameter_layout_dict), and two of them in pytest form. The pipeline ports with optimizer parallel
are in test_b_pipeline.py, the Layout-extension ones in test_b_layout.py."""
from __future__ import annotations

import pytest

from tests.ut_ports.b_ports import check_port, dump_of, ports, msinspect_helper

PORTS = ports("test_parallel_optimizer__")


@pytest.mark.parametrize("name", PORTS)
def test_port_passes_its_spec(name):
    check_port(name)


def test_auto_parallel_momentum_3_in_pytest_form():
    """test_parallel_optimizer.py::test_auto_parallel_momentum_3, lines 135-136: weight1 has no
    optimizer-shard group; weight2's group is of dp = 4 ranks (its name starts with "4"): the
    AllGather of weight2 before fc2 over ranks 0, 8, 16, 24 says which."""
    dump = dump_of("b_test_parallel_optimizer__test_auto_parallel_momentum_3")
    assert_layout = msinspect_helper("assert_layout")
    assert_layout(dump, "weight1", device_matrix=[4, 8], tensor_map=[0, -1], slice_shape=[6, 64],
                  opt_shard_group="", stage="step_parallel_end")
    assert_layout(dump, "weight2", device_matrix=[4, 4, 2], tensor_map=[1, 0], slice_shape=[16, 8],
                  stage="step_parallel_end")
    msinspect_helper("assert_comm_before")(dump, "AllGather", "fc2", [[0, 8, 16, 24]], stage="step_parallel_end")
    msinspect_helper("assert_comm_before")(dump, "_MirrorOperator", "fc1", [[0, 8, 16, 24]], stage="step_parallel_end")


def test_user_define_threshold_in_pytest_form():
    """test_parallel_optimizer.py::test_user_define_threshold, line 190: with a 100 KB threshold,
    weight2 (72 KB) has no optimizer-shard group; no optimizer AllGather at all."""
    dump = dump_of("b_test_parallel_optimizer__test_user_define_threshold")
    msinspect_helper("assert_layout")(dump, "weight2", opt_shard_group="", stage="step_parallel_end")
    msinspect_helper("assert_absent")(dump, "re:^parallel_optimizer_allgather", stage="step_parallel_end")
    msinspect_helper("assert_count")(dump, "_MirrorOperator", ranks=[0], min=2, max=2, stage="step_parallel_end")
