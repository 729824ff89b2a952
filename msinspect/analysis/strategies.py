"""One row per operator that carries a strategy: what it was cut into, who chose it, and its global
and per-rank shapes."""
from __future__ import annotations

from msinspect.analysis.context import RankContext, shapes_are_global
from msinspect.analysis.layout import divided
from msinspect.analysis.ops import as_shape, as_shapes, scope_of, tensor_inputs
from msinspect.model import IRFile, Node

STRATEGY_COLUMNS = [
    "rank", "stage", "file", "line", "name", "op", "scope", "source_line", "in_strategy",
    "out_strategy", "set_by", "global_inputs", "global_output", "rank_inputs", "rank_output",
    "expected_rank_inputs", "shapes_ok", "micro", "graph",
]


def node_key(node: Node) -> tuple[str | None, str, str]:
    """How the same operator is recognised in two files of one rank: name, op type and scope."""
    return (node.instance_name, node.op, scope_of(node))


def _abstract_inputs(node: Node, count: int) -> tuple | None:
    shapes = [a.shape for a in tensor_inputs(node)][:count]
    return tuple(shapes) if shapes and all(s is not None for s in shapes) else None


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


def strategy_rows(ir: IRFile, ctx: RankContext = RankContext(), reference: IRFile | None = None) -> list[dict]:
    """Every node with an ``in_strategy``/``out_strategy`` in ``ir``.

    ``reference`` is a pre-parallel file of the same rank, used for global shapes when ``ir``
    shows per-rank ones but does not record the originals (2.2 era).
    """
    is_global = shapes_are_global(ir.path)
    by_key = _index(reference) if reference is not None and not is_global else {}
    seen: dict[tuple, int] = {}
    rows = []
    for node in ir.nodes():
        strategy = node.strategy
        if strategy is None:
            continue
        key = node_key(node)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        candidates = by_key.get(key, [])
        ref = candidates[occurrence] if occurrence < len(candidates) else None
        count = len(strategy.in_strategy or ())
        g_in, g_out = global_shapes(node, is_global, ref, count)
        r_in = None if is_global else _abstract_inputs(node, count)
        r_out = None if is_global else _abstract_output(node)
        expected = None
        if g_in is not None and strategy.in_strategy and len(g_in) == count:
            parts = [divided(shape, s) for shape, s in zip(g_in, strategy.in_strategy)]
            expected = tuple(parts) if all(p is not None for p in parts) else None
        ok = None if expected is None or r_in is None else expected == r_in
        rows.append({
            "rank": ctx.rank, "stage": ir.stage, "file": ir.path, "line": node.line, "name": node.name,
            "op": node.op, "scope": scope_of(node), "source_line": node.source_line,
            "in_strategy": strategy.in_strategy, "out_strategy": strategy.out_strategy,
            "set_by": strategy.source, "global_inputs": g_in, "global_output": g_out,
            "rank_inputs": r_in, "rank_output": r_out, "expected_rank_inputs": expected,
            "shapes_ok": ok, "micro": node.cnode_primal_attrs.get("micro"), "graph": node.graph,
        })
    return rows


def _index(ir: IRFile) -> dict[tuple, list[Node]]:
    found: dict[tuple, list[Node]] = {}
    for node in ir.nodes():
        if node.strategy is not None:
            found.setdefault(node_key(node), []).append(node)
    return found
