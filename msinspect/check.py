"""Checking a dump against an expectation spec (:mod:`msinspect.spec`): every expectation passes or
fails with what was expected, what was found, and the IR lines (file:line) that show it."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pandas as pd

from msinspect.analysis.flow import path_between
from msinspect.analysis.ops import is_backward, is_comm, matches, selector_matches
from msinspect.dumps import Dump, load_dump, parse_many
from msinspect.graph import node_id, to_networkx
from msinspect.parser.reading import read_text
from msinspect.spec import Expectation, Spec, load_spec

MAX_EVIDENCE = 8


@dataclass(frozen=True)
class Evidence:
    """An IR line that shows what was found."""

    rank: int | None
    file: str
    line: int
    text: str

    def format(self) -> str:
        where = f"rank {self.rank}: " if self.rank is not None else ""
        return f"{where}{self.file}:{self.line}: {self.text}"


@dataclass
class Outcome:
    """The verdict on one expectation."""

    expectation: Expectation
    passed: bool
    expected: str
    found: str
    evidence: list[Evidence] = field(default_factory=list)

    def to_dict(self) -> dict:
        e = self.expectation
        return {"entry": e.label, "kind": e.kind, "target": e.target, "basis": e.basis,
                "stage": e.stage, "passed": self.passed, "expected": self.expected, "found": self.found,
                "evidence": [ev.__dict__ for ev in self.evidence]}


@dataclass
class CheckReport:
    """Every outcome of a spec against a dump."""

    spec: Spec
    dump: Path
    outcomes: list[Outcome]
    complete: bool = True
    """Whether every file checked was read whole (False only under ``lenient``)."""
    skipped: list[str] = field(default_factory=list)
    """Under ``lenient``: every span skipped in the files checked."""
    reads: dict = field(default_factory=dict)
    """Per stage analysed, which ranks were read and which not
    (:class:`~msinspect.ranks_read.ReadPlan`)."""

    @property
    def passed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.passed]

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.passed]

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_dict(self) -> dict:
        return {"spec": str(self.spec.path), "dump": str(self.dump), "passed": len(self.passed),
                "failed": len(self.failed), "complete": self.complete,
                "outcomes": [o.to_dict() for o in self.outcomes],
                "ranks_read": [plan.to_dict() for plan in self.reads.values()]}

    def format(self, *, only_failed: bool = False) -> str:
        """Plain text: one PASS/FAIL line per expectation, then expected / found / evidence."""
        lines = [f"spec {self.spec.path} against {self.dump}"]
        for o in self.outcomes:
            if only_failed and o.passed:
                continue
            e = o.expectation
            basis = f"  [{e.basis}]" if e.basis else ""
            stage = f" @ {e.stage}" if e.stage else ""
            lines.append(f"{'PASS' if o.passed else 'FAIL'} {e.label} {e.kind} {e.target}{stage}{basis}")
            lines.append(f"     expected: {o.expected}")
            lines.append(f"     found:    {o.found}")
            for ev in o.evidence[:MAX_EVIDENCE if not o.passed else 1]:
                lines.append(f"     {ev.format()}")
        lines.append(f"{len(self.passed)} passed, {len(self.failed)} failed")
        return "\n".join(lines)

    __str__ = format


@lru_cache(maxsize=64)
def _lines(path: str) -> tuple[str, ...]:
    text, _ = read_text(path, lenient=True)
    return tuple(text.splitlines())


def ir_line(path: str, line: int, width: int = 200) -> str:
    """The text of an IR line, stripped and cut to ``width`` characters."""
    lines = _lines(path)
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return text if len(text) <= width else text[: width - 3] + "..."


def _evidence(rows: pd.DataFrame) -> list[Evidence]:
    """One IR line per rank (the first row of each), in rank order."""
    out = []
    for _, row in rows.drop_duplicates("rank").iterrows():
        out.append(Evidence(_rank(row["rank"]), row["file"], int(row["line"]), ir_line(row["file"], int(row["line"]))))
    return out


def _rank(value) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def _ranks_text(ranks) -> str:
    ranks = list(ranks)
    if ranks and all(_rank(r) is None for r in ranks):
        return "the dump's files"  # files outside rank_N folders
    ranks = sorted({_rank(r) for r in ranks if _rank(r) is not None})
    if not ranks:
        return "no rank"
    if ranks == list(range(ranks[0], ranks[-1] + 1)) and len(ranks) > 2:
        return f"ranks {ranks[0]}-{ranks[-1]}"
    return "rank " + ", ".join(map(str, ranks)) if len(ranks) == 1 else "ranks " + ", ".join(map(str, ranks))


def _select(frame: pd.DataFrame, selector: str, ranks) -> pd.DataFrame:
    if frame.empty:
        return frame
    keep = [selector_matches(n, s, selector) for n, s in zip(frame["name"], frame["scope"])]
    frame = frame[keep]
    if ranks is not None:
        frame = frame[frame["rank"].isin(ranks)]
    return frame


def _fmt(value) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return "(" + ", ".join(str(v) for v in value) + ")"
    return str(value)


class Checker:
    """Evaluates expectations against one dump, reusing each stage's analysis."""

    def __init__(self, spec: Spec, dump: Dump, jobs: int | None = None, lenient: bool = False):
        self.spec = spec
        self.dump = dump
        self.jobs = jobs
        self.lenient = lenient
        self.skipped: list[str] = []
        self.complete = True
        self.reads: dict = {}

    def _analysis(self, e: Expectation):
        analysis = self.dump.analyse(e.stage or self.spec.stage, jobs=self.jobs, lenient=self.lenient)
        self.skipped += [s for s in analysis.skipped if s not in self.skipped]
        self.complete = self.complete and analysis.complete
        self.reads[e.stage or self.spec.stage] = analysis.plan
        return analysis

    def run(self) -> CheckReport:
        outcomes = []
        if self.spec.ranks is not None:
            outcomes.append(self._job_ranks())
        for e in self.spec.expectations:
            outcomes.append(getattr(self, f"_{e.kind}")(e))
        return CheckReport(self.spec, self.dump.path, outcomes, self.complete, self.skipped, self.reads)

    def _job_ranks(self) -> Outcome:
        have = sorted(r.rank for r in self.dump.ranks if r.rank is not None)
        want = list(range(self.spec.ranks))
        e = Expectation("job", 0, {"op": "ranks"}, None, None, None)
        return Outcome(e, have == want, f"rank_0 .. rank_{self.spec.ranks - 1}",
                       _ranks_text(have) if have else "no rank_N folders")

    # ---- one method per expectation kind
    def _strategy(self, e: Expectation) -> Outcome:
        v = e.values
        want = _fmt(v["in_strategy"]) + (f", set by {v['source']}" if "source" in v else "")
        rows = _select(self._analysis(e).strategies(), v["op"], e.ranks)
        if rows.empty:
            return Outcome(e, False, want, f"no operator matching {v['op']!r} has a strategy")
        bad = [(v["in_strategy"] != r.in_strategy
                or ("source" in v and v["source"] != r.set_by)
                or ("out_strategy" in v and v["out_strategy"] != r.out_strategy)) for r in rows.itertuples()]
        found = sorted({f"{_fmt(r.in_strategy)}, set by {r.set_by}" for r in rows.itertuples()})
        shown = rows[bad] if any(bad) else rows
        return Outcome(e, not any(bad), want,
                       f"{' | '.join(found)} on {_ranks_text(rows['rank'])} ({len(rows)} operator(s))",
                       _evidence(shown))

    def _shape(self, e: Expectation) -> Outcome:
        v = e.values
        ops = self._analysis(e).operators()
        rows = _select(ops[~ops["backward"]] if not ops.empty else ops, v["op"], e.ranks)
        parts = []
        if "inputs" in v:
            parts.append(f"inputs {_fmt(v['inputs'])}")
        if "output" in v:
            parts.append(f"output {v['output']}")
        want = ", ".join(parts)
        if rows.empty:
            return Outcome(e, False, want, f"no operator matching {v['op']!r}")

        def wrong(r) -> bool:
            if "inputs" in v and tuple(r.inputs[: len(v["inputs"])]) != v["inputs"]:
                return True
            return "output" in v and r.output != v["output"]

        bad = [wrong(r) for r in rows.itertuples()]
        found = sorted({f"inputs {_fmt(tuple(r.inputs))}, output {r.output}" for r in rows.itertuples()})
        return Outcome(e, not any(bad), want,
                       f"{' | '.join(found)} on {_ranks_text(rows['rank'])} ({len(rows)} operator(s))",
                       _evidence(rows[bad] if any(bad) else rows))

    def _comm(self, e: Expectation) -> Outcome:
        v = e.values
        analysis = self._analysis(e)
        comm, ops = analysis.comm(), analysis.operators()
        anchor = v.get("after") or v.get("before")
        want_groups = sorted(tuple(sorted(g)) for g in v["groups"])
        want = f"{v['kind']} {'after' if 'after' in v else 'before'} {anchor} in group(s) {want_groups}"
        anchors = _select(ops[~ops["backward"] & ~ops["comm"]] if not ops.empty else ops, anchor, e.ranks)
        if anchors.empty:
            return Outcome(e, False, want, f"no operator matching {anchor!r}")
        kinds = comm[[_kind_matches(o, n, v["kind"]) for o, n in zip(comm["op"], comm["name"])]] if not comm.empty else comm
        if e.ranks is not None:
            kinds = kinds[kinds["rank"].isin(e.ranks)]
        if "after" in v:
            hit = [selector_matches(p, s, anchor) for p, s in zip(kinds["producer"], kinds["producer_scope"])]
        else:
            hit = [any(selector_matches(c, s, anchor) for c, s in zip(cs, ss))
                   for cs, ss in zip(kinds["consumers"], kinds["consumer_scopes"])]
        found_rows = kinds[hit] if len(kinds) else kinds
        missing = sorted(set(anchors["rank"].map(_rank)) - set(found_rows["rank"].map(_rank)), key=lambda r: (r is None, r or 0))
        groups = sorted({tuple(sorted(g)) for g in found_rows["group_ranks"] if isinstance(g, tuple)})
        unknown = found_rows.loc[found_rows["group_ranks"].isna(), "group"].dropna().tolist()
        found = f"{len(found_rows)} {v['kind']} on {_ranks_text(found_rows['rank'])} in group(s) {groups}"
        if unknown:
            found += f" (ranks of group {unknown[0]!r} unknown)"
        evidence = _evidence(found_rows)
        if missing:
            found += f"; none on {_ranks_text(missing)}, where {anchor} is"
            evidence += _evidence(anchors[anchors["rank"].isin(missing)])
        return Outcome(e, not missing and groups == want_groups, want, found, evidence)

    def _count(self, e: Expectation) -> Outcome:
        v = e.values
        ops = self._analysis(e).operators()
        lo, hi = v["min"], v.get("max")
        want = f"{lo}" + (f"..{hi}" if hi is not None and hi != lo else "") + f" {v['kind']} on each of {_ranks_text(e.ranks)}"
        have_ranks = set(ops["rank"].map(_rank)) if not ops.empty else set()
        rows = ops[[_kind_matches(o, n, v["kind"]) for o, n in zip(ops["op"], ops["name"])]] if not ops.empty else ops
        counts = {r: int((rows["rank"] == r).sum()) for r in e.ranks}
        bad = {r: n for r, n in counts.items() if r not in have_ranks or n < lo or (hi is not None and n > hi)}
        found = ", ".join(f"rank {r}: {n if r in have_ranks else 'absent'}" for r, n in counts.items())
        shown = rows[rows["rank"].isin(list(bad) or list(counts))]
        return Outcome(e, not bad, want, found, _evidence(shown))

    def _no_redistribution(self, e: Expectation) -> Outcome:
        first, second = e.values["between"]
        want = f"{first} feeds {second} directly (no communication or redistribution between)"
        ranks = [r for r in self.dump.ranks if e.ranks is None or r.rank in e.ranks]
        stage = e.stage or self.spec.stage
        from msinspect.analysis.collect import pick_file

        files = [pick_file(r, stage) for r in ranks]
        found_any, problems, evidence = 0, [], []
        for rank, ir in zip(ranks, parse_many(files, jobs=self.jobs)):
            graph = to_networkx(ir)
            sources = [n for n in ir.nodes() if n.index is not None and not is_backward(n) and matches(n, first)]
            targets = [n for n in ir.nodes() if n.index is not None and not is_backward(n) and matches(n, second)]
            for target in targets:
                trails = [path_between(graph, node_id(s), node_id(target)) for s in sources]
                trails = [t for t in trails if t is not None]
                if not trails:
                    continue
                found_any += 1
                comm = [graph.nodes[k]["node"] for k in min(trails, key=len) if is_comm(graph.nodes[k]["node"])]
                if comm:
                    problems.append(f"rank {rank.rank}: {', '.join(c.name for c in comm)}")
                    evidence += [Evidence(rank.rank, ir.path, c.line, ir_line(ir.path, c.line)) for c in comm]
                elif len(evidence) < 1:
                    evidence.append(Evidence(rank.rank, ir.path, target.line, ir_line(ir.path, target.line)))
        if not found_any:
            return Outcome(e, False, want, f"{first} does not feed {second} on any rank")
        found = "between them: " + "; ".join(problems) if problems else f"direct on every rank ({found_any} edge(s))"
        return Outcome(e, not problems, want, found, evidence)


def _kind_matches(op: str, name: str | None, kind: str) -> bool:
    """``AllReduce`` matches the op type; ``_MirrorOperator`` also matches the AllReduce named
    ``grad_mirror_MirrorOperator`` that it becomes after the parallel pass."""
    if op == kind:
        return True
    bare = kind.lstrip("_")
    return bool(name) and bare != kind and name.endswith(bare)


def check(spec: str | os.PathLike | Spec, dump: str | os.PathLike | Dump, *, jobs: int | None = None,
          lenient: bool = False) -> CheckReport:
    """Check ``dump`` (a dump root, rank folder or file) against ``spec`` (a TOML path or Spec).
    ``lenient``: check what can be read of files that do not parse whole (see ``analyse``)."""
    spec = spec if isinstance(spec, Spec) else load_spec(spec)
    dump = dump if isinstance(dump, Dump) else load_dump(dump)
    return Checker(spec, dump, jobs, lenient).run()


def check_spec(spec_path: str | os.PathLike, dump_path: str | os.PathLike) -> CheckReport:
    """What ``msinspect train`` calls after a run."""
    return check(spec_path, dump_path)
