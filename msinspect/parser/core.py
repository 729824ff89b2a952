"""Reading ``.ir`` / ``.ir.gz`` text with the Lark grammar: strict and lenient parsing."""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Iterable, Iterator

import lark_cython
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from msinspect import collector
from msinspect.errors import IRParseError
from msinspect.model import Diagnostic, IRFile
from msinspect.parser import compiled
from msinspect import parser_mode as parse_mode
from msinspect.parser.assemble import assemble, check_counts
from msinspect.parser.attrtexts import AttrTexts
from msinspect.parser.bounded import Bounded
from msinspect.parser.fastpath import CANDIDATE, FastReader
from msinspect.parser.reading import Unclean, read_text, text_pieces
from msinspect.parser.secondsight import SecondSight
from msinspect.parser.transformer import BadToken, IRTransformer, _copier, lines_before
from msinspect.parser.typelines import TypeLines

GRAMMAR = "mindspore_ir.lark"


_READABLE = {
    "_NL": "end of line",
    "NODE_HEAD": "a node definition like %3(name)",
    "NODE_REF": "a node reference like %3",
    "PARAM": "a parameter like %para1_x",
    "FREE_VAR": "a free variable like $(@graph:para1_x)",
    "GRAPH_REF": "a graph reference like @name",
    "GRAPH_REF2": "a graph reference like @name",
    "OP_NAME": "an operator name",
    "PRIM_NAME": "a primitive name",
    "NAMELESS_PRIM": "a primitive's attributes like primitive_attrs: {[...]}",
    "KEY": "an attribute name",
    "STRING": "a quoted string",
    "NUMBER": "a number",
    "WORD": "a name",
    "GROUP_NAME": "a group name",
    "SCOPED_WORD": "a name with its scope like Default/net/Add-op0",
    "ENVIRON_KEY": "an environment key like [Key][...]",
    "TENSOR_ID": "a tensor by its id like Tensor(43)[8, 16]",
    "TYPED_SCALAR_OPEN": "a typed scalar like I64(0)",
    "TENSOR_OPEN": "a tensor like Tensor(shape=[...], ...)",
    "TENSOR_VALUE": "value=...",
    "ABS_TEXT": "type text",
    "SUBGRAPH_OPEN": "'subgraph @name'",
    "RETURN": "'Return'",
    "KV_LINE": "a 'key: value' line",
    "SOURCE": "'# In file ...'",
    "SCOPE": "'# Scope: (...)'",
    "FULLNAME": "'# Fullname with scope: (...)'",
    "COMMENT": "a '#' comment",
    "PARAM_TAIL": "parameter details",
}


#: Distinct fragments (a node's attributes, a type line) kept parsed, per process.
FRAGMENT_CACHE = 1 << 16


class _FragmentError(Exception):
    """A fragment did not parse: the token that holds it and the error inside it."""

    def __init__(self, token, error, pos: int) -> None:
        super().__init__(str(error))
        self.token, self.error, self.pos = token, error, pos
        collector.resume()


def _parser() -> tuple[Lark, IRTransformer]:
    """The Lark instance and transformer of the reading in force (:mod:`msinspect.parser_mode`)."""
    return _built(parse_mode.current())


@lru_cache(maxsize=len(parse_mode.READINGS))
def _built(reading: str) -> tuple[Lark, IRTransformer]:
    fast = reading == parse_mode.FAST
    grammar = resources.files("msinspect.grammars").joinpath(GRAMMAR).read_text(encoding="utf-8")
    transformer = IRTransformer(keep=fast)
    # lark-cython (Lark's own compiled lexer and LALR loop, by Lark's author) halves the time per
    # token on transformer dumps; bench/bench_parse.py measures it.
    options = dict(parser="lalr", lexer="contextual", start=["start", "attrs_fragment", "types_fragment"],
                   _plugins=lark_cython.plugins, maybe_placeholders=False, propagate_positions=False)
    lark = compiled.lark(grammar, transformer=transformer, **options)

    def direct(start: str, text: str):
        try:
            return lark.parse(text, start=start)
        except UnexpectedInput as caught:
            err = _detached(caught)
            raise _FragmentError(None, err, _offset(err, text)) from None
        except BadToken as bad:
            raise _FragmentError(None, bad, bad.token.start_pos) from None

    read_fragment = _fast_fragments(grammar, options, lark, transformer, direct) if fast else direct

    def fragment(start: str, token):
        try:
            return read_fragment(start, str(token))
        except _FragmentError as failed:
            raise _FragmentError(token, failed.error, failed.pos) from None

    transformer.fragment = fragment
    if fast:
        transformer.attr_texts = AttrTexts(lark, transformer, _copier)
        transformer.fast_reader = FastReader(lark, transformer)
    return lark, transformer


