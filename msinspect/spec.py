"""Expectation specs: a TOML file (read with tomllib) stating what a dump must show.

    [job]
    name = "sharding_propagation"
    ranks = 8                      # the dump must hold ranks 0..7
    stage = "step_parallel_end"    # default stage of every entry

    [[expect.strategy]]            # the operator's in_strategy (and who set it)
    op = "matmul"                  # instance name, "scope-suffix/name", or a scope
    in_strategy = [[2, 4], [4, 1]]
    source = "user"                # or "planner" (optional)

    [[expect.shape]]               # per-rank shapes of the operator's tensor inputs / output
    op = "matmul"
    inputs = [[8, 8], [8, 16]]
    stage = "validate"

    [[expect.comm]]                # communication right after (or before) an operator
    kind = "AllReduce"
    after = "matmul"               # or before = "matmul"
    groups = [[0, 1, 2, 3], [4, 5, 6, 7]]

    [[expect.count]]               # how many operators of a kind each listed rank has
    kind = "Send"
    ranks = [0, 1, 2, 3]
    min = 4
    max = 4                        # optional

    [[expect.no_redistribution]]   # the first operator feeds the second with nothing between
    between = ["relu", "matmul2"]

Every entry may also carry ``stage``, ``ranks`` (which ranks to look at) and ``basis`` (free
text saying why it is expected, e.g. ``by_hand`` or ``observed_2.10``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from msinspect.errors import MsInspectError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

COMMON_KEYS = {"stage", "ranks", "basis", "note"}
KINDS: dict[str, tuple[set[str], set[str]]] = {
    # kind: (required keys, optional keys)
    "strategy": ({"op", "in_strategy"}, {"out_strategy", "source"}),
    "shape": ({"op"}, {"inputs", "output"}),
    "comm": ({"kind", "groups"}, {"after", "before"}),
    "count": ({"kind", "min"}, {"max"}),
    "no_redistribution": ({"between"}, set()),
}


class SpecError(MsInspectError):
    """A spec file that cannot be read or does not follow the format."""


@dataclass(frozen=True)
class Expectation:
    """One ``[[expect.KIND]]`` entry."""

    kind: str
    index: int
    """Position among the entries of its kind (0-based)."""
    values: dict[str, Any]
    stage: str | None
    ranks: tuple[int, ...] | None
    basis: str | None

    @property
    def label(self) -> str:
        """``expect.strategy[2]``: where the entry is in the spec."""
        return f"expect.{self.kind}[{self.index}]"

    @property
    def target(self) -> str:
        """The operator or kind the entry is about, for messages."""
        v = self.values
        if self.kind == "comm":
            where = f"after {v['after']}" if "after" in v else f"before {v['before']}"
            return f"{v['kind']} {where}"
        if self.kind == "count":
            return str(v["kind"])
        if self.kind == "no_redistribution":
            return " -> ".join(v["between"])
        return str(v["op"])


@dataclass
class Spec:
    """A parsed spec file."""

    path: Path
    name: str | None
    ranks: int | None
    stage: str | None
    expectations: list[Expectation] = field(default_factory=list)


def _shape_list(value: Any, what: str) -> tuple:
    if not isinstance(value, list) or not all(isinstance(v, list) and all(isinstance(d, int) for d in v)
                                              for v in value):
        raise ValueError(f"{what} must be a list of int lists, like [[2, 4], [4, 1]]")
    return tuple(tuple(v) for v in value)


def expectation_from(kind: str, index: int, raw: dict, where: str = "") -> Expectation:
    """One validated entry of ``kind`` from its TOML table; ValueError says what is wrong."""
    required, optional = KINDS[kind]
    missing = required - raw.keys()
    unknown = raw.keys() - required - optional - COMMON_KEYS
    if missing:
        raise ValueError(f"missing key(s) {', '.join(sorted(missing))}")
    if unknown:
        allowed = ", ".join(sorted(required | optional | COMMON_KEYS))
        raise ValueError(f"unknown key(s) {', '.join(sorted(unknown))} (allowed: {allowed})")
    values = {k: v for k, v in raw.items() if k not in COMMON_KEYS}
    if kind == "strategy":
        values["in_strategy"] = _shape_list(values["in_strategy"], "in_strategy")
        if "out_strategy" in values:
            values["out_strategy"] = _shape_list(values["out_strategy"], "out_strategy")
        if values.get("source") not in (None, "user", "planner"):
            raise ValueError('source must be "user" or "planner"')
    if kind == "shape":
        if "inputs" not in values and "output" not in values:
            raise ValueError("give inputs, output or both")
        if "inputs" in values:
            values["inputs"] = _shape_list(values["inputs"], "inputs")
        if "output" in values:
            values["output"] = _shape_list([values["output"]], "output")[0]
    if kind == "comm":
        if ("after" in values) == ("before" in values):
            raise ValueError("give exactly one of after, before")
        values["groups"] = _shape_list(values["groups"], "groups")
    if kind == "count":
        for key in ("min", "max"):
            if key in values and (not isinstance(values[key], int) or values[key] < 0):
                raise ValueError(f"{key} must be a non-negative integer")
    if kind == "no_redistribution":
        between = values["between"]
        if not (isinstance(between, list) and len(between) == 2 and all(isinstance(b, str) for b in between)):
            raise ValueError('between must name two operators, like ["relu", "matmul2"]')
    ranks = raw.get("ranks")
    if ranks is not None and not (isinstance(ranks, list) and ranks and all(isinstance(r, int) for r in ranks)):
        raise ValueError("ranks must be a non-empty list of integers")
    if kind == "count" and ranks is None:
        raise ValueError("missing key(s) ranks")
    return Expectation(kind, index, values, raw.get("stage"), tuple(ranks) if ranks else None, raw.get("basis"))


def load_spec(path: str | os.PathLike) -> Spec:
    """Read and validate a spec; :class:`SpecError` names the file and the entry at fault."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(f"{path}: no such spec file") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    unknown = data.keys() - {"job", "expect"}
    if unknown:
        raise SpecError(f"{path}: unknown table(s) {', '.join(sorted(unknown))} (expected [job] and [[expect.KIND]])")
    job = data.get("job", {})
    spec = Spec(path, job.get("name"), job.get("ranks"), job.get("stage"))
    for kind, entries in data.get("expect", {}).items():
        if kind not in KINDS:
            raise SpecError(f"{path}: unknown expectation [[expect.{kind}]] (known: {', '.join(KINDS)})")
        if not isinstance(entries, list):
            raise SpecError(f"{path}: expect.{kind} must be an array of tables ([[expect.{kind}]])")
        for index, raw in enumerate(entries):
            try:
                spec.expectations.append(expectation_from(kind, index, raw, f"{path}: expect.{kind}[{index}]"))
            except ValueError as exc:
                raise SpecError(f"{path}: expect.{kind}[{index}]: {exc}") from None
    if not spec.expectations:
        raise SpecError(f"{path}: no [[expect.KIND]] entries")
    return spec
