"""Train, then check, then sum up: what ``msinspect train`` does, for a notebook or a script too.

Each mode's job runs (:func:`~msinspect.train.launcher.run_job`), its dumps are checked against
its expectation spec (:func:`msinspect.check.check`) when it ran, and :class:`Trained` holds
both, with the row of the final table. The CLI only shows progress and prints.

    from msinspect.train.workflow import train_and_check
    for t in train_and_check("all", out_root="runs"):
        print(t.row())
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from msinspect.errors import MsInspectError
from msinspect.train.jobs import JOBS
from msinspect.train.launcher import JobResult, TrainError, run_job

#: The order ``all`` runs the modes in: the real run first, then the two dry runs.
ALL_MODES = ("manual_parallel", "sharding_propagation", "recursive_pipeline")

#: The columns of :meth:`Trained.row`, in order.
COLUMNS = ("mode", "ranks", "run", "loss first -> last", "wall", "expectations")


def modes_of(mode: str) -> tuple[str, ...]:
    """The modes ``mode`` names: itself, or every one for ``all``."""
    if mode == "all":
        return ALL_MODES
    if mode not in JOBS:
        raise TrainError(f"unknown mode {mode!r}; choose from {', '.join(JOBS)} or all")
    return (mode,)


@dataclass
class Trained:
    """One mode's run and the check of its dumps."""

    mode: str
    result: JobResult
    spec: Path
    """The spec its dumps are (or would have been) checked against."""
    checked: bool
    """Whether a check was asked for."""
    report: object | None = None
    """The :class:`~msinspect.check.CheckReport`, when the check ran."""
    check_error: MsInspectError | None = None
    """Why the check could not be made (an unreadable dump ...): a failed check."""

    @property
    def ok(self) -> bool:
        """The run succeeded and, where checked, every expectation passed."""
        if not self.result.ok or self.check_error is not None:
            return False
        return self.report is None or self.report.ok

    @property
    def expectations(self) -> str:
        """The expectations cell: how the check went, in words."""
        if not self.checked:
            return "not checked"
        if not self.result.ok:
            return "not checked (run failed)"
        if self.check_error is not None:
            return "check failed (see above)"
        return f"{len(self.report.passed)} passed, {len(self.report.failed)} failed"

    def row(self) -> dict[str, str]:
        """The mode's row of the final table (:data:`COLUMNS`)."""
        r = self.result
        if not r.real:
            loss = "n/a (nothing computed)"
        elif r.loss_first is not None:
            loss = f"{r.loss_first:.4f} -> {r.loss_last:.4f}"
        else:
            loss = "-"
        return dict(zip(COLUMNS, (self.mode, str(r.ranks), "real" if r.real else "dry run", loss,
                                  f"{r.wall_seconds:.0f} s", self.expectations)))

    def to_dict(self) -> dict:
        """The mode's run and check in the output schema (:mod:`msinspect.schema`): a dry run's
        losses are null (nothing was computed), never 0; ``check`` is the check's report
        (``msinspect check --json``), null when none was made (``checked``: whether one was asked
        for; ``check_error``: why it could not be made)."""
        r = self.result
        return {"mode": self.mode, "ok": self.ok, "run": "real" if r.real else "dry_run", "rank_size": r.ranks,
                "device": r.device, "message": r.message, "run_dir": r.run_dir, "wall_seconds": r.wall_seconds,
                "loss_first": r.loss_first, "loss_last": r.loss_last, "losses_identical": r.identical_across_ranks,
                "spec": self.spec, "checked": self.checked,
                "check": self.report.to_dict() if self.report is not None else None,
                "check_error": str(self.check_error) if self.check_error is not None else None}


def check_run(mode: str, result: JobResult, *, spec: Path | str | None = None, check: bool = True) -> Trained:
    """Check a run's dumps against ``spec`` (default: the job's own), when it ran and ``check``."""
    spec = Path(spec) if spec is not None else JOBS[mode].spec
    trained = Trained(mode, result, spec, check)
    if check and result.ok:
        from msinspect.check import check as check_dump

        try:
            trained.report = check_dump(spec, result.run_dir)
        except MsInspectError as exc:  # an unreadable dump is a failed check, said plainly
            trained.check_error = exc
    return trained


def validate(mode: str, spec: Path | str | None) -> tuple[str, ...]:
    """The modes to run; a spec given for them is read first, so a bad one fails before any
    process starts (:class:`~msinspect.spec.SpecError`)."""
    modes = modes_of(mode)
    if spec is not None:
        if len(modes) != 1:
            raise TrainError("a spec of its own needs one mode, not 'all'")
        from msinspect.spec import load_spec

        load_spec(spec)
    return modes


def train_and_check(mode: str = "all", *, spec: Path | str | None = None, check: bool = True,
                    progress: Callable[[str], Callable | None] | None = None, **job) -> Iterator[Trained]:
    """Run ``mode`` (or ``all``), check each run, and yield each :class:`Trained` as it ends.
    ``job`` goes to :func:`~msinspect.train.launcher.run_job` (``ranks``, ``epochs``,
    ``out_root``, ``timeout`` ...); ``progress(mode)`` may give each run's progress callback."""
    for m in validate(mode, spec):
        result = run_job(m, on_progress=progress(m) if progress else None, **job)
        yield check_run(m, result, spec=spec, check=check)
