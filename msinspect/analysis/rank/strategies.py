"""One row per operator that carries a strategy: what it was cut into, who chose it, and its global
and per-rank shapes."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Collection

from msinspect.analysis.dataflow.align import align
from msinspect.analysis.rank.context import RankContext, shapes_are_global
from msinspect.mindspore.layouts import call_of, divided
from msinspect.analysis.dataflow.node_facts import as_shape, as_shapes, scope_of
from msinspect.graph import node_id, to_networkx
from msinspect.model import (IRFile, Node, Strategy, carries_user_attribute,  # noqa: F401
                             layout_strategy)
from msinspect.stages import GLOBAL_SHAPE_STAGES, stage_of
from msinspect.mindspore.vocabulary import stands_in

if TYPE_CHECKING:  # networkx loads where a graph is built: a run answered from the cache never loads it
    import networkx as nx

#: Stages of 2.10 known to keep the user's ``shard()`` attribute on primitives (every front-end
#: pass up to ``validate``): there a strategy without it was the planner's.
KEEPS_USER_ATTRIBUTE = GLOBAL_SHAPE_STAGES | {"validate"}

STRATEGY_COLUMNS = [
    "rank", "stage", "file", "line", "name", "op", "scope", "source_line", "in_strategy",
    "out_strategy", "set_by", "global_inputs", "global_output", "rank_inputs", "rank_output",
    "expected_rank_inputs", "shapes_ok", "micro", "graph", "reference_line",
]


def keeps_user_attribute(ir: IRFile) -> bool:
    """Whether a strategy without the user's attribute in ``ir`` can be told to be the planner's:
    some operator of the file carries the attribute, or the stage is one known to keep it."""
    return stage_of(ir.path) in KEEPS_USER_ATTRIBUTE or any(carries_user_attribute(n) for n in ir.nodes())


def strategy_of(node: Node, keeps_user: bool = True) -> Strategy | None:
    """The operator's strategy (:attr:`Node.strategy <msinspect.model.Node.strategy>`, the one
    definition); who set it is unknown, not the planner, when the file cannot tell
    (``keeps_user`` False: a file after the passes that drop the user's attribute)."""
    strategy = node.strategy
    if strategy is None or keeps_user or strategy.user_set or node.op.startswith("_Virtual"):
        return strategy
    return replace(strategy, user_set=None)




def set_by(node: Node, strategy: Strategy, reference: Node | None) -> str:
    """Who set the operator's strategy. An operator of a replacement graph is a new primitive the
    parallel pass made, without the user's attribute; where it stands for the operator it
    replaced (the same primitive, its counterpart in the pre-parallel ``reference`` file), the
    strategy is that operator's: set by whoever set that one (a MindFormers Gather ``shard()``ed
    by the user is replaced by a hash-named Gather with the same strategy)."""
    if not strategy.user_set and reference is not None and reference.op == node.op \
            and stands_in(node) and reference.strategy is not None:
        return "user" if carries_user_attribute(reference) else "planner"
    return strategy.source


def _repeat_key(graph: nx.MultiDiGraph, key: str) -> tuple:
    """What the copies of one operator (one per micro-batch) share: instance name, op, scope."""
    data = graph.nodes[key]
    return data.get("instance_name"), data.get("op"), data.get("scope") or ""


def _abstract_inputs(node: Node, count: int) -> tuple | None:
    """The shapes of the node's first ``count`` tensor inputs, one per strategy entry: None for an
    input written ``<null>`` (MindSpore left its abstract unset), which holds its place, so that
    the shapes after it are not read as the entries' before it; None where none is printed."""
    shapes = [a.shape for a in node.input_types if a.kind in ("Tensor", "Ref", "null")][:count]
    return tuple(shapes) if any(s is not None for s in shapes) else None


def _abstract_output(node: Node):
    return node.output_shape if node.output_types and node.output_types[0].kind in ("Tensor", "Ref") else None


def global_shapes(node: Node, ir_is_global: bool, reference: Node | None, count: int):
    """(inputs, output) before cutting: the node's ``origin_*`` attributes (2.10), its own
    abstracts in a pre-parallel file, or those of the same operator in a reference file."""
    origin_in = as_shapes(node.cnode_primal_attrs.get("origin_input_shapes"))
    origin_out = as_shape(node.cnode_primal_attrs.get("origin_output_shape"))
    if origin_in is not None:
        return tuple(origin_in[:count]), origin_out
    if ir_is_global:
        return _abstract_inputs(node, count), _abstract_output(node)
    if reference is not None:
        return _abstract_inputs(reference, count), _abstract_output(reference)
    return None, None


def strategy_rows(ir: IRFile, ctx: RankContext = RankContext(), reference: IRFile | None = None,
                  graph: nx.MultiDiGraph | None = None, only: Collection[Node] | None = None) -> list[dict]:
    """Every node with a strategy in ``ir``.

    ``reference`` is a pre-parallel file of the same rank, used for global shapes when ``ir``
    shows per-rank ones but does not record the originals (``origin_input_shapes``). Later passes
    rename instances (at ``validate`` q_transpose, k_transpose and v_transpose all print as
    v_transpose), so an operator is paired with its counterpart in the reference by its place
    among its data neighbours (:func:`msinspect.analysis.dataflow.align.align`), never by name;
    ``reference_line`` says which line it was paired with. One that cannot be paired gets no
    global shape ("cannot tell"), never another operator's. ``graph``: ``ir``'s graph, if built.
    ``only``: the rows of these nodes (in file order), where no operator is paired by its place
    (a pairing is of every operator at once): there every row.
    """
    is_global = shapes_are_global(ir.path)
    keeps_user = keeps_user_attribute(ir)
    paired = reference is not None and not is_global  # operators may be paired with the reference's
    found = [(node, strategy_of(node, keeps_user)) for node in (ir.nodes() if only is None or paired else only)]
    found = [(node, strategy) for node, strategy in found if strategy is not None]
    counterpart: dict[str, Node] = {}
    if paired and any(node.cnode_primal_attrs.get("origin_input_shapes") is None
                      or stands_in(node) for node, _ in found):
        graph = graph if graph is not None else to_networkx(ir)
        ref_graph = to_networkx(reference)
        pairs = align(ref_graph, graph, [node_id(node) for node, _ in found], repeats=_repeat_key).pairs
        counterpart = {key: ref_graph.nodes[ref]["node"] for key, ref in pairs.items()}
    elif only is not None and paired:
        lines = {node.line for node in only}
        found = [(node, strategy) for node, strategy in found if node.line in lines]
    stage = ir.stage  # read off the path: once, not per row
    rows = []
    for node, strategy in found:
        ref = counterpart.get(node_id(node))
        count = len(strategy.in_strategy or ())
        g_in, g_out = global_shapes(node, is_global, ref, count)
        r_in = None if is_global else _abstract_inputs(node, count)
        r_out = None if is_global else _abstract_output(node)
        expected = None
        if g_in is not None and strategy.in_strategy and len(g_in) == count:
            parts = [divided(shape, s) if shape is not None else None for shape, s in zip(g_in, strategy.in_strategy)]
            expected = tuple(parts) if all(p is not None for p in parts) else None
        ok = None if expected is None or r_in is None else expected == r_in
        rows.append({
            "rank": ctx.rank, "stage": stage, "file": ir.path, "line": node.line, "name": node.name,
            "op": node.op, "scope": scope_of(node), "source_line": node.source_line,
            "in_strategy": strategy.in_strategy, "out_strategy": strategy.out_strategy,
            "set_by": set_by(node, strategy, ref), "global_inputs": g_in, "global_output": g_out,
            "rank_inputs": r_in, "rank_output": r_out, "expected_rank_inputs": expected,
            "shapes_ok": ok, "micro": node.cnode_primal_attrs.get("micro"), "graph": node.graph,
            "reference_line": ref.line if ref is not None else None,
            "call": call_of(node, strategy.in_strategy),  # not a column: the layout rules' input
        })
    return rows
