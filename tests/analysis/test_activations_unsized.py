"""Where a saved tensor's size is not printed, the estimate says which, why, with a node of the
file, and what the others hold (:func:`msinspect.analysis.rank.activations.saved_of_file`); zoo 15's
run-time dimensions are ``test_activations_zoo15.py``, zoo 17's graph input ``test_activations.py``.

Zoo 01's rank 0 at validate, as ``test_activations.py`` derives it: 4 blocks of 15 saved tensors,
the head's 5 and the embedding's indices, 66 tensors, 17,320,960 bytes. With block 0's GeLU output
printed ``<null>`` where the backward reads it (an abstract MindSpore did not infer), that (256,
512) float32 tensor of 524,288 bytes has no size: 1 of 66, and the other 65 hold 17,320,960 -
524,288 = 16,796,672 bytes.
"""
from __future__ import annotations

import dataclasses

from msinspect.analysis.rank.activations import activations_of_rank, saved_of_file
from msinspect.model import Abstract, NodeRef
from msinspect.parser import parse_file

from tests.conftest import FIXTURES

NULL = Abstract(kind="null", dtype=None, shape=None, text="<null>")


def _without_abstract(ir, op: str, scope: str):
    """``ir`` with every reading of the ``op`` node under ``scope`` typed ``<null>``; that node."""
    target = next(n for n in ir.nodes() if n.op == op and scope in (n.fullname or ""))
    for sub in ir.subgraphs:
        if sub.name != target.graph:
            continue
        for i, node in enumerate(sub.nodes):
            types = tuple(NULL if ref == NodeRef(target.index) and position < len(node.input_types) else given
                          for position, (ref, given) in enumerate(zip(node.inputs, node.input_types)))
            if types != node.input_types[:len(types)]:
                sub.nodes[i] = dataclasses.replace(node, input_types=types + node.input_types[len(types):])
    return target


def test_a_tensor_printed_without_abstract_is_named():
    path = next((FIXTURES / "zoo" / "01_semi_auto_tp4dp2" / "rank_0").glob("*_validate_*.ir.gz"))
    ir = parse_file(path)
    gelu = _without_abstract(ir, "GeLU", "0-Block/ffn-FeedForward")
    saved = saved_of_file(ir)
    assert (saved["saved"], saved["unknown"]) == (66, 1)
    row = activations_of_rank(0, saved, None)
    assert (row["shared"], row["activations"]) == (None, None)
    assert row["why"] == (f"cannot tell: 1 of 66 saved tensors have no known size; 1 print no abstract (<null>) "
                          f"(e.g. {path}:{gelu.line}: {gelu.ref} GeLU {gelu.instance_name} (call_primitive) in "
                          f"@{gelu.graph} -> {gelu.output_types[0].text}); the other 65 hold 16,796,672 bytes")
