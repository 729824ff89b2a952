"""Small display helpers shared by the commands that print tables (no analysis here): a cell's
text, and a table laid out for a terminal's width.

A table for a person (:func:`lay_out`) shows the columns that fit the width, most telling first
(each command says which those are), each at least as wide as its longest word and its longest
tuple (:func:`unbroken`), so that a file name, a number, a shape or a strategy is never cut
across lines: text wraps between words, a tuple never; a column name breaks at its ``_``. The
columns left out are named under the table (``--wide``, ``--columns``, ``--json`` / ``--csv``
show them). Rows equal in every shown column but the rank are one row with the ranks
(``0-7``: :mod:`msinspect.rank_merge`, as the report merges them). Nothing is printed as
``NaN`` or ``None``: a missing value is ``-``."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from msinspect.rank_merge import merge_ranks, rank_number
from msinspect.ranks_text import ranks_text
from msinspect.schema import is_missing

#: A column whose text has spaces may wrap down to this width (never below its longest word).
WRAP_AT = 14
#: What a column costs beyond its text: one space each side and a border.
COLUMN_COST = 3
#: The table's left border.
EDGE = 1
#: Past this many rows once ranks that agree are merged, a table also merges rows that differ
#: only in the columns each rank holds its own value of (:func:`lay_out`'s ``fold``): a job of
#: thousands of ranks is not tens of thousands of rows, one per group of each operator.
FOLD_ROWS = 1000
#: How a folded column's values are counted (:func:`folded_text`).
FOLD_NOUNS = {"group_ranks": "groups", "group": "groups", "peer": "peers", "file": "files", "line": "lines",
              "stage_ranks": "stages"}


def short_scope(scope, parts: int = 2) -> str:
    """The last ``parts`` parts of a scope, for narrow displays: ``.../layer1-Dense``."""
    if not isinstance(scope, str) or scope.count("/") < parts:
        return scope if isinstance(scope, str) else ""
    return ".../" + "/".join(scope.split("/")[-parts:])


def named_apart(names: Sequence, scopes: Sequence) -> list:
    """Names for a person's table: an instance name that stands in several scopes (three Dense
    cells each with a ``matmul``; four blocks each with a ``q_matmul``) is written as a selector
    that ``--op`` takes back: with its scope's last part where that tells them apart
    (``fc2-Dense/matmul``), else with the nearest part that does and ``...`` for those between
    (``0-Block/.../q_matmul``), else with as many last parts as do. A name in one scope stays."""
    scopes = [scope if isinstance(scope, str) else "" for scope in scopes]
    seen: dict[Any, set[str]] = {}
    for name, scope in zip(names, scopes):
        seen.setdefault(name, set()).add(scope)
    prefix = {name: _apart(found) for name, found in seen.items() if len(found) > 1}
    return [f"{prefix[name][scope]}/{name}" if name in prefix and prefix[name][scope] else name
            for name, scope in zip(names, scopes)]


def _apart(scopes: set[str]) -> dict[str, str]:
    """Each scope's shortest selector prefix that tells it from the others (see :func:`named_apart`)."""
    split = {scope: scope.split("/") for scope in scopes}
    deepest = max(map(len, split.values()))
    for back in range(1, deepest + 1):
        part = {scope: parts[-back] if len(parts) >= back else "" for scope, parts in split.items()}
        if len(set(part.values())) < len(scopes) or not all(part.values()):
            continue
        if back == 1:
            return part
        if all(sum(part[scope] in parts for parts in split.values()) == 1 for scope in scopes):
            return {scope: f"{part[scope]}/..." for scope in scopes}
        break
    for back in range(1, deepest + 1):
        if len({tuple(parts[-back:]) for parts in split.values()}) == len(scopes):
            break
    return {scope: "/".join(parts[-back:]) for scope, parts in split.items()}


def _scalar(value: Any) -> Any:
    """A numpy scalar as the Python value it holds."""
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        try:
            return value.item()
        except (TypeError, ValueError):
            return value
    return value


def cell(value) -> str:
    """A table cell: ``-`` for nothing (None, NaN, NA: never ``None`` or ``nan``, at any depth);
    ``yes`` / ``no``; tuples as written in the IR (``(8, 16)``), a tuple of names as ``a, b``;
    a dict as ``key value, ...``."""
    value = _scalar(value)
    if is_missing(value):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(cell(v) for v in value)
        if isinstance(value, list):
            return f"[{inner}]"
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, dict):
        return ", ".join(f"{k} {cell(v)}" for k, v in value.items()) or "-"
    return str(value)


