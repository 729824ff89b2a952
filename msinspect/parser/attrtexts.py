"""Reading a node's attribute text (the ATTRS token after its operands) with Lark reading each
*shape* of it once.

A transformer dump has thousands of distinct attribute texts, but they differ from each other
almost only in their quoted strings and in the instance name::

    {instance name: ln1} primitive_attrs: {in_strategy: ((2, 1), (1), (1)), mirror_user_id: "blocks.0.ln1_beta"}
        cnode_attrs: {related_comm_node_id: "351667"} cnode_primal_attrs: {related_node_id: "245453", ...}

(zoo 09: 3,012 distinct texts over 5,612 nodes, 25 shapes). Two cuts make the shape:

- The leading ``{instance name: X}`` group, where its text holds no bracket, quote or brace
  inside, is one whole ``node_attrs`` item of ``attrs_fragment: node_attrs+``: it is read on its own
  (by ``fragment``, ``parser.core``'s cached reading of a fragment), the rest after it on its own,
  and the two readings put end to end. The cut is at a ``}`` that closes a group (nothing inside
  the group can hold one), and the parser is in the same state after one item as before the
  first, so its contextual lexer reads the rest as it would after the group.
- In the rest every match of the grammar's own STRING terminal is a *hole*: the rest's *key* is
  the text with each string replaced by a NUL (a text holding a NUL is not read here, so its key
  splits back into the same texts between holes). Lark reads the key once, with the holes
  written as distinct sentinel strings, and a hole is used only where its sentinel comes out
  exactly once as a whole value (a dict value, a tuple or list item) and no sentinel anywhere
  else: a quote inside another token (a tensor's ``value=...``), a string used as a key, or a
  string a later pair of the same key replaces, makes the shape unused. A text of the same key
  then takes that reading with the value of each of its own strings, made by the transformer's
  ``string`` callback, in the hole's place.

Why that is Lark's reading of the text: the text and the key's sentinel text differ only inside
the matched strings. Lark's lexer, in the same parser state at a hole's first quote, chooses the
STRING terminal there in the sentinel text (its value came out of the ``string`` callback); the
only terminals that can begin with a quote are STRING and the abstracts' ABS_TEXT, which no state
of ``attrs_fragment`` accepts, and STRING's match at a position is the regular expression's match
there, the hole itself. What precedes a hole ends at its quote in both texts, what follows is the
same text in the same state. So the token types, and every value but the strings', are the same.
Anything else (no shape, a value the transformer refuses) is read by ``fragment`` whole, whose
result or error is the answer. ``tests/parser/test_attrtexts.py`` and the fixture comparisons of
``tests/parser/test_fastpath.py`` hold this against Lark's own reading.
"""
from __future__ import annotations

import re

from lark import Lark

from msinspect.parser.bounded import Bounded
from msinspect.parser.transformer import MAX_VALUE_DEPTH, value_depth

#: ``{instance name: X}`` at the start of an attribute text, with nothing inside that can open or
#: close a group or a string.
_HEAD = re.compile(r"\{instance name: [^{}\[\]()\"'\n]*\}[ \t]*")
_HOLE = "\x00"
#: Distinct shapes (and texts read by them) kept; past that they start again.
SHAPES = 1 << 12
#: Distinct instance-name groups kept.
HEADS = 1 << 14
_BAD = object()


def _sentinel(i: int) -> str:
    return f"{_HOLE}{i}"


