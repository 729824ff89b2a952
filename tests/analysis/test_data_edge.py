"""The data edge, defined once (msinspect.analysis.dataflow.flow.is_data_edge / data_view) and used by
every walk: an UpdateState's inputs, a Depend's inputs after the first and a Receive's input only
order; every other input carries a value. A hand-written 2.10-style graph:

    %1 = MatMul(x, w)            # the weight w feeds the MatMul
    %2 = ReLU(%1)
    %4 = Load(v, U)              # a weight v that nothing computes with
    %3 = Depend(%2, %4)          # ReLU's value goes on; %4 (the Load of v) only orders it
    %5 = Add(%3, b)              # so the Add reads ReLU's value and the bias b, never v
"""
from __future__ import annotations

from msinspect.analysis.dataflow.flow import consumers, data_view, is_data_edge, path_between
from msinspect.analysis.rank.params import param_rows
from msinspect.graph import node_id, to_networkx
from msinspect.parser import parse_text

IR = """# IR entry: @main_1
# Total subgraphs: 1

# Total params: 4
# Params:
%para1_x: <Tensor[Float32], (8, 16)>
%para2_w: <Ref[Tensor[Float32]], (16, 16), ref_key=w, is_parameter>  :  has_default
%para3_b: <Ref[Tensor[Float32]], (16), ref_key=b, is_parameter>  :  has_default
%para4_v: <Ref[Tensor[Float32]], (16, 16), ref_key=v, is_parameter>  :  has_default

subgraph attr:
subgraph instance: main_1 : 0x1
subgraph @main_1() {
  %1(CNode_1) = MatMul(%para1_x, %para2_w) {instance name: matmul} primitive_attrs: {in_strategy: ((2, 1), (1, 4))} {in_strategy: ((2, 1), (1, 4))}
      : (<Tensor[Float32], (8, 16)>, <Ref[Tensor[Float32]], (16, 16), ref_key=w, is_parameter>) -> (<Tensor[Float32], (8, 16)>)
  %2(CNode_2) = ReLU(%1) {instance name: relu} {in_strategy: ((2, 4))}
      : (<Tensor[Float32], (8, 16)>) -> (<Tensor[Float32], (8, 16)>)
  %4(CNode_4) = Load(%para4_v, U)
      : (<Ref[Tensor[Float32]], (16, 16), ref_key=v, is_parameter>, <UMonad, NoShape>) -> (<Tensor[Float32], (16, 16)>)
  %3(CNode_3) = Depend(%2, %4)
      : (<Tensor[Float32], (8, 16)>, <Tensor[Float32], (16, 16)>) -> (<Tensor[Float32], (8, 16)>)
  %5(CNode_5) = Add(%3, %para3_b) {instance name: add} {in_strategy: ((2, 4), (4))}
      : (<Tensor[Float32], (8, 16)>, <Ref[Tensor[Float32]], (16), ref_key=b, is_parameter>) -> (<Tensor[Float32], (8, 16)>)
  Return(%5)
      : (<Tensor[Float32], (8, 16)>)
}


"""


def _graph():
    ir = parse_text(IR, "step_parallel_begin_0001.ir")
    graph = to_networkx(ir)
    keys = {n.instance_name or n.op: node_id(n) for n in ir.nodes() if n.index is not None}
    return ir, graph, keys


def test_depend_passes_on_its_first_input_only():
    _, graph, keys = _graph()
    assert is_data_edge(graph, keys["relu"], keys["Depend"])
    assert not is_data_edge(graph, keys["Load"], keys["Depend"])
    view = data_view(graph)
    assert keys["Load"] not in set(view.predecessors(keys["Depend"]))
    assert consumers(graph, keys["relu"]) == [keys["add"]]
    assert consumers(graph, keys["Load"]) == []  # the Load only orders the Depend


def test_walks_back_follow_data_edges_only():
    _, graph, keys = _graph()
    assert path_between(graph, keys["relu"], keys["add"]) == [keys["Depend"]]
    assert path_between(graph, "param:para4_v", keys["add"]) is None


