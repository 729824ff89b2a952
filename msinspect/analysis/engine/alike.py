"""Reading a rank by what differs from a rank of its batch read in full: the structure read once.

Ranks of one group compile one program: their files are the same text but for values that name
the rank (group names and rank lists, peers, slice offsets, pointers, the compile phase). Reading
each in full repeats the parse and the graph of the first for thousands of ranks. Here a rank
(the *follower*) is read against one of its batch that was read in full (the *exemplar*, its model
and graph kept while the batch lasts):

1. The follower's text, line by line, against the exemplar's: the same number of lines, and every
   line that differs differs only in *values* (:data:`VALUE`: a quoted string, an ``I64(n)``, a
   scalar tensor's ``value=n``, a pointer, a ``group`` hash name; the ``compile_phase`` header;
   the node count a file states, :data:`_STATED_NODES`), or in the order of the ``$``-joined parts
   of a node's debug name (:func:`unordered`: MindSpore prints them in no fixed order, so ranks of
   one MindFormers job write ``CNode_3645$overflow$flag_sum$cond$overflow`` and
   ``CNode_3645$overflow$overflow$flag_sum$cond``).
   Any other difference (an operator, a strategy, a shape, a reference) is a *departure*: the rank
   is read in full and flagged (:class:`Departure`), never read by a rule that does not hold.
2. Each node item holding a differing line is read again from the follower's text by the parser's
   own fast reading (:mod:`msinspect.parser.fastpath`, as a full parse reads it), and its values
   put into the exemplar's node (:func:`patched`): the model is then the follower's model, as a
   full parse makes it, nodes, attributes and constants alike (``tests/analysis/test_alike.py``
   compares the two on every multi-rank fixture and zoo run). A node whose graph data would
   change (its name, strategy, shapes) is a departure.
3. The analysis runs on that model and the exemplar's graph, unchanged code: the rank's rows are
   made by the functions that make every rank's rows. What is saved is the parse and the graph.

The exemplar's nodes are put back as they were once the follower's rows are made.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from contextlib import contextmanager
from dataclasses import dataclass, fields
from itertools import compress, count
from operator import ne
from typing import Callable, Iterator

from msinspect.graph import _attrs, node_id
from msinspect.model import IRFile, Node
from msinspect.parser.reading import read_text

#: The values a follower's line may hold where the exemplar's holds others: a quoted string (a
#: group's name or rank list, a fusion key), an ``I64(n)`` (a peer, a tag, a device count, a
#: constant operand such as a slice's offset), a scalar tensor's ``value=n`` (an embedding's
#: vocabulary offset), a pointer, a group's hash name, a group's ``rank_list`` / ``group_rank_ids``;
#: and :data:`_ELIDED`.
#: Each alternative begins with a character, not an assertion (the group hash's ``\b`` and the rank
#: list's look-behind come after it): the regex engine then skips the places where none can
#: begin: twice as fast over the zoo's lines (bench/bench_values.py), with the same splits.
VALUE = re.compile(r'"(?:[^"\\\n]|\\.)*"|I64\(-?\d+\)|value=-?\d+|0x[0-9a-fA-F]{6,}|\d(?<!\w\d)\d*-\d{8,}\b'
                   r'|\((?:(?<=rank_list: \()|(?<=group_rank_ids: \())\d+(?:, \d+)*\)')
#: The most lines of followers an exemplar keeps as differing in values only.
_LINES_KEPT = 4096

#: The header line that holds when the rank's process built its network.
_PHASE = "compile_phase: "
#: The node count a 2.10 file states: ranks of one program may count a few more nodes than they
#: print (zoo 16's ranks state 2219, 2222 and 2221 for files of the same lines); no analysis reads it.
_STATED_NODES = "Total number of nodes: "
#: A node line's debug name of ``$``-joined parts (``%141(CNode_3630$overflow$flag_sum$cond) = ``):
#: its first part, and the parts after it.
_DOLLAR_NAME = re.compile(r"(?<=\()([^()$\s]+)((?:\$[^()$\s]+)+)(?=\) = )")
#: The fields of a node a follower's item gives it; the rest (its graph, line, cached strategy)
#: stay the exemplar's.
_COPIED = tuple(f.name for f in fields(Node) if f.name not in ("graph", "line", "_strategy"))


@dataclass(frozen=True)
class Departure:
    """Why a follower could not be read by what differs: the rank is read in full."""

    line: int
    """The follower's line (1-based) where it departs; 0: the file as a whole."""
    reason: str
    departs: bool = True
    """False where the file may well be alike but cannot be read by what differs (a node the
    fast reading leaves to Lark): read in full, and nothing to flag."""

    def format(self, exemplar: str, file: str = "") -> str:
        where = f"line {self.line}" if self.line else "its text"
        of = f" of {file}" if file else ""
        return f"read in full: {where}{of} differs from {exemplar}'s beyond rank-specific values ({self.reason})"


