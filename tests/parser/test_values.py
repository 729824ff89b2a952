"""Values and abstracts become real Python values, never text for callers to re-parse."""
from __future__ import annotations

import pytest

from msinspect import parse_text
from msinspect.model import FreeVarRef, GraphRef, NodeRef, ParamRef, PrimitiveValue, TensorValue

HEADER = "# IR entry: @g\n# Total subgraphs: 1\n\nsubgraph attr:\nsubgraph @g(%para1_x) {\n"
FOOTER = "  Return(%0)\n      : (<Tensor[Float32], (2)>)\n}\n\n\n"


def one_node(line: str, types: str = ": () -> (<Tensor[Float32], (2)>)"):
    ir = parse_text(HEADER + "  " + line + "\n      " + types + "\n" + FOOTER)
    return ir.subgraphs[0].nodes[0]


@pytest.mark.parametrize("text, value", [
    ("I64(0)", 0), ("I64(-3)", -3), ("Bool(1)", True), ("Bool(0)", False), ("F32(0.5)", 0.5),
    ("F32(1)", 1.0), ('"sum"', "sum"), ("None", None), ("(I64(1), I64(2))", (1, 2)),
    ("(I64(1))", (1,)), ("()", ()), ('[x1, x2]', ["x1", "x2"]), ("true", True), ("false", False),
    ("(2, 4)", (2, 4)), ("((2, 4), (4, 1))", ((2, 4), (4, 1))), ("0-1-2-3", "0-1-2-3"),
    ("4-6301172352641561019", "4-6301172352641561019"), ("F32(1e-05)", 1e-05),
    ("Tensor(F32)", "Tensor(F32)"),
])
def test_scalar_and_sequence_values(text, value):
    node = one_node(f"%0(y) = PrimFunc_Foo(%para1_x) primitive_attrs: {{a: {text}}}")
    got = node.primitive_attrs["a"]
    assert got == value and type(got) is type(value)


def test_references():
    node = one_node("%0(y) = Foo(%para1_x, $(@outer:para3_w), @other_graph, %0, UMonad[U])")
    assert node.inputs == (ParamRef("para1_x"), FreeVarRef("outer", "para3_w"), GraphRef("other_graph"),
                           NodeRef(0), PrimitiveValue("UMonad", ("U",)))
    assert ParamRef("para3_layer1.weight").short_name == "layer1.weight"


def test_tensor_constant():
    node = one_node("%0(y) = Foo(Tensor(shape=[2, 1], dtype=Float32, value=\n[[ 1.0]\n [ 2.0]]))")
    (tensor,) = node.inputs
    assert isinstance(tensor, TensorValue)
    assert (tensor.shape, tensor.dtype) == ((2, 1), "Float32")
    assert "2.0" in tensor.value_text


def test_call_and_strategy_braces():
    node = one_node("%0(y) = call @inner(%para1_x) {instance name: f} {in_strategy: ((8, 1)), out_strategy: ((1, 8))}")
    assert (node.kind, node.callee, node.instance_name) == ("call_graph", GraphRef("inner"), "f")
    assert node.strategy.in_strategy == ((8, 1),)
    assert node.strategy.out_strategy == ((1, 8),)
    assert node.strategy.user_set is False


@pytest.mark.parametrize("text, kind, dtype, shape", [
    ("<Tensor[Float32], (16, 32)>", "Tensor", "Float32", (16, 32)),
    ("<Tensor[Int32], ()>", "Tensor", "Int32", ()),
    ("<Tensor[Float32], (-1, 32)>", "Tensor", "Float32", (-1, 32)),
    ("<Ref[Tensor[Float32]], (4, 16), ref_key=w2, is_parameter>", "Ref", "Float32", (4, 16)),
    ("<Ref[Tensor(F32)], (16, 16), ref_key=:w2>", "Ref", "Float32", (16, 16)),
    ("<Tensor[Float32]x[const vector][6, 1, 5, 5]>", "Tensor", "Float32", (6, 1, 5, 5)),
    ("<Int64, NoShape>", "Int64", "Int64", None),
    ("<UMonad, NoShape>", "UMonad", "UMonad", None),
    ("<null>", "null", None, None),
])
def test_abstracts(text, kind, dtype, shape):
    node = one_node("%0(y) = Foo(%para1_x)", f": ({text}) -> (<Tensor[Float32], (2)>)")
    (abstract,) = node.input_types
    assert (abstract.kind, abstract.dtype, abstract.shape) == (kind, dtype, shape)
    assert abstract.text == text


def test_tuple_abstract_element_shapes():
    node = one_node("%0(y) = Foo(%para1_x)",
                    ": (<Tuple[Tensor[Float32]*2], TupleShape((2, 3), (4)), elements_use_flags={[const vector]{1, 1}}>) -> (<Tensor[Float32], (2)>)")
    assert node.input_types[0].elements == ((2, 3), (4,))