def _len(text: str) -> int:
    from rich.cells import cell_len

    return max((cell_len(line) for line in text.split("\n")), default=0)


#: A cell that is a tuple as :func:`cell` writes it (a shape, a strategy, a group's ranks; ``-1``
#: for a dynamic dimension) or a slice (``[0:256, 256:512]``): shown whole, never broken at its spaces.
TUPLE_TEXT = re.compile(r"[(\[][-\d\s,:()\[\]]*[)\]]")


def unbroken(text: str) -> int:
    """The width ``text`` cannot be wrapped below: its own for a tuple (``((2, 1), (1, 4))``:
    :data:`TUPLE_TEXT`), else its longest word's."""
    if TUPLE_TEXT.fullmatch(text):
        return _len(text)
    return _words(text)


def _words(text: str) -> int:
    """The width of the longest word of ``text`` (what a wrapped cell cannot go below)."""
    return max((_len(w) for w in text.split()), default=0)


def header_text(name: str, width: int) -> str:
    """A column's name in ``width`` columns: whole where it fits, else broken after its ``_``
    (``sharded_`` / ``weights``)."""
    if _len(name) <= width or "_" not in name:
        return name
    pieces = [p + "_" for p in name.split("_")[:-1]] + [name.split("_")[-1]]
    lines = [""]
    for piece in pieces:
        if lines[-1] and _len(lines[-1] + piece) > width:
            lines.append("")
        lines[-1] += piece
    return "\n".join(lines)


@dataclass
class Layout:
    """A table laid out for a width: what :func:`lay_out` gives."""

    columns: list[str]
    """The columns shown, in the command's order."""
    widths: list[int]
    """Each shown column's width (its text; no padding or border)."""
    rows: list[list[str]]
    """The cells of each row shown."""
    left_out: list[str] = field(default_factory=list)
    """The columns that did not fit, in the command's order."""
    rows_in: int = 0
    """Rows before ranks that agree were merged."""
    folded: list[str] = field(default_factory=list)
    """The columns shown folded: rows that differ only there are one row (``fold``)."""

    @property
    def width(self) -> int:
        """The table's width in columns, borders included."""
        return sum(self.widths) + COLUMN_COST * len(self.widths) + EDGE

    @property
    def merged(self) -> bool:
        return len(self.rows) < self.rows_in


def folded_text(column: str, values: Sequence[str]) -> str:
    """The cell of a folded column (:func:`lay_out`'s ``fold``): its one value, else how many
    distinct ones and the first two (``32 groups: (0, 4) (1, 5) ...``)."""
    if len(values) == 1:
        return values[0]
    noun = FOLD_NOUNS.get(column, "values")
    shown = " ".join(f"({v})" for v in values[:2])
    return f"{len(values)} {noun}: {shown}" + (" ..." if len(values) > 2 else "")


def _merged(records: list[dict], shown: list[str], cells: list[dict[str, str]], merge: bool,
            fold: Sequence[str] = ()) -> list[dict[str, str]]:
    """The rows to show: with ``merge``, one per distinct content of ``shown`` but the rank, its
    rank cell the ranks that hold it (``0-3, 6``). Only rows of different ranks merge: a rank's
    rows that read alike (the same layer in four blocks, the columns that tell them apart left
    out) stay one row each, merged with the same row of the other ranks; a row without a rank
    number is never merged. ``fold``: columns left out of what must agree (each rank's own
    group, say): a merged row's cell there is :func:`folded_text` of the values its ranks hold."""
    folded = [c for c in fold if c in shown and c != "rank"]
    others = [c for c in shown if c != "rank" and c not in folded]
    if not merge or "rank" not in shown:
        return [{c: row[c] for c in shown} for row in cells]
    keyed, seen = [], Counter()
    values: dict[tuple, dict[str, dict[str, None]]] = {}
    for i, (record, row) in enumerate(zip(records, cells)):
        rank = rank_number(record.get("rank"))
        visible = tuple(row[c] for c in others)
        seen[rank, visible] += 1
        nth, unranked = str(seen[rank, visible]), "" if rank is not None else f"{i}"
        keyed.append({**{c: row[c] for c in others}, "rank": rank, "\0nth": nth, "\0unranked": unranked})
        if folded:
            held = values.setdefault((*visible, nth, unranked), {c: {} for c in folded})
            for c in folded:
                held[c][row[c]] = None  # distinct, in order of appearance
    out = []
    for merged, ranks in merge_ranks(keyed, [*others, "\0nth", "\0unranked"], str):
        key = (*(merged[c] for c in others), merged["\0nth"], merged["\0unranked"])
        merged.pop("\0nth")
        index = merged.pop("\0unranked")
        rank = ranks_text(ranks) if ranks else cells[int(index)]["rank"]
        for c in folded:
            merged[c] = folded_text(c, list(values[key][c]))
        out.append({"rank": rank, **merged})
    return [{c: row[c] for c in shown} for row in out]


