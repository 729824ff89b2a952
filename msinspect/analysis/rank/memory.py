"""Static memory per rank: the weights it holds, their gradients and the optimizer's states, from
the sliced shapes of the file (parameters are cut in place, and an optimizer-sharded weight is
stored as its shard) and the optimizer's update primitives.

From each rank's ``held`` rows (:func:`msinspect.analysis.rank.gradsync.weight_rows`):

- ``weights``: the trained weights (those an optimizer update takes as its first input), bytes at
  the rank;
- ``gradients``: one gradient per trained weight. Where the file holds accumulation buffers
  (``accu_grads.<weight>``: pipeline or gradient accumulation), those, as stored; else the
  weight's bytes times its optimizer-shard group's size (the gradient is whole at the rank's
  slice until its ReduceScatter), or the weight's bytes where it is not sharded;
- ``states``: the optimizer's per-weight states as the file holds them: parameters MindSpore's
  optimizers clone from the weights (``ParameterTuple.clone(prefix=...)``: ``adam_m.`` /
  ``adam_v.``, ``moments.``, ``accum.`` / ``stat.`` ...), named ``<prefix>.<weight>``;
  ``states_expected`` is the count the optimizer's kind gives (:data:`STATES_PER_WEIGHT`, or for
  an optimizer written in Python :data:`PYTHON_OPTIMIZERS`) times the weights' bytes (in the
  states' own element type where the optimizer fixes it), to compare;
- ``other``: every other parameter with a value (step counters, learning rates ...).

``optimizer`` names the update primitives found, or the optimizer cell's class where the update
is an ``Assign`` in it (an optimizer written in Python); ``cannot tell`` where the file shows none.
Where the file's step computes no gradient at all (:func:`~msinspect.analysis.rank.operators.forward_only`:
a network compiled for its forward alone), every parameter with a value is a weight and there are
no gradients and no states: :data:`FORWARD_ONLY`, :data:`NO_GRADIENT`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from msinspect.analysis.dataflow.node_facts import nbytes
from msinspect.analysis.rank.operators import forward_only
from msinspect.mindspore import naming, vocabulary
from msinspect.schema import is_missing

if TYPE_CHECKING:
    import pandas as pd

#: States an optimizer keeps per weight, by its update primitive, as the usual definitions give
#: them (Adam's two moments, Momentum's one velocity, plain SGD none). MindSpore's ``nn.SGD``
#: clones ``accum`` and ``stat`` from every weight all the same (``mindspore/nn/optim/sgd.py``):
#: ``states`` counts what the file holds.
STATES_PER_WEIGHT = {
    "Adam": 2, "AdamWeightDecay": 2, "ApplyAdam": 2, "ApplyAdamWithAmsgrad": 3, "Lamb": 2, "LambApplyOptimizerAssign": 2,
    "ApplyMomentum": 1, "ApplyAdagrad": 1, "ApplyAdagradV2": 1, "ApplyRMSProp": 2, "ApplyCenteredRMSProp": 3,
    "SGD": 0, "ApplyGradientDescent": 0, "ApplyProximalGradientDescent": 0, "FusedSparseAdam": 2,
}
#: The optimizer-parallel collectives of a weight that run over its shard group.
_SHARD_GROUP_OPS = ("ReduceScatter", "AllGather")
#: Optimizers written in Python (each weight's update an ``Assign`` in the optimizer's cell), by
#: the cell's class: the states it keeps per weight and their element type. MindFormers'
#: ``AdamW`` clones two (``adam_m``, ``adam_v``) in float32 whatever the weight's type
#: (``AdamW.clone_state``, ``mindformers/core/optim/adamw.py``).
PYTHON_OPTIMIZERS = {"AdamW": (2, "Float32")}

#: ``optimizer`` of a rank whose file's step computes no gradient, and its ``gradients_from``.
FORWARD_ONLY = "none: forward only"
NO_GRADIENT = "none: the step computes no gradient (no gradient graph, none pending, no optimizer update)"

MEMORY_COLUMNS = ["rank", "optimizer", "weights", "weight_count", "gradients", "gradients_from", "states",
                  "states_expected", "other", "total"]


def shards_of_rank(comm: list[dict], held: list[dict]) -> dict[str, int]:
    """Weight -> the size of its optimizer-shard group, in one rank (its comm and weight rows):
    the group of the optimizer-kind ReduceScatter that sums its gradient, or of the AllGather that
    gathers its shard before it is read (``synced_by``): the ReduceScatter is that AllGather's
    bprop, over the same group, so a file written before the backward (step_parallel_end) tells
    it by the gather."""
    size = {(r["file"], r["line"]): r["group_size"] for r in comm
            if r["kind"] == "optimizer" and vocabulary.acting_as(r["op"]) in _SHARD_GROUP_OPS
            and not is_missing(r["group_size"])}
    out = {}
    for row in held:
        for line in row["synced_by"]:
            if (row["file"], line) in size:
                out[row["param"]] = int(size[(row["file"], line)])
    return out


def _cloned(held: list[dict]) -> dict[str, dict]:
    """The weights an optimizer cloned states of (:func:`~msinspect.mindspore.naming.with_states`):
    the ones it trains, where the file shows no update of them."""
    rows = {row["param"]: row for row in held}
    return {name: rows[name] for name in naming.with_states({name: row["shape"] for name, row in rows.items()})}


def _expected_states(trained: dict[str, dict]) -> int | None:
    """The bytes of the states the optimizer that updates ``trained`` keeps by its definition:
    :data:`STATES_PER_WEIGHT` by the update primitive, :data:`PYTHON_OPTIMIZERS` by the cell of
    an ``Assign``; None: no one optimizer, or one not listed, or a size unknown."""
    kinds = set()
    for row in trained.values():
        python = PYTHON_OPTIMIZERS.get(row["optimizer"]) if row["update"] == "Assign" else None
        kinds.add(python if python is not None else (STATES_PER_WEIGHT.get(row["update"]), None))
    if len(kinds) != 1:
        return None
    per, dtype = kinds.pop()
    sizes = [row["bytes"] if dtype is None else nbytes(row["shape"], dtype) for row in trained.values()]
    if per is None or any(is_missing(size) for size in sizes):
        return None
    return per * int(sum(sizes))


def memory_of_rank(rank, held: list[dict], shards: dict[str, int], forward_only: Callable[[], bool] = bool) -> dict:
    """One rank's row of :func:`memory_per_rank`, from its weight rows (``shards``: weight -> its
    optimizer-shard group's size, :func:`shards_of_rank`). Where the file shows no update, the
    weights are those with optimizer states (:func:`_cloned`), the optimizer "cannot tell"; with
    no states either, :data:`FORWARD_ONLY` where ``forward_only()`` says the step computes no
    gradient (asked only then: it reads the rank's operator rows)."""
    trained = {row["param"]: row for row in held if row["update"]}
    if not trained and held and not _cloned(held) and forward_only():
        weights = sum(int(row["bytes"]) for row in held) if not any(is_missing(r["bytes"]) for r in held) else None
        return {"rank": rank, "optimizer": FORWARD_ONLY, "weights": weights, "weight_count": len(held),
                "gradients": 0, "gradients_from": NO_GRADIENT, "states": 0, "states_expected": 0, "other": 0,
                "total": weights}
    updates = sorted({row["optimizer"] if row["update"] == "Assign" else row["update"] for row in trained.values()})
    expected = _expected_states(trained) if trained else None
    trained = trained or _cloned(held)

    def bytes_of(rows_):
        values = [r["bytes"] for r in rows_]
        return None if any(is_missing(v) for v in values) else int(sum(values))

    weights = bytes_of(trained.values())
    accumulated = [r for r in held
                   if r["param"].startswith(naming.ACCUMULATED) and r["param"].split(".", 1)[1] in trained]
    states = [r for r in held if r["param"] not in trained and r not in accumulated
              and naming.weight_in(r["param"], trained) is not None
              and r["shape"] == trained[naming.weight_in(r["param"], trained)]["shape"]]
    if accumulated:
        gradients, source = bytes_of(accumulated), "accumulation buffers (accu_grads)"
    elif weights is not None:
        gradients = sum(int(r["bytes"]) * shards.get(name, 1) for name, r in trained.items())
        source = "weights x optimizer-shard group" if any(n in shards for n in trained) else "one per weight"
    else:
        gradients, source = None, "cannot tell"
    used = {id(r) for r in accumulated} | {id(r) for r in states} | {id(r) for r in trained.values()}
    other = bytes_of([r for r in held if id(r) not in used])
    state_bytes = bytes_of(states)
    if not trained and held:  # weights, but no optimizer update of any found: cannot tell which
        weights = gradients = state_bytes = None
        source = "cannot tell: no optimizer update found"
    parts = (weights, gradients, state_bytes, other)
    return {"rank": rank, "optimizer": ", ".join(updates) if updates else "cannot tell", "weights": weights,
            "weight_count": len(trained), "gradients": gradients, "gradients_from": source, "states": state_bytes,
            "states_expected": expected, "other": other,
            "total": None if any(p is None for p in parts) else sum(parts)}


def memory_per_rank(analysis) -> pd.DataFrame:
    """One row per rank read (:data:`MEMORY_COLUMNS`), bytes at the rank: ``weights``,
    ``gradients`` (with ``gradients_from``), optimizer ``states`` and ``states_expected``,
    ``other`` parameters, ``total`` (weights + gradients + states + other); None ("cannot tell")
    where a shape or dtype is unknown."""
    import pandas as pd

    rows = []
    for result in analysis.results:
        held = result.held
        rows.append(memory_of_rank(result.rank, held, shards_of_rank(result.comm, held),
                                   lambda result=result: forward_only(result.ops)))
    frame = pd.DataFrame(rows, columns=MEMORY_COLUMNS)
    for column in ("weights", "gradients", "states", "states_expected", "other", "total"):
        frame[column] = frame[column].astype(object)
    return frame
