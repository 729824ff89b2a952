"""The IR nodes behind the rows an analysis gives, for the kinds that look at a node itself: its
inputs as MindSpore's ``ParallelValidator`` names them, its primitive attributes, its data edges.
A rank's file is parsed once per process for this (the parse cache answers after the first run);
the analysis rows say which file and line each operator is."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from msinspect.analysis.ops import type_ordinals, validator_type
from msinspect.model import FreeVarRef, Node, NodeRef, ParamRef

if TYPE_CHECKING:
    import networkx as nx

    from msinspect.model import IRFile

#: MindSpore's parameter names in a dump (``%para3_w``) name the weight after the prefix.
_PARAM_PREFIX = re.compile(r"^para\d+_")


class FileNodes:
    """One parsed file: its nodes by line, the ``Type-N`` name of each and its graph."""

    def __init__(self, ir: IRFile) -> None:
        self.ir = ir
        self.by_line: dict[int, Node] = {}
        self.by_index: dict[tuple[str | None, int], Node] = {}
        self.validator: dict[tuple[str | None, int], str] = {}
        nodes = [(graph.name, node) for graph in ir.subgraphs for node in graph.nodes if node.index is not None]
        types = [validator_type(node) for _, node in nodes]
        for (graph, node), op, n in zip(nodes, types, type_ordinals(zip((g for g, _ in nodes), types))):
            self.by_line[node.line] = node
            self.by_index[(graph, node.index)] = node
            self.validator[(graph, node.index)] = f"{op}-{n}"
        self._graph = None

    def name(self, node: Node) -> str:
        """The node's ``Type-N`` name (ParallelValidator's)."""
        return self.validator.get((node.graph, node.index), str(node.op))

    def inputs(self, node: Node) -> list[Any]:
        """The node's operands as ``ParallelValidator`` lists them: another node by its ``Type-N``
        name, a parameter by its name (``w``), a constant as its value."""
        out = []
        for operand in node.inputs:
            if isinstance(operand, NodeRef):
                producer = self.by_index.get((node.graph, operand.index))
                out.append(self.name(producer) if producer is not None else f"%{operand.index}")
            elif isinstance(operand, ParamRef):
                out.append(_PARAM_PREFIX.sub("", operand.name))
            elif isinstance(operand, FreeVarRef):
                out.append(_PARAM_PREFIX.sub("", str(operand.name)))
            else:
                out.append(operand)
        return out

    @property
    def graph(self) -> nx.MultiDiGraph:
        """The file's graph (:func:`msinspect.graph.to_networkx`), built on first use."""
        if self._graph is None:
            from msinspect.graph import to_networkx

            self._graph = to_networkx(self.ir)
        return self._graph


@lru_cache(maxsize=16)
def file_nodes(path: str) -> FileNodes:
    """The nodes of the file at ``path`` (read past what does not parse, as the analysis did)."""
    from msinspect.parser import parse_file

    return FileNodes(parse_file(path, lenient=True))


def nodes_of(rows) -> list[tuple[Any, FileNodes, Node]]:
    """``(row, file, node)`` for each row of an analysis frame (``file``, ``line`` columns) whose
    node is found."""
    out = []
    for row in rows.itertuples():
        found = file_nodes(str(row.file))
        node = found.by_line.get(int(row.line))
        if node is not None:
            out.append((row, found, node))
    return out


def operand_lines(path: str, line: int) -> set[int]:
    """The lines of the nodes the node at ``line`` of ``path`` takes as operands (its graph's)."""
    found = file_nodes(str(path))
    node = found.by_line.get(int(line))
    if node is None:
        return set()
    producers = (found.by_index.get((node.graph, o.index)) for o in node.inputs if isinstance(o, NodeRef))
    return {p.line for p in producers if p is not None}
