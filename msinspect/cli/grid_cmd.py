"""``msinspect render DUMP --param NAME``: the device grid of one weight (SVG or PNG); reached
through ``render`` (:mod:`msinspect.cli.render_cmd`)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from msinspect.cli.exits import EXIT_FINDING
from msinspect.cli.output import errors, warn_skipped
from msinspect.cli.reads import tell_plan
from msinspect.errors import MsInspectError

GRID_FORMATS = ("svg", "png")


def draw_param(dump: str, param: str, rank: int | None, stage: str | None, out: str | None,
               fmt: str | None, overwrite: bool, lenient: bool) -> None:
    """Write the device grid(s) of ``param`` and say where; exit 1 when its layout cannot be told."""
    from msinspect.analysis import analyse
    from msinspect.analysis.job.op_rows import check_ranks, not_on_ranks
    from msinspect.dumps import load_dump
    from msinspect.report.files import check_writable, write_new
    from msinspect.report.grid import grids_of
    from msinspect.report.grid_svg import grid_svg, svg_to_png

    with errors():
        fmt = fmt or (Path(out).suffix.lstrip(".").lower() if out else "svg")
        if fmt not in GRID_FORMATS:
            raise MsInspectError(f"a device grid is drawn as {' or '.join(GRID_FORMATS)}, not {fmt!r}")
        base = Path(out) if out else Path(f"{re.sub(r'[^A-Za-z0-9_.-]', '_', param)}-grid.{fmt}")
        check_writable(base, overwrite=overwrite)  # refused before any dump is read
        loaded = load_dump(dump)
        if rank is not None:  # a rank the dump does not have: said before anything is read
            check_ranks([rank], [r.rank for r in loaded.ranks if r.rank is not None])
        analysis = analyse(loaded, stage, lenient=lenient)
        warn_skipped(analysis.skipped)
        if analysis.plan is not None:
            tell_plan(analysis.plan)
        try:
            grids = grids_of(analysis, param)  # no such weight: NoMatchError, exit 2
        except ValueError as error:
            click.echo(f"cannot tell: {error}", err=True)
            sys.exit(EXIT_FINDING)
        if rank is not None and not any(rank in g.ranks for g in grids):
            raise not_on_ranks(param, [rank], [r for g in grids for r in g.ranks])
        paths = [base if i == 0 else base.with_name(f"{base.stem}-{i + 1}{base.suffix}") for i in range(len(grids))]
        for path in paths:  # refuse before writing anything
            check_writable(path, overwrite=overwrite)
        for grid, path in zip(grids, paths):
            svg = grid_svg(grid, highlight=rank)
            write_new(path, svg if fmt == "svg" else svg_to_png(svg), overwrite=overwrite)
            click.echo(f"wrote {path}")
            if rank is not None and rank in grid.ranks:
                click.echo(f"rank {rank} holds {grid.cell(rank).slice_text} of {param} {list(grid.shape)}")
