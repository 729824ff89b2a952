"""Cost per step and static memory of zoo 07, a stand-alone training run on one CPU
(``fixtures/zoo/nets/07_cpu_while_grad.py``): a ``while`` over a tensor counter, a
tensor-conditioned ``if``, ``value_and_grad`` and SGD in one ``@ms.jit`` step; derived by hand
before msinspect read it.

- One device, no parallel mode (no ``set_auto_parallel_context``, no ``init()``): the dump has no
  rank folders, MindSpore runs no parallel pass (no step_parallel_* file) and inserts no
  collective: no mirror, no forward, bprop or optimizer communication. Every pass the dump keeps
  (type inference, loop unroll, the jit bprop graph, validate, execute, the backend's) holds none.
  The answer is computed, not missing: "no communication", for the whole step at validate (which
  holds the forward, the gradient graph and SGD's update) and for a copy without validate (read
  at execute, which also holds the whole step). Never a 0 row per axis or phase standing for it,
  and never a backward "cannot tell": there is nothing to tell.
- The rank matrix: nobody sends anything: no cell, and the command says "no communication", not
  "cannot tell".
- A dump cut to the first pass, 01_type_inference: its file still holds the ``J`` node (automatic
  differentiation not yet expanded), so the backward is in no line of it; the file alone does not
  state that the run has one device (no rank folder is no proof of it), so there the backward is
  "cannot tell" with docs/cost.md's reason and the pass that holds it, validate.

Memory (docs/cost.md "Static memory"), float32: the trained weights w_in (512, 512) 1,048,576,
w_loop (512, 512) 1,048,576, w_out (512, 10) 20,480: 2,117,632 bytes, 3 weights, each updated by
MindSpore's ``SGD`` primitive (``nn.SGD``, momentum 0). nn.SGD clones ``accum`` and ``stat`` of
each weight (``mindspore/nn/optim/sgd.py``): states 2 x 2,117,632 = 4,235,264, states_expected 0
(plain SGD keeps none by the usual definition); no accumulation buffer, no optimizer shard:
gradients one per weight, 2,117,632. ``other``: nn.Optimizer's ``learning_rate`` () float32 and
SGD's ``momentum`` () float32, 8 bytes. First derivation left ``global_step`` out (a fixed learning
rate reads no step); the IR (validate line 25, ``%para7_global_step: <Ref[Tensor[Int32]], (1)``,
and line 740, ``PrimFunc_AssignAdd(%para7_global_step, ...)`` from ``nn/optim/sgd.py:236``) shows
nn.SGD adds 1 to it every step whatever the rate: (1,) int32, 4 bytes more, 12.
"""
from __future__ import annotations

import json

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD, NO_COMMUNICATION, SHORT, backward_missing
from msinspect.analysis.job.cost_tables import bytes_by, comm_costs
from msinspect.analysis.rank.memory import memory_per_rank

from tests.analysis.cost_by_hand import cells
from tests.conftest import FIXTURES, dump_without, invoke

ZOO07 = FIXTURES / "zoo" / "07_cpu_while_grad"
WEIGHTS = (512 * 512 + 512 * 512 + 512 * 10) * 4


@pytest.fixture(scope="module")
def whole():
    return analyse(msinspect.load_dump(ZOO07), "validate")


def test_the_numbers_are_the_derivation():
    assert WEIGHTS == 2_117_632


def test_no_communication_anywhere(whole):
    assert comm_costs(whole).empty
    assert bytes_by(whole, ("axis", "phase")).empty
    assert backward_missing(whole) == {}
    assert cells(whole) == {}


def test_memory(whole):
    rows = memory_per_rank(whole)
    assert len(rows) == 1
    row = rows.iloc[0]
    assert (row["optimizer"], row["weights"], row["weight_count"]) == ("SGD", WEIGHTS, 3)
    assert (row["states"], row["states_expected"], row["gradients"]) == (2 * WEIGHTS, 0, WEIGHTS)
    assert row["gradients_from"] == "one per weight"
    assert (row["other"], row["total"]) == (12, WEIGHTS * 4 + 12)


def said(dump, *options) -> str:
    """What ``msinspect cost`` prints, its spaces folded: the pass read (stderr), then the answer."""
    done = invoke("cost", dump, *options)
    assert done.exit_code == 0, done.stderr
    return " ".join((done.stderr + done.stdout).split())


def test_the_command_says_no_communication():
    told = said(ZOO07, "--by", "axis,phase", "--matrix")
    assert "read 1 rank(s) at validate" in told
    assert NO_COMMUNICATION in told and "rank-to-rank matrix: no communication" in told and "cannot tell" not in told


def test_the_json_says_no_communication_beside_its_empty_rows():
    done = invoke("cost", ZOO07, "--json")
    assert done.exit_code == 0, done.stderr
    told = json.loads(done.stdout)
    assert told["no_communication"] == NO_COMMUNICATION and told["bytes"] == [] and told["matrix"] == []


def test_without_validate_the_same_at_execute(tmp_path):
    copy = dump_without(ZOO07, tmp_path / "zoo07", "*validate*")
    told = said(copy, "--by", "axis,phase")
    assert "read 1 rank(s) at execute" in told and NO_COMMUNICATION in told and "cannot tell" not in told


def test_before_autodiff_the_backward_cannot_tell():
    early = analyse(msinspect.load_dump(ZOO07), "type_inference")
    why = NO_BACKWARD.format(stage="type_inference")
    assert backward_missing(early) == {None: why}
    frame = bytes_by(early, ("axis", "phase"))
    assert frame[["axis", "phase", "note"]].to_dict("records") == [
        {"axis": "cannot tell", "phase": "backward", "note": SHORT}]
    assert frame["step_bytes"].tolist() == [None]
    told = said(ZOO07, "--stage", "type_inference", "--by", "axis,phase")
    assert f"backward cannot tell on the file read: {why}; --stage validate reads it" in told
    assert NO_COMMUNICATION not in told