def lines_of(path: str) -> list[str] | None:
    """The file's lines; None where it cannot be read cleanly (the full read says why)."""
    text = text_of(path)
    return text.split("\n") if text is not None else None


def text_of(path: str) -> str | None:
    """The file's text; None where it cannot be read cleanly (the full read says why)."""
    from msinspect.errors import MsInspectError

    try:
        return read_text(path)[0]
    except MsInspectError:
        return None


#: What an abstract of a constant may say of its value, on one rank and not on another
#: (``<Tensor[Int32], (), value=...>``: MindFormers' vocabulary offset, 0 on rank 0).
_ELIDED = re.compile(r", value=\.\.\.(?=>)")


_POINTER = re.compile(r"0x[0-9a-fA-F]{6,}")
#: A line under a node line that belongs to its item: its type line (``: (...) -> (...)``) or a
#: comment (``# Scope: ...``, ``# In file ...``).
_ANNOTATION = re.compile(r"[ \t]+[:#]")


def only_pointers(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with other pointers, or both are the ``compile_phase`` header, or
    both the node count the file states."""
    if a.startswith(_PHASE) and b.startswith(_PHASE):
        return True
    if _stated_nodes(a) is not None and _stated_nodes(b) is not None:
        return True
    return _POINTER.split(a) == _POINTER.split(b)


def _stated_nodes(line: str) -> int | None:
    """The count of a ``Total number of nodes: N`` line; None for any other line."""
    if line.startswith(_STATED_NODES):
        count = line[len(_STATED_NODES):].strip()
        if count.isdigit():
            return int(count)
    return None


def unordered(text: str) -> str:
    """``text`` with the ``$``-parts of a node line's debug name sorted (``CNode_3$b$a`` ->
    ``CNode_3$a$b``): two ranks' names alike but for the order MindSpore printed the parts in
    read the same. The first part (``CNode_3``) stays first; no operand is touched."""
    if "$" not in text:
        return text
    return _DOLLAR_NAME.sub(lambda m: m[1] + "$" + "$".join(sorted(m[2][1:].split("$"))), text)


def _what_differs(a: str, b: str, label: str, width: int = 40) -> str:
    """``'...114' here, '...115' on rank_0``: the two lines from where they part, shortened."""
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, at - 12)

    def cut(text: str) -> str:
        piece = text[start:start + width].strip()
        return ("..." if start else "") + piece + ("..." if len(text) > start + width else "")

    return f"{cut(b)!r} here, {cut(a)!r} on {label}"


class Exemplar:
    """A rank read in full: its lines, its model and its graph, kept while its batch lasts."""

    def __init__(self, label: str, lines: list[str], ir: IRFile, graph=None) -> None:
        self.label, self.lines, self.ir, self.graph = label, lines, ir, graph
        self.ref_exemplar: Exemplar | None = None  # the rank's reference file read the same way
        #: while a follower is patched in (:func:`patched`): the lines of its nodes read again,
        #: and whether they carry the same weight names as the exemplar's
        self.changed: set[int] = set()
        self.names_kept = True
        #: per reader given to :func:`patched`: whether it reads the same of every node the
        #: follower's values change
        self.keeps: dict[str, bool] = {}
        #: node items of followers already read, by their first line and text: ranks of one
        #: group write their group's operators alike (:func:`_reread`)
        self.items: dict[tuple[int, str], Node] = {}
        #: what :func:`patched` found of each of those items against the exemplar's node (whether
        #: the weight names, each reader's reading and the graph's data are the same)
        self.facts: dict[tuple[int, str], tuple] = {}
        self._splits: dict[int, list[str]] = {}  # the exemplar's lines split at their values
        #: followers' lines found to differ in values only, by number: ranks of one group write
        #: their group's lines alike
        self._alike: set[tuple[int, str]] = set()
        self.starts = sorted(n.line for n in ir.nodes())  # where each node item begins
        self.by_line = {n.line: n for n in ir.nodes()}
        #: the lines followers were found to differ in (:meth:`differing_text`), and the
        #: exemplar's text around them: before the first, between each two, after the last
        self._known: tuple[int, ...] = ()
        self._pieces: list[str] | None = None
        self._read: tuple[int, set[str]] | None = None  # names_read() and the answers' count it read

    def names_read(self) -> set[str]:
        """:func:`_names_read` of the exemplar's graph, found again when it keeps more answers."""
        from msinspect.analysis.dataflow import file_view

        size = len(file_view.kept_answers(self.graph))
        if self._read is None or self._read[0] != size:
            self._read = (size, _names_read(self.graph))
        return self._read[1]

    def item_of(self, line: int) -> int | None:
        """The first line of the node item holding ``line`` (1-based); None for a line before
        every node."""
        at = bisect_right(self.starts, line) - 1
        return self.starts[at] if at >= 0 else None

    def holds(self, start: int, line: int) -> bool:
        """Whether ``line`` is one of the node item beginning at ``start``: its node line, or one
        of the type and comment lines under it."""
        return all(_ANNOTATION.match(self.lines[i - 1]) for i in range(start + 1, line + 1))

    def differing(self, lines: list[str]) -> list[int] | Departure:
        """The 1-based lines where ``lines`` differs from the exemplar's, each in values only;
        else the :class:`Departure`."""
        if len(lines) != len(self.lines):
            return Departure(0, f"{len(lines):,} lines, {self.label} has {len(self.lines):,}")
        return self._checked(list(compress(count(1), map(ne, self.lines, lines))), lines)  # 1-based, in C

    def _checked(self, differ: list[int], lines: list[str]) -> list[int] | Departure:
        """``differ`` (the 1-based lines where ``lines`` differs from the exemplar's) where each
        differs in values only; else the :class:`Departure` of the first that does not."""
        for i in differ:
            if not self._values_only(i, lines[i - 1]):
                return Departure(i, _what_differs(self.lines[i - 1], lines[i - 1], self.label))
        return differ

    def differing_text(self, text: str) -> tuple[list[str], list[int] | Departure]:
        """``(lines, differing lines)`` of a follower's ``text`` (:meth:`differing`). Where every
        line it differs in is one that followers differed in before, the text between those lines
        is compared whole, in place (``str.startswith`` at an offset: no line made), and its lines
        are the exemplar's with those lines put in; else the text is split and compared line by
        line, and the lines it differs in are known from then on."""
        found = self._between_known(text)
        if found is None:
            lines = text.split("\n")
            differ = self.differing(lines)
            if not isinstance(differ, Departure):
                self._learn(differ)
            return lines, differ
        lines = list(self.lines)
        differ = []
        for i, line in zip(self._known, found):
            if line != lines[i - 1]:
                lines[i - 1] = line
                differ.append(i)
        return lines, self._checked(differ, lines)

    def _between_known(self, text: str) -> list[str] | None:
        """The follower's lines at :attr:`_known` where its text is the exemplar's between them;
        None where it is not, or none are known."""
        pieces = self._pieces
        if pieces is None:
            return None
        found, at = [], 0
        for piece in pieces[:-1]:
            if not text.startswith(piece, at):
                return None
            at += len(piece)
            end = text.find("\n", at)
            if end < 0:
                return None
            found.append(text[at:end])
            at = end + 1
        tail = pieces[-1]
        if len(text) - at != len(tail) or not text.startswith(tail, at):
            return None
        return found

    def _learn(self, differ: list[int]) -> None:
        """Know the lines of ``differ`` too (1-based), and cut the exemplar's text around them
        (:meth:`_between_known`); not the last line, which no newline ends."""
        known = tuple(sorted(set(self._known) | {i for i in differ if i < len(self.lines)}))
        if known == self._known:
            return
        pieces, begin = [], 0  # begin: the first line (0-based) of the next piece
        for i in known:
            pieces.append("".join(line + "\n" for line in self.lines[begin:i - 1]))
            begin = i
        pieces.append("\n".join(self.lines[begin:]))
        self._known, self._pieces = known, pieces

    def _values_only(self, i: int, line: str) -> bool:
        """Whether ``line`` is the exemplar's line ``i`` with other values (:data:`VALUE`) in the
        same places, or an abstract's elided value (:data:`_ELIDED`) said on one of them only (the
        exemplar's line split once, kept)."""
        if (i, line) in self._alike:
            return True
        mine = self.lines[i - 1]
        if mine.startswith(_PHASE) and line.startswith(_PHASE):
            return True
        if _stated_nodes(mine) is not None and _stated_nodes(line) is not None:
            return True
        split = self._splits.get(i)
        if split is None:
            split = self._splits[i] = VALUE.split(_ELIDED.sub("", unordered(mine)))
        if VALUE.split(_ELIDED.sub("", unordered(line))) != split:
            return False
        if len(self._alike) >= _LINES_KEPT:
            self._alike.clear()
        self._alike.add((i, line))
        return True


