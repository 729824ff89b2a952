"""Reading ``.ir`` / ``.ir.gz`` text with the Lark grammar: strict and lenient parsing."""
from __future__ import annotations

import bisect
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from msinspect.errors import IRParseError
from msinspect.model import Diagnostic, IRFile
from msinspect.parser.assemble import assemble, check_counts
from msinspect.parser.reading import read_text
from msinspect.parser.transformer import IRTransformer

GRAMMAR = "mindspore_ir.lark"

# Lines where a fresh parse can start: each subgraph's block begins with "subgraph attr:".
_BLOCK_START = re.compile(r"^subgraph attr:", re.M)
_BLOCK_START_FALLBACK = re.compile(r"^subgraph @", re.M)

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


def _block_starts(text: str) -> list[int]:
    """Character offsets of lines where a subgraph block begins."""
    starts = [m.start() for m in _BLOCK_START.finditer(text)]
    return starts or [m.start() for m in _BLOCK_START_FALLBACK.finditer(text)]


def _parse_lenient(path: str, text: str, line_offset: int, ir: IRFile) -> None:
    """Parse what parses; record each skipped span as a diagnostic."""
    try:
        items = _parse_items(path, text, line_offset)
    except IRParseError as err:
        local_line = err.line - line_offset
        line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        err_offset = line_starts[min(local_line, len(line_starts)) - 1]
        starts = _block_starts(text)
        at = bisect.bisect_right(starts, err_offset)
        block_begin = starts[at - 1] if at else 0
        next_block = starts[at] if at < len(starts) else len(text)
        if block_begin:
            _parse_lenient(path, text[:block_begin], line_offset, ir)
        first = text.count("\n", 0, block_begin) + 1 + line_offset
        last = text.count("\n", 0, max(next_block - 1, 0)) + line_offset + (0 if next_block < len(text) else 1)
        detail = str(err).split("\n", 1)[0].split(": ", 1)[1]
        ir.diagnostics.append(Diagnostic(err.line, err.column, f"{detail}; skipped lines {first}-{max(first, last)}",
                                         end_line=max(first, last)))
        if next_block < len(text):
            _parse_lenient(path, text[next_block:], text.count("\n", 0, next_block) + line_offset, ir)
        return
    assemble(path, items, into=ir)


def parse_text(text: str, path: str = "<string>", *, lenient: bool = False) -> IRFile:
    """Parse IR text.

    Strict (default): raise :class:`IRParseError` at the first problem, including a count the
    file states that does not hold. Lenient: return an :class:`IRFile` whose ``diagnostics`` list
    every skipped span and every count that does not hold; ``complete`` is then False.
    """
    ir = IRFile(path=path, family="excerpt", lines=text.count("\n"), size=len(text.encode("utf-8", "replace")))
    if lenient:
        _parse_lenient(path, text, 0, ir)
    else:
        assemble(path, _parse_items(path, text, 0), into=ir)
    for diag in check_counts(ir):
        if not lenient:
            raise IRParseError(path=path, line=diag.line, column=diag.column, message=diag.message)
        ir.diagnostics.append(diag)
    return ir


def parse_file(path: str | Path, *, lenient: bool = False) -> IRFile:
    """Parse one ``.ir`` or ``.ir.gz`` file; see :func:`parse_text` for strict and lenient."""
    text, diagnostics = read_text(path, lenient=lenient)
    ir = parse_text(text, str(path), lenient=lenient)
    ir.diagnostics[:0] = diagnostics
    return ir
