"""What differs between two ranks (``left`` and ``right``): pipeline stage, operators present in
one only, shapes, strategies, communication groups and parameter slices; and whether the two
come from one run at all.

Operators are aligned by what survives renames and hashes: their place among their data
neighbours (:func:`msinspect.analysis.dataflow.align.align`: op type, scope, the number of dimensions of
their tensors, the operators and parameters around them); repeats that nothing tells apart (one
per micro-batch) go by their order in the file when both sides have as many of them with the same
name, op, scope, parameter and dimensions. Two ranks of different pipeline stages (or of a
pipeline whose stages cannot be told) hold different parts of the network: operators are paired
there only where the two graphs still agree once the refinement has run its course, never in file
order, so each stage's own operators are present on one side only (``only``), never paired with
an unlike operator of the other stage (stage 0's ``StridedSlice`` of the images with stage 1's of
the labels). Communication is aligned by its op, kind and the operators it sits
between (generated names less MindSpore's hash digits). What cannot be aligned is counted
(``unaligned``), never compared.

A communication group that differs is marked ``per_rank`` when each side's group holds that
side's own rank and both are laid out alike (as many ranks, spaced alike: ``(0, 2)`` on rank 0,
``(1, 3)`` on rank 1): the difference every per-rank group shows (tensor-, data-parallel and
optimizer-shard groups name the rank's own peers), expected, not a finding.

Whether the two sides come from one run is said in :attr:`RankDiff.warnings`
(:mod:`msinspect.analysis.compare.same_run`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from msinspect.analysis.dataflow.align import align, shape_dims
from msinspect.analysis.job.collect import Analysis, RankResult, analyse
from msinspect.mindspore.naming import stable_name
from msinspect.analysis.rank.params import slice_text, with_slices
from msinspect.analysis.job.second_opinion import compare, rank_record
from msinspect.analysis.compare.same_run import run_folder, run_warnings
from msinspect.dumps import Dump, DuplicateRanksError, RankDump, load_dump
from msinspect.errors import DumpNotFoundError
from msinspect.graph import is_cnode, to_networkx
from msinspect.parser import parse_file

#: Up to this many ranks, the whole dump root beside two rank folders is read to learn the
#: pipeline stages and the device grid; above it only the two ranks are read.
FULL_ROOT_LIMIT = 64

SECTIONS = ("only", "shapes", "strategies", "comm", "slices")
#: The columns of each section; ``left_*`` / ``right_*`` hold each side's value.
COLUMNS = {
    "only": ["name", "op", "scope", "gradient", "param", "inputs", "output", "left_count", "right_count", "line"],
    "shapes": ["name", "op", "scope", "param", "left_inputs", "right_inputs", "left_output", "right_output",
               "left_line", "right_line"],
    "strategies": ["name", "op", "scope", "left_strategy", "right_strategy", "left_line", "right_line"],
    "comm": ["name", "op", "kind", "after", "n", "left_group", "right_group", "per_rank", "left_line", "right_line"],
    "slices": ["param", "global_shape", "left_slice", "right_slice", "left_record", "right_record"],
}


def _keyed(rows: list[dict], fields: tuple[str, ...]) -> dict[tuple, dict]:
    """Rows keyed by ``fields`` plus their occurrence number among equal keys.

    Operators without an instance name are named by MindSpore ``MatMul-op3``: the ordinal counts
    within the file and says nothing about the operator, so it is left out of the key (of the
    operators a collective sits between too); so are the hash digits of generated names.
    """
    seen: dict[tuple, int] = {}
    out = {}
    for row in rows:
        base = tuple(stable_name(row.get(f)) if f in ("name", "producer", "consumers") else row.get(f)
                     for f in fields)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[base + (n,)] = row
    return out


@dataclass
class RankDiff:
    """The differences between two ranks, ``left`` and ``right`` (see the module docstring)."""

    left_label: str
    right_label: str
    left_rank: int | None
    right_rank: int | None
    left_file: str
    right_file: str
    left_stage_ranks: tuple[int, ...] | None
    """Ranks of the left rank's pipeline stage, when the dump shows stages."""
    right_stage_ranks: tuple[int, ...] | None
    left_complete: bool = True
    """Whether the left file was read whole (False only under ``lenient``)."""
    right_complete: bool = True
    pipelined: bool | None = None
    """Whether the job has a pipeline (Send / Receive in a file read); None when unknown."""
    unaligned: dict = field(default_factory=dict)
    """Per section (``operators``, ``communication``): ``{"left": n, "right": n}``, how many of each
    side's operators found no partner, so were not compared."""
    warnings: list[str] = field(default_factory=list)
    """Why the two sides may not be comparable (different runs: :func:`run_warnings`)."""
    skipped: list = field(default_factory=list)
    """Under ``lenient``: every span skipped in either file."""
    only: pd.DataFrame = field(default_factory=pd.DataFrame)
    shapes: pd.DataFrame = field(default_factory=pd.DataFrame)
    strategies: pd.DataFrame = field(default_factory=pd.DataFrame)
    comm: pd.DataFrame = field(default_factory=pd.DataFrame)
    slices: pd.DataFrame = field(default_factory=pd.DataFrame)
    recorded: bool = False
    """Whether either rank's folder holds MindSpore's own record (the slices' ``*_record``)."""

    SECTIONS = SECTIONS

    @property
    def same_stage(self) -> bool | None:
        """Whether both ranks are in the same pipeline stage (None when unknown)."""
        if self.left_stage_ranks is None or self.right_stage_ranks is None:
            return None
        return self.left_stage_ranks == self.right_stage_ranks

    @property
    def identical(self) -> bool:
        """No difference in any section."""
        return all(getattr(self, s).empty for s in SECTIONS)

    def rows(self) -> pd.DataFrame:
        """Every section's rows in one table, with a ``section`` column (for CSV)."""
        frames = [getattr(self, s).astype(object).assign(section=s) for s in SECTIONS if not getattr(self, s).empty]
        columns = ["section"] + list(dict.fromkeys(c for s in SECTIONS for c in COLUMNS[s]))
        if not frames:
            return pd.DataFrame(columns=columns)
        return pd.concat(frames, ignore_index=True).reindex(columns=columns)

    def to_dict(self) -> dict:
        """Plain data (:mod:`msinspect.schema`); its keys never depend on the ranks' labels. The
        sections' rows are under ``differences``, keyed by section."""
        from msinspect.schema import records

        return {"left_label": self.left_label, "right_label": self.right_label,
                "left_rank": self.left_rank, "right_rank": self.right_rank,
                "left_file": self.left_file, "right_file": self.right_file,
                "left_stage_ranks": self.left_stage_ranks, "right_stage_ranks": self.right_stage_ranks,
                "same_stage": self.same_stage, "left_complete": self.left_complete,
                "right_complete": self.right_complete, "complete": self.left_complete and self.right_complete,
                "pipelined": self.pipelined, "unaligned": self.unaligned, "warnings": self.warnings,
                "differences": {s: records(getattr(self, s)) for s in SECTIONS}}


