"""Lark transformer: grammar rules -> model objects. The only module besides ``parser.core``
that knows Lark.

It runs inside the LALR parser (``Lark(transformer=...)``), so no parse tree is built; line
numbers come from the tokens themselves. Top-level items come out as tagged tuples that
``parser.assemble`` turns into an :class:`~msinspect.model.IRFile`.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar

from lark import Token, Transformer

from msinspect.model import (
    Abstract,
    FreeVarRef,
    GraphRef,
    Node,
    NodeKind,
    NodeRef,
    Parameter,
    ParamRef,
    PrimitiveValue,
    TensorValue,
)
from msinspect.parser.abstracts import COMMA, make_abstract
from msinspect.parser.bounded import Bounded
from msinspect.parser.secondsight import SecondSight

_WORDS = {"true": True, "false": False, "None": None, "Null": None}
_FLOAT_SCALARS = ("F16(", "F32(", "F64(", "BF16(", "Float32(", "Float16(")
_PRIM_PREFIX = "PrimFunc_"
_HEAD = re.compile(r"%(\d+)\((.*)\)$")
_KERNEL_PARAM = re.compile(r"Parameter_\d+$")
_NOTE = re.compile(r"#\s*(?:([Ss]cope:|Fullname with scope:|In file|SideEffect:|Comment:))?")
#: the user's lines under "# Comment:": indented 8 spaces, not a comment or node line
_COMMENT_TEXT = re.compile(r"        [^ #%\n]")
#: Distinct comment lines ``notes`` keeps what it made of; past that it starts again.
_NOTE_LINES = 1 << 14
#: Distinct attribute texts ``_attrs`` keeps; past that it starts again. A text's plan is some
#: 1.3 kB: 4,096 hold a 10 MB transformer rank's texts (zoo 09: 3,012) in 5 MB, where 16,384
#: filled with the group names of rank after rank (a text seen by a group's second rank is kept)
#: and held 21 MB in a process reading thousands of ranks, at no gain in speed (bench_ranks.py).
_ATTR_TEXTS = 1 << 12


#: Longest number MindSpore writes is a 20-digit 64-bit integer or a float with its exponent;
#: a longer run of digits is damage, and int() of thousands of digits is refused by Python.
MAX_NUMBER_CHARS = 64


class BadToken(Exception):
    """A token the grammar accepts but whose value cannot be right; ``parser.core`` turns it into
    an :class:`~msinspect.errors.IRParseError` at the token's position."""

    def __init__(self, token: Token, message: str) -> None:
        super().__init__(message)
        self.token = token
        self.message = message


def _number(token: Token):
    text = str(token)
    if len(text) > MAX_NUMBER_CHARS:
        raise BadToken(token, f"a number of {len(text)} characters: longer than any value MindSpore writes")
    try:
        return int(text)
    except ValueError:
        return float(text)


def _index(token: Token, text: str) -> int:
    """The number of ``%12`` / ``%12(name)`` / a marker, guarded like :func:`_number`."""
    if len(text) > MAX_NUMBER_CHARS:
        raise BadToken(token, f"a number of {len(text)} characters: longer than any value MindSpore writes")
    return int(text)


#: The deepest nesting of tuples, lists and dicts a node's operands or attributes may have
#: (MindSpore's deepest are a few levels: a strategy, a tuple of shapes); deeper is an error at the
#: node's line, the same in both readings, rather than a value no later step could walk.
MAX_VALUE_DEPTH = 100
_CONTAINERS = frozenset({tuple, list, dict})


#: Lines of the file before the text being parsed (a window, or a tail read on its own past an
#: error). One transformer serves every parse, so this is per call, never the transformer's: set
#: around one parse by :func:`lines_before`, restored after it, and not shared between threads.
_LINES_BEFORE: ContextVar[int] = ContextVar("lines_before", default=0)


@contextmanager
def lines_before(count: int):
    """Within the block, the transformer numbers lines as if ``count`` lines came before the text."""
    token = _LINES_BEFORE.set(count)
    try:
        yield
    finally:
        _LINES_BEFORE.reset(token)