_parser.cache_clear = lambda: _built.cache_clear()  # a new parser for each reading on its next use


def _fast_fragments(grammar: str, options: dict, lark: Lark, transformer: IRTransformer, direct):
    """The fast reading's ``read(start, text)`` of a fragment: kept per text from its second
    sight on, a type line by :class:`TypeLines`, any other by its digit template's tree, and
    ``direct(start, text)`` (Lark) wherever those cannot say."""
    tree_lark = compiled.lark(grammar, **options)  # the same grammar building trees, for templates
    templates = Bounded(_TEMPLATES)
    memo = Bounded(_MEMO_SIZE)
    type_lines = TypeLines(lark, _template_key)
    transformer.type_lines = type_lines  # the abstracts of parameter lines (parser.fastpath)
    kept = SecondSight(FRAGMENT_CACHE)  # most type lines are one node's (zoo 09: 2,538 of 3,816)

    def read(start: str, text: str):
        key = (start, text)
        found = kept.get(key)
        return found if found is not None else kept.keep(key, by_template(start, text))

    def by_template(start: str, text: str):
        if start == "types_fragment":
            read = type_lines.line(text)
            if read is not None:
                return read
        key = _template_key(text)
        if key != text:
            tree = templates.get((start, key))
            if tree is None:  # first seen: read directly; a second time makes it a template
                if len(templates) >= templates.size:
                    memo.clear()  # keyed by the id of a template's subtree: ids of freed trees come back
                templates.put((start, key), _SEEN)
            elif tree is _SEEN:
                tree = _template_tree(tree_lark, transformer, start, key)
                tree = templates[(start, key)] = _BAD if tree is None else tree
            if tree is not None and tree is not _SEEN and tree is not _BAD:
                try:
                    return _instantiate(tree, text, memo)
                except Exception:  # whatever the template cannot say, the direct parse says exactly
                    pass
        return direct(start, text)

    return read


# ---------------------------------------------------------------- fragment templates
#: Transformer dumps repeat each attribute dict and type line once per block with other numbers in
#: it (shapes aside, "ref_key=blocks.74.wq", "%para749_..."). A fragment's *template* is its text
#: with every run of ASCII digits replaced by as many "0"s, except runs right after "I", "U", "F" or
#: "t" ("I64(", "U8(", "BF16(", "Float32(", "Int64("). Lark reads the template once into a tree; a
#: fragment with the same template takes that tree with each token's text sliced from its own text
#: at the same positions, and the transformer runs on it.
#: Why that is the parse of the fragment itself: positions are kept (runs keep their length), the
#: LALR parser looks only at token types, and no terminal tells one digit from another except the
#: literal digits of TYPED_SCALAR_OPEN, which all follow one of those letters and so are never
#: replaced; every other terminal sees digits only through \d, \w or a negated class that leaves
#: them all in or all out. A terminal added to the grammar with a literal digit after another
#: character must be added to that lookbehind (tests/parser/test_templates.py shows the failure).
#: A template seen once is read directly; the second time its tree is made. Anything that fails on
#: the template or on the instance is read by the direct parse, whose result or error is the answer.
_DIGIT_RUN = re.compile(r"(?<![IUFt0-9])[0-9]+")
#: The same made in bulk: every ASCII digit to "0" (on the UTF-8 bytes, where an ASCII digit is
#: one byte and part of no other character, so each character keeps its place), then the runs
#: right after "I", "U", "F" or "t" put back.
_ZERO_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_KEPT_RUN = re.compile(r"(?<=[IUFt])[0-9]+")
_SEEN, _BAD = object(), object()  # a template seen once; one that does not parse
#: Distinct templates kept (seen once, or parsed), per process; past that they start again.
_TEMPLATES = 1 << 14
#: Rules whose result depends only on the text of their tokens and is never changed in place (an
#: abstract is frozen; every node copies the dicts and lists of its attributes): kept per template
#: subtree and text (a type line differs from its template's other lines in one or two abstracts,
#: an attribute dict in one or two pairs).
_MEMO_RULES = frozenset({"abstract", "abs_comma", "abs_colon", "pair", "eq_pair"})
_MEMO_SIZE = 1 << 16