# ---------------------------------------------------------------- which ranks, which runs
def _results(a: RankDump, b: RankDump, stage: str | None,
             lenient: bool = False) -> tuple[RankResult, RankResult, Analysis, Analysis]:
    """Each side's result and the analysis it belongs to. Two rank folders of one dump root: the
    whole root (pipeline stages, device grid); two of one folder otherwise: those two ranks;
    sides in different folders: each with its own run (its own world)."""
    root = a.path.parent
    if a.path.is_dir() and b.path.is_dir() and root == b.path.parent and a.rank is not None:
        try:
            dump = load_dump(root)
        except (DumpNotFoundError, DuplicateRanksError):
            dump = None
        if dump is not None and len(dump.ranks) <= FULL_ROOT_LIMIT and {a.path, b.path} <= {r.path for r in dump.ranks}:
            analysis = analyse(dump, stage, lenient=lenient)
            return _result_of(analysis, a), _result_of(analysis, b), analysis, analysis
    if run_folder(a) == run_folder(b):
        analysis = analyse(Dump(root, [a, b]), stage, lenient=lenient)
        return _result_of(analysis, a), _result_of(analysis, b), analysis, analysis
    left = analyse(Dump(run_folder(a), [a]), stage, lenient=lenient)
    right = analyse(Dump(run_folder(b), [b]), stage, lenient=lenient)
    return _result_of(left, a), _result_of(right, b), left, right


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


# ---------------------------------------------------------------- operators
def _graph(result: RankResult, lenient: bool):
    return to_networkx(parse_file(result.file, lenient=lenient))