class IRTransformer(Transformer):
    """Builds model objects while the parser reduces; lines are numbered in the file, past the
    lines before the parsed text (:func:`lines_before`)."""

    def __init__(self, keep: bool = True) -> None:
        """``keep``: keep what was made of each text (the fast reading); False: make it every time
        (the reference reading, :mod:`msinspect.parser_mode`)."""
        super().__init__(visit_tokens=False)
        #: ``fragment(start, token)``: the cached result of parsing the token's text from the
        #: grammar's start symbol ``start`` (set by ``parser.core``, which owns the Lark instance).
        self.fragment = None
        #: what ``notes`` makes of each comment line read on its own (all but "# Comment:" blocks,
        #: which run over the lines under them); a dump repeats a few hundred of them thousands of times
        self._note_lines = Bounded(_NOTE_LINES if keep else 0)
        #: and of each whole run of them (nodes of one cell share their scope and source lines;
        #: most runs are one node's alone: zoo 09, 2,619 of 3,249, 2.9 of their 3.2 MB of text)
        self._note_blocks = SecondSight(_NOTE_LINES if keep else 0)
        #: what ``_attrs`` made of each attribute text (zoo 09: 2,999 of 3,012 texts are one node's)
        self._attr_plans = SecondSight(_ATTR_TEXTS if keep else 0)
        #: attribute texts read by their shape (``parser.attrtexts``, set by ``parser.core``): its
        #: ``plan(text)`` is ``_attrs``'s plan, or None where the text is read as a fragment
        self.attr_texts = None

    def _line(self, token: Token) -> int:
        return token.line + _LINES_BEFORE.get()

    # ------------------------------------------------------------ top level
    def start(self, items):
        return items

    def ir_entry(self, c):
        return ("ir_entry", self._line(c[0]), str(c[0]))

    def total_subgraphs(self, c):
        return ("total_subgraphs", self._line(c[0]), str(c[0]))

    def total_params(self, c):
        return ("total_params", self._line(c[0]), str(c[0]))

    def attrs_title(self, c):
        return ("attrs_title", self._line(c[0]), str(c[0]))

    def params_title(self, c):
        return ("params_title", self._line(c[0]), str(c[0]))

    def jit_config(self, c):
        return ("jit_config", self._line(c[0]), [kv for kv in c[1:]])

    def count_title(self, c):
        return ("count_title", self._line(c[0]), str(c[0]))

    def count_line(self, c):
        return ("count_line", self._line(c[0]), str(c[0]))

    def kv_line(self, c):
        key, _, value = str(c[0]).partition(":")
        return ("kv", self._line(c[0]), (key.strip(), value.strip()))

    def param_decl(self, c):
        return self.param_at(str(c[0]), self._line(c[0]), c[1], c[2] if len(c) > 2 else "")

    @staticmethod
    def param_at(name: str, line: int, abstract, tail: str):
        """A parameter line's item from its PARAM token's text and line (``param_decl``, and the
        fast reader of ``parser.fastpath``)."""
        param = Parameter(name=name[1:], abstract=abstract, line=line, has_default="has_default" in tail, tail=tail)
        return ("param", line, param)

    def param_tail(self, c):
        return str(c[0]).strip()

    def subgraph_attr_title(self, c):
        return ("subgraph_attr", self._line(c[0]), None)

    def subgraph_instance(self, c):
        return ("subgraph_instance", self._line(c[0]), str(c[0]))

    def subgraph_symbol_engine(self, c):
        return ("subgraph_symbol_engine", self._line(c[0]), str(c[0]))

    def symbol_engine_title(self, c):
        return ("symbol_engine_title", self._line(c[0]), str(c[0]))

    def symbol_engine(self, c):
        return ("symbol_engine", self._line(c[0]), str(c[0]))

    def graph_parameters(self, c):
        return ("graph_parameters", self._line(c[0]), str(c[0]))

    def graph_source(self, c):
        return ("source", self._line(c[0]), str(c[0]))

    def top_comment(self, c):
        return ("comment", self._line(c[0]), str(c[0]))

    def order_block(self, c):
        return ("order", self._line(c[0]), len(c) - 1)

    def loose_statement(self, c):
        return ("statement", c[0].line, c[0])

    def order_line(self, c):
        return None

    def subgraph_open(self, c):
        head = c[0]
        rest = c[1:]
        parent = None
        if rest and isinstance(rest[0], GraphRef):
            parent, rest = rest[0].name, rest[1:]
        return ("subgraph_open", self._line(head), (str(head)[len("subgraph @"):], parent, rest[0]))

    def subgraph_close(self, c):
        return ("subgraph_close", self._line(c[0]), None)

    def fail_banner(self, c):
        return ("fail_banner", self._line(c[0]), str(c[0]))

    def fail_text(self, c):
        return ("fail_text", self._line(c[0]), str(c[0]))

    def fail_marker(self, c):
        return ("fail_marker", self._line(c[0]), _index(c[0], str(c[0]).rsplit(">", 1)[1].strip()))

    def no_more_graphs(self, c):
        return ("no_more_graphs", self._line(c[0]), None)

    def parent(self, c):
        return GraphRef(str(c[0])[1:])

    def graph_params(self, c):
        return tuple(str(t)[1:] for t in c if t is not None)

    def typed_graph_param(self, c):
        return c[0]

    # ------------------------------------------------------------ statements
    def node(self, c):
        head = c[0]
        return self.node_at(str(head), self._line(head), head, c[1], c[2:])

    def node_at(self, head: str, line: int, token, callee: tuple, rest):
        """A node from its NODE_HEAD token's text and line, its callee and the rest of its
        children (``node``, and the fast reader of ``parser.fastpath``, which gives no token:
        a value it would be named in an error for is then an error of its own)."""
        match = _HEAD.match(head)
        index, debug_name = _index(token, match.group(1)), match.group(2)
        kind, callee, op, graphs = callee
        node = self._statement(line, index, debug_name, kind, callee, op, rest, token)
        node.callee_graphs = graphs
        return node

    def return_stmt(self, c):
        return self._statement(self._line(c[0]), None, "Return", NodeKind.RETURN, "Return", "Return", c[1:], c[0])

    def _statement(self, line, index, debug_name, kind, callee, op, rest, token=None):
        node = Node(graph="", index=index, debug_name=debug_name, op=op, kind=kind,
                    callee=callee, inputs=(), line=line)
        parts = []
        for part in rest:
            if part.__class__ is not tuple:  # the ATTRS token: the attributes after the operands, read on their own
                parts += self._attrs(part, token)
                continue
            if part[0] == "args":
                _check_depth(part[1], token)
            parts.append(part)
        for part in parts:
            tag, value = part[0], part[1]
            if len(part) > 2 and part[2] is not None:  # an attribute's value, copied for this node
                value = part[2](value)
            if tag == "args":
                node.inputs = value
            elif tag == "primitive_attrs":
                node.primitive_attrs = value
            elif tag == "cnode_attrs":
                node.cnode_attrs = value
            elif tag == "cnode_primal_attrs":
                node.cnode_primal_attrs = value
            elif tag == "braces":
                attrs = value
                if len(attrs) == 1 and "instance name" in attrs:
                    name = attrs["instance name"]
                    node.instance_name = None if name is None else str(name)
                else:
                    node.trailing_attrs = {**node.trailing_attrs, **attrs}
            elif tag == "annotations":
                self._annotate(node, part[1])
        return node

    def _attrs(self, token, node_token=None) -> tuple:
        """``(tag, value, how each node copies it)`` for the attributes of an ATTRS token, read once
        per text (a dump repeats a few thousand attribute texts over its nodes)."""
        text = str(token)
        plan = self._attr_plans.get(text)
        if plan is None:
            plan = self.attr_texts.plan(text) if self.attr_texts is not None else None
            if plan is None:
                plan = tuple((tag, value, _copier(value)) for tag, value in self.fragment("attrs_fragment", token))
            for part in plan:  # once per text: a plan kept was checked when it was made
                _check_depth(part[1], node_token)
            self._attr_plans.keep(text, plan)
        return plan

    @staticmethod
    def _annotate(node: Node, annotations) -> None:
        sources, comments, kernel = [], [], []
        seen_types = False
        for tag, value in annotations:
            if tag == "notes":  # a run of comment lines, sorted once per text (notes)
                scope, fullname, side_effect, block_sources, block_comments = value
                if scope is not None:
                    node.scope = scope
                if fullname is not None:
                    node.fullname = fullname
                if side_effect is not None:
                    node.side_effect = side_effect
                sources += block_sources
                comments += block_comments
                continue
            if tag == "strategy_types":
                strategy, value = value
                node.trailing_attrs = {**node.trailing_attrs, **strategy}
            if seen_types:  # "types": the grammar's annotations are type lines and comment runs
                kernel.append(_types_text(value))
            else:
                node.input_types, node.output_types = value
                seen_types = True
        node.sources = tuple(sources)
        node.comments = tuple(comments)
        node.kernel_lines = tuple(kernel)

    def prim_callee(self, c):
        name = str(c[0])
        op = _op_name(name)
        if len(c) > 1:
            hint = _graph_union(c[1])
            if hint and _KERNEL_PARAM.match(name):
                # kernel graphs call a parameter holding a function by its debug name:
                # Parameter_1015[@FuncUnion(@g1, @g2)](...)
                return (NodeKind.CALL_VALUE, name, "call", hint)
            return (NodeKind.CALL_PRIMITIVE, PrimitiveValue(name, c[1]), op, ())
        return (NodeKind.CALL_PRIMITIVE, name, op, ())

    def call_callee(self, c):
        graph = GraphRef(str(c[0])[1:])
        return (NodeKind.CALL_GRAPH, graph, "call", (graph.name,))

    def graph_callee(self, c):
        graph = GraphRef(str(c[0])[1:])
        return (NodeKind.CALL_GRAPH, graph, "call", (graph.name,))

    def node_callee(self, c):
        return (NodeKind.CALL_VALUE, NodeRef(_index(c[0], str(c[0])[1:])), "call", _hint(c))

    def param_callee(self, c):
        return (NodeKind.CALL_VALUE, ParamRef(str(c[0])[1:]), "call", _hint(c))

    def free_var_callee(self, c):
        return (NodeKind.CALL_VALUE, _free_var(str(c[0])), "call", _hint(c))

    def graph_hint(self, c):
        """``[@g]`` or ``[@FuncUnion(@g1, @g2)]``: the graphs the called value may be."""
        names = tuple(str(t).lstrip("@") for t in c)
        return _Hint(names[1:] if len(names) > 1 else names)

    def args(self, c):
        return ("args", tuple(c))

    def primitive_attrs(self, c):
        return ("primitive_attrs", c[1])

    def cnode_attrs(self, c):
        return ("cnode_attrs", c[1])

    def cnode_primal_attrs(self, c):
        return ("cnode_primal_attrs", c[1])

    def strategy_attrs(self, c):
        return ("braces", c[0])

    def annotations(self, c):
        return ("annotations", c)

    def notes(self, c):
        """Sort the comment lines under a node (one NOTES token) into scope, fullname, source
        lines, side effect, "# Comment:" blocks and other comments."""
        token = c[0]
        whole = str(token)
        read = self._note_blocks.get(whole)
        if read is not None:
            return read
        lines = whole.split("\n")
        out, i = [], 0
        known = self._note_lines
        while i < len(lines):
            raw = lines[i]
            entry = known.get(raw)
            if entry is not None:
                out.append(entry)
                i += 1
                continue
            text = raw.strip()
            if not text.startswith("#"):
                offset = sum(len(line) + 1 for line in lines[:i])
                indent = len(raw) - len(raw.lstrip())
                raise BadToken(Token("NOTES", raw, start_pos=token.start_pos + offset + indent,
                                     line=token.line + i, column=indent + 1),
                               f"unexpected {text[:40]!r} among the comment lines of a node")
            tag = _NOTE.match(text)
            kind = (tag.group(1) or "").lower() if tag else ""
            if kind == "comment:":
                block = [text]
                while i + 1 < len(lines) and _COMMENT_TEXT.match(lines[i + 1]):
                    i += 1
                    block.append(lines[i])
                out.append(("comment", "\n".join(block)))
                i += 1
                continue
            if kind == "scope:":
                entry = ("scope", _paren_payload(text))
            elif kind == "fullname with scope:":
                entry = ("fullname", _paren_payload(text))
            elif kind == "in file":
                entry = ("source", text[text.index("In file") + len("In file"):].strip())
            elif kind == "sideeffect:":
                entry = ("side_effect", text.split(":", 1)[1].strip())
            else:
                entry = ("comment", text)
            known.put(raw, entry)
            out.append(entry)
            i += 1
        return self._note_blocks.keep(whole, ("notes", _summary(out)))

    def io_types(self, c):
        return ("types", (c[0], c[1]))

    def types_line(self, c):
        return self.fragment("types_fragment", c[0])

    def strategy_types_line(self, c):
        return ("strategy_types", (c[0], self.fragment("types_fragment", c[1])[1]))

    def attrs_fragment(self, c):
        return tuple(c)

    def return_types(self, c):
        return ("types", (c[0], ()))

    def io_in(self, c):
        return c[0] if c else ()

    io_out = io_in

    def abstracts(self, c):
        return tuple(c)

    def kernel_object_type(self, c):
        word = str(c[0])
        return Abstract(kind=word, dtype=None, shape=None, text=word)

    def symbolic(self, c):
        """``S:[s1<[1,inf]>, 64]`` (kind ``Symbol``) or ``V:false`` (kind ``Value``): its text, and
        its shape where every dimension is a number."""
        (text, value), tag = c[1], str(c[0])
        shape = value if tag == "S:" and isinstance(value, tuple) else None
        return Abstract(kind="Symbol" if tag == "S:" else "Value", dtype=None, shape=shape, text=tag + text)

    def symbol_list(self, c):
        """``(text, numbers)`` of a list of symbols; numbers is None unless every item is one."""
        numbers = tuple(v for _, v in c)
        return ("[" + ", ".join(t for t, _ in c) + "]",
                numbers if all(v.__class__ is int for v in numbers) else None)

    def symbol_atom(self, c):
        text = str(c[0]) + (c[1] if len(c) > 1 else "")
        digits = len(c) == 1 and text.lstrip("-").isdigit() and text.isascii()
        return (text, _index(c[0], text) if digits else None)  # guarded: 5,000 digits are no dimension

    def symbol_range(self, c):
        return "<[" + f"{c[0]},{c[1]}]" + "".join(str(t) for t in c[2:]) + ">"

    # ------------------------------------------------------------ values
    def node_ref(self, c):
        return NodeRef(_index(c[0], str(c[0])[1:]))

    def param_ref(self, c):
        return ParamRef(str(c[0])[1:])

    def free_var(self, c):
        return _free_var(str(c[0]))

    def graph_ref(self, c):
        return GraphRef(str(c[0])[1:])

    def graph_call(self, c):
        """``@FuncUnion(@g1, @g2)`` used as a value."""
        return PrimitiveValue(str(c[0]), tuple(c[1:]))

    def typed_scalar(self, c):
        kind = str(c[0])
        value = c[1]
        if kind == "Bool(":
            return bool(value)
        if kind.startswith(_FLOAT_SCALARS) and isinstance(value, int):
            return float(value)
        return value

    def tensor(self, c):
        shape, dtype, value = c[1], str(c[2]), str(c[3])
        return TensorValue(shape=shape, dtype=dtype, value_text=value[len("value="):].strip())

    def prim_value(self, c):
        return PrimitiveValue(str(c[0]), c[1])

    def functor_value(self, c):
        """``Functor[ShapeCalc_ReduceShape]{false}``: the bracketed items, then the braced values
        as one more item ``("{}", values)``."""
        return PrimitiveValue(str(c[0]), tuple(c[1]) + (("{}", tuple(c[2:])),))

    def tensor_id(self, c):
        """``Tensor(43)[]``: a constant tensor named by its id, with its shape (``[]`` a scalar);
        its value is not printed."""
        text = str(c[0])
        dims = text[text.index("[") + 1:-1]
        shape = tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
        return TensorValue(shape=shape, dtype=None, value_text="")

    def environ_key(self, c):
        """``[Key][Parameter]w``, the key of a gradient environment: kept as its text."""
        return str(c[0])

    def nameless_prim_value(self, c):
        """A primitive printed by its attributes alone (``primitive_attrs: {[...]}``): no name."""
        return PrimitiveValue("", c[1])

    def tuple(self, c):
        return tuple(c)

    def list(self, c):
        return list(c)

    def shape_list(self, c):
        return tuple(_number(t) for t in c)

    def dict(self, c):
        return dict(c)

    def eq_pair(self, c):
        return (str(c[0])[:-1], c[1])

    def pair(self, c):
        key = str(c[0])
        if key[:1] in "\"'":
            key = key[1:-1]
        return (key, c[1] if len(c) > 1 else None)

    def prim_attrs(self, c):
        return tuple(c)

    def slice_parts(self, c):
        return tuple(c)

    def string(self, c):
        return str(c[0])[1:-1]

    def number(self, c):
        return _number(c[0])

    def type_call(self, c):
        """A type written as a call, e.g. the dtype ``Tensor(F32)``: kept as its text."""
        return f"{c[0]}(" + ", ".join(str(v) for v in c[1:]) + ")"

    def word(self, c):
        text = str(c[0])
        return _WORDS.get(text, text)

    # ------------------------------------------------------------ abstracts
    def abstract(self, c):
        return make_abstract(c)

    def abs_comma(self, c):
        return COMMA

    def abs_colon(self, c):
        return ":"

    def abs_paren(self, c):
        return ("(", c)

    def abs_bracket(self, c):
        return ("[", c)

    def abs_brace(self, c):
        return ("{", c)

    def __default_token__(self, token):  # pragma: no cover - visit_tokens is off
        return token


