"""Reading the node items of a dump without stepping Lark through every token of each one, with
Lark the authority on what each of them says.

Nearly all of a large dump is node items written the one way MindSpore writes them::

      %12(CNode_8) = PrimFunc_MatMul(%10, %para3_w, Bool(0), Bool(0)) {instance name: matmul}
          : (<Tensor[Float32], (8, 16)>, ...) -> (<Tensor[Float32], (8, 16)>)
          # Scope: (Default/...)
          # In file ...

Lark pays per token, and the transformer's callbacks per rule; a 10 MB transformer dump has
hundreds of thousands of tokens in its node lines alone. Here a node item is cut into the grammar's
own terminals with the grammar's own regular expressions (``NODE_HEAD``, ``OP_NAME``, ``ATTRS``,
``_NL``, ``TYPES``, ``NOTES``, read from the compiled grammar, never restated), and its call
``OP(operands)`` is read by Lark from a *template*: the call with every node reference ``%12``
replaced by ``%0``, every parameter ``%para3_w`` by ``%para_`` and every free variable
``$(@g1:para3_w)`` by ``$(@g:v)``. Lark parses the template once, as a whole node line, so the
operator and every operand that is not a reference are Lark's reading in the node rule's own
context; each node then takes that reading with its own references put back in their places. The
tokens of the item go to the transformer's own callbacks (``node_at``, which ``node`` calls with
its token's text and line; ``types_line``, ``notes`` and ``annotations`` with each token's text),
so the node is made by the code that makes it when Lark reads the line itself. The parameter
lines of the ``# Params:`` block are read the same way (``param``, ``param_at``).

Why the model is the same as Lark's:

- the cuts are where Lark's lexer cuts: the regular expressions are the grammar's terminals, and
  at each position only a terminal that Lark's contextual lexer would choose there is taken (at a
  ``#`` under a node, NOTES unless a terminal of higher priority matches, exactly as Lark orders
  them);
- the operand list ends at the first ``)`` after which the ATTRS terminal or the line's end
  follows; the template of that text must parse as a whole node line, so its parentheses close
  where Lark's would (a list that does not parse is left to Lark);
- a reference is a node reference or parameter where Lark lexes one; the template keeps the
  reference's neighbours and the lexer sees a reference of the same terminal in its place, and
  a template whose reading does not hold exactly one top-level operand per reference (a ``%3``
  inside a string, a tuple of references) is not used.

Anything else (another spelling, a strategy line before the type line, a reference longer than 20
digits, a callback that refuses a token) is not read here: the whole item goes to Lark, whose
result or error is the answer. ``bench/parse_identity.py`` and ``tests/parser/test_fastpath.py``
compare the models of every fixture read both ways.
"""
from __future__ import annotations

import re

from lark import Lark

from msinspect.model import FreeVarRef, NodeRef, ParamRef
from msinspect.parser.bounded import Bounded
from msinspect.parser.transformer import _free_var, _fresh, _holds_mutable, lines_before
from msinspect.parser.typelines import RUN

