"""The text of a picture's nodes and edges: names, ops, strategies and who set them, shapes
(per-rank or global), communication groups and peers."""
from __future__ import annotations

import graphviz
import networkx as nx

from msinspect.analysis.dataflow.node_facts import as_shape
from msinspect.model import Abstract, GraphRef, Node, NodeKind
from msinspect.ranks_text import ranks_text

#: The most runs of consecutive ranks a label lists; a longer group is said by its ends and size.
LABEL_RUNS = 8


def esc(text: object) -> str:
    """Text for a DOT label: backslashes doubled (lines are joined with DOT's ``\\n``)."""
    return str(text).replace("\\", "\\\\")


def _shape_text(abstract: Abstract | None) -> str | None:
    if abstract is None:
        return None
    if abstract.shape is not None and abstract.kind in ("Tensor", "Ref"):
        return str(abstract.shape)
    if abstract.elements:
        return "(" + ", ".join(str(s) for s in abstract.elements if s is not None) + ")"
    return None


def _shapes(abstracts) -> str:
    texts = [t for t in (_shape_text(a) for a in abstracts) if t]
    return ", ".join(texts)


def _strategy_text(node: Node) -> str | None:
    strategy = node.strategy
    if strategy is None or strategy.in_strategy is None:
        return None
    cuts = ", ".join("(" + ", ".join(str(d) for d in dims) + ")" for dims in strategy.in_strategy)
    return f"strategy ({cuts}) ({strategy.source})"


def label_lines(*lines: str | None) -> str:
    return graphviz.nohtml("\\n".join(esc(line) for line in lines if line))


def op_label(node: Node, where: str) -> str:
    ins, outs = _shapes(node.input_types), _shapes(node.output_types)
    origin = as_shape(node.cnode_primal_attrs.get("origin_output_shape"))
    callee = node.callee.name if node.kind == NodeKind.CALL_GRAPH and isinstance(node.callee, GraphRef) else None
    return label_lines(
        node.name,
        node.op if node.op != node.name else None,
        f"calls @{callee}" if callee else None,
        _strategy_text(node),
        f"in {ins}" if ins else None,
        f"out {outs} {where}" if outs else None,
        f"global out {origin}" if origin is not None and where == "per-rank" else None,
    )


def group_text(ranks: tuple[int, ...]) -> str:
    """A group's ranks as a label says them: ``0-3``, ``0, 4``; a group of more than
    :data:`LABEL_RUNS` runs by its first ranks, its last and its size (``0, 4, 8, ... 9996
    (2,500 ranks)``): Graphviz refuses a label past 16,384 characters, and a picture is read, not
    searched (the tables list every rank)."""
    text = ranks_text(ranks)
    runs = text.split(", ")
    if len(runs) <= LABEL_RUNS:
        return text
    return f"{', '.join(runs[:3])}, ... {runs[-1]} ({len(set(ranks)):,} ranks)"


def comm_label(node: Node, kind: str, ranks: tuple[int, ...] | None, where: str) -> str:
    moved = _shapes(node.input_types[:1]) or _shapes(node.output_types)
    result = _shapes(node.output_types)
    peer = None
    if node.op == "Send" and isinstance(node.primitive_attrs.get("dest_rank"), int):
        peer = f"to rank {node.primitive_attrs['dest_rank']}"
    if node.op == "Receive" and isinstance(node.primitive_attrs.get("src_rank"), int):
        peer = f"from rank {node.primitive_attrs['src_rank']}"
    return label_lines(
        f"{node.op} ({kind})",
        node.name if node.name != node.op else None,
        f"group ranks {group_text(ranks)}" if ranks else None,
        peer,
        f"{moved} -> {result} {where}" if moved and result and moved != result else
        (f"{moved or result} {where}" if moved or result else None),
    )


def param_label(key: str, data: dict, where: str) -> str:
    if not key.startswith("param:"):  # a node an excerpt refers to but does not hold
        return label_lines(key.rsplit("/", 1)[-1], "(not in this file)")
    shapes = [s for s in data.get("output_shapes", ()) if s is not None]
    return label_lines(data.get("name"), f"{shapes[0]} {where}" if shapes else None)


def edge_label(graph: nx.MultiDiGraph, source: str, hop_target: str, position: int | None) -> str | None:
    """The tensor's shape: as the consuming input states it, else as the producer's output."""
    target = graph.nodes[hop_target].get("node")
    if target is not None and position is not None and position < len(target.input_types):
        text = _shape_text(target.input_types[position])
        if text:
            return text
    shapes = [s for s in graph.nodes[source].get("output_shapes", ()) if s is not None]
    return ", ".join(str(s) for s in shapes) or None
