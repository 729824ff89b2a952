"""The report's tables: the analysis's per-rank rows merged across ranks that agree, and repeated
operators (micro-batches, layers of a CellList) collapsed into one block ("x N identical").

- *Across ranks*: rows identical in every shown column but the rank become one row with the list
  of ranks (``0-3``), so a 64-rank job whose ranks agree reads like one rank.
- *Repeats*: rows that differ only in the instance suffix (``MatMul-op3``), the index of a
  repeated cell in the scope (``layers-CellList/7-Block`` -> ``layers-CellList/*-Block``) and the
  micro-batch are one block; blocks of more than one row are shown collapsed and expand to their rows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from msinspect.cell_text import text  # noqa: F401 (the report's modules take it from here)
from msinspect.rank_merge import merge_ranks
from msinspect.ranks_text import ranks_text

#: The columns, what a user reads first first (the shapes at the rank before the global ones, the
#: long scope last: the report shows its tail, the whole on hover).
STRATEGY_SHOWN = ["name", "op", "in_strategy", "rank_inputs", "rank_output", "shapes_ok", "global_inputs",
                  "global_output", "out_strategy", "set_by", "micro", "scope"]
COMM_SHOWN = ["name", "op", "kind", "shape", "dtype", "wire_bytes", "tensor_bytes", "group_ranks", "group", "peer",
              "producer", "consumers", "micro", "scope"]
_INSTANCE = re.compile(r"-op\d+$")
_REPEATED_CELL = re.compile(r"/\d+-")


@dataclass
class Row:
    """One row of a table: the shown cells (text) and the ranks that hold it."""

    cells: dict[str, str]
    ranks: list[int]

    @property
    def ranks_text(self) -> str:
        return ranks_text(self.ranks) if self.ranks else "?"


@dataclass
class Block:
    """Rows that repeat one another (or a single row)."""

    rows: list[Row] = field(default_factory=list)

    @property
    def collapsed(self) -> bool:
        return len(self.rows) > 1

    @property
    def head(self) -> Row:
        return self.rows[0]

    def head_cells(self) -> dict[str, str]:
        """The cells of the collapsed row: a column the rows agree on shows its value; the
        micro-batch its range (``0-3``); the name and scope their shape with the instance suffix and
        the repeated index taken out (``MatMul``, ``layers-CellList/*-Block``); other columns ``(N values)``."""
        out = {}
        for column, first in self.rows[0].cells.items():
            values = list(dict.fromkeys(r.cells[column] for r in self.rows))
            if len(values) == 1:
                out[column] = first
            elif column == "micro" and all(v.isdigit() for v in values):
                out[column] = ranks_text(int(v) for v in values)
            elif column == "name":
                out[column] = _INSTANCE.sub("", first)
            elif column == "scope":
                out[column] = _REPEATED_CELL.sub("/*-", first)
            else:
                out[column] = f"({len(values)} values)"
        return out

    def varying(self) -> str:
        """What differs between the rows, in words (``micro 0-3``, ``3 scopes``)."""
        micro = sorted({r.cells.get("micro", "") for r in self.rows} - {""})
        scopes = {r.cells.get("scope", "") for r in self.rows}
        names = {r.cells.get("name", "") for r in self.rows}
        parts = []
        if len(micro) > 1:
            parts.append(f"micro-batches {ranks_text(int(m) for m in micro)}")
        if len(scopes) > 1:
            parts.append(f"{len(scopes)} scopes")
        if len(names) > 1:
            parts.append(f"{len(names)} instances")
        return ", ".join(parts) or "same instance"


def scope_tail(scope: str, parts: int = 2) -> str:
    """The last ``parts`` cells of a scope, what tells operators apart
    (``…/*-Block/attention-Attention``); the scope itself when it has no more."""
    cells = scope.split("/")
    return scope if len(cells) <= parts else "…/" + "/".join(cells[-parts:])


def merged_rows(frame: pd.DataFrame, shown: list[str]) -> list[Row]:
    """One :class:`Row` per distinct content of ``shown`` columns, with the ranks holding it, in
    the order of first appearance (:func:`msinspect.rank_merge.merge_ranks`, as the terminal's tables)."""
    return [Row(cells, ranks) for cells, ranks in merge_ranks(frame.to_dict("records"), shown, text)]


def signature(row: Row) -> tuple:
    """What a repeat keeps: every cell but the micro-batch, with instance suffixes and repeated
    cell indices taken out of the name and scope, and the ranks."""
    cells = dict(row.cells)
    cells.pop("micro", None)
    cells["name"] = _INSTANCE.sub("", cells.get("name", ""))
    cells["scope"] = _REPEATED_CELL.sub("/*-", cells.get("scope", ""))
    cells.pop("producer", None), cells.pop("consumers", None)  # they name the repeated operators
    return tuple(cells.items()) + (tuple(row.ranks),)


def blocks(rows: list[Row]) -> list[Block]:
    """Rows grouped by :func:`signature`, in the order of their first row."""
    out: dict[tuple, Block] = {}
    for row in rows:
        out.setdefault(signature(row), Block()).rows.append(row)
    return list(out.values())


# ---- weights: repeated layers' weights (blocks.0.attention.wq ... blocks.123.attention.wq) as one block ----

_INDEX = re.compile(r"(?:(?<=[./_-])|^)\d+(?=[./_-]|$)")


def name_pattern(name: str) -> str:
    """A weight's name with each index of a repeated cell taken out: ``blocks.*.attention.wq``."""
    return _INDEX.sub("*", name)


def indices_text(names: list[str]) -> str:
    """The indices that vary between ``names`` of one pattern, with the word before each:
    ``blocks 0-123`` (``layers 0-3, experts 0-7`` when two vary); ``""`` when none varies."""
    found = [[(m.start(), m.group()) for m in _INDEX.finditer(n)] for n in names]
    if not found or any(len(f) != len(found[0]) for f in found):
        return ""
    parts = []
    for i, (start, _) in enumerate(found[0]):
        values = {int(f[i][1]) for f in found}
        if len(values) > 1:
            word = re.split(r"[./_-]", names[0][:start].rstrip("./_-"))[-1] or "index"
            parts.append(f"{word} {ranks_text(values)}")
    return ", ".join(parts)


def compressed_names(names: list[str]) -> list[str]:
    """``names`` with those of one pattern written once: ``blocks.*.attention.wq (blocks 0-123, x 124)``."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(name_pattern(name), []).append(name)
    return [members[0] if len(members) == 1 else f"{pattern} ({indices_text(members)}, x {len(members)})"
            for pattern, members in groups.items()]


@dataclass
class ParamBlock:
    """Weights whose rows agree in every column but the indices in their names."""

    rows: list[dict] = field(default_factory=list)

    @property
    def collapsed(self) -> bool:
        return len(self.rows) > 1

    @property
    def head(self) -> dict:
        return self.rows[0]

    @property
    def pattern(self) -> str:
        return name_pattern(self.rows[0]["param"])

    def varying(self) -> str:
        return indices_text([r["param"] for r in self.rows]) or f"{len(self.rows)} weights"


def param_blocks(rows: list[dict], keys: list[str]) -> list[ParamBlock]:
    """The weights' rows grouped by their name pattern and the ``keys`` cells, in order of first row."""
    out: dict[tuple, ParamBlock] = {}
    for row in rows:
        signature = (name_pattern(row["param"]),) + tuple(str(row.get(k)) for k in keys)
        out.setdefault(signature, ParamBlock()).rows.append(row)
    return list(out.values())
