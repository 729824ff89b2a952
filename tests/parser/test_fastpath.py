"""Node items read by template and type lines by skeleton (parser/fastpath.py, parser/typelines.py)
must give the model Lark gives when it reads every token: the same nodes, values, lines, and the
same errors at the same positions."""
from __future__ import annotations

from pathlib import Path

import pytest

from msinspect.errors import IRParseError
from msinspect.model import FreeVarRef, NodeRef, canonical
from msinspect.parser import core, typelines

ROOT = Path(__file__).resolve().parents[2]
HEADER = "# IR entry: @g\n# Total subgraphs: 1\n\nsubgraph attr:\nsubgraph @g(%para1_x) {\n"
FOOTER = "  Return(%3)\n      : (<Tensor[Float32], (2)>)\n}\n\n\n"


def _read(text: str, name: str, lenient: bool, fast: bool, monkeypatch):
    monkeypatch.setenv("MSINSPECT_PARSER", "fast" if fast else "reference")
    core._parser.cache_clear()
    try:
        return canonical(core.parse_text(text, name, lenient=lenient))
    except IRParseError as err:
        return "error: " + str(err)
    finally:
        core._parser.cache_clear()


CASES = {
    # a reference inside a string and a tuple of references: no template holds them
    "string": '  %3(y) = PrimFunc_Foo(%1, "a %2 b") {instance name: foo}\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n      # Scope: (Default)\n',
    "tuple": "  %3(y) = MakeTuple((%1, %2), %para1_x)\n      : (<Tuple[Tensor[Float32]*2], TupleShape((2), (2))>) -> (<Tensor[Float32], (2)>)\n",
    # free variables of an enclosing graph, one with a "%" in its graph's name, one in a string
    "free": '  %3(y) = Load($(@g0:para1_x), %2, $(@g%1:para2_w), "$(@g:x)")\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n',
    # a reference longer than any MindSpore writes: refused, at the same place
    "long": "  %3(y) = PrimFunc_Foo(%" + "1" * 70 + ")\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n",
    # an operator named like a keyword, a note line Lark reads as a marker, a bad note line
    "keyword": "  %3(y) = call(%1)\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n",
    "marker": "  %3(y) = PrimFunc_Foo(%1)\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n#------------------------> 1\n",
    "notes": "  %3(y) = PrimFunc_Foo(%1)\n      # Scope: (Default)\n        stray text\n",
    # a type line whose abstracts nest deeper than the skeleton's pattern, a kernel object type
    "nested": "  %3(y) = PrimFunc_Foo(%1)\n      : (<Tuple[<A, <B, <C>>>], NoShape>, Tensor) -> (<Tensor[Float32], (2)>)\n",
    # two nodes, blank lines between, attributes after the operands, a strategy before the types
    "two": "  %2(a) = PrimFunc_Foo(%1) primitive_attrs: {x: I64(1)}\n\n\n  %3(b) = PrimFunc_Bar(%2, Bool(0))\n      : (<Ref[Tensor[Float32]], (4, 2), ref_key=w, is_parameter>) -> (<Tensor[Float32], (2)>)\n",
    "strategy": "  %3(y) = PrimFunc_Foo(%1)\n      {in_strategy: ((2, 1))}      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n",
    # a type line and comments (read in one match), then what that match must not take for
    # the end of the node: a kernel type line, a comment line at column 0, a marker, blank
    # lines and trailing blanks, a comment continued over more lines
    "types_notes": "  %2(a) = PrimFunc_Foo(%1)\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)  \n"
                   "      # Scope: (Default)\t\n\n\n"
                   "  %3(b) = PrimFunc_Foo(%2)\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n"
                   "      # Scope: (Default)\n      # In file a.py:1\n          x = 1\n"
                   "      : (Tensor) -> (Tensor)\n",
    "notes_then_comment": "  %3(y) = PrimFunc_Foo(%1)\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n"
                          "      # Scope: (Default)\n# a comment at column 0\n",
    "notes_then_marker": "  %3(y) = PrimFunc_Foo(%1)\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n"
                         "      # Scope: (Default)\n#------------------------> 1\n",
    # operands and abstracts written 20 times (read from an exemplar of two and three): node
    # references, constants, lists (each node its own), items holding ", " and strings holding
    # one (no exemplar), a run with another item after it, a run among the outputs, kernel types
    "runs": "  %3(y) = MakeTuple(" + ", ".join(["%1"] * 20) + ")\n      : (" + ", ".join(["<Tensor[Float32], (2)>"] * 20)
            + ") -> (<Tensor[Float32], (2)>)\n"
            "  %4(z) = MakeTuple(" + ", ".join(["Bool(1)"] * 20) + ")\n      : (<Bool, NoShape>) -> ("
            + ", ".join(["<Tensor[Float32], (2)>"] * 20) + ")\n"
            "  %5(w) = MakeTuple(" + ", ".join(["[1, 2]"] * 20) + ", (I64(1), I64(2)))\n"
            "  %6(v) = MakeTuple(" + ", ".join(["(I64(1), I64(2))"] * 20) + ")\n      : (" + ", ".join(["Tensor"] * 20) + ")\n"
            "  %7(u) = MakeTuple(" + ", ".join(['"a, b"'] * 20) + ")\n"
            "  %8(t) = MakeTuple(" + ", ".join(["%para1_x"] * 20) + ")\n      : (<Tensor[Float32], (2)>, Tensor, "
            + ", ".join(["<Tensor[Float32], (2)>"] * 20) + ") -> (<Tensor[Float32], (2)>)\n",
    # tuples whose element shapes repeat (read by exemplar), a scalar and an empty shape among
    # them, negative dimensions, one with a tail the exemplar does not cover, one broken inside
    "tuples": "  %3(y) = MakeTuple(%1, %1, %1, %1)\n      : (<Tuple[Tensor[Float32]*4], TupleShape((2), (2), (), (2))>, "
              "<Tuple[Bool*3], TupleShape(NoShape, NoShape, NoShape)>) -> (<Tuple[Int64,Tensor[Float32]*3], "
              "TupleShape(NoShape, (-1, 8), (-1, 8), (4, 8))>)\n"
              "  %4(z) = MakeTuple(%3, %3)\n      : (<Tuple[Bool*2], TupleShape(NoShape, NoShape), "
              "elements_use_flags={[const vector]{[0]:{1}, [1]:{1}}}>) -> (<Tuple[F*2], TupleShape((2), (2), (2>)\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_edge_cases_read_the_same_both_ways(name, monkeypatch):
    text = HEADER + "  %1(x) = PrimFunc_Id(%para1_x)\n" + CASES[name] + FOOTER
    for lenient in (False, True):
        fast = _read(text, name + ".ir", lenient, True, monkeypatch)
        assert fast == _read(text, name + ".ir", lenient, False, monkeypatch)


PARAM_HEADER = "# IR entry: @g\n# Total subgraphs: 1\n\n# Attrs:\ntraining: 1\n\n# Total params: 2\n# Params:\n"
PARAM_CASES = {
    "plain": "%para1_x: <Tensor[Float32], (2)> : [2]\n%para2_w: <Ref[Tensor[Float32]], (4, 2), ref_key=w, is_parameter>  :  has_default\n",
    "no_tail": "%para1_x: <Tensor[Float32], (2)>\n",
    "spaced": "%para1_x :<Tensor[Float32], (2)>:has_default\n\n\n%para2_w:\t<Tensor[Float32], (2)>   :   [2]   \n",
    "crlf": "%para1_x: <Tensor[Float32], (2)> : [2]\r\n%para2_w: <Tensor[Float32], (2)>\r\n",
    # deeper than the pattern, two abstracts, an abstract over two lines, text after the abstract
    "deep": "%para1_x: <Tuple[<A, <B, <C>>>], NoShape>  :  has_default\n",
    "two_abstracts": "%para1_x: <A, NoShape> <B, NoShape>\n",
    "wrapped": "%para1_x: <Tensor[Float32],\n (2)>\n",
    "junk": "%para1_x: <Tensor[Float32], (2)> junk\n",
    "unclosed": "%para1_x: <Tensor[Float32], (2)\n",
    "huge_dims": "%para1_x: <Tensor[Float32], (" + "9" * 70 + ")>  :  has_default\n",
}


@pytest.mark.parametrize("name", sorted(PARAM_CASES))
def test_parameter_lines_read_the_same_both_ways(name, monkeypatch):
    text = PARAM_HEADER + PARAM_CASES[name] + "\nsubgraph attr:\nsubgraph @g(%para1_x) {\n" + FOOTER
    for lenient in (False, True):
        fast = _read(text, name + ".ir", lenient, True, monkeypatch)
        assert fast == _read(text, name + ".ir", lenient, False, monkeypatch)


def test_parameter_lines_are_read_by_template(monkeypatch):
    """300 weights of one spelling ask Lark for one parameter-line template; each keeps its own
    name, shape, reference key and line."""
    text = PARAM_HEADER + "".join(
        f"%para{i}_blocks.{i}.w: <Ref[Tensor[Float32]], ({i}, 8), ref_key=blocks.{i}.w, is_parameter>  :  has_default\n"
        for i in range(1, 301)) + "\nsubgraph attr:\nsubgraph @g(%para1_x) {\n" + FOOTER
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    core._parser.cache_clear()
    ir = core.parse_text(text, "p.ir", lenient=True)
    assert len(core._fast().param_templates) == 1
    p = ir.params[41]  # %para42
    assert (p.name, p.abstract.shape, p.abstract.ref_key, p.has_default, p.line) == \
        ("para42_blocks.42.w", (42, 8), "blocks.42.w", True, PARAM_HEADER.count("\n") + 42)
    core._parser.cache_clear()


def test_node_items_are_read_by_template(monkeypatch):
    """The fast reading is used (not only Lark's): a dump of 200 nodes asks Lark for one template."""
    text = HEADER + "".join(
        f"  %{i}(n{i}) = PrimFunc_Add(%{i - 1}, %para1_x) {{instance name: add}}\n"
        f"      : (<Tensor[Float32], ({i}, 8)>, <Tensor[Float32], ({i}, 8)>) -> (<Tensor[Float32], ({i}, 8)>)\n"
        f"      # Scope: (Default/block-{i})\n" for i in range(2, 202)) + FOOTER.replace("%3", "%201")
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    core._parser.cache_clear()
    ir = core.parse_text(text, "t.ir", lenient=True)
    reader = core._fast()
    assert len(reader.templates) == 1
    nodes = [n for n in ir.subgraphs[0].nodes if n.op == "Add"]
    assert len(nodes) == 200
    n = nodes[10]  # %12(n12): its own operands, shape, scope and line
    assert (n.index, n.inputs[0].index, n.inputs[1].name, n.output_types[0].shape, n.scope) == \
        (12, 11, "para1_x", (12, 8), "Default/block-12")
    assert n.line == 5 + 3 * 10 + 1
    core._parser.cache_clear()


def test_a_fused_call_of_every_weight_is_read_from_an_exemplar(monkeypatch):
    """A MakeTuple of 300 operands, one reference written 300 times, typed by 300 abstracts (a
    fused optimizer's, one per weight): Lark is given only short texts, and the node holds 300 of
    each (by hand: %1 each time, each of shape (2))."""
    node = ("  %3(y) = MakeTuple(" + ", ".join(["%1"] * 300) + ")\n      : ("
            + ", ".join(["<Tensor[Float32], (2)>"] * 300) + ") -> (<Tensor[Float32], (2)>)\n")
    text = HEADER + "  %1(x) = PrimFunc_Id(%para1_x)\n" + node + FOOTER
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    core._parser.cache_clear()
    lark = core._parser()[0]
    read, real = [], type(lark).parse
    monkeypatch.setattr(type(lark), "parse", lambda self, text, **kw: (read.append(len(text)), real(self, text, **kw))[1])
    ir = core.parse_text(text, "fused.ir")
    (fused,) = [n for n in ir.subgraphs[0].nodes if n.index == 3]
    assert fused.inputs == (NodeRef(1),) * 300
    assert [a.shape for a in fused.input_types] == [(2,)] * 300
    assert max(read) < len(node) / 10
    core._parser.cache_clear()


def test_a_window_of_many_errors_is_searched_for_templates_once(monkeypatch):
    """A lenient read of 300 broken nodes in one window: each node is offered to the fast reader a
    bounded number of times (the search starts again after each error, but not over what an
    earlier search found unreadable: before, 300 errors made some 45,000 offers); the model is
    Lark's."""
    text = HEADER + "".join(f"  %{i}(y) = PrimFunc_Foo(%para1_x, ]]] {i}\n      : (<Tensor[Float32], (2)>)\n"
                            for i in range(1, 301)) + FOOTER
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    core._parser.cache_clear()
    offers = []
    reader_type = type(core._fast())
    original = reader_type.node

    def counted(self, *args):
        offers.append(args[1])
        return original(self, *args)

    monkeypatch.setattr(reader_type, "node", counted)
    ir = core.parse_text(text, "bad.ir", lenient=True)
    assert len(ir.diagnostics) >= 300
    assert len(offers) <= 3 * 300, f"{len(offers)} offers for 300 nodes"
    monkeypatch.setattr(reader_type, "node", original)
    assert canonical(ir) == _read(text, "bad.ir", True, False, monkeypatch)
    core._parser.cache_clear()


def test_a_tuple_of_repeated_shapes_asks_lark_for_a_short_exemplar(monkeypatch):
    """A fused optimizer's tuple of 1,200 element shapes (25 KB in zoo 09, 113 ms for Lark) is read
    directly once Lark has read the tuple with each distinct shape once; the elements are its own."""
    shapes = ["(512)", "(2048, 512)", "(512, 512)"] * 400
    tuple_text = f"<Tuple[Tensor[Float32]*1200], TupleShape({', '.join(shapes)})>"
    flags = ", ".join(f"[{i}]:{{1}}" for i in range(1200))  # and the flags MindSpore writes on a tuple of Bools
    bools = f"<Tuple[Bool*1200], TupleShape({', '.join(['NoShape'] * 1200)}), elements_use_flags={{[const vector]{{{flags}}}}}>"
    text = HEADER + f"  %3(y) = MakeTuple(%para1_x)\n      : ({tuple_text}, {bools}) -> (<Tensor[Float32], (2)>)\n" + FOOTER
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    core._parser.cache_clear()
    read = []
    original = typelines.TypeLines._by_lark

    def counted(self, abstract):
        read.append(abstract)
        return original(self, abstract)

    monkeypatch.setattr(typelines.TypeLines, "_by_lark", counted)
    ir = core.parse_text(text, "t.ir")
    assert max(map(len, read)) < 300, "Lark read a whole tuple"  # each is over 12 KB
    node = next(n for n in ir.nodes() if n.op == "MakeTuple")
    assert node.input_types[0].elements == tuple((512,) if s == "(512)" else (2048, 512) if s == "(2048, 512)"
                                                 else (512, 512) for s in shapes)
    assert node.input_types[1].elements == (None,) * 1200 and node.input_types[1].text == bools
    monkeypatch.setattr(typelines.TypeLines, "_by_lark", original)
    assert canonical(ir) == _read(text, "t.ir", False, False, monkeypatch)
    core._parser.cache_clear()


def test_free_variables_are_holes_of_one_template(monkeypatch):
    """Loads of 100 different free variables (a graph's weights seen from a closure) share one
    template, each with its own variable."""
    text = HEADER + "".join(
        f"  %{i}(n{i}) = Load($(@outer_3:para{i}_blocks.{i}.w), %{i - 1})\n"
        f"      : (<Tensor[Float32], (8)>, <UMonad, NoShape>) -> (<Tensor[Float32], (8)>)\n" for i in range(2, 102)
    ) + FOOTER.replace("%3", "%101")
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    core._parser.cache_clear()
    ir = core.parse_text(text, "f.ir", lenient=True)
    assert len(core._fast().templates) == 1
    loads = {n.index: n for n in ir.subgraphs[0].nodes if n.op == "Load"}
    assert len(loads) == 100
    assert loads[57].inputs == (FreeVarRef("outer_3", "para57_blocks.57.w"), NodeRef(56))
    core._parser.cache_clear()


def test_nodes_never_share_their_attribute_values(monkeypatch):
    """Attributes are read once per text and copied per node: changing one node's dicts and lists
    (nested ones too) changes no other node, and no later parse of the same text."""
    attrs = ("primitive_attrs: {a: I64(1), b: [1, 2], c: {d: [3]}, e: ((2, 1), (1, 4))} "
             "cnode_attrs: {x: I64(1), y: (2, 4)} {instance name: foo}")
    text = HEADER + "".join(
        f"  %{i}(y) = PrimFunc_Foo(%para1_x) {attrs}\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n"
        for i in (1, 2, 3)) + FOOTER
    monkeypatch.setenv("MSINSPECT_PARSER", "fast")
    core._parser.cache_clear()
    first = core.parse_text(text, "a.ir").subgraphs[0].nodes
    first[0].primitive_attrs["a"] = 99
    first[0].primitive_attrs["b"].append(3)
    first[0].primitive_attrs["c"]["d"].append(4)
    first[0].cnode_attrs["x"] = 5
    again = core.parse_text(text, "a.ir").subgraphs[0].nodes
    for node in (first[1], again[0], again[1]):
        assert node.primitive_attrs == {"a": 1, "b": [1, 2], "c": {"d": [3]}, "e": ((2, 1), (1, 4))}
        assert node.cnode_attrs == {"x": 1, "y": (2, 4)}
        assert node.instance_name == "foo"
    core._parser.cache_clear()
