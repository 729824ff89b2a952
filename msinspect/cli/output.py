"""What the analysis subcommands share: loading a dump with progress, printing rows (a DataFrame or
dicts) as a rich table, JSON or CSV (:mod:`msinspect.schema`), and the one console factory.

Every console the CLI prints with comes from :func:`console`: Rich markup, emoji codes and
highlighting are off, so no text read from an IR file, a spec or a path is ever read as markup
(``[const vector]``, ``[/x]``) or an emoji (``:100:`` in ``path:100:5``); styles are given as
``style=`` or :class:`rich.text.Text` spans, never as markup tags in a string. One width rule:
a terminal's own width, else at least :data:`PIPE_WIDTH` columns.

Rich loads where something is printed for a person, pandas where a table is made: ``summary
--json`` answered from the cache loads neither (they were most of what such a run cost)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Sequence

import click

from msinspect.cli.exits import EXIT_FINDING, EXIT_USAGE, errors  # noqa: F401 (the one table lives there)
from msinspect.cli.reads import tell_alike, tell_plan
from msinspect.dumps import load_dump
from msinspect.schema import (is_missing, json_pieces, jsonl_lines, plain, records,  # noqa: F401 (plain: the one JSON converter)
                              to_csv, to_json)

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console
    from rich.text import Text

#: Columns of output that is not a terminal (a pipe, a file, a test).
PIPE_WIDTH = 160


def console(*, stderr: bool = False) -> Console:
    """The one console factory: no markup, no emoji codes, no highlighting; stderr soft-wraps
    (paths and messages stay on one line); a pipe gets at least :data:`PIPE_WIDTH` columns."""
    from rich.console import Console

    made = Console(stderr=stderr, markup=False, emoji=False, highlight=False, soft_wrap=stderr)
    if not made.is_terminal:
        made.width = max(made.width, PIPE_WIDTH)
    return made


def stderr() -> Console:
    return console(stderr=True)


def stdout() -> Console:
    return console()


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text from plain parts and ``(text, style)`` pairs: the text is never read as markup."""
    from rich.text import Text

    return Text.assemble(*parts)