def _template_key(text: str) -> str:
    """``text`` with each run of :data:`_DIGIT_RUN` made zeros."""
    zeroed = text.encode("utf-8", "surrogatepass").translate(_ZERO_DIGITS).decode("utf-8", "surrogatepass")
    kept = _KEPT_RUN.search(text)
    if kept is None:
        return zeroed
    parts, last = [], 0
    while kept is not None:
        parts += (zeroed[last:kept.start()], kept.group())
        last = kept.end()
        kept = _KEPT_RUN.search(text, last)
    parts.append(zeroed[last:])
    return "".join(parts)


def _template_tree(tree_lark: Lark, transformer, start: str, key: str):
    """The template of ``key`` (:class:`_Template`), or None where it does not parse (or nests too
    deep for Python to walk: the direct parse then says what Lark says of it)."""
    try:
        return _Template.of(tree_lark.parse(key, start=start), transformer)
    except Exception:
        return None


class _Template:
    """A rule of a template's tree as :func:`_instantiate` replays it (Lark's tree is read, never
    changed): its name, its callback (``fn``, None for a rule without one), whether its result is
    kept per text (``memo``), its children (templates and tokens) and the span of its tokens."""

    __slots__ = ("name", "fn", "memo", "children", "span")

    @classmethod
    def of(cls, tree: Tree, transformer) -> "_Template":
        made = cls()
        made.name = str(tree.data)
        made.fn = getattr(transformer, made.name, None)
        made.memo = made.name in _MEMO_RULES
        made.children = [cls.of(child, transformer) if isinstance(child, Tree) else child for child in tree.children]
        spans = [c.span if c.__class__ is cls else (c.start_pos, c.end_pos) for c in made.children]
        spans = [span for span in spans if span is not None]
        made.span = (spans[0][0], spans[-1][1]) if spans else None
        return made


def _instantiate(tree, text: str, memo: dict):
    """The transformer's result for ``text`` from the tree of its template: each token re-sliced
    from ``text``, each rule's callback called bottom-up as the parser would (a rule without one
    stays a tree, as in Lark)."""
    if tree.memo:
        span = tree.span
        key = (id(tree), text[span[0]:span[1]] if span else "")
        found = memo.get(key)
        if found is not None:
            return found
    children = []
    append = children.append
    for child in tree.children:
        if child.__class__ is _Template:
            append(_instantiate(child, text, memo))
        else:
            start, end = child.start_pos, child.end_pos
            value = text[start:end]
            append(child if value == child.value else
                   Token(child.type, value, start, child.line, child.column, child.end_line, child.end_column, end))
    fn = tree.fn
    result = fn(children) if fn is not None else Tree(tree.name, children)
    if tree.memo:
        memo.put(key, result)
    return result


#: Past this many terminals the parser was between items: say so rather than list them all.
_MANY = 10


def _readable(lark: Lark, names) -> tuple[str, ...]:
    names = set(names)
    if len(names) > _MANY and "NODE_HEAD" in names:
        return ("the start of a line of IR: a node like %3(name) = Op(...), 'Return(...)', "
                "'subgraph @name(...) {', '}', a header, attribute or comment line",)
    out = set()
    for name in names:
        if name in _READABLE:
            out.add(_READABLE[name])
            continue
        try:
            pattern = lark.get_terminal(name).pattern
        except KeyError:
            out.add(name)
            continue
        out.add(repr(pattern.value) if pattern.type == "str" else name.lower())
    return tuple(sorted(out))


def _line_text(text: str, line: int) -> str:
    lines = text.split("\n", line)
    return lines[line - 1].rstrip("\r") if 0 < line <= len(lines) else ""


def _accepts(err: UnexpectedToken):
    """What the parser would have taken: the terminals of the state's table (``accepts`` asks
    Lark's interactive parser, which lark-cython's parse state does not support)."""
    return err.expected


def _offset(err: UnexpectedInput, text: str) -> int:
    """Where in ``text`` the error is: the bad character or token, or the end."""
    if isinstance(err, UnexpectedCharacters):
        return err.pos_in_stream
    if isinstance(err, UnexpectedToken) and err.token.type != "$END" and err.token.start_pos is not None:
        return err.token.start_pos
    return len(text)


