"""Reading ``.ir`` / ``.ir.gz`` text with the Lark grammar: strict and lenient parsing."""
from __future__ import annotations

import gzip
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from msinspect.errors import IRParseError
from msinspect.model import Diagnostic, IRFile
from msinspect.parser.assemble import assemble, check_counts
from msinspect.parser.transformer import BadToken, IRTransformer

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
    "KEY": "an attribute name",
    "STRING": "a quoted string",
    "NUMBER": "a number",
    "WORD": "a name",
    "GROUP_NAME": "a group name",
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


@lru_cache(maxsize=1)
def _parser() -> tuple[Lark, IRTransformer]:
    grammar = resources.files("msinspect.grammars").joinpath(GRAMMAR).read_text(encoding="utf-8")
    transformer = IRTransformer()
    lark = Lark(grammar, parser="lalr", lexer="contextual", transformer=transformer,
                maybe_placeholders=False, propagate_positions=False, cache=False)
    return lark, transformer


def _readable(lark: Lark, names) -> tuple[str, ...]:
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


def _to_error(path: str, text: str, err: UnexpectedInput, line_offset: int) -> IRParseError:
    lark, _ = _parser()
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        line = text.count("\n") + (0 if text.endswith("\n") else 1)
        column = len(_line_text(text, line)) + 1
        expected = err.expected if isinstance(err, UnexpectedEOF) else err.accepts or err.expected
        message = "unexpected end of file (truncated dump?)"
    elif isinstance(err, UnexpectedToken):
        line, column = err.line, err.column
        expected = err.accepts or err.expected
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


def _parse_items(path: str, text: str, line_offset: int):
    lark, transformer = _parser()
    transformer.line_offset = line_offset
    try:
        return lark.parse(text)
    except UnexpectedInput as err:
        raise _to_error(path, text, err, line_offset) from None
    except BadToken as bad:
        token = bad.token
        raise IRParseError(path=path, line=token.line + line_offset, column=token.column, message=bad.message,
                           source_line=_line_text(text, token.line)) from None


# ---------------------------------------------------------------- windows and recovery
#: Lines where a window may begin: a subgraph's attribute block or a node. The grammar's top
#: level is flat, so the text parses from any of them on; windows keep each parse (and each
#: re-parse after an error) short, so time stays linear in the file whatever it holds.
_CUT = re.compile(r"^(?:subgraph attr:|  %\d+\(|  Return\()")
#: Lines where a top-level item begins: what lenient reading starts again at after an error.
#: Annotation lines are indented more than two spaces; the continuation lines of a tensor in an
#: "# Order:" entry begin with "[" or " ...".
_ITEM = re.compile(r"^ {0,2}[A-Za-z%}@$#]")
_WINDOW_CHARS = 1 << 18
_NODE_HEAD = re.compile(r"\s*%(\d{1,20})\(([^)\n]*)\)\s*=\s*(.*)")
_CALLEE = re.compile(r"(call\s+@[^\s(]+|@[^\s(]+|%\d+|[A-Za-z_][\w.:\-]*)")
_INSTANCE = re.compile(r"\{instance name: ([^}\n]*)\}")
_REFS = re.compile(r"(?<![\w$@])%(\d{1,20})\b(?!\()|(?<![\w$@])%(para\d*_[^\s,():\[\]]*)")
_SUBGRAPH_HEAD = re.compile(r"subgraph @([^\s(\[]+)")


class _Lines:
    """Line starts of one text, for turning line numbers into offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def __len__(self) -> int:
        return len(self.starts)

    def line(self, i: int) -> str:
        """Line ``i`` (0-based), without its newline."""
        end = self.starts[i + 1] - 1 if i + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[i]:end]

    def offset(self, i: int) -> int:
        return self.starts[i] if i < len(self.starts) else len(self.text)


def _windows(text: str) -> list[tuple[int, int]]:
    """``(first, end)`` line ranges (0-based, end exclusive) of about ``_WINDOW_CHARS`` each, cut
    only where :data:`_CUT` says a window may begin."""
    lines = _Lines(text)
    out, first, size = [], 0, 0
    for i in range(len(lines)):
        if size >= _WINDOW_CHARS and _CUT.match(lines.line(i)):
            out.append((first, i))
            first, size = i, 0
        size += lines.offset(i + 1) - lines.offset(i)
    out.append((first, len(lines)))
    return out


def _parse_range(path: str, lines: _Lines, first: int, end: int, lenient: bool, items: list,
                 diagnostics: list) -> None:
    """Parse lines ``first`` to ``end`` (0-based, end exclusive) into ``items``. Strict: raise at
    the first error. Lenient: each error costs the item it sits in (one diagnostic, and an
    ``unparsed`` node or subgraph where one can be read); parsing goes on at the next item."""
    todo = [(first, end)]
    recovered = False
    while todo:
        a, b = todo.pop()
        if a >= b:
            continue
        chunk = lines.text[lines.offset(a):lines.offset(b)]
        try:
            items.extend(_parse_items(path, chunk, a))
            continue
        except IRParseError as caught:
            if not lenient:
                raise
            err = caught
            bad = min(max(err.line - 1, a), b - 1)          # 0-based line of the error
        start = bad
        if lines.line(bad)[:max(err.column - 1, 0)].strip():
            # the error is inside the line: the item it belongs to began on an item line above
            while start > a and not _ITEM.match(lines.line(start)):
                start -= 1
        # else the line's first token is already wrong: it is an item of its own (an elision
        # "..." of a documentation excerpt, an unknown line) and costs only itself
        resume = bad + 1
        while resume < b and not _ITEM.match(lines.line(resume)):
            resume += 1
        last = resume                                        # 1-based last line skipped
        while last > start + 1 and not lines.line(last - 1).strip():
            last -= 1
        raw = "\n".join(lines.line(i) for i in range(start, last))
        items.append(("unparsed", start + 1, _unparsed(raw, start + 1)))
        recovered = True
        span = f"skipped lines {start + 1}-{last}" if last > start + 1 else f"skipped line {start + 1}"
        diagnostics.append(Diagnostic(err.line, err.column, f"{err.message}; {span}", end_line=last,
                                      text=err.source_line, expected=err.expected))
        # what follows first (a stack: the range after the bad item waits for the one before it)
        todo.append((resume, b))
        todo.append((a, start))
    if recovered:  # the unparsed item was appended before the range in front of it
        items.sort(key=lambda item: item[1])


def _unparsed(raw: str, line: int):
    """What can still be read of an item that did not parse: a node (number, name, op, instance
    name, the nodes and parameters it takes, so graphs keep their edges), or a subgraph's name."""
    from msinspect.model import Node, NodeRef, ParamRef

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
                    callee_kind="unparsed", callee=None, inputs=inputs, line=line,
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