#: Lines where an item read here may begin: a node at column 0 - 2 (as the window cuts of
#: ``parser.core``), a parameter line of the ``# Params:`` block at column 0.
CANDIDATE = re.compile(r"^(?: {0,2}%\d+\(|%para)", re.M)
#: Node references among the operands, as the terminal NODE_REF matches them; a reference of more
#: than 20 digits is left in the template, where the transformer refuses it.
_NODE_REF = re.compile(r"%\d{1,20}(?!\d)")
_NODE_HOLE, _PARAM_HOLE, _FREE_HOLE = "%0", "%para_", "$(@g:v)"
#: A top-level abstract with abstracts nested one level inside it (as ``parser.typelines`` reads
#: them), and the text a parameter line's abstract is replaced by in its template.
_ABSTRACT = re.compile(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>")
_ABSTRACT_HOLE = "<x>"
#: What Lark reads each hole as.
_HOLE_VALUES = (NodeRef(0), ParamRef(_PARAM_HOLE[1:]), FreeVarRef("g", "v"))
#: Distinct templates (and reference values) kept; past that they start again.
TEMPLATES = 1 << 14
_BAD = object()


def _terminal(lark: Lark, name: str) -> str:
    return lark.get_terminal(name).pattern.to_regexp()


class FastReader:
    """Reads node items of one grammar (the Lark instance and transformer of ``parser.core``)."""

    def __init__(self, lark: Lark, transformer) -> None:
        self.lark, self.transformer = lark, transformer
        head = (r"[ \t]*(" + _terminal(lark, "NODE_HEAD") + r")[ \t]*=[ \t]*("
                + _terminal(lark, "OP_NAME") + r")\(([^\n]*)")
        self.node_line = re.compile(head)
        attrs = _terminal(lark, "ATTRS")
        self.attrs = re.compile(attrs)
        #: the ")" that closes the operands: ATTRS follows it (spaces between are ignored by Lark)
        self.args_end = re.compile(r"\)[ \t]*(?=" + attrs + ")")
        self.nl = re.compile(_terminal(lark, "_NL"))
        self.types = re.compile(_terminal(lark, "TYPES"))
        self.notes = re.compile(_terminal(lark, "NOTES"))
        priority = lark.get_terminal("NOTES").priority
        #: the terminals Lark's lexer tries before NOTES at a "#", as one alternation: where one
        #: matches, the node has ended (None: there are none)
        first = [f"(?:{t.pattern.to_regexp()})" for t in lark.terminals if t.priority > priority]
        self.before_notes = re.compile("|".join(first)) if first else None
        #: what nearly every node has under its line: one type line, then one run of comment lines,
        #: then the next item. Each terminal is atomic (``(?>...)``), so it matches where and as
        #: it matches on its own (no backtracking into it to let what follows match): this is the
        #: loop of _annotations taking those three steps, in one match.
        nl = f"(?>{self.nl.pattern})"
        self.types_then_notes = re.compile(
            f"{nl}((?>{self.types.pattern}))[ \t]*{nl}" + (f"(?!{self.before_notes.pattern})" if first else "")
            + f"((?>{self.notes.pattern}))[ \t]*{nl}")
        self.templates = Bounded(TEMPLATES)
        #: the holes of a call: free variables of enclosing graphs (``$(@g:para3_w)``, the
        #: FREE_VAR terminal), replaced first (their text may hold a "%"), node references and
        #: parameters (the PARAM terminal); ``refs`` finds all three, left to right
        free, param = _terminal(lark, "FREE_VAR"), _terminal(lark, "PARAM")
        self.free_var, self.param_ref = re.compile(free), re.compile(param)
        self.refs = re.compile(f"(?:{free})|(?:{_NODE_REF.pattern})|(?:{param})")
        #: the value of each reference text (frozen, so nodes may share them)
        self.ref_values = Bounded(TEMPLATES)
        #: a parameter line: the PARAM terminal, the ":" and spaces, where its abstract begins
        self.param_line = re.compile("(" + param + r")([ \t]*:[ \t]*)(?=<)")
        self.param_templates = Bounded(TEMPLATES)

    # ------------------------------------------------------------ one node item
    def node(self, text: str, pos: int, end: int, line: int):
        """``(item, end of item)`` for the node item at ``pos`` (a line start, on line ``line`` of
        the file), or None where it is not read here."""
        m = self.node_line.match(text, pos, end)
        if m is None:
            return None
        head_text, op = m.group(1, 2)
        line_end = m.end()
        cut = self.args_end.search(text, m.start(3), line_end)
        if cut is not None:
            operands = text[m.start(3):cut.start()]
            attrs_text = self.attrs.match(text, cut.end(), line_end).group()
        else:
            stripped = m.group(3).rstrip(" \t")
            if not stripped.endswith(")"):
                return None
            operands, attrs_text = stripped[:-1], None
        call = self._call(op, operands)
        if call is None:
            return None
        callee, inputs = call
        annotations, after = self._annotations(text, line_end, end)
        if annotations is None:
            return None
        tr = self.transformer
        rest = []
        if inputs is not None:
            rest.append(("args", inputs))
        if attrs_text is not None:
            rest.append(attrs_text)  # the ATTRS token's text (see _annotations)
        try:
            rest.append(tr.annotations(annotations))
            node = tr.node_at(head_text, line, None, callee, rest)
        except Exception:  # a value the transformer refuses: Lark says where and why
            return None
        return ("statement", node.line, node), after

    def _annotations(self, text: str, at: int, end: int):
        """The annotation results under a node line ending at ``at``, and where the next item's
        line begins; None where the item is not read here. The callbacks are given the text of
        each TYPES and NOTES token: a callback that would say where an error is (it asks the token
        for its position) fails here, and the item is left to Lark, which says it."""
        tr = self.transformer
        types_line, notes, nl_match = tr.types_line, tr.notes, self.nl.match
        common = self.types_then_notes.match(text, at, end)
        if common is not None:
            q = common.end()
            if q >= end or text[q] not in ":#{":
                try:
                    out = [types_line([common.group(1)]), notes([common.group(2)])]
                except Exception:
                    return None, at
                return out, text.rfind("\n", common.end(2), q) + 1
        out = []
        while True:
            nl = nl_match(text, at, end)
            if nl is None:
                return None, at  # no line end: Lark says what is wrong
            q = nl.end()
            if q >= end:
                return out, text.rfind("\n", at, q) + 1
            ch = text[q]
            if ch == ":":
                token = self.types.match(text, q, end)
                if token is None:
                    return None, at
                try:
                    out.append(types_line([token.group()]))
                except Exception:
                    return None, at
            elif ch == "#":
                if self.before_notes is not None and self.before_notes.match(text, q, end):
                    return out, text.rfind("\n", at, q) + 1
                token = self.notes.match(text, q, end)
                try:
                    out.append(notes([token.group()]))
                except Exception:
                    return None, at
            elif ch == "{":
                return None, at  # a strategy before the type line (releases up to 1.7)
            else:
                return out, text.rfind("\n", at, q) + 1
            at = token.end()
            while at < end and text[at] in " \t":
                at += 1

    # ------------------------------------------------------------ one parameter line
    def param(self, text: str, pos: int, end: int, line: int):
        """``(item, end of item)`` for the parameter line at ``pos`` (``%para3_w: <...>  :  tail``,
        on line ``line``), or None where it is not read here.

        The line is read as its template: the name as ``%para_`` and the abstract as ``<x>``, read
        by Lark once as a whole line (the tail after the abstract is Lark's to read, in the state
        the abstract leaves it). The abstract is the grammar's ``abstract`` rule wherever it
        stands (its terminals cannot hold a ``<`` or ``>``, so it spans the balanced ``<...>``
        from its first ``<``): ``parser.typelines`` gives Lark's reading of it on its own."""
        m = self.param_line.match(text, pos, end)
        if m is None:
            return None
        group = _ABSTRACT.match(text, m.end(), end)
        nl = text.find("\n", m.end(), end)
        if group is None or nl < 0 or group.end() > nl:
            return None
        rest = text[group.end():nl]
        key = (m.group(2), rest)
        template = self.param_templates.get(key)
        if template is None:
            template = self.param_templates.put(key, self._param_template(*key))
        if template is _BAD:
            return None
        abstract = self.transformer.type_lines.abstract(group.group())
        if abstract is None:
            return None
        try:
            item = self.transformer.param_at(m.group(1), line, abstract, template)
        except Exception:
            return None
        after = self.nl.match(text, nl, end).end()
        return item, text.rfind("\n", nl, after) + 1

    def _param_template(self, sep: str, rest: str):
        """Lark's reading of the template line: the tail the transformer gives ``param_decl`` ("" for
        none); _BAD where the template is not one parameter line."""
        param = self._one_item(f"{_PARAM_HOLE}{sep}{_ABSTRACT_HOLE}{rest}\n", "param")
        if param is None or param.name != _PARAM_HOLE[1:] or param.abstract is None \
                or param.abstract.text != _ABSTRACT_HOLE:
            return _BAD
        return param.tail

    def _one_item(self, line: str, tag: str):
        """What the transformer makes of ``line``, read by Lark as a whole text, where that is one
        item tagged ``tag``; None otherwise."""
        try:
            with lines_before(0):
                items = self.lark.parse(line, start="start")
        except Exception:
            return None
        return items[0][2] if len(items) == 1 and items[0][0] == tag else None

    # ------------------------------------------------------------ the call, by template
    def _call(self, op: str, operands: str):
        """``(callee, inputs)`` of ``op(operands)`` as Lark reads it, with this node's references;
        None where the template does not hold."""
        holed = self.free_var.sub(_FREE_HOLE, operands) if "$" in operands else operands  # each begins with its text
        holed = _NODE_REF.sub(_NODE_HOLE, holed)
        key = (op, self.param_ref.sub(_PARAM_HOLE, holed) if "%para" in holed else holed)
        template = self.templates.get(key)
        if template is None:
            template = self.templates.put(key, self._template(*key))
        if template is _BAD:
            return None
        callee, inputs, holes, fresh = template
        if inputs is None:
            return (callee, None) if not holes else None
        refs = self.refs.findall(operands)
        if len(refs) != len(holes):
            return None
        values = list(inputs)
        for i in fresh:
            values[i] = _fresh(values[i])
        known = self.ref_values
        for i, ref in zip(holes, refs):
            value = known.get(ref)
            if value is None:  # "$(@g:x)", "%para3_w" or "%12": each of the three begins its own way
                value = known.put(ref, _free_var(ref) if ref[0] == "$" else ParamRef(ref[1:])
                                  if ref.startswith("%para") else NodeRef(int(ref[1:])))
            values[i] = value
        return callee, tuple(values)

    def _read_call(self, op: str, operands: str):
        """The node Lark reads from the line ``  %0(x) = op(operands)``. Operands that are one
        text written ``RUN`` or more times (a fused optimizer's ``MakeTuple`` of every weight, tens
        of KB) are read from an *exemplar*: the call with two of them and with three. Lark reads
        ``value ("," value)*`` item by item, each item after the first in the same parser state
        (after a ","), so the same text reads as the same value wherever it stands; where the
        exemplars read as two and three equal operands of one callee, the call reads as that many
        of that operand."""
        item, sep, _ = operands.partition(", ")
        count = operands.count(", ") + 1
        if sep and count >= RUN and operands == ", ".join([item] * count):
            two, three = (self._one_item(f"  %0(x) = {op}({', '.join([item] * k)})\n", "statement") for k in (2, 3))
            if two is not None and three is not None and len(two.inputs) == 2 and two.inputs[0] == two.inputs[1] \
                    and three.inputs == two.inputs + two.inputs[:1] \
                    and (three.kind, three.callee, three.op, three.callee_graphs) == (two.kind, two.callee, two.op, two.callee_graphs):
                two.inputs = two.inputs[:1] * count
                return two
        return self._one_item(f"  %0(x) = {op}({operands})\n", "statement")

    def _template(self, op: str, operands: str):
        """Lark's reading of ``op(operands)`` as a node line: the callee tuple the node rule is given,
        the operands (None where there are none), the positions of the references' holes, and the
        positions of values to copy for each node."""
        node = self._read_call(op, operands)
        if node is None or node.index != 0 or node.debug_name != "x" or node.instance_name is not None or node.trailing_attrs \
                or node.primitive_attrs or node.cnode_attrs or node.cnode_primal_attrs:
            return _BAD
        callee = (node.kind, node.callee, node.op, node.callee_graphs)
        holes = tuple(i for i, v in enumerate(node.inputs) if v in _HOLE_VALUES)
        if len(holes) != len(self.refs.findall(operands)):
            return _BAD
        inputs = node.inputs if operands.strip(" \t") else None
        holed = set(holes)  # a set: a line of 250,000 operands tested against a tuple is quadratic
        fresh = tuple(i for i, v in enumerate(node.inputs) if i not in holed and _holds_mutable(v))
        return callee, inputs, holes, fresh