class _Hint(tuple):
    """The graph names of a call head's ``[...]`` hint."""


def _hint(c) -> tuple[str, ...]:
    return tuple(c[1]) if len(c) > 1 and isinstance(c[1], _Hint) else ()


def _graph_union(items) -> tuple[str, ...]:
    """Graph names of a bracketed ``[@FuncUnion(@g1, @g2)]`` or ``[@g]``, else ``()``."""
    if len(items) != 1:
        return ()
    item = items[0]
    if isinstance(item, GraphRef):
        return (item.name,)
    if isinstance(item, PrimitiveValue) and item.name.startswith("@") and all(isinstance(i, GraphRef) for i in item.items):
        return tuple(i.name for i in item.items)
    return ()


def _summary(entries: list) -> tuple:
    """What a run of comment lines gives a node (``_annotate`` sets it): the last scope, fullname
    and side effect among them (None: none), the sources and comments in order."""
    found = {"scope": None, "fullname": None, "side_effect": None, "source": [], "comment": []}
    for tag, value in entries:
        if tag in ("source", "comment"):
            found[tag].append(value)
        else:
            found[tag] = value
    return (found["scope"], found["fullname"], found["side_effect"], tuple(found["source"]), tuple(found["comment"]))


def _fresh(value):
    """A copy of the dicts and lists in a cached fragment's value, so no two nodes share them."""
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fresh(v) for v in value]
    if isinstance(value, tuple) and _holds_mutable(value):
        return tuple(_fresh(v) for v in value)
    return value


