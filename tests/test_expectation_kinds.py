"""Each expectation kind is one class in one registry: the spec reader, the checker, the
assertion helpers of msinspect.testing and DumpAssertions all come from it."""
from __future__ import annotations

import inspect
from pathlib import Path

import pytest

import msinspect.testing as testing
from msinspect.expectations import KINDS
from msinspect.spec import SpecError, expectation_from, load_spec
from msinspect.testing import ASSERTIONS

# The kinds the spec format documents (msinspect/spec.py), and their helpers (docs/pytest.md).
DOCUMENTED = {"strategy": {"assert_strategy"}, "shape": {"assert_shape"},
              "comm": {"assert_comm_after", "assert_comm_before"}, "count": {"assert_count"},
              "no_redistribution": {"assert_no_redistribution"}, "layout": {"assert_layout"},
              "inputs": {"assert_inputs"}, "attrs": {"assert_attrs"}, "feeds": {"assert_feeds"},
              "absent": {"assert_absent"}}
PYTEST_DOC = Path(__file__).resolve().parents[1] / "docs" / "pytest.md"


def test_registry_holds_the_documented_kinds_and_helpers():
    assert {name: {f.__name__ for f in kind.assertions} for name, kind in KINDS.items()} == DOCUMENTED


def test_the_pytest_doc_names_every_helper():
    text = PYTEST_DOC.read_text()
    helpers = set().union(*DOCUMENTED.values(), {"assert_spec"})
    assert [h for h in sorted(helpers) if f"`{h}`" not in text] == []


@pytest.mark.parametrize("helper", sorted(set().union(*DOCUMENTED.values())))
def test_each_helper_is_exported_and_bound(helper):
    assert getattr(testing, helper) is ASSERTIONS[helper]
    assert helper in testing.__all__
    method = getattr(testing.DumpAssertions, helper.removeprefix("assert_"))
    helper_params = list(inspect.signature(ASSERTIONS[helper]).parameters)
    assert helper_params[0] == "dump"
    assert list(inspect.signature(method).parameters) == ["self", *helper_params[1:]]


def test_unknown_kind_names_every_known_one(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('[[expect.wish]]\nop = "x"\n')
    with pytest.raises(SpecError) as caught:
        load_spec(spec)
    for name in DOCUMENTED:
        assert name in str(caught.value)


@pytest.mark.parametrize("kind, raw, target", [
    ("strategy", {"op": "matmul", "in_strategy": [[2, 4], [4, 1]]}, "matmul"),
    ("shape", {"op": "relu", "output": [8, 16]}, "relu"),
    ("comm", {"kind": "AllReduce", "after": "matmul", "groups": [[0, 1]]}, "AllReduce after matmul"),
    ("comm", {"kind": "AllGather", "before": "relu", "groups": [[0, 1]]}, "AllGather before relu"),
    ("count", {"kind": "Send", "min": 4, "ranks": [0, 1]}, "Send"),
    ("no_redistribution", {"between": ["relu", "matmul2"]}, "relu -> matmul2"),
])
def test_each_kind_names_its_target(kind, raw, target):
    assert expectation_from(kind, 0, raw).target == target


def test_a_kind_validates_its_own_values():
    with pytest.raises(ValueError, match="give exactly one of after, before"):
        expectation_from("comm", 0, {"kind": "AllReduce", "groups": [[0, 1]], "after": "a", "before": "b"})
    with pytest.raises(ValueError, match="give exactly one of kind"):
        expectation_from("count", 0, {"kind": "Send", "op": "type:Send", "min": 1})
    with pytest.raises(ValueError, match="count, or min"):
        expectation_from("count", 0, {"op": "type:Cast", "count": 1, "min": 1})
    with pytest.raises(ValueError, match="not a regular expression"):
        expectation_from("absent", 0, {"op": "re:("})
    with pytest.raises(ValueError, match="at least one of device_matrix"):
        expectation_from("layout", 0, {"param": "w"})
    assert expectation_from("strategy", 0, {"op": "m", "in_strategy": [[2, 4]]}).values["in_strategy"] == ((2, 4),)
