"""The IR lines that show what a checked expectation found (:class:`Evidence`, carried by its
verdict, :class:`~msinspect.expectations.base.Outcome`), and the helpers every kind uses to pick
rows of an analysis and say what it found. Reading a spec imports this module: it loads neither
pandas (the kinds get their frames from the analysis) nor the parser (loaded when an IR line is
shown)."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from msinspect.model import Node, where
from msinspect.ranks_text import ranks_text

if TYPE_CHECKING:
    import pandas as pd

    from msinspect.analysis.dataflow.file_view import FileView

#: The most IR lines shown for one failed expectation.
MAX_EVIDENCE = 8


@dataclass(frozen=True)
class Evidence:
    """An IR line that shows what was found."""

    rank: int | None
    file: str
    line: int
    text: str

    def format(self) -> str:
        """``rank 3: file.ir:12: <the line as written>``: located as every message locates a line."""
        return f"{where(self.file, self.line, rank=self.rank)}: {self.text}"

    @classmethod
    def of_node(cls, rank: int | None, path: str, node: Node) -> Evidence:
        """The node's own line, as written."""
        return cls(rank, path, node.line, ir_line(path, node.line))


@lru_cache(maxsize=64)
def _lines(path: str) -> tuple[str, ...]:
    from msinspect.parser.reading import read_text  # the parser package loads Lark

    text, _ = read_text(path, lenient=True)
    return tuple(text.splitlines())


def ir_line(path: str, line: int, width: int = 200) -> str:
    """The text of an IR line, stripped and cut to ``width`` characters."""
    lines = _lines(path)
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return text if len(text) <= width else text[: width - 3] + "..."


def rank_of(value) -> int | None:
    """A frame's rank cell as an int; None for a file outside ``rank_N`` folders (a cell of
    None, NaN or pandas' NA)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def evidence_of(rows: pd.DataFrame) -> list[Evidence]:
    """One IR line per rank (the first row of each), in rank order."""
    out = []
    for _, row in rows.drop_duplicates("rank").iterrows():
        out.append(Evidence(rank_of(row["rank"]), row["file"], int(row["line"]),
                            ir_line(row["file"], int(row["line"]))))
    return out


def rank_cells_text(cells) -> str:
    """What a frame's rank cells are, in words: ``ranks 0-3, 6``, ``rank 3``
    (:func:`~msinspect.ranks_text.ranks_text`), ``the dump's files`` when none has a rank."""
    ranks = [rank_of(r) for r in cells]
    if ranks and all(r is None for r in ranks):
        return "the dump's files"  # files outside rank_N folders
    return ranks_text((r for r in ranks if r is not None), word=True)


def select(frame: pd.DataFrame, selector: str, ranks, ops: pd.DataFrame | None = None,
           graph: str | int | None = None) -> pd.DataFrame:
    """The rows of operators matching ``selector`` (:mod:`msinspect.analysis.dataflow.spec_selector`: an
    instance name, ``MatMul-0``, ``type:``, ``scope:``, ``re:``), on ``ranks`` (None: every rank).
    ``ops``: the operator table ``MatMul-0`` counts in, where ``frame`` holds only some operators
    (those with a strategy); by default ``frame`` itself. ``graph``: only operators of that
    subgraph (its name, or its position in its file)."""
    from msinspect.analysis.dataflow.spec_selector import parse_selector

    if frame.empty:
        return frame
    if graph is not None:
        frame = frame[[in_graph(f, g, graph) for f, g in zip(frame["file"], frame["graph"])]]
        if ops is not None and not ops.empty:
            ops = ops[[in_graph(f, g, graph) for f, g in zip(ops["file"], ops["graph"])]]
        if frame.empty:
            return frame
    chosen = parse_selector(selector)
    if chosen.form == "type_n" and ops is not None and not ops.empty:
        hits = ops[chosen.rows(ops)]
        if not hits.empty:
            at = set(zip(hits["file"], hits["line"]))
            frame = frame[[(f, ln) in at for f, ln in zip(frame["file"], frame["line"])]]
        else:
            frame = frame[chosen.rows(frame)]
    else:
        frame = frame[chosen.rows(frame)]
    if ranks is not None:
        frame = frame[frame["rank"].isin(ranks)]
    return frame


