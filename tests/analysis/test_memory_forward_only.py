"""Static memory of networks compiled for their forward alone, derived by hand before msinspect
read them: every parameter with a value is a weight, stored as its slice, and the step keeps no
gradient and no optimizer state. Before, the memory table said "cannot tell: no optimizer update
found" for all of it.

- zoo 06 (``fixtures/zoo/nets/06_control_flow_8.py``, dp 2 x tp 4, float32, "only the forward
  network is compiled"): ``w_in`` (512, 2048) cut (1, 4): (512, 512); ``w_out`` (2048, 512) cut
  (4, 1): (512, 512); ``w_head_in`` (512, 512) cut (1, 4): (512, 128); ``w_head_out`` (512, 512)
  cut (4, 1): (128, 512). 2 x 262,144 + 2 x 65,536 = 655,360 elements, 2,621,440 bytes, 4 weights.
- zoo 20 (``20_doc_high_dimension_tp.py``, "no optimizer (forward only)"): ``fc1_weight`` and
  ``fc2_weight`` each a (128, 128) float32 slice: 2 x 65,536 = 131,072 bytes, 2 weights.

The same at step_parallel_end: a forward network has no ``J`` to expand later, so that pass
already holds the whole step. A training network's step_parallel_end has one (zoo 01): not
forward only there, though no operator of it is under ``Gradients/`` yet.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.rank.memory import FORWARD_ONLY, NO_GRADIENT, memory_per_rank
from msinspect.analysis.rank.operators import forward_only
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
CASES = {"06_control_flow_8": (2 * 512 * 512 + 2 * 512 * 128) * 4, "20_doc_high_dimension_tp": 2 * 128 * 128 * 4}
COUNTS = {"06_control_flow_8": 4, "20_doc_high_dimension_tp": 2}


def test_the_numbers_are_the_derivation():
    assert CASES == {"06_control_flow_8": 2_621_440, "20_doc_high_dimension_tp": 131_072}


@pytest.mark.parametrize(("name", "stage"), [("06_control_flow_8", "step_parallel_end"),  # validate: test_cost_zoo06
                                             ("20_doc_high_dimension_tp", "validate"),
                                             ("20_doc_high_dimension_tp", "step_parallel_end")])
def test_a_forward_network_holds_its_weights_and_nothing_else(name, stage):
    rows = memory_per_rank(analyse(msinspect.load_dump(ZOO / name), stage))
    assert len(rows) >= 3
    for row in rows.to_dict("records"):
        assert (row["optimizer"], row["gradients_from"]) == (FORWARD_ONLY, NO_GRADIENT)
        assert (row["weights"], row["weight_count"]) == (CASES[name], COUNTS[name])
        assert (row["gradients"], row["states"], row["states_expected"], row["other"]) == (0, 0, 0, 0)
        assert row["total"] == CASES[name]


def test_a_training_network_before_its_backward_is_not_forward_only():
    analysis = analyse(msinspect.load_dump(ZOO / "01_semi_auto_tp4dp2"), "step_parallel_end")
    result = analysis.results[0]
    assert not any(row["backward"] for row in result.ops)  # no gradient graph yet ...
    assert not forward_only(result.ops)  # ... but a J to expand
    assert forward_only([row for row in result.ops if row["op"] != "J"])