def _choose(order: Sequence[str], priority: Sequence[str], need: dict[str, int], cells: dict[str, int],
            full: dict[str, int], width: int) -> tuple[list[str], dict[str, int]]:
    """The columns that fit ``width`` at their ``need``, taken most telling first up to the first
    that does not fit; then the width left goes to the cells that wrap (up to their longest,
    ``cells``), then to the names that break (up to ``full``), most telling first."""
    chosen, used = [], EDGE
    for column in priority:
        if chosen and used + need[column] + COLUMN_COST > width:  # the first column always
            break
        chosen.append(column)
        used += need[column] + COLUMN_COST
    widths = {c: need[c] for c in chosen}
    spare = width - used
    for bound in (cells, full):
        for column in chosen:
            grow = max(0, min(spare, bound[column] - widths[column]))
            widths[column] += grow
            spare -= grow
    return [c for c in order if c in chosen], widths


def _measure(texts: dict[str, list[str]], columns: Sequence[str]) -> tuple[dict[str, int], ...]:
    """Each column's least width (its longest word or tuple: :func:`unbroken`, its name's longest
    ``_`` piece, and :data:`WRAP_AT` or its longest cell, if less), the width of its longest cell
    (at least the least) and its full width (its name too)."""
    need, cells, full = {}, {}, {}
    for c in columns:
        longest = max((_len(t) for t in texts[c]), default=0)
        piece = max(_len(p) for p in header_text(c, 1).split("\n"))
        full[c] = max(_len(c), longest)
        need[c] = min(full[c], max(piece, max((unbroken(t) for t in texts[c]), default=0), min(longest, WRAP_AT)))
        cells[c] = max(need[c], longest)
    return need, cells, full


def lay_out(records: list[dict], columns: Sequence[str], *, width: int, priority: Sequence[str] | None = None,
            merge: bool = False, every: bool = False, fold: Sequence[str] = ()) -> Layout:
    """``records`` (dicts holding every column) as a table of ``columns`` for ``width`` terminal
    columns: those that fit, taken in ``priority`` order (default: ``columns``' own), shown in
    ``columns``' order; ``every``: all of them, each at its full width (wider than ``width``
    where they do not fit: :attr:`Layout.width`). ``merge``: rows equal but for the rank as one
    row with its ranks (:mod:`msinspect.rank_merge`); ``fold``: the columns each rank holds its
    own value of (its group's ranks), left out of what must agree when merging leaves more than
    :data:`FOLD_ROWS` rows (each such cell then says how many values its ranks hold)."""
    columns = list(dict.fromkeys(columns))
    order = [c for c in (priority or ()) if c in columns] + [c for c in columns if c not in (priority or ())]
    cells = [{c: cell(record.get(c)) for c in columns} for record in records]
    texts = {c: [row[c] for row in cells] for c in columns}
    shown = list(columns)
    rows = _merged(records, shown, cells, merge)
    fold = [c for c in fold if c in columns] if merge and len(rows) > FOLD_ROWS else []
    if fold:
        rows = _merged(records, shown, cells, merge, fold)
    for _ in range(3):  # the rank cells depend on the columns shown, the columns on their widths
        if merge and "rank" in shown:
            texts["rank"] = [row["rank"] for row in rows]
        for c in fold:  # a folded cell's text is made of its rows' values
            texts[c] = [row[c] for row in rows] if c in shown else texts[c]
        need, longest, full = _measure(texts, columns)
        chosen, widths = (list(columns), dict(full)) if every else _choose(columns, order, need, longest, full, width)
        if chosen == shown:
            break
        shown = chosen
        rows = _merged(records, shown, cells, merge, fold)
    if "rank" in shown:  # after a last change of columns, the rank cells may have grown
        widths["rank"] = max(widths["rank"], max((_len(row["rank"]) for row in rows), default=0))
    for c in fold:  # and so may the folded ones
        if c in shown:
            widths[c] = max(widths[c], max((_words(row[c]) for row in rows), default=0))
    return Layout(columns=shown, widths=[widths[c] for c in shown], rows=[[row[c] for c in shown] for row in rows],
                  left_out=[c for c in columns if c not in shown], rows_in=len(records),
                  folded=[c for c in fold if c in shown])
