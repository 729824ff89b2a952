"""``msinspect diff A B``: what differs between two ranks."""
from __future__ import annotations

import json
import sys

import click

from msinspect.cli.output import errors, json_option, lenient_option, plain, stage_option, stdout, warn_skipped
from msinspect.cli.reads import tell_pair


@click.command()
@click.argument("a", type=click.Path())
@click.argument("b", type=click.Path())
@stage_option
@json_option
@click.option("--exit-code", is_flag=True, help="Exit 1 when the ranks differ (like diff(1)).")
@lenient_option
def diff(a, b, stage, as_json, exit_code, lenient):
    """Compare two ranks (two rank_N folders, or two files): pipeline stage, operators present in
    one only, shape and strategy differences, communication groups and parameter slices.

    Operators are aligned by instance name, op type, scope and direction; repeated ones (one per
    micro-batch) by their order in the file. Given two rank folders of one dump root, the whole
    root is read to learn the pipeline stages and each rank's place in the device grid.
    """
    from msinspect.analysis.diff import diff_ranks

    with errors():
        result = diff_ranks(a, b, stage, lenient=lenient)
    warn_skipped(result.skipped)
    stages = tell_pair(result.a, result.a_file, result.b, result.b_file)
    if as_json:
        click.echo(json.dumps({**result.to_dict(), **stages}, indent=2, default=plain))
    else:
        console = stdout()
        console.print(result.format(), markup=False, soft_wrap=True)
    sys.exit(1 if exit_code and not result.identical else 0)