def _detached(err: UnexpectedInput) -> UnexpectedInput:
    """The error without its interactive parser, so that ``str()`` (which asks it for
    ``accepts``) works under lark-cython too."""
    if isinstance(err, UnexpectedToken):
        err.interactive_parser = None
    return err


def _to_error(path: str, text: str, err: UnexpectedInput, line_offset: int) -> IRParseError:
    lark, _ = _parser()
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        line = text.count("\n") + (0 if text.endswith("\n") else 1)
        column = len(_line_text(text, line)) + 1
        expected = err.expected if isinstance(err, UnexpectedEOF) else _accepts(err)
        message = "unexpected end of file (truncated dump?)"
    elif isinstance(err, UnexpectedToken):
        line, column = err.line, err.column
        expected = _accepts(err)
        shown = "end of line" if err.token.type == "_NL" else repr(str(err.token)[:40])
        message = f"unexpected {shown}"
    elif isinstance(err, UnexpectedCharacters):
        line, column = err.line, err.column
        expected = err.allowed or ()
        message = f"unexpected character {text[err.pos_in_stream]!r}" if 0 <= err.pos_in_stream < len(text) else "unexpected character"
    else:  # pragma: no cover - Lark has no other UnexpectedInput kinds
        line, column, expected, message = getattr(err, "line", 0), getattr(err, "column", 0), (), str(err)
    return IRParseError(path=path, line=line + line_offset, column=column, message=message,
                        expected=_readable(lark, expected or ()), source_line=_line_text(text, line))