def select_in(analysis, frame: pd.DataFrame, selector: str, ranks, graph: str | int | None = None) -> pd.DataFrame:
    """:func:`select` on ``frame`` of ``analysis``, counting ``MatMul-0`` among every operator of
    the analysis (the operator table is read only for such a selector)."""
    from msinspect.analysis.dataflow.spec_selector import parse_selector

    ops = analysis.operators() if parse_selector(selector).form == "type_n" else None
    return select(frame, selector, ranks, ops, graph)


def in_graph(path: str, name, graph: str | int) -> bool:
    """Whether the subgraph ``name`` of the file ``path`` is ``graph`` (a name, or a position in
    the file: 0 the first subgraph written)."""
    if isinstance(graph, str):
        return name == graph
    order = _graph_order(str(path))
    return graph < len(order) and order[graph] == name


@lru_cache(maxsize=64)
def _graph_order(path: str) -> tuple[str, ...]:
    from msinspect.analysis.dataflow.file_view import view_of

    return tuple(g.name for g in view_of(path).ir.subgraphs)


def nodes_of(rows) -> list[tuple[Any, FileView, Node]]:
    """``(row, view, node)`` for each row of an analysis frame (``file``, ``line`` columns) whose
    node its file's view (:func:`~msinspect.analysis.dataflow.file_view.view_of`) holds."""
    from msinspect.analysis.dataflow.file_view import view_of

    out = []
    for row in rows.itertuples():
        view = view_of(row.file)
        node = view.by_line.get(int(row.line))
        if node is not None:
            out.append((row, view, node))
    return out


def no_match(frame: pd.DataFrame, selector: str, tail: str = "") -> str:
    """``no operator matching 'matmull'; did you mean matmul, matmul2?``: what a kind says when
    ``selector`` picks none of the operators in ``frame``, with the instance names and op types
    there that are close to it (:func:`close_to`)."""
    names = frame["name"] if not frame.empty else ()
    ops = frame["op"] if not frame.empty else ()
    return f"no operator matching {selector!r}{tail}{close_to(selector, names, ops)}"


def close_to(selector: str, names, ops) -> str:
    """``; did you mean matmul, matmul2?``: the instance ``names`` closest to the selector's last
    part (:func:`difflib.get_close_matches` over the names and the op types ``ops``, an op type
    standing for its instances, since a selector names instances), or, where that part is an op
    type, its instances; "" when nothing is close."""
    instances: dict[str, list[str]] = {}  # op type: its instance names
    for name, op in zip(names, ops):
        if isinstance(name, str) and isinstance(op, str) and name not in instances.setdefault(op, []):
            instances[op].append(name)
    last = selector.strip("/").split("/")[-1]
    if last in instances:
        shown = sorted(instances[last])
        more = f" and {len(shown) - 5} more" if len(shown) > 5 else ""
        return (f"; {last} is an op type: select its operators with type:{last} or {last}-0, or name an "
                f"instance of it: {', '.join(shown[:5])}{more}")
    words = sorted({n for named in instances.values() for n in named} | set(instances))
    close = difflib.get_close_matches(last, words, n=5, cutoff=0.6)
    if not close:  # case slips: "MATMUL" for matmul
        lowered = {w.lower(): w for w in words}
        close = [lowered[w] for w in difflib.get_close_matches(last.lower(), list(lowered), n=5, cutoff=0.6)]
    shown = list(dict.fromkeys(n for w in close for n in (sorted(instances[w]) if w in instances else [w])))
    return f"; did you mean {', '.join(shown[:5])}?" if shown else ""


def layout_text(value) -> str:
    """``((2, 4), (4, 1))`` for a layout; ``str`` of anything else."""
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return str(value)


def kind_matches(op: str, name: str | None, kind: str) -> bool:
    """``AllReduce`` matches the op type, without case (``AllToAll`` is MindSpore's ``AlltoAll``:
    a spec's kind is checked against the vocabulary when it is read); ``_MirrorOperator`` also
    matches the AllReduce named ``grad_mirror_MirrorOperator`` that it becomes after the parallel pass."""
    if isinstance(op, str) and op.casefold() == kind.casefold():
        return True
    bare = kind.lstrip("_")
    return bool(name) and bare != kind and name.endswith(bare)