def _pair_operators(lr: RankResult, rr: RankResult, lenient: bool,
                    repeats: bool = True) -> tuple[list[tuple[dict, dict]], list, list]:
    """Pairs of (left row, right row) of real operators (neither plumbing nor communication), and
    the rows of each side that found no partner. ``repeats``: pair what the graphs do not tell
    apart in file order (only where both sides compile one program: two pipeline stages hold
    different operators under one name, such as each stage's gradient ``Cast`` before clipping)."""
    left = {r["line"]: r for r in lr.ops if not r["plumbing"] and not r["comm"]}
    right = {r["line"]: r for r in rr.ops if not r["plumbing"] and not r["comm"]}
    pairs: dict[int, int] = {}  # right line -> left line
    if left and right:
        lg, rg = _graph(lr, lenient), _graph(rr, lenient)
        keys = [k for k, d in rg.nodes(data=True) if is_cnode(d) and d.get("line") in right]
        for key, ref in align(lg, rg, keys, shapes=True, strict=not repeats).pairs.items():
            if lg.nodes[ref].get("line") in left:
                pairs[rg.nodes[key]["line"]] = lg.nodes[ref]["line"]
    # repeats nothing tells apart (one per micro-batch): in file order, when both sides have as many
    paired_left = set(pairs.values())
    rest_l: dict[tuple, list[int]] = {}
    rest_r: dict[tuple, list[int]] = {}
    for line, row in left.items():
        if line not in paired_left:
            rest_l.setdefault(_identity(row), []).append(line)
    for line, row in right.items():
        if line not in pairs:
            rest_r.setdefault(_identity(row), []).append(line)
    for key, lines in rest_r.items() if repeats else ():
        if len(rest_l.get(key, ())) == len(lines):
            pairs.update(zip(sorted(lines), sorted(rest_l[key])))
    out = [(left[l_line], right[r_line]) for r_line, l_line in sorted(pairs.items(), key=lambda p: p[1])]
    paired_left = set(pairs.values())
    return (out, [r for line, r in left.items() if line not in paired_left],
            [r for line, r in right.items() if line not in pairs])


OP_FIELDS = ("name", "op", "scope", "backward", "param")


def _identity(row: dict) -> tuple:
    """What names an operator in words: its stable name, op, scope, direction, parameter, and the
    number of dimensions of its inputs and output (:func:`~msinspect.analysis.dataflow.align.shape_dims`)."""
    return tuple(stable_name(row[f]) if f == "name" else row[f] for f in OP_FIELDS) + (
        shape_dims(row["inputs"] or (), row["output"]),)


def _comm_ops(lr: RankResult, rr: RankResult) -> tuple[list[tuple[dict, dict]], list, list]:
    """Communication operators of the operator table, paired by their stable identity and order."""
    ca = _keyed([r for r in lr.ops if r["comm"] and not r["plumbing"]], OP_FIELDS)
    cb = _keyed([r for r in rr.ops if r["comm"] and not r["plumbing"]], OP_FIELDS)
    return ([(ca[k], cb[k]) for k in ca if k in cb], [ca[k] for k in ca if k not in cb],
            [cb[k] for k in cb if k not in ca])  # in file order (a set's order changes from run to run)


def per_rank(left_group, right_group, left_rank: int | None, right_rank: int | None) -> bool:
    """Whether two groups differ only as every rank's own group does: each holds its side's rank,
    and both have as many ranks spaced alike (``(0, 2)`` on rank 0 and ``(1, 3)`` on rank 1;
    ``(0, 1, 2, 3)`` on rank 0 and ``(4, 5, 6, 7)`` on rank 4)."""
    if not isinstance(left_group, (tuple, list)) or not isinstance(right_group, (tuple, list)) \
            or not left_group or not right_group or left_rank is None or right_rank is None:
        return False
    a, b = sorted(left_group), sorted(right_group)
    return (left_rank in a and right_rank in b and len(a) == len(b)
            and [r - a[0] for r in a] == [r - b[0] for r in b])


def _only(left: list[dict], right: list[dict]) -> pd.DataFrame:
    """Among the operators that found no partner: those present in one side only, or a different
    number of times, by what names them in words."""
    count_l = pd.Series([_identity(r) for r in left], dtype=object).value_counts()
    count_r = pd.Series([_identity(r) for r in right], dtype=object).value_counts()
    sample: dict[tuple, dict] = {}  # the first in the left file, else in the right
    for r in left + right:
        sample.setdefault(_identity(r), r)
    rows = []
    for key in sorted(set(count_l.index) | set(count_r.index), key=str):
        nl, nr = int(count_l.get(key, 0)), int(count_r.get(key, 0))
        if nl != nr:
            name, op, scope, backward, param, _ = key
            rows.append({"name": name, "op": op, "scope": scope, "gradient": backward, "param": param,
                         "inputs": sample[key]["inputs"], "output": sample[key]["output"],
                         "left_count": nl, "right_count": nr, "line": sample[key]["line"]})
    return pd.DataFrame(rows, columns=COLUMNS["only"])


