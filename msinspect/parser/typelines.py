"""Reading type lines and abstracts without stepping Lark through each of their tokens, with Lark
the authority on every reading.

A 10 MB transformer dump has some 55,000 abstracts (``<Tensor[Float32], (512, 128)>``) in 13,000
type lines, of which a few thousand texts differ, and a few hundred once their digits are set
aside. Two readings here:

- A type line is read as its *skeleton*: the line with every top-level abstract replaced by
  ``<x>`` (``: (<x>, <x>) -> (<x>)``). Lark reads each skeleton once, from the grammar's own
  ``types_fragment`` start; a line then takes that reading with its own abstracts in the places of
  the ``<x>``. Every ``<`` opens an abstract in this grammar (no other terminal of a type line
  holds one), so the top-level ``<...>`` groups are exactly its abstracts; a line whose groups are
  nested deeper than the pattern below reads, or whose skeleton Lark does not read with one ``<x>``
  per group, is left to the caller.
- An abstract is read once per text. The common spellings (a tensor or parameter with its shape,
  a scalar or monad with ``NoShape``) are read by :func:`_direct` from their text; which of them is
  trusted is Lark's to say: the first abstract of each *template* (the text with every digit run
  replaced by zeros, the key of ``parser.core``'s fragment templates, passed in) is read both by
  Lark and directly, and the direct reading is used for that template only where the two are equal. Both readings treat a run
  of digits the same whatever its value (a dimension, part of a name), so the template's other
  texts read alike. Any other abstract is Lark's reading of its text.
- A tuple whose element shapes or flags repeat (a fused optimizer's tuple of every weight, tens of
  KB) earns the direct reading on a short *exemplar* of it instead (:meth:`TypeLines._tuple_trusted`).
"""
from __future__ import annotations

import re

from typing import Callable

from lark import Lark

from msinspect.model import Abstract
from msinspect.mindspore.dtypes import LONG_DTYPES
from msinspect.parser.bounded import Bounded

#: A top-level abstract, with abstracts nested one level inside it; split by it, a line is its
#: skeleton's pieces and its abstracts in turn.
_GROUP = re.compile(r"<[^<>]*(?:<[^<>]*>[^<>]*)*>")
_PIECES = re.compile(f"({_GROUP.pattern})")
_HOLE = "<x>"
#: Items repeated this many times or more in a row (operands of a call, abstracts of a type line:
#: a fused optimizer's one per weight) are read from an exemplar (FastReader._read_call,
#: TypeLines._by_exemplar).
RUN = 16
#: A run of holes read from an exemplar.
_HOLE_RUN = re.compile(r"<x>(?:, <x>){%d,}" % (RUN - 1))
#: ``<Tensor[Float32], (8, 16)>``, ``<Ref[Tensor[Float32]], (512, 128), ref_key=w, is_parameter>``,
#: ``<Tensor[Float32], (1), value=...>``
_TENSOR = re.compile(r"<(?:(Tensor)\[([A-Za-z][A-Za-z0-9]*)\]|(Ref)\[Tensor\[([A-Za-z][A-Za-z0-9]*)\]\]), "
                     r"\(((?:-?\d{1,20})(?:, -?\d{1,20})*)?\)((?:, [^<>()\[\]{},\s:][^<>()\[\]{},\s]*)*)>")
#: ``<UMonad, NoShape>``, ``<Bool, NoShape>``
_SCALAR = re.compile(r"<([A-Za-z_]\w*), NoShape>")
#: One element's shape in a ``TupleShape(...)``: ``NoShape``, ``()``, ``(512, 128)``.
_ELEMENT = r"(?:NoShape|\((?:-?\d{1,20}(?:, -?\d{1,20})*)?\))"
#: One element's flag in ``elements_use_flags={[const vector]{[0]:{1}, [1]:{1}}}``.
_FLAG = r"\[\d{1,20}\]:\{\d{1,20}\}"
#: ``<Tuple[Bool*2], TupleShape(NoShape, NoShape), elements_use_flags={[const vector]{[0]:{1}, [1]:{1}}}>``:
#: the head, the element shapes, and where written the flags between their opening and closing.
_TUPLE = re.compile(rf"(<Tuple\[[^<>()]*\], TupleShape\()({_ELEMENT}(?:, {_ELEMENT})*)\)"
                    rf"(?:(, elements_use_flags=\{{\[const vector\]\{{)({_FLAG}(?:, {_FLAG})*)(\}}\}}))?>")
