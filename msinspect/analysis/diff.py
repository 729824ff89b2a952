"""What differs between two ranks: pipeline stage, operators present in one only, shapes,
strategies, communication groups and parameter slices.

Operators are aligned by what survives renames and hashes: instance name (with MindSpore's hash
digits and ``-opN`` ordinals left out), op type, scope, direction (forward / gradient) and the
parameter an operator takes as its first input (the weight an ``Assign`` or ``ZerosLike``
updates); communication by its op, kind and the operators it sits between. Repeated ones (one per
micro-batch) go by their order in the file. What cannot be aligned is counted, not compared.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from msinspect.analysis.collect import Analysis, RankResult, analyse
from msinspect.dumps import Dump, RankDump, load_dump
from msinspect.errors import DumpNotFoundError
from msinspect.analysis.params import slice_text, with_slices

#: Up to this many ranks, the whole dump root beside two rank folders is read to learn the
#: pipeline stages and the device grid; above it only the two ranks are read.
FULL_ROOT_LIMIT = 64


_ORDINAL = re.compile(r"-op\d+$")
#: The hash MindSpore puts in generated instance names (``forward_op_7137408040802222932``,
#: ``redistribution_op_2668879223615121903AllGather_``): differs between ranks and runs.
_HASH = re.compile(r"\d{6,}")


def _keyed(rows: list[dict], fields: tuple[str, ...]) -> dict[tuple, dict]:
    """Rows keyed by ``fields`` plus their occurrence number among equal keys.

    Operators without an instance name are named by MindSpore ``MatMul-op3``: the ordinal counts
    within the file and says nothing about the operator, so it is left out of the key.
    """
    seen: dict[tuple, int] = {}
    out = {}
    for row in rows:
        base = tuple(_HASH.sub("#", _ORDINAL.sub("", row[f])) if f == "name" and isinstance(row[f], str)
                     else row.get(f) for f in fields)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[base + (n,)] = row
    return out


@dataclass
class RankDiff:
    """The differences between rank ``a`` and rank ``b`` (see the module docstring)."""

    a: str
    b: str
    a_file: str
    b_file: str
    a_stage: tuple[int, ...] | None
    """Ranks of a's pipeline stage, when the dump shows stages."""
    b_stage: tuple[int, ...] | None
    a_complete: bool = True
    """Whether a's file was read whole (False only under ``lenient``)."""
    b_complete: bool = True
    """Whether b's file was read whole (False only under ``lenient``)."""
    pipelined: bool | None = None
    """Whether the job has a pipeline (Send / Receive in a file read); None when unknown."""
    unaligned: dict = field(default_factory=dict)
    """Per section: how many of each rank's operators found no partner, so were not compared."""
    skipped: list = field(default_factory=list)
    """Under ``lenient``: every span skipped in either file."""
    only: pd.DataFrame = field(default_factory=pd.DataFrame)
    shapes: pd.DataFrame = field(default_factory=pd.DataFrame)
    strategies: pd.DataFrame = field(default_factory=pd.DataFrame)
    comm: pd.DataFrame = field(default_factory=pd.DataFrame)
    slices: pd.DataFrame = field(default_factory=pd.DataFrame)

    SECTIONS = ("only", "shapes", "strategies", "comm", "slices")
    TITLES = {
        "only": "operators present in one rank only (or a different number of times)",
        "shapes": "shape differences",
        "strategies": "strategy differences",
        "comm": "communication groups that differ",
        "slices": "parameter slices that differ",
    }

    @property
    def same_stage(self) -> bool | None:
        """Whether both ranks are in the same pipeline stage (None when unknown)."""
        if self.a_stage is None or self.b_stage is None:
            return None
        return self.a_stage == self.b_stage

    @property
    def identical(self) -> bool:
        """No difference in any section."""
        return all(getattr(self, s).empty for s in self.SECTIONS)

    def to_dict(self) -> dict:
        def records(frame: pd.DataFrame) -> list[dict]:
            return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]

        return {"a": self.a, "b": self.b, "a_file": self.a_file, "b_file": self.b_file,
                "a_stage_ranks": self.a_stage, "b_stage_ranks": self.b_stage, "same_stage": self.same_stage,
                "a_complete": self.a_complete, "b_complete": self.b_complete,
                "complete": self.a_complete and self.b_complete, "pipelined": self.pipelined,
                "unaligned": self.unaligned,
                **{s: records(getattr(self, s)) for s in self.SECTIONS}}

    def stage_line(self) -> str:
        """One line on the pipeline stages of the two ranks."""
        if self.pipelined is False and self.same_stage is not None:
            return f"no pipeline: both ranks run the whole network (ranks {_ranks(self.a_stage)})"
        if self.same_stage is None:
            return "pipeline stage: unknown (read a dump root to compare stages)"
        if self.same_stage:
            return f"same pipeline stage (ranks {_ranks(self.a_stage)})"
        return (f"different pipeline stages: {self.a} is in the stage of ranks {_ranks(self.a_stage)}, "
                f"{self.b} in the stage of ranks {_ranks(self.b_stage)}")

    def format(self) -> str:
        """Plain text for a terminal."""
        lines = [f"diff {self.a} ({self.a_file})", f"  vs {self.b} ({self.b_file})", self.stage_line()]
        for section in self.SECTIONS:
            frame = getattr(self, section)
            lines.append(f"\n{self.TITLES[section]}: {len(frame)}")
            if not frame.empty:
                shown = frame.copy()
                if "scope" in shown:
                    shown["scope"] = [short_scope(v) for v in shown["scope"]]
                lines.append(shown.to_string(index=False, max_colwidth=56))
        for section, counts in self.unaligned.items():
            if any(counts.values()):
                lines.append(f"\nnot aligned, so not compared ({section}): "
                             + ", ".join(f"{n} of {label}" for label, n in counts.items()))
        if self.identical:
            lines.append("\nno differences")
        return "\n".join(lines)