def _holds_mutable(value) -> bool:
    """Whether ``value`` is or holds a dict or list (what :func:`_fresh` copies); iterative, so a
    value of any depth is answered (:data:`MAX_VALUE_DEPTH` is checked after)."""
    todo = [value]
    while todo:
        value = todo.pop()
        if isinstance(value, (dict, list)):
            return True
        if isinstance(value, tuple):
            todo.extend(value)
    return False


def _check_depth(value, token) -> None:
    """:class:`BadToken` (at the node's ``token``) where ``value``, a node's operands or an
    attribute dict, nests deeper than :data:`MAX_VALUE_DEPTH` (the operands' tuple and the dict
    are no bracket of a value: one level more is allowed)."""
    if value_depth(value, MAX_VALUE_DEPTH + 1) > MAX_VALUE_DEPTH + 1:
        raise BadToken(token, f"values nested more than {MAX_VALUE_DEPTH} brackets deep: deeper than any "
                              "value MindSpore writes")


def value_depth(value, limit: int) -> int:
    """How deep ``value``'s tuples, lists and dicts nest (a scalar: 0), counted up to ``limit + 1``
    (iterative: any depth is answered in time linear in the value; only containers are visited,
    so a node's flat operands cost one look each)."""
    if value.__class__ not in _CONTAINERS:
        return 0
    deepest = 0
    todo = [(value, 1)]
    while todo:
        value, depth = todo.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        for item in (value.values() if value.__class__ is dict else value):
            if item.__class__ in _CONTAINERS:
                todo.append((item, depth + 1))
    return deepest


