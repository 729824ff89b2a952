"""Checking a dump against an expectation spec (:mod:`msinspect.spec`): every expectation passes or
fails with what was expected, what was found, and the IR lines (file:line) that show it. Each kind
of expectation checks itself (:mod:`msinspect.expectations`); this module runs them."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from msinspect.dumps import Dump, load_dump
from msinspect.expectations import KINDS
from msinspect.expectations.base import Expectation, Outcome
from msinspect.expectations.evidence import MAX_EVIDENCE, Evidence, ir_line
from msinspect.ranks_text import ranks_text
from msinspect.spec import Spec, load_spec

__all__ = ["CheckReport", "Checker", "Evidence", "MAX_EVIDENCE", "Outcome", "check", "evidence_lines", "ir_line"]


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
        """The report in the output schema (:mod:`msinspect.schema`): counts, one outcome per
        expectation, the ranks read per stage."""
        return {"spec": str(self.spec.path), "dump": str(self.dump), "ok": self.ok,
                "passed_count": len(self.passed), "failed_count": len(self.failed), "complete": self.complete,
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
            for line in evidence_lines(o.evidence)[:MAX_EVIDENCE if not o.passed else 1]:
                lines.append(f"     {line}")
        lines.append(f"{len(self.passed)} passed, {len(self.failed)} failed")
        return "\n".join(lines)

    __str__ = format


def evidence_lines(evidence: list[Evidence]) -> list[str]:
    """The evidence as a person reads it: each IR line once, the same line of the same-named file
    on several ranks (each rank's own copy of one program) one line for the ranks, located in the
    first rank's file (``rank 0 (and ranks 1-7, the same line): .../rank_0/x.ir:12: text``),
    as tables merge ranks that agree; JSON keeps one item per rank."""
    groups: dict[tuple, list[Evidence]] = {}
    for ev in evidence:
        place = Path(ev.file).name if ev.rank is not None else ev.file  # a file outside rank folders: its own
        groups.setdefault((place, ev.line, ev.text), []).append(ev)
    lines = []
    for same in groups.values():
        first, others = same[0], [ev.rank for ev in same[1:]]
        if not others:
            lines.append(first.format())
        else:
            lines.append(f"rank {first.rank} (and {ranks_text(others, word=True)}, the same line): "
                         f"{first.file}:{first.line}: {first.text}")
    return lines


class Checker:
    """Evaluates expectations against one dump, reusing each stage's analysis."""

    def __init__(self, spec: Spec, dump: Dump, jobs: int | None = None, lenient: bool = False,
                 scheduler: str | None = None, analyses: dict | None = None, world: int | None = None):
        self.spec = spec
        self.dump = dump
        self.world = world
        """The job's rank count as the user states it (``--world``), for a dump of some ranks."""
        self.jobs = jobs
        self.scheduler = scheduler
        self.lenient = lenient
        self.skipped: list[str] = []
        self.complete = True
        self.reads: dict = {}
        self.analyses: dict = dict(analyses or {})
        """Stage (None: the default one) -> its analysis, made once per stage for every
        expectation that reads it, or given by the caller who made it."""

    def stage(self, e: Expectation) -> str | None:
        """The stage ``e`` reads: its own, else the spec's (None: the default one)."""
        return e.stage or self.spec.stage

    def analysis(self, e: Expectation):
        """The analysis of the stage ``e`` reads (:meth:`stage`), made once per stage; what it
        could not read is kept for the report."""
        from msinspect.analysis import analyse

        stage = self.stage(e)
        if stage not in self.analyses:
            self.analyses[stage] = analyse(self.dump, stage, jobs=self.jobs, lenient=self.lenient,
                                            scheduler=self.scheduler, world=self.world)
        analysis = self.analyses[stage]
        self.skipped += [s for s in analysis.skipped if s not in self.skipped]
        self.complete = self.complete and analysis.complete
        self.reads[stage] = analysis.plan
        return analysis

    def run(self) -> CheckReport:
        outcomes = []
        if self.spec.ranks is not None:
            outcomes.append(self._job_ranks())
        for e in self.spec.expectations:
            outcomes.append(KINDS[e.kind].check(self, e))
        from msinspect.analysis.job.second_opinion import keeps_record

        if keeps_record(Path(r.path) for r in self.dump.ranks):
            outcomes.append(self._record())
        return CheckReport(self.spec, self.dump.path, outcomes, self.complete, self.skipped, self.reads)

    def _record(self) -> Outcome:
        """Where rank folders keep MindSpore's own record of the layouts: every weight read from
        the IR as the record says (:mod:`msinspect.analysis.job.second_opinion`), each difference with
        both values and the weight's line; a weight msinspect cannot tell, or that the record does
        not hold, fails too."""
        from msinspect.analysis.job.second_opinion import compared_rows, verdict_counts

        e = Expectation("record", 0, {"op": "every weight as MindSpore's record says"}, None, None, "mindspore")
        compared = compared_rows(self.analysis(e))
        if compared is None:  # no file read is beside a record: no row compared
            return Outcome(e, True, "each weight as MindSpore's record in its rank folder says",
                           "0 weight(s) of the ranks with a record: none")
        # a difference, and what msinspect cannot tell (the record states it) or the record lacks,
        # fail: "cannot tell" is never a pass
        unlike = compared[compared["record"] != "same"]
        evidence = [Evidence(row["rank"], row["file"], row["line"], f"{row['param']}: {row['record']}: {row['record_says']}")
                    for row in unlike.head(MAX_EVIDENCE).to_dict("records")]
        return Outcome(e, unlike.empty, "each weight as MindSpore's record in its rank folder says",
                       f"{len(compared)} weight(s) of the ranks with a record: {verdict_counts(compared)}", evidence)

    def _job_ranks(self) -> Outcome:
        have = sorted(r.rank for r in self.dump.ranks if r.rank is not None)
        want = list(range(self.spec.ranks))
        e = Expectation("job", 0, {"op": "ranks"}, None, None, None)
        return Outcome(e, have == want, ranks_text(want, word=True),
                       ranks_text(have, word=True) if have else "no rank_N folders")


def check(spec: str | os.PathLike | Spec, dump: str | os.PathLike | Dump, *, jobs: int | None = None,
          lenient: bool = False, scheduler: str | None = None, analyses: dict | None = None,
          world: int | None = None) -> CheckReport:
    """Check ``dump`` (a dump root, rank folder or file) against ``spec`` (a TOML path or Spec).
    ``lenient``: check what can be read of files that do not parse whole (see ``analyse``);
    ``scheduler``: analyse on that Dask cluster (:mod:`msinspect.executors`).
    ``analyses``: stage (None: the default) -> the analysis of ``dump`` already made at it, in
    the same mode (not made again). ``world``: the job's rank count, for a dump of some ranks
    (as :func:`~msinspect.analysis.analyse` takes it)."""
    spec = spec if isinstance(spec, Spec) else load_spec(spec)
    dump = dump if isinstance(dump, Dump) else load_dump(dump)
    return Checker(spec, dump, jobs, lenient, scheduler, analyses, world).run()