class AttrTexts:
    """Attribute texts of one grammar (the Lark instance of ``parser.core`` and its transformer,
    whose ``fragment`` and ``string`` read the parts Lark must read itself)."""

    def __init__(self, lark: Lark, transformer, copier) -> None:
        self.lark, self.transformer, self.copier = lark, transformer, copier
        #: split by it, a text is the pieces of its key between holes and its strings in turn
        self.strings = re.compile("(" + lark.get_terminal("STRING").pattern.to_regexp() + ")")
        self.shapes = Bounded(SHAPES)
        #: the plan of each instance-name group read
        self.heads = Bounded(HEADS)

    def plan(self, text: str):
        """``(tag, value, how each node copies it)`` for each attribute group of ``text``, as
        ``IRTransformer._attrs`` makes them; None where the text is not read here."""
        head = _HEAD.match(text)
        out = ()
        rest = text
        if head is not None:
            group = head.group().rstrip(" \t")
            out = self.heads.get(group)
            if out is None:
                try:
                    out = tuple((tag, value, self.copier(value))
                                for tag, value in self.transformer.fragment("attrs_fragment", group))
                except Exception:
                    return None
                self.heads.put(group, out)
            rest = text[head.end():]
            if not rest:
                return out
        if _HOLE in rest:
            return None
        pieces = self.strings.split(rest)
        strings = pieces[1::2]
        key = _HOLE.join(pieces[0::2])
        shape = self.shapes.get(key)
        if shape is None:
            shape = self.shapes.put(key, self._shape(key, strings))
        if shape is _BAD:
            return None
        parts, where, groups = shape
        if not strings:
            return out + parts
        string = self.transformer.string
        try:
            values = [string([s]) for s in strings]
        except Exception:
            return None
        if groups is None:
            return out + _fill(parts, where, values)
        filled = list(parts)
        for i, places in groups:  # each hole a value of a group's dict: the dict copied once
            tag, value, copy = filled[i]
            value = value.copy()
            for k, hole in places:
                value[k] = values[hole]
            filled[i] = (tag, value, copy)
        return out + tuple(filled)

    def _shape(self, key: str, strings: list[str]):
        """``(the plan of the key's reading, where each hole's value goes, and the same as
        (group, key) pairs where every hole is a value of a group's dict)``; _BAD where the key is
        not one shape. (The key's holes are as many as the text's strings: the text holds no NUL.)"""
        pieces = key.split(_HOLE)
        if len(pieces) != len(strings) + 1:
            return _BAD
        text = pieces[0] + "".join(f'"{_sentinel(i)}"{piece}' for i, piece in enumerate(pieces[1:]))
        try:
            read = self.lark.parse(text, start="attrs_fragment")
        except Exception:
            return _BAD
        if any(value_depth(value, MAX_VALUE_DEPTH + 1) > MAX_VALUE_DEPTH + 1 for _, value in read):
            return _BAD  # Lark's own reading of the text says where it nests too deep
        sentinels = {_sentinel(i): i for i in range(len(strings))}
        where: dict = {}
        found: set = set()
        if not _locate(read, sentinels, where, found) or len(found) != len(strings):
            return _BAD
        parts = tuple((tag, value, self.copier(value)) for tag, value in read)
        return parts, where, _dict_values(parts, where)


def _dict_values(parts: tuple, where: dict):
    """Where every hole is a value of a group's dict (``primitive_attrs: {group: "..."}``): each
    group's number and its ``(key, hole)`` pairs; None otherwise (_fill puts them)."""
    groups = []
    for i, inner in where.items():
        places = inner.get(1) if len(inner) == 1 else None
        if not isinstance(parts[i][1], dict) or not isinstance(places, dict) \
                or any(hole.__class__ is not int for hole in places.values()):
            return None
        groups.append((i, tuple(places.items())))
    return tuple(groups)


def _locate(value, sentinels: dict, where: dict, found: set) -> bool:
    """Fill ``where`` (a tree of container keys, ending in a hole's number) with the place of each
    sentinel that is a whole value, and ``found`` with their numbers; False where a sentinel
    stands anywhere else or twice."""
    if isinstance(value, str):
        return _HOLE not in value
    if isinstance(value, dict):
        items = value.items()
        if any(not isinstance(k, str) or _HOLE in k for k in value):
            return False
    elif isinstance(value, (tuple, list)):
        items = enumerate(value)
    else:
        return _HOLE not in repr(value)
    for k, v in items:
        if isinstance(v, str) and v in sentinels:
            if sentinels[v] in found:
                return False
            found.add(sentinels[v])
            where[k] = sentinels[v]
            continue
        inner: dict = {}
        if not _locate(v, sentinels, inner, found):
            return False
        if inner:
            where[k] = inner
    return True


def _fill(value, where: dict, values: list):
    """``value`` with each hole of ``where`` replaced by its value: containers on the way copied,
    everything else shared (nodes copy what they keep, as for every cached fragment)."""
    if isinstance(value, dict):
        out = dict(value)
    else:
        out = list(value)
    for k, w in where.items():
        out[k] = values[w] if w.__class__ is int else _fill(value[k], w, values)
    return out if isinstance(value, (dict, list)) else tuple(out)
