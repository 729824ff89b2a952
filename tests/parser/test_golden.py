"""Golden tests, one construct each: ``golden/NAME.ir`` beside ``golden/NAME.json``, which states
by hand what the parser must read from it (or the error it must give). Only the keys a JSON file
names are compared, so each file says exactly what it asserts; the numbers of subgraphs and of
nodes are always compared."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from msinspect import IRParseError, parse_file
from msinspect.model import FreeVarRef, GraphRef, NodeRef, ParamRef, PrimitiveValue, TensorValue, format_node

GOLDEN = Path(__file__).parent / "golden"


def cases() -> list[Path]:
    found = sorted(GOLDEN.glob("*.json"))
    assert len(found) >= 14, "the golden corpus went missing"
    return found


def ir_of(case: Path) -> Path:
    return case.with_suffix(".ir")


def shown(value):
    """A parsed value as the golden files write it."""
    if isinstance(value, NodeRef):
        return f"%{value.index}"
    if isinstance(value, ParamRef):
        return f"%{value.name}"
    if isinstance(value, GraphRef):
        return f"@{value.name}"
    if isinstance(value, FreeVarRef):
        return f"$(@{value.graph}:{value.name})"
    if isinstance(value, TensorValue):
        return f"Tensor{list(value.shape)}"
    if isinstance(value, PrimitiveValue):
        return f"{value.name}[...]"
    if isinstance(value, (tuple, list)):
        return [shown(v) for v in value]
    if isinstance(value, dict):
        return {k: shown(v) for k, v in value.items()}
    return value


def node_view(node, keys) -> dict:
    strategy = node.strategy
    every = {
        "index": node.index, "op": node.op, "kind": node.kind.value, "line": node.line,
        "callee_graphs": list(node.callee_graphs), "instance_name": node.instance_name,
        "kernel_lines": list(node.kernel_lines),
        "inputs": shown(node.inputs), "scope": node.scope, "primitive_attrs": shown(node.primitive_attrs),
        "strategy": shown(strategy.in_strategy) if strategy else None,
        "strategy_source": strategy.source if strategy else None,
        "output_shape": list(node.output_shape) if node.output_shape is not None else None,
        "output_types": [{"kind": a.kind, "elements": [list(e) if e is not None else None for e in a.elements]}
                         for a in node.output_types],
    }
    return {k: every[k] for k in keys}


@pytest.mark.parametrize("case", cases(), ids=lambda p: p.stem)
def test_golden(case):
    expected = json.loads(case.read_text(encoding="utf-8"))
    path = ir_of(case)
    if "error" in expected:
        with pytest.raises(IRParseError) as info:
            parse_file(path)
        err = info.value
        assert {"line": err.line, "column": err.column, "message": err.message} == expected["error"]
        return
    ir = parse_file(path, lenient=expected.get("lenient", False))
    for key in ("family", "kind", "complete", "failure"):
        if key in expected:
            assert getattr(ir, key) == expected[key], key
    if "eval_stack" in expected:
        assert [list(e) for e in ir.eval_stack] == expected["eval_stack"]
    if "params" in expected:
        assert [p.name for p in ir.params] == expected["params"]
    want = expected.get("diagnostics", [])
    assert len(ir.diagnostics) == len(want), ir.diagnostics
    for diag, wanted in zip(ir.diagnostics, want):
        assert (diag.line, diag.column) == (wanted["line"], wanted["column"])
        assert wanted["message"] in diag.message
        if "text" in wanted:
            assert diag.text == wanted["text"]
    assert len(ir.subgraphs) == len(expected["subgraphs"])
    for graph, wanted in zip(ir.subgraphs, expected["subgraphs"]):
        assert (graph.name, list(graph.params)) == (wanted["name"], wanted["params"])
        assert len(graph.nodes) == len(wanted["nodes"])
        for node, wanted_node in zip(graph.nodes, wanted["nodes"]):
            assert node_view(node, wanted_node) == wanted_node, format_node(node, str(path))


def test_every_golden_input_has_its_expectation():
    inputs = sorted(p.name for p in GOLDEN.glob("*.ir"))
    assert inputs == sorted(ir_of(c).name for c in cases())
