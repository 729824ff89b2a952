"""One row per CNode of a file: the flat operator table that counts, shape checks and diffs use."""
from __future__ import annotations

from msinspect.analysis.ops import is_backward, is_comm, is_plumbing, scope_of, tensor_inputs
from msinspect.analysis.context import RankContext
from msinspect.analysis.strategies import strategy_of
from msinspect.model import IRFile

OP_COLUMNS = [
    "rank", "name", "op", "scope", "line", "inputs", "output", "in_strategy", "backward", "comm",
    "plumbing", "micro", "file",
]


def operator_rows(ir: IRFile, ctx: RankContext = RankContext()) -> list[dict]:
    """Every CNode except ``Return``, in file order."""
    rows = []
    for node in ir.nodes():
        if node.index is None:
            continue
        strategy = strategy_of(node)
        rows.append({
            "rank": ctx.rank, "name": node.instance_name or node.name, "op": node.op,
            "scope": scope_of(node), "line": node.line,
            "inputs": tuple(a.shape for a in tensor_inputs(node)),
            "output": node.output_shape, "in_strategy": strategy.in_strategy if strategy else None,
            "backward": is_backward(node), "comm": is_comm(node), "plumbing": is_plumbing(node),
            "micro": node.cnode_primal_attrs.get("micro"), "file": ir.path,
        })
    return rows
