"""What the analysis subcommands share: loading a dump with progress, printing a DataFrame as a rich
table, JSON or CSV, and turning msinspect's errors into messages and exit codes."""
from __future__ import annotations

import json
import sys

import click
import pandas as pd
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from msinspect.cli.exits import EXIT_FINDING, EXIT_USAGE, errors  # noqa: F401 (the one table lives there)
from msinspect.cli.reads import tell_plan
from msinspect.dumps import load_dump


def stderr() -> Console:
    return Console(stderr=True, soft_wrap=True, highlight=False)


def stdout() -> Console:
    console = Console(highlight=False)
    if not console.is_terminal:
        console.width = max(console.width, 160)
    return console


def analysed(path: str, stage: str | None, jobs: int | None, quiet: bool = False,
             lenient: bool = False, world: int | None = None):
    """Load the dump at ``path`` and analyse one file per rank (:func:`msinspect.analysis.analyse`),
    with a progress bar when there are several ranks and the output is not for a script; then say
    on stderr which ranks were read at which stage, and which could not be read and why; the
    :class:`~msinspect.analysis.collect.Analysis` (its dump: ``.dump``). ``lenient``: read past
    what does not parse, and warn on stderr with every skipped span."""
    dump = load_dump(path)
    if quiet or len(dump.ranks) < 2:
        analysis = dump.analyse(stage, jobs=jobs, lenient=lenient, world=world)
    else:
        with Progress(TextColumn("analysing {task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=stderr(), transient=True) as progress:
            task = progress.add_task(str(path), total=len(dump.ranks))
            analysis = dump.analyse(stage, jobs=jobs, lenient=lenient, world=world,
                                    progress=lambda _label: progress.advance(task))
    warn_skipped(analysis.skipped)
    tell_plan(analysis.plan)
    return analysis


def warn_skipped(skipped: list[str]) -> None:
    """Under ``--lenient``: say on stderr that results are partial, and list every skipped span."""
    if not skipped:
        return
    console = stderr()
    console.print(f"[bold yellow]warning:[/] read with --lenient; {len(skipped)} span(s) skipped or unreadable, "
                  "rows from those files carry complete=false:", soft_wrap=True)
    for line in skipped:
        console.print(f"  {line}", markup=False, soft_wrap=True)


def lenient_option(f):
    return click.option("--lenient", is_flag=True,
                        help="Read past IR that does not parse: analyse what was read, warn with every "
                             "skipped span, mark rows from incomplete files complete=false.")(f)


def cell(value) -> str:
    """A table cell: ``-`` for nothing, tuples as written in the IR."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, tuple) and value and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def plain(value):
    """A JSON-ready value (NaN -> None, numpy scalars -> Python)."""
    if isinstance(value, float) and pd.isna(value):
        return None
    if hasattr(value, "item") and not isinstance(value, (tuple, list)):
        return value.item()
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    return value


def records(frame: pd.DataFrame) -> list[dict]:
    return [{k: plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def emit(frame: pd.DataFrame, *, as_json: bool, as_csv: bool, title: str, columns: list[str] | None = None,
         styles: dict[str, str] | None = None) -> None:
    """Print ``frame``: every column as JSON or CSV, or ``columns`` as a rich table."""
    if as_json:
        click.echo(json.dumps(records(frame), indent=2))
        return
    if as_csv:
        frame.to_csv(sys.stdout, index=False)
        return
    console = stdout()
    shown = [c for c in (columns or list(frame.columns)) if c in frame.columns]
    table = Table(title=f"{title} ({len(frame)} row{'s' if len(frame) != 1 else ''})")
    for column in shown:
        table.add_column(column, overflow="fold", style=(styles or {}).get(column))
    for row in frame[shown].itertuples(index=False):
        table.add_row(*(cell(v) for v in row))
    console.print(table)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print every column as JSON.")(f)


def csv_option(f):
    return click.option("--csv", "as_csv", is_flag=True, help="Print every column as CSV.")(f)


def stage_option(f):
    return click.option("--stage", default=None,
                        help="Stage file to read per rank (default: validate, else step_parallel_end, "
                             "execute, step_parallel_begin).")(f)


def world_option(f):
    return click.option("--world", type=click.IntRange(min=1), default=None,
                        help="The job's rank count, when the dump holds some ranks only (default: the run "
                             "record, the rank folders, or what the IR states).")(f)


def jobs_option(f):
    return click.option("--jobs", type=click.IntRange(min=1), default=None, help="Processes (default: every core).")(f)


def rank_option(f):
    return click.option("--rank", "ranks", type=int, multiple=True, help="Only this rank (repeatable).")(f)


def only_ranks(frame: pd.DataFrame, ranks: tuple[int, ...]) -> pd.DataFrame:
    return frame[frame["rank"].isin(ranks)] if ranks and not frame.empty else frame