def analysed(path: str, stage: str | None, jobs: int | None, quiet: bool = False,
             lenient: bool = False, world: int | None = None, scheduler: str | None = None,
             ranks: Iterable[int] = ()):
    """Load the dump at ``path`` and analyse one file per rank (:func:`msinspect.analysis.analyse`),
    with a progress bar when there are several ranks and the output is not for a script; then say
    on stderr which ranks were read at which stage, and which could not be read and why; the
    :class:`~msinspect.analysis.job.collect.Analysis` (its dump: ``.dump``). ``lenient``: read past
    what does not parse, and warn on stderr with every skipped span. ``scheduler``: run on that
    Dask cluster. ``ranks`` (``--rank``): each must be a rank of the dump, else
    :class:`~msinspect.errors.NoMatchError` (``no rank 9 (ranks: 0-7)``) before anything is read."""
    from msinspect.analysis import analyse  # loads pandas: only once a command analyses

    dump = load_dump(path)
    if ranks:
        from msinspect.analysis.job.op_rows import check_ranks

        check_ranks(ranks, [r.rank for r in dump.ranks if r.rank is not None]
                    + [u.rank for u in dump.unreadable if u.rank is not None])
    if quiet or len(dump.ranks) < 2:
        analysis = analyse(dump, stage, jobs=jobs, lenient=lenient, world=world, scheduler=scheduler)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("analysing {task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=stderr(), transient=True) as progress:
            task = progress.add_task(str(path), total=len(dump.ranks))
            analysis = analyse(dump, stage, jobs=jobs, lenient=lenient, world=world, scheduler=scheduler,
                               progress=lambda _label: progress.advance(task))
    warn_skipped(analysis.skipped)
    tell_plan(analysis.plan)
    tell_alike(analysis.results)
    return analysis


def warn_skipped(skipped: list[str]) -> None:
    """Under ``--lenient``: say on stderr that results are partial, and list every skipped span."""
    if not skipped:
        return
    err = stderr()
    err.print(styled(("warning:", "bold yellow"), f" read with --lenient; {len(skipped)} span(s) skipped or "
                     "unreadable, rows from those files carry complete=false:"))
    for line in skipped:
        err.print(f"  {line}")


def lenient_option(f):
    return click.option("--lenient", is_flag=True,
                        help="Read past IR that does not parse: analyse what was read, warn with every "
                             "skipped span, mark rows from incomplete files complete=false.")(f)


@dataclass(frozen=True)
class View:
    """How a person asked to see a table: ``--wide`` (every column at its full width) or
    ``--columns a,b`` (those, in that order); by default the columns that fit the terminal."""

    wide: bool = False
    columns: tuple[str, ...] = ()

    @property
    def every(self) -> bool:
        return self.wide or bool(self.columns)


def view_of(wide: bool, columns: str | None) -> View:
    """The :class:`View` of ``--wide`` and ``--columns``."""
    return View(wide, tuple(c.strip() for c in (columns or "").split(",") if c.strip()))


def _title(title: str, count: int, layout) -> str:
    rows = f"{count} row{'s' if count != 1 else ''}"
    if layout.merged:
        rows += f", {len(layout.rows)} shown: ranks that agree are one row"
    if layout.folded:
        rows += f", and rows that differ only in {', '.join(layout.folded)}"
    return f"{title} ({rows})" if title else f"({rows})"


def write(pieces: Iterable[str], flush_bytes: int = 1 << 16, flush_s: float = 0.1) -> None:
    """Write text pieces to stdout as they are made, flushed each ``flush_bytes`` or, for pieces
    slow to come, each ``flush_s`` seconds: a long output is never held whole, and a reader sees
    the rows as they come."""
    import time

    batch: list[str] = []
    size, since = 0, time.monotonic()
    for piece in pieces:
        batch.append(piece)
        size += len(piece)
        if size >= flush_bytes or time.monotonic() - since >= flush_s:
            click.echo("".join(batch), nl=False)
            batch, size, since = [], 0, time.monotonic()
    if batch:
        click.echo("".join(batch), nl=False)


def emit(rows: pd.DataFrame | list[dict], *, as_json: bool, as_csv: bool, title: str,
         columns: Sequence[str] | None = None, styles: dict[str, str] | None = None,
         shown: pd.DataFrame | list[dict] | None = None, priority: Sequence[str] | None = None,
         merge: bool = False, view: View = View(), as_jsonl: bool = False, fold: Sequence[str] = ()) -> None:
    """Print ``rows`` (a DataFrame, or dicts that each hold every column, at least one; with
    ``as_json`` / ``as_jsonl``, any iterable of them, written as they come): every column
    as JSON, JSON Lines or CSV (:mod:`msinspect.schema`), or a rich table of ``columns`` (of
    ``shown``, the same rows made for a person, when given) laid out for the terminal
    (:func:`~msinspect.cli.display.lay_out`): the columns that fit, taken in ``priority`` order,
    the rest named under it; ``merge``: rows equal but for the rank as one row, and past
    :data:`~msinspect.cli.display.FOLD_ROWS` rows, equal but for the columns of ``fold`` too
    (those each rank holds its own value of); ``view``: ``--wide`` / ``--columns``."""
    if as_jsonl:
        write(jsonl_lines(rows))
        return
    if as_json:
        write(json_pieces(rows))
        click.echo()
        return
    if as_csv:
        click.echo(to_csv(rows), nl=False)
        return
    from rich.table import Table

    from msinspect.analysis.job.op_rows import close_names, listing, no_match
    from msinspect.cli.display import header_text, lay_out

    rows = rows if shown is None else shown
    items = rows if isinstance(rows, list) else rows.to_dict("records")
    present = (list(items[0]) if items else []) if isinstance(rows, list) else list(rows.columns)
    for column in view.columns:
        if column not in present:
            raise no_match(f"no column {column!r}", "columns", listing(present, limit=len(present)),
                           close_names(column, present))
    wanted = [c for c in (view.columns or columns or present) if c in present]
    out = stdout()
    layout = lay_out(items, wanted, width=out.width, priority=None if view.columns else priority,
                     merge=merge, every=view.every, fold=fold)
    if layout.width > out.width:  # --wide, --columns: every column whole, lines longer than the terminal
        out.width = layout.width
    table = Table(title=_title(title, len(items), layout))
    for column, width in zip(layout.columns, layout.widths):
        table.add_column(header_text(column, width), width=width, overflow="fold", style=(styles or {}).get(column))
    for line in layout.rows:
        table.add_row(*line)
    out.print(table)
    if layout.left_out:
        out.print(f"left out to fit {out.width} columns: {', '.join(layout.left_out)} (--wide shows every column, "
                  "--columns A,B,... those named; --json / --csv every field)", style="dim")


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print every column as JSON.")(f)


def jsonl_option(f):
    return click.option("--jsonl", "as_jsonl", is_flag=True,
                        help="Print every column as JSON Lines: one JSON object per row, each on its own line, "
                             "written as the rows are made.")(f)


def one_format(as_json: bool, as_csv: bool, as_jsonl: bool) -> None:
    """``--json``, ``--csv`` and ``--jsonl`` are one choice: two of them is a usage error (exit 2)."""
    given = [flag for flag, on in (("--json", as_json), ("--csv", as_csv), ("--jsonl", as_jsonl)) if on]
    if len(given) > 1:
        raise click.UsageError(f"{' and '.join(given)}: give one output format")


def csv_option(f):
    return click.option("--csv", "as_csv", is_flag=True,
                        help="Print every column as CSV (lists as JSON text, empty cell: missing).")(f)


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


def scheduler_option(f):
    return click.option("--scheduler", envvar="MSINSPECT_SCHEDULER", show_envvar=True, default=None,
                        metavar="tcp://HOST:PORT",
                        help="Run each rank's parse and analysis on this Dask scheduler's workers, which must "
                             "see the dump at the same path (needs msinspect[cluster]); --jobs is then not used.")(f)


def wide_option(f):
    return click.option("--wide", is_flag=True,
                        help="Every column, each whole (lines may be longer than the terminal: page with "
                             "less -S); by default the columns that fit, the rest named under the table.")(f)


def columns_option(f):
    return click.option("--columns", metavar="A,B,...", default=None,
                        help="Only these columns, in this order (any field of --json).")(f)


def table_options(f):
    """What every command that analyses the ranks of a dump and prints a table takes: ``--json``,
    ``--jsonl``, ``--csv``, ``--wide``, ``--columns``, ``--jobs``, ``--scheduler``, ``--lenient``,
    ``--world``."""
    for option in (world_option, lenient_option, scheduler_option, jobs_option, columns_option, wide_option,
                   csv_option, jsonl_option, json_option):
        f = option(f)
    return f


def rank_option(f):
    return click.option("--rank", "ranks", type=int, multiple=True, help="Only this rank (repeatable).")(f)


def only_ranks(frame: pd.DataFrame, ranks: tuple[int, ...]) -> pd.DataFrame:
    return frame[frame["rank"].isin(ranks)] if ranks and not frame.empty else frame