def compared(exemplar: Exemplar, path: str, file: str = "") -> tuple[list[str] | None, list[int] | str | None]:
    """``(lines, differing lines)`` of the file at ``path`` against ``exemplar``'s; ``(None, why)``
    where it is not read by what differs: the departure said in words (``file``: the file it is
    about, where that is not the rank's own), or None where there is nothing to flag (a file that
    does not read cleanly, a node the fast reading leaves to Lark)."""
    text = text_of(path)
    if text is None:
        return None, None
    lines, differ = exemplar.differing_text(text)
    if isinstance(differ, Departure):
        return None, differ.format(exemplar.label, file) if differ.departs else None
    return lines, differ


#: The most node items of followers an exemplar keeps (:attr:`Exemplar.items`).
_ITEMS_KEPT = 512


def _reread(exemplar: Exemplar, lines: list[str], starts: list[int]) -> dict[int, tuple] | Departure:
    """The follower's node items beginning at ``starts``, each read by the fast reading from its
    own lines (the node line and the type and comment lines under it): ``start -> (its key in
    :attr:`Exemplar.items`, the node)``."""
    from msinspect.parser.core import _fast

    fast = _fast()
    read = {}
    for start in starts:
        end = start
        while end < len(lines) and _ANNOTATION.match(lines[end]):
            end += 1
        text = "\n".join(lines[start - 1:end]) + "\n"
        node = exemplar.items.get((start, text))
        if node is None:
            got = fast.node(text, 0, len(text), start)
            if got is None:
                return Departure(start, "its node is not one the fast reading reads", departs=False)
            if len(exemplar.items) >= _ITEMS_KEPT:
                exemplar.items.clear()
                exemplar.facts.clear()
            node = exemplar.items[(start, text)] = got[0][2]
        read[start] = ((start, text), node)
    return read


