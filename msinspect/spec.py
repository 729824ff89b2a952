"""Expectation specs: a TOML file (read with tomllib) stating what a dump must show.

    [job]
    name = "sharding_propagation"
    ranks = 8                      # the dump must hold ranks 0..7
    stage = "step_parallel_end"    # default stage of every entry

    [[expect.strategy]]            # the operator's in_strategy (and who set it)
    op = "matmul"                  # instance name, "scope-suffix/name", or a scope
    in_strategy = [[2, 4], [4, 1]]
    set_by = "user"                # or "planner" (optional; `source` is its older name)

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

The ``kind`` of ``comm`` and ``count`` is an operator type, matched without case (``AllToAll``
counts MindSpore's ``AlltoAll``). A ``comm`` kind must be a communication operator of
:mod:`msinspect.mindspore.vocabulary`, and a ``count`` kind one typo away from one (``AllReduc``)
is refused, both with the name meant: a kind MindSpore does not have would count nothing.

Every value is checked for its type and bounds before use, and anything else is a
:class:`SpecError` ("bad spec: FILE: what is wrong"): text (``op``, ``kind``, ``stage``,
``basis``, ``name``) must be a string; rank numbers are integers in ``0 .. MAX_RANKS - 1`` and
``[job] ranks`` in ``1 .. MAX_RANKS``; shapes and strategies are lists of lists of positive
integers; ``min`` / ``max`` non-negative integers (``true`` is not a number). A spec must be UTF-8
TOML of at most ``MAX_SPEC_BYTES`` bytes and at most ``MAX_DEPTH`` levels deep.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from msinspect.mindspore.vocabulary import check_kind
from msinspect.errors import MsInspectError
from msinspect.expectations import KINDS
from msinspect.expectations.base import Expectation
from msinspect.expectations.values import MAX_RANKS, is_int as _is_int, rank_list as _rank_list, text as _text

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

COMMON_KEYS = {"stage", "ranks", "basis", "note", "graph"}
#: The expectations whose ``kind`` names an operator type, matched without case, and whether it
#: must be a communication operator (:func:`~msinspect.mindspore.vocabulary.check_kind`).
OPERATOR_KINDS = {"comm": True, "count": False}
JOB_KEYS = {"name", "ranks", "stage"}
#: A spec is a hand-written file: larger ones are refused before parsing.
MAX_SPEC_BYTES = 1 << 20
#: Tables and arrays nested deeper than this are refused (a spec needs three levels).
MAX_DEPTH = 16


class SpecError(MsInspectError):
    """A spec file that cannot be read or does not follow the format; ``str()`` starts with
    ``bad spec:``."""

    def __str__(self) -> str:
        return f"bad spec: {super().__str__()}"


@dataclass
class Spec:
    """A parsed spec file."""

    path: Path
    name: str | None
    ranks: int | None
    stage: str | None
    expectations: list[Expectation] = field(default_factory=list)


def _depth(value: Any, limit: int) -> int:
    """How deeply ``value`` nests tables and arrays, counting no further than ``limit + 1``."""
    if limit < 0 or not isinstance(value, (dict, list)):
        return 0
    items = value.values() if isinstance(value, dict) else value
    return 1 + max((_depth(v, limit - 1) for v in items), default=0)


def unknown_keys(unknown, allowed) -> str:
    """``unknown key(s) in_stratgy (did you mean in_strategy?) (allowed: ...)``: each unknown key
    with the allowed one it is closest to, where one is close."""
    import difflib

    named = []
    for key in sorted(unknown, key=str):
        close = difflib.get_close_matches(str(key), sorted(allowed), n=1, cutoff=0.6)
        named.append(f"{key} (did you mean {close[0]}?)" if close else str(key))
    return f"unknown key(s) {', '.join(named)} (allowed: {', '.join(sorted(allowed))})"


def expectation_from(kind: str, index: int, raw: dict, where: str = "") -> Expectation:
    """One validated entry of ``kind`` from its TOML table; ValueError says what is wrong."""
    if not isinstance(raw, dict):
        raise ValueError(f"must be a table ([[expect.{kind}]] with keys), not {type(raw).__name__}")
    kind_of = KINDS[kind]
    required, optional = kind_of.required, kind_of.optional
    missing = required - raw.keys()
    unknown = raw.keys() - required - optional - COMMON_KEYS
    if unknown:  # before what is missing: a misspelt key is both, and the typo is what to fix
        raise ValueError(unknown_keys(unknown, required | optional | COMMON_KEYS))
    if missing:
        raise ValueError(f"missing key(s) {', '.join(sorted(missing))}")
    for key in (*kind_of.text_keys, "stage", "basis", "note"):
        _text(raw, key)
    values = kind_of.validate({k: v for k, v in raw.items() if k not in COMMON_KEYS})
    if kind in OPERATOR_KINDS and "kind" in values:  # a kind MindSpore lacks would count nothing, silently
        check_kind(values["kind"], communication=OPERATOR_KINDS[kind])
    ranks = _rank_list(raw["ranks"]) if "ranks" in raw else None
    if kind_of.needs_ranks and ranks is None:
        raise ValueError("missing key(s) ranks")
    graph = raw.get("graph")
    if graph is not None and not ((_is_int(graph) and graph >= 0) or (isinstance(graph, str) and graph)):
        raise ValueError("graph must be a subgraph's name or its position in the file (0, 1, ...)")
    return Expectation(kind, index, values, raw.get("stage"), ranks, raw.get("basis"), graph)


def _read(path: Path) -> dict:
    """The spec's TOML as a dict; :class:`SpecError` for anything that is not a readable, small,
    UTF-8 TOML file."""
    if path.is_dir():
        raise SpecError(f"{path}: is a folder, not a spec file")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise SpecError(f"{path}: no such spec file") from None
    except OSError as exc:
        raise SpecError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise SpecError(f"{path}: larger than {MAX_SPEC_BYTES} bytes; a spec is a short hand-written file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: not UTF-8 text (byte {exc.start}); a spec is a TOML file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise SpecError(f"{path}: nested too deeply (a spec needs at most {MAX_DEPTH} levels)") from None
    if _depth(data, MAX_DEPTH) > MAX_DEPTH:
        raise SpecError(f"{path}: nested too deeply (a spec needs at most {MAX_DEPTH} levels)")
    return data


def _job(path: Path, job: Any) -> tuple[str | None, int | None, str | None]:
    """``[job]``'s name, ranks and stage, each checked."""
    if not isinstance(job, dict):
        raise SpecError(f"{path}: job must be a table ([job]), not {type(job).__name__}")
    unknown = job.keys() - JOB_KEYS
    if unknown:
        raise SpecError(f"{path}: job: {unknown_keys(unknown, JOB_KEYS)}")
    for key in ("name", "stage"):
        try:
            _text(job, key)
        except ValueError as exc:
            raise SpecError(f"{path}: job: {exc}") from None
    ranks = job.get("ranks")
    if ranks is not None and not (_is_int(ranks) and 1 <= ranks <= MAX_RANKS):
        raise SpecError(f"{path}: job: ranks must be an integer from 1 to {MAX_RANKS} "
                        f"(the number of ranks of the job), not {ranks!r}")
    return job.get("name"), ranks, job.get("stage")


def load_spec(path: str | os.PathLike) -> Spec:
    """Read and validate a spec; :class:`SpecError` names the file and the entry at fault."""
    path = Path(path)
    data = _read(path)
    unknown = data.keys() - {"job", "expect"}
    if unknown:
        raise SpecError(f"{path}: unknown table(s) {', '.join(sorted(unknown))} (expected [job] and [[expect.KIND]])")
    spec = Spec(path, *_job(path, data.get("job", {})))
    expect = data.get("expect", {})
    if not isinstance(expect, dict):
        raise SpecError(f"{path}: expect must hold tables [[expect.KIND]], not {type(expect).__name__}")
    for kind, entries in expect.items():
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
