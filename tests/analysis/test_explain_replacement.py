"""explain on the operators of a graph MindSpore put in place of another: zoo 20's two
``enable_nd_tp`` MatMuls (MindSpore's documentation sample of 2-D tensor parallel).

By hand, from the script (fixtures/zoo/nets/20_doc_high_dimension_tp.py, its docstring) and the
tutorial page, before the answers were read:

- ``Layout((2, 4), ("x", "y"))``: rank r sits at x = r // 4, y = r % 4. The "y" group of rank 0
  is ranks 0-3 (one x), its "x" group ranks 0 and 4 (one y).
- matmul1 ((1, 8), (2, 4)), set by the user: its activation (8192, 256) has its contracted
  dimension 1 cut by ("x", "y"), 8 ways; its weight's rows by "x" only, 2 ways. So the activation
  is gathered over "y" (4 ranks) along dimension 1: MindSpore's AllGather joins along dimension 0,
  so a Split of its output along dimension 0 into 4 parts and a Concat of them along dimension 1
  follow it. The product is then a partial sum over "x" (2 ranks), reduce-scattered along the
  output's dimension 0 of the transposed product: a Transpose before the ReduceScatter and one
  after it.
- matmul2 ((1, 8), (4, 2)): the other way round: gathered over "x" (ranks 0, 4: the Split makes 2
  parts), reduce-scattered over "y" (ranks 0-3).
- Those Split, Concat, Transposes and the new MatMul carry no strategy: each is of the graph put
  in place of matmul1 or matmul2, set by the user as that one is; the new MatMul reads its
  activation through the AllGather (and the Split and Concat) and gives its output through the
  ReduceScatter (and the Transposes), not through a real operator between.
- At validate the operators of both graphs print one name (both MatMuls ``...MatMul6``): which
  MatMul each stands for the file cannot tell; step_parallel_end can.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain
from msinspect.analysis.dataflow.flow import around_collective, consumers, producer
from msinspect.analysis.dataflow.file_view import view_of
from tests.analysis.explain_helpers import ZOO, read

ZOO20 = ZOO / "20_doc_high_dimension_tp"


@pytest.fixture(scope="module")
def at_end():
    return {e.line: e for e in explain(read(ZOO20, "step_parallel_end"), r"re:^\d", rank=0)}


def _by_op(at_end, op):
    return sorted((e for e in at_end.values() if e.op == op), key=lambda e: e.line)


def test_each_operator_stands_for_the_matmul_it_replaced(at_end):
    assert {e.origin for e in at_end.values()} == {"matmul1", "matmul2"}
    for e in at_end.values():
        assert (e.subject, e.verdict, e.set_by) == ("replacement", "user", "user"), e.headline
        assert e.in_strategy == (((1, 8), (2, 4)) if e.origin == "matmul1" else ((1, 8), (4, 2)))
        assert not e.cannot_tell


def test_the_split_and_concat_gather_along_the_contracted_dimension(at_end):
    first, second = _by_op(at_end, "Split")
    assert (first.origin, second.origin) == ("matmul1", "matmul2")
    assert "along dimension 0 into 4 parts" in first.headline      # the "y" group: 4 ranks
    assert "along dimension 0 into 2 parts" in second.headline     # the "x" group: 2 ranks
    for concat in _by_op(at_end, "Concat"):
        assert "a gather along dimension 1" in concat.headline      # the contracted dimension


def test_the_transposes_bring_the_scattered_dimension_first_and_back(at_end):
    for origin in ("matmul1", "matmul2"):
        before, after = [e for e in _by_op(at_end, "Transpose") if e.origin == origin]
        assert "brings the dimension to scatter first" in before.headline
        assert "puts the dimensions back" in after.headline


def test_the_new_matmul_is_between_its_gather_and_its_scatter(at_end):
    one, two = _by_op(at_end, "MatMul")
    assert "its input 0 comes through AllGather over ranks 0-3" in one.facts
    assert "its output goes through ReduceScatter over ranks 0, 4" in one.facts
    assert "its input 0 comes through AllGather over ranks 0, 4" in two.facts
    assert "its output goes through ReduceScatter over ranks 0-3" in two.facts


def test_the_data_flow_passes_the_operators_around_the_collectives():
    """The walks' answer: the AllGather's reader is the new MatMul, the ReduceScatter's source is
    it, and relu reads matmul1's new MatMul (through the ReduceScatter and Transposes)."""
    view = view_of(read(ZOO20, "step_parallel_end").results[0].file)
    graph = view.graph
    key = {n.instance_name: k for k, n in ((k, graph.nodes[k].get("node")) for k in graph) if n is not None}
    around = {n.op for k, n in ((k, graph.nodes[k].get("node")) for k in graph)
              if n is not None and around_collective(graph, k)}
    assert around == {"Split", "Concat", "Transpose"}
    matmul = key["3815130986688897272MatMul8"]
    assert not around_collective(graph, matmul)
    gather = key["forward_op3815130986688897272AllGather1"]
    assert consumers(graph, gather) == [matmul]
    assert producer(graph, key["forward_op3815130986688897272ReduceScatter10"]) == matmul
    assert producer(graph, key["relu"]) == matmul


def test_at_validate_which_matmul_is_not_told():
    found = explain(read(ZOO20, "validate"), r"re:^\d", rank=0)
    assert {e.op for e in found} == {"Split", "Concat", "MatMul", "Transpose"}
    for e in found:
        assert (e.subject, e.verdict) == ("replacement", "cannot tell")
        assert any("step_parallel_end tells" in why for why in e.cannot_tell), e.cannot_tell