def test_a_weight_is_laid_out_by_the_operator_that_reads_its_value():
    """w is read by matmul (its input 1, cut (1, 4)); v only orders the Depend, so no operator
    reads it and it has no layout, rather than the Add's."""
    ir, graph, _ = _graph()
    rows = {r["param"]: r for r in param_rows(ir, graph=graph)}
    assert "v" not in rows
    assert rows["w"]["consumer"] == "matmul" and rows["w"]["in_strategy"] == (1, 4)
    assert rows["b"]["consumer"] == "add" and rows["b"]["in_strategy"] == (4,)


def test_load_reads_its_parameter_and_is_only_ordered_by_the_rest():
    """``Load(w, %u)``: w's value goes on; an UpdateState given as its second input only orders it."""
    ir = parse_text(IR.replace("Load(%para4_v, U)", "Load(%para4_v, %1)"), "step_parallel_begin_0001.ir")
    graph = to_networkx(ir)
    keys = {n.instance_name or n.op: node_id(n) for n in ir.nodes() if n.index is not None}
    assert is_data_edge(graph, "param:para4_v", keys["Load"])
    assert not is_data_edge(graph, keys["matmul"], keys["Load"])


#: A weight w reaches its MatMul through a chain (Load, AllGather, Depend) and a Neg through its
#: Load only; the Neg is written after the MatMul though the walk meets it first.
CHAIN = """# IR entry: @main_1
# Total subgraphs: 1

# Total params: 2
# Params:
%para1_x: <Tensor[Float32], (8, 16)>
%para2_w: <Ref[Tensor[Float32]], (16, 16), ref_key=w, is_parameter>  :  has_default

subgraph attr:
subgraph instance: main_1 : 0x1
subgraph @main_1() {
  %1(CNode_1) = Load(%para2_w, U)
      : (<Ref[Tensor[Float32]], (16, 16), ref_key=w, is_parameter>, <UMonad, NoShape>) -> (<Tensor[Float32], (16, 16)>)
  %2(CNode_2) = AllGather(%1) {instance name: gather}
      : (<Tensor[Float32], (16, 16)>) -> (<Tensor[Float32], (16, 16)>)
  %3(CNode_3) = Depend(%2, %para1_x)
      : (<Tensor[Float32], (16, 16)>, <Tensor[Float32], (8, 16)>) -> (<Tensor[Float32], (16, 16)>)
  %4(CNode_4) = MatMul(%para1_x, %3) {instance name: matmul} {in_strategy: ((2, 1), (1, 4))}
      : (<Tensor[Float32], (8, 16)>, <Tensor[Float32], (16, 16)>) -> (<Tensor[Float32], (8, 16)>)
  %5(CNode_5) = Neg(%1) {instance name: neg}
      : (<Tensor[Float32], (16, 16)>) -> (<Tensor[Float32], (16, 16)>)
  %6(CNode_6) = MakeTuple(%4, %5)
      : (<Tensor[Float32], (8, 16)>, <Tensor[Float32], (16, 16)>) -> (<Tuple[Tensor[Float32]*2], TupleShape((8, 16), (16, 16))>)
  Return(%6)
      : (<Tuple[Tensor[Float32]*2], TupleShape((8, 16), (16, 16))>)
}


"""


def test_walks_give_file_order_and_the_trail_nearest_first():
    ir = parse_text(CHAIN, "step_parallel_end_0001.ir")
    graph = to_networkx(ir)
    keys = {n.instance_name or n.op: node_id(n) for n in ir.nodes() if n.index is not None}
    assert consumers(graph, "param:para2_w") == [keys["matmul"], keys["neg"]]
    assert path_between(graph, "param:para2_w", keys["matmul"]) == [keys["Depend"], keys["gather"], keys["Load"]]
    assert path_between(graph, "param:para2_w", keys["neg"]) == [keys["Load"]]
    assert path_between(graph, "param:para1_x", keys["neg"]) is None  # x only orders the Depend
    assert [row["consumer"] for row in param_rows(ir, graph=graph)] == ["matmul"]
