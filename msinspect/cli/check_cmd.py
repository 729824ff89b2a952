"""``msinspect check SPEC DUMP``: every expectation of a spec, pass or fail, with evidence."""
from __future__ import annotations

import json
import sys

import click

from msinspect.cli.output import (EXIT_FINDING, errors, jobs_option, json_option, lenient_option,
                                  scheduler_option, stdout, warn_skipped)
from msinspect.cli.reads import tell_plan


@click.command()
@click.argument("spec", type=click.Path())
@click.argument("dump", type=click.Path())
@json_option
@click.option("--failed-only", is_flag=True, help="Print only the expectations that failed.")
@jobs_option
@scheduler_option
@lenient_option
def check(spec, dump, as_json, failed_only, jobs, scheduler, lenient):
    """Check DUMP (a dump root, rank folder or file) against the TOML expectation SPEC.

    Prints every expectation as PASS or FAIL with what was expected, what was found, and the IR
    line (file:line) that shows it. Exits 1 when any expectation fails, 2 when the spec or the
    dump cannot be read. The spec format is described in msinspect/spec.py and the specs of
    train_jobs/*.toml are examples.
    """
    from msinspect.check import check as run_check

    with errors():
        report = run_check(spec, dump, jobs=jobs, lenient=lenient, scheduler=scheduler)
    warn_skipped(report.skipped)
    for plan in report.reads.values():
        tell_plan(plan)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        console = stdout()
        for line in report.format(only_failed=failed_only).splitlines():
            style = "bold green" if line.startswith("PASS") else "bold red" if line.startswith("FAIL") else None
            console.print(line, style=style, markup=False, soft_wrap=True)
    sys.exit(0 if report.ok else EXIT_FINDING)