def diff_ranks(left: str | os.PathLike | RankDump, right: str | os.PathLike | RankDump, stage: str | None = None,
               *, lenient: bool = False) -> RankDiff:
    """Compare two ranks: two ``rank_N`` folders (or any two folders or files of IR).
    ``lenient``: compare what can be read of files that do not parse whole (see ``analyse``)."""
    rank_l, rank_r = _as_rank(left), _as_rank(right)
    lr, rr, analysis_l, analysis_r = _results(rank_l, rank_r, stage, lenient)
    ctx_l, ctx_r = analysis_l.context(lr.rank), analysis_r.context(rr.rank)
    label_l, label_r = rank_l.label, rank_r.label
    result = RankDiff(label_l, label_r, rank_l.rank, rank_r.rank, lr.file, rr.file,
                      ctx_l.stage_ranks if analysis_l.stages else None, ctx_r.stage_ranks if analysis_r.stages else None,
                      lr.complete, rr.complete,
                      skipped=lr.skipped + rr.skipped + [r.error for r in (lr, rr) if r.error])
    results = [*analysis_l.results, *(analysis_r.results if analysis_r is not analysis_l else [])]
    result.pipelined = any(r.pipelined for r in results) if results else None
    one_program = result.same_stage is True or result.pipelined is False
    result.warnings = run_warnings(rank_l, rank_r, lr, rr, (label_l, label_r), one_program=one_program)

    real, left_alone, right_alone = _pair_operators(lr, rr, lenient, repeats=one_program)
    comm_ops, comm_left, comm_right = _comm_ops(lr, rr)
    result.unaligned["operators"] = {"left": len(left_alone) + len(comm_left),
                                     "right": len(right_alone) + len(comm_right)}
    result.only = _only(left_alone + comm_left, right_alone + comm_right)
    shapes, strategies = [], []
    for x, y in real + comm_ops:
        if x["inputs"] != y["inputs"] or x["output"] != y["output"]:
            shapes.append({"name": y["name"], "op": y["op"], "scope": y["scope"], "param": y["param"],
                           "left_inputs": x["inputs"], "right_inputs": y["inputs"],
                           "left_output": x["output"], "right_output": y["output"],
                           "left_line": x["line"], "right_line": y["line"]})
        if x["in_strategy"] != y["in_strategy"]:
            strategies.append({"name": y["name"], "op": y["op"], "scope": y["scope"],
                               "left_strategy": x["in_strategy"], "right_strategy": y["in_strategy"],
                               "left_line": x["line"], "right_line": y["line"]})
    result.shapes = pd.DataFrame(sorted(shapes, key=lambda r: r["left_line"]), columns=COLUMNS["shapes"])
    result.strategies = pd.DataFrame(sorted(strategies, key=lambda r: r["left_line"]), columns=COLUMNS["strategies"])

    comm_fields = ("name", "op", "kind", "producer", "consumers")
    ca, cb = _keyed(lr.comm, comm_fields), _keyed(rr.comm, comm_fields)
    result.unaligned["communication"] = {"left": len(ca.keys() - cb.keys()), "right": len(cb.keys() - ca.keys())}
    comm = []
    for key in sorted(ca.keys() & cb.keys(), key=lambda k: ca[k]["line"]):
        x, y = ca[key], cb[key]
        if x["group_ranks"] != y["group_ranks"]:
            comm.append({"name": x["name"], "op": key[1], "kind": key[2], "after": key[3], "n": key[5],
                         "left_group": x["group_ranks"], "right_group": y["group_ranks"],
                         "per_rank": per_rank(x["group_ranks"], y["group_ranks"], lr.rank, rr.rank),
                         "left_line": x["line"], "right_line": y["line"]})
    result.comm = pd.DataFrame(comm, columns=COLUMNS["comm"])

    sl = {r["param"]: r for r in with_slices(analysis_l.params_of(lr), ctx_l)}
    sr = {r["param"]: r for r in with_slices(analysis_r.params_of(rr), ctx_r)}
    kept = [rank_record(lr), rank_record(rr)]
    slices = []
    for param in sorted(sl.keys() | sr.keys()):
        x, y = sl.get(param), sr.get(param)
        tx, ty = _slice_text(x), _slice_text(y)
        # a slice neither side can tell is listed, never taken for the same
        if tx != ty or "cannot tell" in (tx, ty) or (x and y and x["rank_shape"] != y["rank_shape"]):
            slices.append({"param": param, "global_shape": (x or y)["global_shape"],
                           "left_slice": tx, "right_slice": ty,
                           "left_record": _recorded(x, kept[0]), "right_record": _recorded(y, kept[1])})
    result.slices = pd.DataFrame(slices, columns=COLUMNS["slices"])
    result.recorded = any(record is not None for record in kept)
    return result


def _slice_text(row: dict | None) -> str:
    if row is None:
        return "absent"
    return slice_text(row["slice"]) if row["slice"] is not None else "cannot tell"


def _recorded(row: dict | None, record) -> str:
    """What MindSpore's record gives the rank of the weight (the loader's elements), as a slice."""
    if record is None:
        return "no record"
    if row is None:
        return "-"
    found = compare(row, record.weights.get(row["param"]), record)
    if found["record"] == "not in the record":
        return "not in the record"
    return slice_text(found["ms_slice"]) if found["ms_slice"] is not None else "cannot tell"