def _completeness(path: str, text: str, ir: IRFile) -> list[Diagnostic]:
    """What shows a dump file was cut that its counts cannot: a 2.10 dump ends with the blank lines
    its dumper writes after the last block, and begins with its header. Both are asked only of
    files named as MindSpore names its dumps (text copied from a page loses its blank lines)."""
    found = []
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if ir.family == "excerpt" and _DUMP_NAME.match(name) and ir.subgraphs:
        found.append(Diagnostic(1, 1, "named as a MindSpore dump file but has no '# IR entry' header: "
                                      "its beginning is missing (a documentation excerpt should not be "
                                      "named like a dump file)"))
    if ir.family == "2.10" and ir.kind == "graph" and _DUMP_NAME.match(name) and not text.endswith("\n\n"):
        line = text.count("\n") + 1
        found.append(Diagnostic(line, 1, "the file ends inside its last block (MindSpore ends a dump with "
                                         "blank lines): truncated dump?"))
    return found


def parse_text(text: str, path: str = "<string>", *, lenient: bool = False) -> IRFile:
    """Parse IR text.

    Strict (default): raise :class:`IRParseError` at the first problem, including a count the
    file states that does not hold. Lenient: return an :class:`IRFile` whose ``diagnostics`` list
    every skipped item (each one diagnostic, with line, column, the text and what was expected)
    and every count that does not hold; ``complete`` is then False. A node that could not be
    parsed is kept as an ``unparsed`` node with what could be read of it.
    """
    ir = IRFile(path=path, family="excerpt", lines=text.count("\n"), size=len(text.encode("utf-8", "replace")))
    lines = _Lines(text)
    items: list = []
    diagnostics: list[Diagnostic] = []
    for first, end in _windows(text):
        _parse_range(path, lines, first, end, lenient, items, diagnostics)
    last_line = len(lines) - 1 if text.endswith("\n") else len(lines)
    _, problems = assemble(path, items, into=ir, last_line=last_line)
    problems += check_counts(ir) + _completeness(path, text, ir)
    if problems and not lenient:
        first = problems[0]
        raise IRParseError(path=path, line=first.line, column=first.column, message=first.message,
                           source_line=lines.line(first.line - 1) if first.line > 0 else "")
    ir.diagnostics.extend(diagnostics + problems)
    return ir


def read_text(path: str | Path, *, lenient: bool = False) -> tuple[str, list[Diagnostic]]:
    """The file's text (``.ir.gz`` decompressed), with decoding problems as diagnostics in lenient
    mode and as :class:`IRParseError` otherwise."""
    path = Path(path)
    try:
        raw = gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()
    except (OSError, EOFError, gzip.BadGzipFile) as err:
        raise IRParseError(path=str(path), line=0, column=0, message=f"cannot read: {err}") from None
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        column = err.start - (raw.rfind(b"\n", 0, err.start) + 1) + 1
        message = f"invalid UTF-8 byte {raw[err.start]:#04x}"
        if not lenient:
            shown = raw.split(b"\n")[line - 1].decode("utf-8", "replace")
            raise IRParseError(path=str(path), line=line, column=column, message=message,
                               source_line=shown) from None
        return raw.decode("utf-8", "replace"), [Diagnostic(line, column, message)]


def parse_file(path: str | Path, *, lenient: bool = False) -> IRFile:
    """Parse one ``.ir`` or ``.ir.gz`` file; see :func:`parse_text` for strict and lenient."""
    text, diagnostics = read_text(path, lenient=lenient)
    ir = parse_text(text, str(path), lenient=lenient)
    ir.diagnostics[:0] = diagnostics
    return ir
