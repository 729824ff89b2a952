"""The kinds MindSpore's tests need (docs/spec-language.md), on seed 002's dry run
(fixtures/sharding_propagation_dryrun_8rank), each fact worked out by hand from its network
(train_jobs/networks.py ``Net``) before the dump was read:

- ``matmul`` = x (16, 32) @ w (32, 16), shard ((2, 4), (4, 1)) on 8 ranks: device matrix (2, 4).
  w's first dimension is cut by 4, the matrix's last axis (MindSpore numbers axes from the
  right: 0), its second is not cut: tensor map (0, -1), slice (8, 16), split evenly; no optimizer
  shard in this job, so no optimizer-shard group; no field.
- The contracted dimension (32) is cut by 4, so each rank holds a partial sum: an AllReduce (op
  sum) over the 4 ranks of its batch half takes the MatMul's output, before the ReLU.
- Two MatMuls a rank (``matmul``, ``matmul2``) at step_parallel_end (no backward written yet);
  no AlltoAll (no experts).
"""
from __future__ import annotations

import pytest

from msinspect import check_dump
from msinspect.spec import load_spec
from msinspect.testing import (ExpectationFailed, assert_absent, assert_attrs, assert_comm_after, assert_count,
                               assert_feeds, assert_inputs, assert_layout)
from tests.conftest import FIXTURES

SP = FIXTURES / "sharding_propagation_dryrun_8rank"
END = "step_parallel_end"

SPEC = '''
[job]
stage = "step_parallel_end"

[[expect.layout]]
param = "w"
device_matrix = [2, 4]
tensor_map = [0, -1]
slice_shape = [8, 16]
field_size = 0
uniform_split = true
opt_shard_group = ""

[[expect.inputs]]
op = "AllReduce-0"
include = ["MatMul-0"]

[[expect.attrs]]
op = "AllReduce-0"
attrs = {op = "sum"}

[[expect.feeds]]
from = "MatMul-0"
to = "ReLU-0"
through = ["comm"]

[[expect.comm]]
kind = "AllReduce"
after = "MatMul-0"
group_size = 4

[[expect.count]]
op = "type:MatMul"
count = 2

[[expect.absent]]
op = "type:AlltoAll"
'''


def test_a_spec_in_the_language_holds(tmp_path):
    path = tmp_path / "ut_style.toml"
    path.write_text(SPEC)
    report = check_dump(load_spec(path), SP)
    failed = [(o.expectation.label, o.expected, o.found) for o in report.outcomes if not o.passed]
    assert failed == [] and len(report.outcomes) >= 7


def test_the_same_in_the_pytest_api():
    assert assert_layout(SP, "w", device_matrix=[2, 4], tensor_map=[0, -1], slice_shape=[8, 16], stage=END).passed
    assert assert_inputs(SP, "AllReduce-0", ["MatMul-0"], stage=END).passed
    assert assert_attrs(SP, "AllReduce-0", {"op": "sum"}, stage=END).passed
    assert assert_feeds(SP, "MatMul-0", "ReLU-0", through=["comm"], stage=END).passed
    assert assert_comm_after(SP, "AllReduce", "MatMul-0", group_size=4, stage=END).passed
    assert assert_count(SP, op="type:MatMul", count=2, stage=END).passed
    assert assert_absent(SP, "type:AlltoAll", stage=END).passed


@pytest.mark.parametrize(("call", "shown"), [
    (lambda: assert_layout(SP, "w", tensor_map=[-1, 0], stage=END), "tensor_map [0, -1]"),
    (lambda: assert_inputs(SP, "AllReduce-0", ["ReLU-0"], stage=END), "MatMul-0"),
    (lambda: assert_attrs(SP, "AllReduce-0", {"op": "max"}, stage=END), "op = 'sum'"),
    (lambda: assert_feeds(SP, "MatMul-0", "ReLU-0", stage=END), "through AllReduce-0"),     # not direct
    (lambda: assert_comm_after(SP, "AllReduce", "MatMul-0", group_size=8, stage=END), "in group(s)"),
    (lambda: assert_count(SP, op="type:MatMul", count=3, ranks=[0], stage=END), "rank 0: 2"),
    (lambda: assert_absent(SP, "type:AllReduce", stage=END), "on ranks 0-7"),
    (lambda: assert_layout(SP, "ww", slice_shape=[8, 16], stage=END), "cannot tell: no weight named 'ww'"),
])
def test_each_failure_says_what_was_found_with_the_ir_line(call, shown):
    with pytest.raises(ExpectationFailed) as exc:
        call()
    message = str(exc.value)
    assert shown in message.split("found:", 1)[1]
    if "cannot tell" not in shown:
        assert "step_parallel_end" in message.split("found:", 1)[1]   # the IR line, file:line


def test_a_tuple_constant_is_an_input_too():
    """A tuple constant in ``include`` is compared element by element: the network of the ported
    test_not_equal_cast_mul_need_allgather_dyn (fixtures/ut/nets/, line 69) reshapes to (-1,), so
    its Reshape takes the shape (-1,) (the UT wrote (-1), which Python reads as the number -1)."""
    dump = FIXTURES / "ut" / "b_test_dynamic_shape_graph_utils__test_not_equal_cast_mul_need_allgather_dyn"
    assert assert_inputs(dump, "Reshape-0", [[-1]], stage=END).passed
    with pytest.raises(ExpectationFailed):
        assert_inputs(dump, "Reshape-0", [-1], stage=END)          # the number, as the UT wrote it
    with pytest.raises(ExpectationFailed):
        assert_inputs(dump, "Reshape-0", [[-1, 1]], stage=END)