#: The graph's data of a node that a follower may give in another order of its ``$``-parts
#: (:func:`unordered`): put in while the follower is read (:func:`patched`).
_NAMES = ("name", "debug_name")


def _in_place(graph, node: Node, new: Node) -> dict | None:
    """The graph's data of the exemplar's ``node`` that ``new`` gives otherwise, where its other
    values give the same (its strategy, shapes ...: what the graph was built from; its subgraph
    and the node itself stay the exemplar's, :data:`_COPIED`): its names, each differing only in
    the order of its ``$``-parts (:func:`unordered`); None where any other data differs."""
    data = graph.nodes[node_id(node)]
    renamed = {}
    for k, v in _attrs(new).items():
        if k in ("node", "graph") or data.get(k) == v:
            continue
        if k not in _NAMES or not isinstance(v, str) or unordered_name(data.get(k)) != unordered_name(v):
            return None
        renamed[k] = v
    return renamed


def unordered_name(name) -> str | None:
    """A debug name with its ``$``-parts after the first sorted (:func:`unordered`)."""
    if not isinstance(name, str):
        return None
    first, *parts = name.split("$")
    return "$".join([first, *sorted(parts)])


def _names_read(graph) -> set[str]:
    """The names some answer the graph keeps holds (:func:`msinspect.analysis.dataflow.file_view.remember`: a
    communication row's producer and consumers, by name): every string in the kept answers'
    tuples and lists. A node so named cannot be renamed in place: the answer would keep the name
    of the rank that asked first."""
    from msinspect.analysis.dataflow import file_view

    kept = file_view.kept_answers(graph)
    if not kept:
        return set()
    found: set[str] = set()
    todo = list(kept.values())
    while todo:
        value = todo.pop()
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, (tuple, list)):
            todo.extend(value)
    return found


