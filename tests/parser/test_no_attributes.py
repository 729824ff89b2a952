"""A node without attributes of a kind holds the one shared empty dict, :data:`NO_ATTRIBUTES`:
read-only, so no write meant for one node reaches them all; a node with attributes has its own."""
from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from msinspect.model import NO_ATTRIBUTES, Node, NodeKind, canonical
from msinspect.parser import parse_file

ROOT = Path(__file__).resolve().parents[2]
#: The semi-auto job's rank 0 after the parallel pass: its operators carry the strategy braces
#: (``{in_strategy: ...}``) and its Loads and UpdateStates carry no attributes.
FILE = ROOT / "fixtures/zoo/01_semi_auto_tp4dp2/rank_0/step_parallel_end_0020.ir.gz"
KINDS = ("primitive_attrs", "cnode_attrs", "cnode_primal_attrs", "trailing_attrs")


@pytest.fixture(scope="module")
def ir():
    return parse_file(FILE, cache=False)


def test_nodes_without_attributes_share_the_read_only_empty_dict(ir):
    nodes = list(ir.nodes())
    for kind in KINDS:
        empty = [n for n in nodes if not getattr(n, kind)]
        assert empty, kind
        assert all(getattr(n, kind) is NO_ATTRIBUTES for n in empty), kind
    loads = [n for n in nodes if n.op == "Load"]
    assert loads and all(n.primitive_attrs == {} for n in loads)
    with pytest.raises(TypeError, match="shares"):
        loads[0].primitive_attrs["a"] = 1
    for write in (lambda d: d.update(a=1), lambda d: d.setdefault("a", 1), lambda d: d.pop("a", None),
                  lambda d: d.clear(), lambda d: d.__ior__({"a": 1})):
        with pytest.raises(TypeError):
            write(loads[0].cnode_attrs)
    assert NO_ATTRIBUTES == {} and len(NO_ATTRIBUTES) == 0


def test_a_node_with_attributes_has_dicts_of_its_own(ir):
    with_strategy = [n for n in ir.nodes() if n.trailing_attrs]
    assert len(with_strategy) >= 2
    assert all("in_strategy" in n.trailing_attrs for n in with_strategy)
    assert len({id(n.trailing_attrs) for n in with_strategy}) == len(with_strategy)
    with_strategy[0].trailing_attrs["mark"] = 1
    assert all("mark" not in n.trailing_attrs for n in with_strategy[1:])


def test_the_shared_dict_survives_pickle_and_copies(ir):
    again = pickle.loads(pickle.dumps(ir, protocol=pickle.HIGHEST_PROTOCOL))
    assert canonical(again) == canonical(ir)
    load = next(n for n in again.nodes() if n.op == "Load")
    assert load.primitive_attrs is NO_ATTRIBUTES
    assert copy.copy(NO_ATTRIBUTES) is NO_ATTRIBUTES and copy.deepcopy(load).cnode_attrs is NO_ATTRIBUTES
    made = Node(graph="g", index=1, debug_name="x", op="Add", kind=NodeKind.CALL_PRIMITIVE,
                callee="Add", inputs=(), line=1)
    assert made.primitive_attrs is NO_ATTRIBUTES and made.trailing_attrs is NO_ATTRIBUTES