class _Failed(Exception):
    """A chunk did not parse: the error as the user sees it, and where in the chunk it is."""

    def __init__(self, error: IRParseError, pos: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.pos = pos
        #: Where the fast path's search had got to (an offset of the file's text): no node item
        #: before it reads by template, past the item in error (:func:`_read_range`).
        self.scanned = 0
        collector.resume()


def _parse_chunk(path: str, text: str, line_offset: int):
    """Items of ``text``, whose first line is line ``line_offset + 1`` of the file; :class:`_Failed`
    at the first error."""
    lark, _ = _parser()
    try:
        with lines_before(line_offset):
            return lark.parse(text, start="start")
    except UnexpectedInput as caught:
        err = _detached(caught)
        raise _Failed(_to_error(path, text, err, line_offset), _offset(err, text)) from None
    except BadToken as bad:
        token = bad.token
        error = IRParseError(path=path, line=token.line + line_offset, column=token.column, message=bad.message,
                             source_line=_line_text(text, token.line))
        raise _Failed(error, token.start_pos) from None
    except _FragmentError as failed:
        token, inner = failed.token, failed.error
        column = token.column + failed.pos
        if isinstance(inner, BadToken):
            message, expected = inner.message, ()
        else:
            shown = _to_error(path, str(token), inner, 0)
            message, expected = shown.message, shown.expected
            if isinstance(inner, (UnexpectedEOF,)) or (isinstance(inner, UnexpectedToken) and inner.token.type == "$END"):
                message = "unexpected end of line"
        error = IRParseError(path=path, line=token.line + line_offset, column=column, message=message,
                             expected=expected, source_line=_line_text(text, token.line))
        raise _Failed(error, token.start_pos + failed.pos) from None


# ---------------------------------------------------------------- node items read by template
#: What begins analyze_fail's exception text (the FAIL_TEXT terminal, a line of 20 or more "-"),
#: which runs over many lines of free text: files holding one are read by Lark alone.
_FREE_TEXT = "-" * 20


def _free_text_at(piece: str, before: str) -> bool:
    """Whether a line of ``before + piece`` begins with :data:`_FREE_TEXT`, where ``before`` is
    the text's last characters before ``piece`` ("\n" at the text's start); two substring
    searches (a regex over a large dump costs a tenth of its parse)."""
    line_start = "\n" + _FREE_TEXT
    return line_start in before + piece[:len(_FREE_TEXT)] or line_start in piece


def _blank(run: str) -> bool:
    """Whether the grammar skips ``run`` whole between items (its ``%ignore`` spaces and tabs and
    its ``_NL``, ``\r?\n[\t \r\n]*``): only those characters, and no carriage return before the
    first line end but one right before it. Any other run, even of characters Python calls
    whitespace, is Lark's to judge."""
    if run.strip(" \t\r\n"):
        return False
    head = run.split("\n", 1)[0]
    return "\r" not in head[:-1] and (not head.endswith("\r") or "\n" in run)


#: Line ends at one place: a regex anchored at line starts (``_CUT``, ``CANDIDATE``) tries each of a
#: run of blank lines in turn, ten times its cost per character of real text; :func:`search_lines`
#: passes over such a run at once.
_LINE_ENDS = re.compile(r"\n+")
#: Characters :func:`search_lines` searches at a time (then up to the end of the line).
_STEP = 1 << 13


def search_lines(pattern: re.Pattern, text: str, at: int, end: int):
    """``pattern.search(text, at, end)``, for a pattern that matches at line starts and never
    matches a line end: searched a step of about :data:`_STEP` characters at a time, each step
    ending at a line end (no match reaches over one) and beginning past the line ends there (no
    match begins on one), so a run of megabytes of blank lines costs one pass of ``\n+``, not one
    attempt of the pattern per line."""
    search, find, skip = pattern.search, text.find, _LINE_ENDS.match
    while at < end:
        blank = skip(text, at, end)
        if blank is not None:
            at = blank.end()
            continue
        stop = find("\n", min(at + _STEP, end), end)
        stop = end if stop < 0 else stop
        found = search(text, at, stop)
        if found is not None:
            return found
        at = stop
    return None


def _fast() -> FastReader:
    """The fast reader of the parser in use (made with it, so a new parser never meets an old
    reader's transformer or caches)."""
    return _parser()[1].fast_reader


def _read_range(path: str, text: str, a: int, b: int, line_offset: int, fast: bool, unread: int = 0) -> list:
    """Items of ``text[a:b]`` (``a`` a line start, line ``line_offset + 1``): node items read by
    template where they can be, every other run of items by Lark. Where Lark fails on a run, the
    whole range is read by Lark alone, so the error (or result) is exactly Lark's; the
    :class:`_Failed` says how far the search for templates had got (``scanned``). ``unread``: no
    item before this offset reads by template (an earlier read of the range found so): Lark reads
    up to it unsearched, so a lenient read of a window of many errors searches it once, not once
    per error."""
    if not fast:
        return _parse_chunk(path, text[a:b], line_offset)
    reader = _fast()
    items: list = []
    run, at = a, max(a, unread)  # Lark's run of items starts at ``run``; candidates are searched from ``at``
    run_lines = line_offset  # lines before ``run``
    line, counted = line_offset + 1, a  # the line of offset ``counted``
    scanned = b
    count, read_node, read_param = text.count, reader.node, reader.param
    try:
        while True:
            found = search_lines(CANDIDATE, text, at, b)
            if found is None:
                break
            q = found.start()
            if q != counted:
                line += count("\n", counted, q)
                counted = q
            read = (read_param if text.startswith("%para", q) else read_node)(text, q, b, line)
            if read is None:
                at = found.end()
                continue
            if q != run and not _blank(text[run:q]):
                scanned = q
                items.extend(_parse_chunk(path, text[run:q], run_lines))
            item, after = read
            items.append(item)
            line += text.count("\n", q, after)
            counted = run = at = after
            run_lines = line - 1
        scanned = b
        if not _blank(text[run:b]):
            items.extend(_parse_chunk(path, text[run:b], run_lines))
    except _Failed:
        try:
            return _parse_chunk(path, text[a:b], line_offset)
        except _Failed as failed:
            failed.scanned = scanned
            raise
    return items


# ---------------------------------------------------------------- windows and recovery
#: Lines where a window may begin: a subgraph's attribute block or a node. The grammar's top
#: level is flat, so the text parses from any of them on; windows keep each parse (and each
#: re-parse after an error) short, so time stays linear in the file whatever it holds.
_CUT = re.compile(r"^(?:subgraph attr:| {0,2}%\d+\(| {0,2}Return\()", re.M)
#: Lines where a top-level item begins: what lenient reading starts again at after an error.
#: Annotation lines are indented more than two spaces; the continuation lines of a tensor in an
#: "# Order:" entry begin with "[" or " ...".
_ITEM = re.compile(r"^ {0,2}[A-Za-z%}@$#]", re.M)
_WINDOW_CHARS = 1 << 18
_NODE_HEAD = re.compile(r"\s*%(\d{1,20})\(([^)\n]*)\)\s*=\s*(.*)")
_CALLEE = re.compile(r"(call\s+@[^\s(]+|@[^\s(]+|%\d+|[A-Za-z_][\w.:\-]*)")
_INSTANCE = re.compile(r"\{instance name: ([^}\n]*)\}")
_REFS = re.compile(r"(?<![\w$@])%(\d{1,20})\b(?!\()|(?<![\w$@])%(para\d*_[^\s,():\[\]]*)")
_SUBGRAPH_HEAD = re.compile(r"subgraph @([^\s(\[]+)")


def _windows(pieces: Iterable[str]) -> Iterator[tuple[str, int, int, int]]:
    """``(text, start, end, lines before start)``: windows ``text[start:end]`` of a text given in
    ``pieces`` (one piece: a text in hand), each of about ``_WINDOW_CHARS`` characters, cut at the
    first line at or after that many where :data:`_CUT` says a window may begin. ``text`` holds
    the window and the pieces read beyond it, never the whole file: where no cut shows, as many
    characters again as it holds are read before the next search (a long stretch without a cut, as
    megabytes of blank lines, is copied a bounded number of times, not once per piece)."""
    pieces = iter(pieces)
    text, start, lines, resume, ended = "", 0, 0, 0, False
    while True:
        at = max(start + _WINDOW_CHARS, resume)
        found = search_lines(_CUT, text, at, len(text)) if at < len(text) else None
        if found is None and not ended:
            resume = max(text.rfind("\n") + 1, start) - start  # a cut begins a line: none before the last
            read, count = [text[start:]], 0
            while count < max(len(text) - start, 1):
                piece = next(pieces, None)
                if piece is None:
                    ended = True
                    break
                read.append(piece)
                count += len(piece)
            text, start = "".join(read), 0
            continue
        end = found.start() if found is not None else len(text)
        if end > start:
            yield text, start, end, lines
        if found is None:
            return
        lines += text.count("\n", start, end)
        start = end


def _next_line(text: str, pos: int, end: int) -> int:
    """Offset of the line after the one holding ``pos`` (``end`` if none)."""
    found = text.find("\n", pos, end)
    return end if found < 0 else found + 1


def _parse_window(path: str, text: str, start: int, end: int, lines_before: int, lenient: bool,
                  items: list, diagnostics: list, fast: bool = False) -> None:
    """Parse ``text[start:end]`` into ``items``. Strict: raise at the first error. Lenient: each
    error costs the item it sits in (one diagnostic, and an ``unparsed`` node or subgraph where one
    can be read); parsing goes on at the next item. Every step is local to the window."""
    todo = [(start, end, 0)]  # ranges to read, each with what is known not to read by template (_read_range)
    recovered = False
    while todo:
        a, b, unread = todo.pop()
        if a >= b:
            continue
        offset = lines_before + text.count("\n", start, a)
        try:
            items.extend(_read_range(path, text, a, b, offset, fast, unread))
            continue
        except _Failed as failed:
            if not lenient:
                raise failed.error from None
            err, pos, unread = failed.error, a + failed.pos, failed.scanned
        pos = min(pos, b - 1)
        line_start = text.rfind("\n", a, pos) + 1 if pos > a else a
        line_start = max(line_start, a)
        first = line_start
        if text[line_start:pos].strip():
            # the error is inside the line: the item it belongs to began on an item line above
            while first > a and not _ITEM.match(text, first):
                first = max(text.rfind("\n", a, first - 1) + 1, a)  # the line above, in the window
        # else the line's first token is already wrong: it is an item of its own (an elision
        # "..." of a documentation excerpt, an unknown line) and costs only itself
        resume = _next_line(text, pos, b)
        while resume < b and not _ITEM.match(text, resume):
            resume = _next_line(text, resume, b)
        raw = text[first:resume].rstrip()
        first_line = lines_before + text.count("\n", start, first) + 1
        last_line = first_line + raw.count("\n")
        items.append(("unparsed", first_line, _unparsed(raw, first_line)))
        recovered = True
        span = f"skipped lines {first_line}-{last_line}" if last_line > first_line else f"skipped line {first_line}"
        diagnostics.append(Diagnostic(err.line, err.column, f"{err.message}; {span}", end_line=last_line,
                                      text=err.source_line, expected=err.expected))
        # what follows first (a stack: the range after the bad item waits for the one before it)
        todo.append((resume, b, unread))
        todo.append((a, first, 0))
    if recovered:  # the unparsed item was appended before the range in front of it
        items.sort(key=lambda item: item[1])


def _unparsed(raw: str, line: int):
    """What can still be read of an item that did not parse: a node (number, name, op, instance
    name, the nodes and parameters it takes, so graphs keep their edges), or a subgraph's name."""
    from msinspect.model import Node, NodeKind, NodeRef, ParamRef

    first = raw.split("\n", 1)[0]
    head = _NODE_HEAD.match(first)
    stripped = first.strip()
    if head or stripped.startswith("Return("):
        rest = head.group(3) if head else stripped
        callee = _CALLEE.match(rest)
        op = callee.group(1) if callee else "?"
        if op.startswith("PrimFunc_"):
            op = op[len("PrimFunc_"):]
        elif op.startswith(("call", "@", "%")):
            op = "call"
        instance = _INSTANCE.search(first)
        inputs = tuple(NodeRef(int(m.group(1))) if m.group(1) else ParamRef(m.group(2))
                       for m in _REFS.finditer(rest[callee.end() if callee else 0:]))
        node = Node(graph="", index=int(head.group(1)) if head else None,
                    debug_name=head.group(2) if head else "Return", op=op if head else "Return",
                    kind=NodeKind.UNPARSED, callee=None, inputs=inputs, line=line,
                    instance_name=instance.group(1).strip() if instance else None, raw=raw)
        for text in raw.split("\n")[1:]:
            text = text.strip()
            if text.lower().startswith("# scope:"):
                node.scope = text.split(":", 1)[1].strip().strip("()")
            elif text.startswith("# Fullname with scope:"):
                node.fullname = text.split(":", 1)[1].strip().strip("()")
        return (node, None)
    graph = _SUBGRAPH_HEAD.match(first)
    if graph:
        return (None, graph.group(1))
    return (None, None)


#: MindSpore's own names for dump files: ``[NN_]stage_NNNN.ir`` (``step_parallel_end_0133.ir``,
#: ``21_validate_0569.ir``, ``hwopt_..._0051.ir``). A file so named without its ``# IR entry``
#: header lost its beginning.
_DUMP_NAME = re.compile(r"^(?:\d+_)?[^\W\d]\w*_\d+\.ir(?:\.gz)?$")


def _completeness(path: str, facts: _Facts, ir: IRFile) -> list[Diagnostic]:
    """What shows a dump was cut that its counts cannot: a dump ends with the blank line its dumper
    writes after every block ("}" then two line ends, DumpSubgraph / DumpIRInSubgraph; the
    analyze_fail exporter ends the same way), in every release, so a headed file without it was
    cut at a line end (or copied without it: then it cannot be shown whole either); and a file
    named as MindSpore names its dumps begins with its header."""
    found = []
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if ir.family == "excerpt" and _DUMP_NAME.match(name) and ir.subgraphs:
        found.append(Diagnostic(1, 1, "named as a MindSpore dump file but has no '# IR entry' header: "
                                      "its beginning is missing (a documentation excerpt should not be "
                                      "named like a dump file)"))
    if ir.family != "excerpt" and not facts.ends_blank:
        line = facts.newlines + 1
        found.append(Diagnostic(line, 1, "the file ends inside its last block (MindSpore ends a dump with "
                                         "blank lines): truncated dump?"))
    return found


@dataclass(frozen=True)
class _Facts:
    """What a parse needs to know of the whole text besides its windows."""

    newlines: int
    size: int
    """Its length in UTF-8 bytes."""
    ends_newline: bool
    ends_blank: bool
    """Whether it ends with a blank line ("\n\n")."""
    free_text: bool
    """Whether a line begins with :data:`_FREE_TEXT` (Lark then reads the whole file)."""


def _facts_of(pieces: Iterable[str]) -> _Facts:
    """The :class:`_Facts` of the text ``pieces`` join to (one piece: a text in hand)."""
    newlines = size = 0
    free_text = False
    tail = ""  # the text's last characters so far
    width = len(_FREE_TEXT)
    for piece in pieces:
        newlines += piece.count("\n")
        free_text = free_text or _free_text_at(piece, tail if len(tail) == width else "\n" + tail)
        size += len(piece) if piece.isascii() else len(piece.encode("utf-8", "replace"))  # isascii: a flag
        tail = piece[-width:] if len(piece) >= width else (tail + piece)[-width:]
    return _Facts(newlines=newlines, size=size, ends_newline=tail.endswith("\n"),
                  ends_blank=tail.endswith("\n\n"), free_text=free_text)


def parse_text(text: str, path: str = "<string>", *, lenient: bool = False) -> IRFile:
    """Parse IR text.

    Strict (default): raise :class:`IRParseError` at the first problem, including a count the
    file states that does not hold. Lenient: return an :class:`IRFile` whose ``diagnostics`` list
    every skipped item (each one diagnostic, with line, column, the text and what was expected)
    and every count that does not hold; ``complete`` is then False. A node that could not be
    parsed is kept as an ``unparsed`` node with what could be read of it.
    """
    return _parse(path, [text], _facts_of([text]), lenient, lambda line: _line_text(text, line))


def _parse(path: str, pieces: Iterable[str], facts: _Facts, lenient: bool, line_text) -> IRFile:
    """The parse of the text ``pieces`` join to, window by window; ``line_text(n)``: its line
    ``n``, for a strict error found once every window is read."""
    with collector.paused(kept=True):  # back on at the first Lark error (collector.resume)
        ir = IRFile(path=path, family="excerpt", lines=facts.newlines, size=facts.size)
        items: list = []
        diagnostics: list[Diagnostic] = []
        fast = parse_mode.current() == parse_mode.FAST and not facts.free_text
        for text, start, end, lines_before in _windows(pieces):
            _parse_window(path, text, start, end, lines_before, lenient, items, diagnostics, fast)
        last_line = facts.newlines + (0 if facts.ends_newline else 1)
        _, problems = assemble(path, items, into=ir, last_line=last_line)
        problems += check_counts(ir) + _completeness(path, facts, ir)
        if problems and not lenient:
            first = problems[0]
            raise IRParseError(path=path, line=first.line, column=first.column, message=first.message,
                               source_line=line_text(first.line) if first.line > 0 else "")
        ir.diagnostics.extend(diagnostics + problems)
        return ir


def parse_file(path: str | Path, *, lenient: bool = False, cache: bool | None = None) -> IRFile:
    """Parse one ``.ir`` or ``.ir.gz`` file; see :func:`parse_text` for strict and lenient.

    ``cache`` (default: unless ``MSINSPECT_NO_CACHE`` is set): keep the parsed file in the user's
    cache, keyed by its text, msinspect's version and the grammar (:mod:`msinspect.cache`), and
    answer from there the next time the same text is read in the same mode.

    The text is read twice, piece by piece (:func:`~msinspect.parser.reading.text_pieces`), never
    held whole: once for its name in the cache and the facts of the whole (line count, how it
    ends), once for the parse, each read hashed; a file that changed between the two reads, or
    that has a problem reading reports (not UTF-8, a bad ``.gz``), is read whole instead."""
    from msinspect import cache as parsed_cache

    use = parsed_cache.enabled() if cache is None else cache
    try:
        return _parse_pieces(str(path), lenient, use)
    except Unclean:
        pass
    text, diagnostics = read_text(path, lenient=lenient)
    if use:
        name = parsed_cache.key(text, lenient)
        ir = _kept(name, str(path))
        if ir is not None:
            ir.diagnostics[:0] = diagnostics
            return ir
    ir = parse_text(text, str(path), lenient=lenient)
    if use:
        parsed_cache.store(name, ir)
    ir.diagnostics[:0] = diagnostics
    return ir


def _parse_pieces(path: str, lenient: bool, use: bool) -> IRFile:
    """:func:`parse_file` reading the file piece by piece; :class:`Unclean` where it cannot."""
    from msinspect import cache as parsed_cache

    def digest():
        return parsed_cache.hasher(lenient) if use else hashlib.sha256()

    first = digest()
    facts = _facts_of(text_pieces(path, first))
    if use:
        ir = _kept(first.hexdigest(), path)
        if ir is not None:
            return ir
    second = digest()
    try:
        ir = _parse(path, text_pieces(path, second), facts, lenient,
                    lambda line: _line_text(read_text(path, lenient=lenient)[0], line))
    except IRParseError:  # said of the text the first read saw, unless the file changed since
        again = digest()
        for _ in text_pieces(path, again):
            pass
        if again.digest() != first.digest():
            raise Unclean from None
        raise
    if second.digest() != first.digest():  # the file changed while it was read
        raise Unclean
    if use:
        parsed_cache.store(first.hexdigest(), ir)
    return ir


def _kept(name: str, path: str) -> IRFile | None:
    """The parsed file the cache keeps under ``name``, now read from ``path``; None where it keeps none."""
    from msinspect import cache as parsed_cache

    ir = parsed_cache.load(name)
    if not isinstance(ir, IRFile):
        return None
    ir.path = path
    return ir
