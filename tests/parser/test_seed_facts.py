"""Facts the seed document 002 states about its MindSpore 2.2 sample IR come out of the model."""
from __future__ import annotations

from msinspect import parse_file
from tests.conftest import FIXTURES

SEED = FIXTURES / "seed_002"


def test_user_set_matmul_strategy():
    strategy = parse_file(SEED / "step_parallel_begin_0041.excerpt.ir").node("matmul").strategy
    assert strategy.in_strategy == ((2, 4), (4, 1))
    assert strategy.user_set is True
    assert strategy.source == "user"


def test_relu_strategy_was_inferred():
    ir = parse_file(SEED / "step_parallel_begin_0041.excerpt.ir")
    assert ir.node("relu").strategy.in_strategy == ((2, 4),)
    assert ir.node("relu").strategy.source == "planner"
    assert ir.node("matmul2").strategy.source == "planner"


def test_global_shapes_before_the_parallel_pass():
    matmul = parse_file(SEED / "step_parallel_begin_0041.excerpt.ir").node("matmul")
    assert [a.shape for a in matmul.input_types] == [(16, 32), (32, 16)]
    assert matmul.output_shape == (16, 16)
    assert matmul.scope == "Default/network-WithLossCell/_backbone-Net"


def test_allreduce_over_ranks_0_to_3_follows_matmul():
    ir = parse_file(SEED / "18_execute_0185.excerpt.ir")
    graph = ir.subgraphs[0]
    allreduce = next(n for n in graph.nodes if n.op == "AllReduce")
    matmul = ir.node("matmul")
    assert allreduce.inputs[0].index == matmul.index
    assert allreduce.primitive_attrs["rank_list"] == (0, 1, 2, 3)
    assert allreduce.primitive_attrs["group_ranks"] == "0-1-2-3"
    assert allreduce.primitive_attrs["op"] == "sum"
    assert allreduce.primitive_attrs["no_eliminate"] is True
    assert allreduce.cnode_attrs == {"comm_reuse": True}


def test_redistribution_strided_slice_and_per_rank_shapes():
    ir = parse_file(SEED / "18_execute_0185.excerpt.ir")
    slice_ = next(n for n in ir.nodes() if n.op == "StridedSlice")
    assert slice_.name.startswith("redistribution_op_")
    assert slice_.input_types[0].shape == (8, 16)
    assert slice_.output_shape == (8, 4)
    assert slice_.inputs[1:] == ((0, 0), (8, 4), (1, 1))
    assert ir.node("relu").output_shape == (8, 4)
    assert ir.node("matmul").output_shape == (8, 16)
    assert ir.node("matmul").sources[0].endswith("matmul.py(45)/        out = self.matmul(x, self.weight)/")