_ELEMENTS = re.compile(_ELEMENT)
_FLAGS = re.compile(_FLAG)
#: Distinct abstracts, templates and skeletons kept; past that each starts again.
KEPT = 1 << 16
_BAD = object()


def _direct(text: str) -> Abstract | None:
    """The abstract of a common spelling, read from its text; None for any other."""
    m = _TENSOR.fullmatch(text)
    if m is not None:
        kind = m.group(1) or m.group(3)
        dtype = m.group(2) or m.group(4)
        dims = m.group(5)
        shape = tuple(map(int, dims.split(", "))) if dims else ()
        ref_key = None
        tail = m.group(6)
        if "ref_key=" in tail:
            for item in tail.split(", ")[1:]:
                if item.startswith("ref_key="):
                    ref_key = item[len("ref_key="):].lstrip(":")
        return Abstract(kind=kind, dtype=LONG_DTYPES.get(dtype, dtype), shape=shape, text=text,
                        elements=(), ref_key=ref_key)
    m = _SCALAR.fullmatch(text)
    if m is not None:
        word = m.group(1)
        return Abstract(kind=word, dtype=word, shape=None, text=text, elements=(), ref_key=None)
    m = _TUPLE.fullmatch(text)
    if m is not None:
        elements = tuple(None if e == "NoShape" else tuple(int(d) for d in e[1:-1].split(", ")) if e != "()" else ()
                         for e in _ELEMENTS.findall(m.group(2)))
        return Abstract(kind="Tuple", dtype=None, shape=None, text=text, elements=elements, ref_key=None)
    return None


