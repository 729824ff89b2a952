"""The networkx graph reproduces the IR's data flow."""
from __future__ import annotations

import networkx as nx

from msinspect import find_nodes, parse_file, to_networkx
from msinspect.model import FreeVarRef, NodeRef, ParamRef
from tests.conftest import FIXTURES


def test_seed_execute_chain():
    ir = parse_file(FIXTURES / "seed_002" / "18_execute_0185.excerpt.ir")
    g = to_networkx(ir)
    (matmul,) = find_nodes(g, name="matmul")
    (allreduce,) = find_nodes(g, op="AllReduce")
    (relu,) = find_nodes(g, name="relu")
    (slice_,) = find_nodes(g, op="StridedSlice")
    assert list(g.successors(matmul)) == [allreduce]
    assert list(g.successors(allreduce)) == [slice_]
    assert list(g.predecessors(relu)) == [slice_]
    assert nx.shortest_path(g, matmul, relu) == [matmul, allreduce, slice_, relu]
    assert g.nodes[relu]["in_strategy"] == ((2, 4),)
    assert g.nodes[relu]["output_shapes"] == ((8, 4),)
    assert g.nodes[matmul]["strategy_source"] == "user"
    assert list(find_nodes(g, scope="Default/network-WithLossCell/_backbone-Net", op="ReLU")) == [relu]


def test_every_reference_is_an_edge_with_its_position():
    ir = parse_file(FIXTURES / "manual_parallel_8rank" / "rank_0" / "21_validate_0076.ir.gz")
    g = to_networkx(ir)
    expected = set()
    for node in ir.nodes():
        for pos, value in enumerate(node.inputs):
            if isinstance(value, NodeRef):
                expected.add((f"{node.graph}/%{value.index}", f"{node.graph}/{node.ref}", pos))
            elif isinstance(value, (ParamRef, FreeVarRef)):
                expected.add((f"param:{value.name}", f"{node.graph}/{node.ref}", pos))
    got = {(u, v, d["position"]) for u, v, d in g.edges(data=True)}
    assert got == expected
    assert g.number_of_nodes() == ir.cnode_count + len({u for u, _, _ in expected if u.startswith("param:")})
    assert nx.is_directed_acyclic_graph(g)
    (matmul, *_) = find_nodes(g, op="PrimFunc_MatMul")
    assert g.nodes[matmul]["op"] == "MatMul"