def _copier(value):
    """How each node copies ``value``, a value of a cached fragment: None (nothing in it can
    change), ``dict.copy`` (a dict of values that cannot), or :func:`_fresh`."""
    if isinstance(value, dict) and not any(_holds_mutable(v) for v in value.values()):
        return dict.copy
    return _fresh if _holds_mutable(value) else None


def _op_name(name: str) -> str:
    """``MatMul`` from ``PrimFunc_MatMul``; ``S-Prim-Sub`` from
    ``DoSignaturePrimitive::S-Prim-Sub{prim_type=1}``."""
    name = name.split("{", 1)[0]
    if "::" in name:
        name = name.rsplit("::", 1)[1]
    return name[len(_PRIM_PREFIX):] if name.startswith(_PRIM_PREFIX) else name


def _free_var(text: str) -> FreeVarRef:
    graph, _, name = text[3:-1].partition(":")
    return FreeVarRef(graph, name)


def _paren_payload(text: str) -> str:
    payload = text.split(":", 1)[1].strip()
    if payload.startswith("(") and payload.endswith(")"):
        payload = payload[1:-1]
    return payload


def _types_text(value) -> str:
    ins, outs = value
    return "(" + ", ".join(a.text for a in ins) + ") -> (" + ", ".join(a.text for a in outs) + ")"


__all__ = ["BadToken", "IRTransformer"]
