"""``msinspect scrub SRC DEST``: copy dumps with neutral paths, for sharing."""
from __future__ import annotations

import click

from msinspect.cli.exits import errors
from msinspect.scrub import scrub_tree


@click.command()
@click.argument("src", type=click.Path())
@click.argument("dest", type=click.Path())
@click.option("--stage", "stages", multiple=True, help="Keep only this stage (repeatable).")
@click.option("--gzip", "compress", is_flag=True, help="Write .ir.gz files.")
def scrub(src, dest, stages, compress):
    """Copy the IR files under SRC into the new folder DEST with every absolute path made
    neutral: <site-packages>/..., <python>/..., <src>/NAME (the file name only).

    SRC is never modified; DEST must not exist and must not lie inside SRC. Files are written into
    a temporary folder beside DEST, renamed to DEST only when every file is done: a corrupt .gz or
    a file that is not UTF-8 text is named and leaves nothing behind. Links inside SRC are
    refused, never followed."""
    with errors():
        written = scrub_tree(src, dest, stages=tuple(stages), compress=compress)
    click.echo(f"wrote {len(written)} scrubbed file(s) under {dest}")