def _names(node: Node) -> tuple:
    """The weight's name MindSpore writes on a node (``mirror_user_id``): what an operator row
    reads of the nodes before it (:func:`~msinspect.analysis.rank.operators.parameter_read`)."""
    return (node.primitive_attrs.get("mirror_user_id"), node.cnode_primal_attrs.get("mirror_user_id"))


@contextmanager
def patched(exemplar: Exemplar, lines: list[str], differ: list[int], path: str,
            readers: dict[str, Callable[[Node], tuple]] | None = None) -> Iterator[IRFile | Departure]:
    """The exemplar's model made the follower's (``lines``, differing at ``differ``, its file
    ``path``), for as long as the ``with`` lasts; a :class:`Departure` where it cannot be.
    ``readers``: name -> what some analysis reads of a node; :attr:`Exemplar.keeps` then says,
    per name, whether it reads the same of the follower's nodes as of the exemplar's."""
    readers = readers or {}
    starts = set()
    for line in differ:
        start = exemplar.item_of(line)
        if start is not None and exemplar.holds(start, line):
            starts.add(start)
        elif not only_pointers(exemplar.lines[line - 1], lines[line - 1]):
            yield Departure(line, "values differ on a line outside every node")
            return
    read = _reread(exemplar, lines, sorted(starts)) if starts else {}
    if isinstance(read, Departure):
        yield read
        return
    saved: list[tuple[Node, dict]] = []
    renamed: list[tuple[dict, dict]] = []  # the graph's data of renamed nodes, and its names before
    ir, graph = exemplar.ir, exemplar.graph  # graph: None for a reference file (no graph is made)
    before = (ir.path, ir.attrs, ir.stated_nodes)
    exemplar.changed = set(read)
    exemplar.names_kept = True
    exemplar.keeps = dict.fromkeys(readers, True)
    try:
        for start, (key, new) in read.items():
            node = exemplar.by_line[start]  # as the exemplar has it: each follower's values are put back
            facts = exemplar.facts.get(key)
            if facts is None or not readers.keys() <= facts[1].keys():
                facts = exemplar.facts[key] = (_names(node) == _names(new),
                                               {name: reads(node) == reads(new) for name, reads in readers.items()},
                                               {} if graph is None else _in_place(graph, node, new),
                                               tuple(name for name in _COPIED if getattr(node, name) != getattr(new, name)))
            names, reads_same, in_place, differs = facts
            if in_place is None:
                yield Departure(start, "the node's name, strategy or shapes differ")
                return
            if in_place:
                data = graph.nodes[node_id(node)]
                if data.get("name") in exemplar.names_read():
                    yield Departure(start, "a renamed node's name is read by an answer kept for the graph",
                                    departs=False)
                    return
                renamed.append((data, {k: data[k] for k in in_place}))
                data.update(in_place)
            exemplar.names_kept &= names
            for name in readers:
                exemplar.keeps[name] = exemplar.keeps[name] and reads_same[name]
            # the fields whose values differ (the rest are equal): the follower's, and its
            # strategy as read of them (the item's, read once: items are kept)
            saved.append((node, [(name, getattr(node, name)) for name in differs], node._strategy))
            for name in differs:
                setattr(node, name, getattr(new, name))
            node._strategy = new.strategy
        ir.path = path
        phase = next((line for line in lines if line.startswith(_PHASE)), None)
        if phase is not None and "compile_phase" in ir.attrs:
            ir.attrs = {**ir.attrs, "compile_phase": phase[len(_PHASE):].strip()}
        for line in differ:
            stated = _stated_nodes(lines[line - 1])
            if stated is not None and ir.stated_nodes is not None:
                ir.stated_nodes = stated
        yield ir
    finally:
        for node, values, strategy in saved:
            for name, value in values:
                setattr(node, name, value)
            node._strategy = strategy
        for data, names in renamed:
            data.update(names)
        ir.path, ir.attrs, ir.stated_nodes = before