class TypeLines:
    """Type lines and abstracts of one grammar (the Lark instance of ``parser.core``, with its
    transformer); ``template_key`` gives a text's digit template."""

    def __init__(self, lark: Lark, template_key: Callable[[str], str]) -> None:
        self.lark, self.template_key = lark, template_key
        self.abstracts = Bounded(KEPT)
        self.trusted = Bounded(KEPT)
        self.skeletons = Bounded(KEPT)

    def _lark_types(self, text: str):
        return self.lark.parse(text, start="types_fragment")

    def abstract(self, text: str) -> Abstract | None:
        """The abstract ``text`` as Lark reads it (directly where its template is trusted); None
        where Lark does not read it as one abstract."""
        found = self.abstracts.get(text, _BAD)
        if found is not _BAD:
            return found
        template = self.template_key(text)
        trusted = self.trusted.get(template)
        if trusted is None:
            trusted = self._tuple_trusted(text)
        result = _direct(text) if trusted else None
        if result is None:
            result = self._by_lark(text)
            if trusted is None:
                direct = _direct(text)
                self.trusted.put(template, direct is not None and direct == result)
        self.abstracts.put(text, result)
        return result

    def _tuple_trusted(self, text: str) -> bool | None:
        """For a tuple whose element shapes (or flags) repeat, as in a fused optimizer's
        ``<Tuple[Bool*1245], TupleShape(NoShape, ...), elements_use_flags={...}>`` (25 KB):
        whether the direct reading is trusted, asked of Lark on an *exemplar*: the tuple with one
        element shape, and one flag, of each template (digits as in :meth:`abstract`). Lark
        reads both lists item by item, the same way wherever an item stands and however many
        there are, so the exemplar speaks for every tuple of the same head and the same sets of
        item templates. None for any other text."""
        m = _TUPLE.fullmatch(text)
        if m is None:
            return None
        # each list's items, and their templates: those of the list's text, item by item (no item
        # begins with a digit, so each digit run has the same character before it either way)
        found = [(_ELEMENTS, m.group(2)), (_FLAGS, m.group(4) or "")]
        lists = [pattern.findall(text) for pattern, text in found]
        keys = [pattern.findall(self.template_key(text)) for pattern, text in found]
        if list(map(len, keys)) != list(map(len, lists)):
            return None
        kept = []  # of each list, the first item of each template, in order
        for items, templates in zip(lists, keys):
            first: dict[str, str] = {}
            for item, template in zip(items, templates):
                first.setdefault(template, item)
            kept.append(first)
        if sum(map(len, kept)) == sum(map(len, lists)):
            return None  # nothing repeats: the tuple itself is as short as its exemplar
        key = ("tuple", self.template_key(m.group(1)), *map(frozenset, kept))
        trusted = self.trusted.get(key)
        if trusted is None:
            exemplar = m.group(1) + ", ".join(kept[0].values()) + ")"
            if m.group(4):
                exemplar += m.group(3) + ", ".join(kept[1].values()) + m.group(5)
            exemplar += ">"
            read = _direct(exemplar)
            trusted = self.trusted.put(key, read is not None and read == self._by_lark(exemplar))
        return trusted

    def _by_lark(self, text: str) -> Abstract | None:
        try:
            tag, (ins, outs) = self._lark_types(f": ({text})")
        except Exception:
            return None
        return ins[0] if len(ins) == 1 and not outs and isinstance(ins[0], Abstract) else None

    def line(self, text: str):
        """The transformer's result for a type line (``: (...) -> (...)``), or None where it is
        not read here (the caller reads it with Lark)."""
        pieces = _PIECES.split(text)
        groups = pieces[1::2]
        skeleton = _HOLE.join(pieces[0::2])
        if skeleton.count("<") != len(groups) or skeleton.count(">") - skeleton.count("->") != len(groups):
            return None
        shape = self.skeletons.get(skeleton)
        if shape is None:
            shape = self.skeletons.put(skeleton, self._skeleton(skeleton, len(groups)))
        if shape is _BAD:
            return None
        tag, ins, outs, holes_in, holes_out = shape
        values = []
        known = self.abstracts
        for group in groups:
            value = known.get(group, _BAD)
            if value is _BAD:
                value = self.abstract(group)
            if value is None:
                return None
            values.append(value)
        if holes_in:
            ins = list(ins)
            for i, value in zip(holes_in, values):
                ins[i] = value
            ins = tuple(ins)
        if holes_out:
            outs = list(outs)
            for i, value in zip(holes_out, values[len(holes_in):]):
                outs[i] = value
            outs = tuple(outs)
        return (tag, (ins, outs))

    def _skeleton(self, skeleton: str, holes: int):
        try:
            tag, (ins, outs) = self._by_exemplar(skeleton) or self._lark_types(skeleton)
        except Exception:
            return _BAD
        holes_in = tuple(i for i, a in enumerate(ins) if isinstance(a, Abstract) and a.text == _HOLE)
        holes_out = tuple(i for i, a in enumerate(outs) if isinstance(a, Abstract) and a.text == _HOLE)
        if len(holes_in) + len(holes_out) != holes:
            return _BAD
        return tag, ins, outs, holes_in, holes_out

    def _by_exemplar(self, skeleton: str):
        """Lark's reading of a skeleton with a run of :data:`RUN` or more holes (a fused optimizer's
        type line, one abstract per weight), from the skeleton with two and with three holes in
        the run's place: Lark reads ``io_elem ("," io_elem)*`` item by item, each after the first
        in the same parser state, so where the list of holes grows by one hole from two to three
        (and holds nothing else), it holds that many holes; None where it does not."""
        run = _HOLE_RUN.search(skeleton)
        if run is None:
            return None
        count = run.group().count(_HOLE)
        (tag, (ins, outs)), (tag3, (ins3, outs3)) = (
            self._lark_types(skeleton[:run.start()] + ", ".join([_HOLE] * k) + skeleton[run.end():]) for k in (2, 3))
        for grown, (two, three), (other, other3) in ((0, (ins, ins3), (outs, outs3)), (1, (outs, outs3), (ins, ins3))):
            if tag == tag3 and other == other3 and two and three == two + two[:1] and all(a == two[0] for a in two):
                many = two[:1] * (len(two) - 2 + count)
                return tag, ((ins, many) if grown else (many, outs))
        return None

