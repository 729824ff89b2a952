"""One row per operator that carries a strategy: what it was cut into, who chose it, and its global
and per-rank shapes."""
from __future__ import annotations

from typing import Any

from msinspect.analysis.context import RankContext, shapes_are_global
from msinspect.analysis.layout import divided
from msinspect.analysis.ops import as_shape, as_shapes, scope_of, tensor_inputs
from msinspect.model import IRFile, Node, Strategy
from msinspect.stages import GLOBAL_SHAPE_STAGES, stage_of

#: Stages of 2.10 known to keep the user's ``shard()`` attribute on primitives (every front-end
#: pass up to ``validate``): there a strategy without it was the planner's.
KEEPS_USER_ATTRIBUTE = GLOBAL_SHAPE_STAGES | {"validate"}
#: The primitive attributes the user's ``shard()`` writes.
USER_KEYS = ("in_strategy", "out_strategy", "in_layout", "out_layout")

STRATEGY_COLUMNS = [
    "rank", "stage", "file", "line", "name", "op", "scope", "source_line", "in_strategy",
    "out_strategy", "set_by", "global_inputs", "global_output", "rank_inputs", "rank_output",
    "expected_rank_inputs", "shapes_ok", "micro", "graph",
]


def _strategy_value(value: Any) -> tuple[tuple[int, ...], ...] | None:
    """``((2, 1), (1))`` -> ((2, 1), (1,)); a lone ``(2, 4)`` is one input's; ``()`` (GetNext, an
    operator with no tensor input to cut) is no input at all, not one empty input."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        return (tuple(value),) if value else ()
    if isinstance(value, (tuple, list)):
        return tuple(tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in value)
    return None


def layout_strategy(layout: Any) -> tuple[int, ...] | None:
    """The strategy of one tensor cut with ``mindspore.parallel.Layout``: ``{'device_matrix': (2,
    4), 'tensor_map': (1, -1)}`` -> (2, 1). A tensor-map entry names a device-matrix axis counted
    from the right (-1: not cut; a tuple: cut along each of those axes)."""
    if not isinstance(layout, dict):
        return None
    matrix, tensor_map = layout.get("device_matrix"), layout.get("tensor_map")
    if not isinstance(matrix, (tuple, list)) or not isinstance(tensor_map, (tuple, list)):
        return None
    cuts = []
    for entry in tensor_map:
        axes = entry if isinstance(entry, (tuple, list)) else (entry,)
        count = 1
        for axis in axes:
            if not isinstance(axis, int) or axis >= len(matrix):
                return None
            if axis >= 0:
                count *= matrix[len(matrix) - 1 - axis]
        cuts.append(count)
    return tuple(cuts)


def _layouts(value: Any) -> tuple[tuple[int, ...], ...] | None:
    if isinstance(value, dict):
        value = (value,)
    if not isinstance(value, (tuple, list)):
        return None
    cuts = [layout_strategy(v) for v in value]
    return tuple(cuts) if all(c is not None for c in cuts) else None


def _from(attrs: dict) -> tuple | None:
    """(in, out) strategies written in ``attrs``: ``in_strategy`` / ``out_strategy``, else the
    Layouts ``in_layout`` / ``out_layout``; None when neither is there."""
    ins = _strategy_value(attrs.get("in_strategy"))
    outs = _strategy_value(attrs.get("out_strategy"))
    if ins is None and attrs.get("in_layout") is not None:
        ins = _layouts(attrs.get("in_layout"))
    if outs is None and attrs.get("out_layout") is not None:
        outs = _layouts(attrs.get("out_layout"))
    return (ins, outs) if ins is not None or outs is not None else None


def carries_user_attribute(node: Node) -> bool:
    """Whether the user's ``shard()`` wrote its strategy (or Layout) on the primitive."""
    return any(node.primitive_attrs.get(k) is not None for k in USER_KEYS)


def keeps_user_attribute(ir: IRFile) -> bool:
    """Whether a strategy without the user's attribute in ``ir`` can be told to be the planner's:
    some operator of the file carries the attribute, or the stage is one known to keep it."""
    return stage_of(ir.path) in KEEPS_USER_ATTRIBUTE or any(carries_user_attribute(n) for n in ir.nodes())


def strategy_of(node: Node, keeps_user: bool = True) -> Strategy | None:
    """The strategy of an operator, wherever MindSpore wrote it: the trailing braces (the one
    used, after the parallel pass), else the primitive's ``in_strategy`` / ``in_layout`` (the
    user's ``shard()``, alone before the parallel pass of a semi-auto job), else the node's
    ``cnode_attrs``. Set by the user when the primitive carries the user's attribute, by the
    planner when not and the file keeps that attribute (``keeps_user``), else unknown."""
    found = _from(node.trailing_attrs) or _from(node.primitive_attrs) or _from(node.cnode_attrs)
    if found is None:
        return None
    if node.op.startswith("_Virtual"):  # the parallel pass's own operators: never a shard() of the user's
        user = False
    else:
        user = True if carries_user_attribute(node) else (False if keeps_user else None)
    return Strategy(found[0], found[1], user)


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
    # Later passes rename instances (tr_q, tr_k, tr_v all become tr_ctx): the n-th operator of a
    # name pairs with the reference's n-th only when both files have as many of that name;
    # otherwise its global shape cannot be told from the reference.
    here = _index(ir) if by_key else {}
    keeps_user = keeps_user_attribute(ir)
    seen: dict[tuple, int] = {}
    rows = []
    for node in ir.nodes():
        strategy = strategy_of(node, keeps_user)
        if strategy is None:
            continue
        key = node_key(node)
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        candidates = by_key.get(key, [])
        ref = candidates[occurrence] if candidates and len(candidates) == len(here.get(key, ())) else None
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
        if strategy_of(node) is not None:
            found.setdefault(node_key(node), []).append(node)
    return found
