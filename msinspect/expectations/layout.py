"""``[[expect.layout]]``: a weight's layout on each rank, in MindSpore's terms (the six fields of
``net.parameter_layout_dict`` that MindSpore's tests check with
``ParallelValidator.check_parameter_layout``): ``device_matrix`` (device arrangement),
``tensor_map``, ``slice_shape``, ``field_size``, ``uniform_split``, ``opt_shard_group``. Any
subset may be given; each is compared as MindSpore reports it (its standard form: device-matrix
axes of size 1 dropped, :func:`msinspect.mindspore.layouts.standard`; a dimension cut by several
axes, ``((2, 0), 1)``, with its axes in line, ``(2, 0, 1)``).

What the dump does not determine is "cannot tell" (a failure), never a pass: a weight whose cut
was not read, ``field_size`` where an operator that sets one (``EmbeddingLookup``'s field) takes
the weight."""
from __future__ import annotations

from typing import Any

from msinspect.expectations.base import Checking, Expectation, ExpectationKind, Outcome, register
from msinspect.expectations.evidence import evidence_of, rank_cells_text
from msinspect.expectations.values import is_int


FIELDS = ("device_matrix", "tensor_map", "slice_shape", "field_size", "uniform_split", "opt_shard_group")
#: Operators whose primitive can give a weight's layout a field size.
_FIELD_OPS = frozenset({"EmbeddingLookup", "UnsortedSegmentSum", "UnsortedSegmentMax", "UnsortedSegmentMin"})


@register
class Layout(ExpectationKind):
    name = "layout"
    required = frozenset({"param"})
    optional = frozenset(FIELDS)
    text_keys = ("param", "opt_shard_group")

    def validate(self, values):
        given = [f for f in FIELDS if f in values]
        if not given:
            raise ValueError(f"give at least one of {', '.join(FIELDS)}")
        for key in ("device_matrix", "tensor_map", "slice_shape"):
            if key in values:
                if not isinstance(values[key], list) or not all(is_int(d) for d in values[key]):
                    raise ValueError(f"{key} must be a list of integers, like [4, 2]")
                values[key] = tuple(values[key])
        if "field_size" in values and not is_int(values["field_size"]):
            raise ValueError("field_size must be an integer")
        if "uniform_split" in values and not isinstance(values["uniform_split"], bool):
            raise ValueError("uniform_split must be true or false")
        return values

    def target(self, values):
        return str(values["param"])

    def operators(self, values):
        return ()

    def check(self, checker: Checking, e: Expectation) -> Outcome:
        v = e.values
        given = [f for f in FIELDS if f in v]
        want = ", ".join(f"{f} {_text(v[f])}" for f in given)
        slices = checker.analysis(e).slices()
        rows = slices[slices["param"] == v["param"]] if not slices.empty else slices
        if e.ranks is not None and not rows.empty:
            rows = rows[rows["rank"].isin(e.ranks)]
        if rows.empty:
            names = sorted(set(slices["param"])) if not slices.empty else []
            return Outcome(e, False, want, f"cannot tell: no weight named {v['param']!r} with a layout was read"
                           + (f" (weights: {', '.join(names[:8])})" if names else ""))
        rows = rows.drop_duplicates("rank")
        seen, bad, unknown = set(), [], []
        for row in rows.itertuples():
            have = {f: _field(row, f) for f in given}
            seen.add(", ".join(f"{f} {_text(h)}" for f, h in have.items()))
            if any(h is None for h in have.values()):
                unknown.append(row.rank)
            elif any(_plain(have[f]) != _plain(v[f]) for f in given):
                bad.append(row.Index)
        found = f"{' | '.join(sorted(seen))} on {rank_cells_text(rows['rank'])}"
        if unknown:
            found = f"cannot tell on {rank_cells_text(unknown)} (the dump does not determine every field); " + found
        shown = rows.loc[bad] if bad else rows
        return Outcome(e, not bad and not unknown, want, found, evidence_of(shown))


def _field(row, name: str) -> Any:
    """The field of a slices row; None where the dump does not say."""
    if name == "field_size":
        return None if row.op in _FIELD_OPS else 0
    if name == "uniform_split":
        if not isinstance(row.global_shape, tuple) or not isinstance(row.slice_shape, tuple):
            return None
        return all(s and g % s == 0 for g, s in zip(row.global_shape, row.slice_shape))
    value = getattr(row, name)
    if name == "opt_shard_group":
        return value if isinstance(value, str) else None
    if not isinstance(value, (tuple, list)):
        return None
    if name == "tensor_map":  # a dimension cut by several axes: MindSpore reports its axes in line
        return tuple(a for entry in value for a in (entry if isinstance(entry, (tuple, list)) else (entry,)))
    return tuple(value)


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def _text(value) -> str:
    if value is None:
        return "cannot tell"
    if isinstance(value, tuple):
        return str(list(value))
    return repr(value)
