"""What an ``analyze_fail.ir`` says went wrong: the exception MindSpore caught while it evaluated
(inferred) the graph, and the evaluation stack, each marked node with the source line it came
from, outermost first, as MindSpore marks them (``#------------------------> depth``)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from msinspect.model import IRFile, Node, describe_node

#: A ``# In file`` note: ``path:line[~line], col~col/code/`` (the path may hold "/", the code too).
_NOTE = re.compile(r"(?P<where>.*?:\d+(?:~\d+)?, \d+~\d+)/(?P<code>.*?)/?$", re.S)


@dataclass(frozen=True)
class Frame:
    """One node of the evaluation stack."""

    depth: int
    graph: str
    node: str
    """The node as every message names it (``%8 call (call_value) in @g``); ``%N`` where the file
    holds no node at the marked line."""
    line: int
    """The node's line in the file."""
    source: str | None
    """The first ``# In file`` note of the node (``net.py:30, 15~38/    return ...``), or None."""


@dataclass(frozen=True)
class Failure:
    message: str
    """The exception MindSpore caught, as it printed it."""
    stack: tuple[Frame, ...]


def failure_of(ir: IRFile) -> Failure | None:
    """The failure an ``analyze_fail.ir`` records; None for any other file."""
    if ir.failure is None and not ir.eval_stack:
        return None
    at_line = {n.line: n for n in ir.nodes() if n.line}
    frames = []
    for depth, graph, index, line in ir.eval_stack:
        node = at_line.get(line)
        frames.append(Frame(depth=depth, graph=graph, node=describe_node(node) if node else f"%{index}", line=line,
                            source=_source(node)))
    return Failure(message=ir.failure or "(the file states no exception)", stack=tuple(frames))


def failure_row(ir: IRFile) -> dict | None:
    """:func:`failure_of` as a field of an output row (``failure`` in the schema); None for a file
    that records no failure."""
    found = failure_of(ir)
    if found is None:
        return None
    return {"message": found.message, "stack": [vars(frame) for frame in found.stack]}


def _source(node: Node | None) -> str | None:
    if node is None or not node.sources:
        return None
    found = _NOTE.match(node.sources[0])
    if found is None:
        return node.sources[0]
    code = found["code"].strip()
    return f"{found['where']}: {code}" if code else found["where"]