def short_scope(scope, parts: int = 2) -> str:
    """The last ``parts`` parts of a scope, for narrow displays: ``.../layer1-Dense``."""
    if not isinstance(scope, str) or scope.count("/") < parts:
        return scope if isinstance(scope, str) else ""
    return ".../" + "/".join(scope.split("/")[-parts:])


def _ranks(ranks) -> str:
    return "-".join(map(str, ranks)) if ranks else "?"


def _plain(value):
    if isinstance(value, float) and pd.isna(value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def _results(a: RankDump, b: RankDump, stage: str | None,
             lenient: bool = False) -> tuple[RankResult, RankResult, Analysis]:
    root = a.path.parent
    if a.path.is_dir() and b.path.is_dir() and root == b.path.parent and a.rank is not None:
        try:
            dump = load_dump(root)
        except DumpNotFoundError:
            dump = None
        if dump is not None and len(dump.ranks) <= FULL_ROOT_LIMIT and {a.path, b.path} <= {r.path for r in dump.ranks}:
            analysis = dump.analyse(stage, lenient=lenient)
            return _result_of(analysis, a), _result_of(analysis, b), analysis
    analysis = analyse(Dump(root, [a, b]), stage, lenient=lenient)
    return _result_of(analysis, a), _result_of(analysis, b), analysis


def _result_of(analysis: Analysis, rank: RankDump) -> RankResult:
    """The result of ``rank``; :class:`DumpNotFoundError` saying why when it was not read."""
    for read, result in zip(analysis.plan.read, analysis.results):
        if Path(read.folder) == Path(rank.path):
            return result
    why = next((r.note for r in analysis.plan.not_read if Path(r.folder) == Path(rank.path)), "not read")
    raise DumpNotFoundError(f"{rank.path}: {why}")


def _as_rank(value) -> RankDump:
    if isinstance(value, RankDump):
        return value
    dump = load_dump(value)
    if len(dump.ranks) != 1:
        have = ", ".join(r.label for r in dump.ranks)
        raise DumpNotFoundError(f"{value}: holds several ranks ({have}); name one rank folder or file")
    return dump.ranks[0]


def diff_ranks(a: str | os.PathLike | RankDump, b: str | os.PathLike | RankDump, stage: str | None = None,
               *, lenient: bool = False) -> RankDiff:
    """Compare two ranks: two ``rank_N`` folders (or any two folders or files of IR).
    ``lenient``: compare what can be read of files that do not parse whole (see ``analyse``)."""
    rank_a, rank_b = _as_rank(a), _as_rank(b)
    ra, rb, analysis = _results(rank_a, rank_b, stage, lenient)
    ctx_a, ctx_b = analysis.context(ra.rank), analysis.context(rb.rank)
    label_a, label_b = (rank_a.label, rank_b.label) if rank_a.label != rank_b.label \
        else (f"{rank_a.label} (a)", f"{rank_b.label} (b)")  # two runs' rank_0: two columns, not one
    result = RankDiff(label_a, label_b, ra.file, rb.file,
                      ctx_a.stage_ranks if analysis.stages else None, ctx_b.stage_ranks if analysis.stages else None,
                      ra.complete, rb.complete, ra.skipped + rb.skipped + [r.error for r in (ra, rb) if r.error])

    result.pipelined = any(r.pipelined for r in analysis.results) if analysis.results else None
    op_fields = ("name", "op", "scope", "backward", "param")
    ops_a = _keyed([r for r in ra.ops if not r["plumbing"]], op_fields)
    ops_b = _keyed([r for r in rb.ops if not r["plumbing"]], op_fields)
    count_a = pd.Series([k[:-1] for k in ops_a]).value_counts() if ops_a else pd.Series(dtype=int)
    count_b = pd.Series([k[:-1] for k in ops_b]).value_counts() if ops_b else pd.Series(dtype=int)
    only = []
    for key in sorted(set(count_a.index) | set(count_b.index), key=str):
        na, nb = int(count_a.get(key, 0)), int(count_b.get(key, 0))
        if na != nb:
            name, op, scope, backward, param = key
            sample = ops_a.get(key + (0,)) or ops_b.get(key + (0,))
            only.append({"name": name, "op": op, "scope": scope, "gradient": backward, "param": param,
                         f"in {label_a}": na, f"in {label_b}": nb, "line": sample["line"]})
    result.only = pd.DataFrame(only)

    shapes, strategies = [], []
    for key in ops_a.keys() & ops_b.keys():
        x, y = ops_a[key], ops_b[key]
        if x["inputs"] != y["inputs"] or x["output"] != y["output"]:
            shapes.append({"name": x["name"], "op": key[1], "scope": key[2], "param": key[4], "n": key[5],
                           f"{label_a} inputs": x["inputs"], f"{label_b} inputs": y["inputs"],
                           f"{label_a} output": x["output"], f"{label_b} output": y["output"],
                           "lines": f"{x['line']} / {y['line']}"})
        if x["in_strategy"] != y["in_strategy"]:
            strategies.append({"name": x["name"], "op": key[1], "scope": key[2], "n": key[5],
                               label_a: x["in_strategy"], label_b: y["in_strategy"],
                               "lines": f"{x['line']} / {y['line']}"})
    result.shapes = pd.DataFrame(sorted(shapes, key=lambda r: r["lines"]))
    result.strategies = pd.DataFrame(strategies)

    comm_fields = ("name", "op", "kind", "producer", "consumers")
    ca, cb = _keyed(ra.comm, comm_fields), _keyed(rb.comm, comm_fields)
    result.unaligned["communication"] = {label_a: len(ca.keys() - cb.keys()),
                                         label_b: len(cb.keys() - ca.keys())}
    result.unaligned["operators"] = {label_a: len(ops_a.keys() - ops_b.keys()),
                                     label_b: len(ops_b.keys() - ops_a.keys())}
    comm = []
    for key in sorted(ca.keys() & cb.keys(), key=lambda k: ca[k]["line"]):
        x, y = ca[key], cb[key]
        if x["group_ranks"] != y["group_ranks"]:
            comm.append({"name": x["name"], "op": key[1], "kind": key[2], "after": key[3], "n": key[5],
                         f"{label_a} group": x["group_ranks"], f"{label_b} group": y["group_ranks"],
                         "lines": f"{x['line']} / {y['line']}"})
    result.comm = pd.DataFrame(comm)

    sa = {r["param"]: r for r in with_slices(ra.params, ctx_a)}
    sb = {r["param"]: r for r in with_slices(rb.params, ctx_b)}
    slices = []
    for param in sorted(sa.keys() | sb.keys()):
        x, y = sa.get(param), sb.get(param)
        tx = slice_text(x["slice"]) if x else "absent"
        ty = slice_text(y["slice"]) if y else "absent"
        if tx != ty or (x and y and x["rank_shape"] != y["rank_shape"]):
            slices.append({"param": param, f"{label_a}": tx, f"{label_b}": ty,
                           "global": (x or y)["global_shape"]})
    result.slices = pd.DataFrame(slices)
    return result
