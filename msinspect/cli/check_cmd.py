"""``msinspect check SPEC DUMP``: every expectation of a spec, pass or fail, with evidence."""
from __future__ import annotations

import sys

import click

from msinspect.cli.output import (EXIT_FINDING, csv_option, errors, jobs_option, json_option, lenient_option,
                                  scheduler_option, stdout, to_csv, to_json, warn_skipped, world_option)
from msinspect.cli.reads import tell_plan

#: ``check --csv``: one row per expectation (evidence as JSON text).
CSV_COLUMNS = ["entry", "kind", "target", "basis", "stage", "passed", "expected", "found", "evidence"]


@click.command()
@click.argument("spec", type=click.Path())
@click.argument("dump", type=click.Path())
@json_option
@csv_option
@click.option("--failed-only", is_flag=True, help="Print only the expectations that failed.")
@jobs_option
@scheduler_option
@lenient_option
@world_option
def check(spec, dump, as_json, as_csv, failed_only, jobs, scheduler, lenient, world):
    """Check DUMP (a dump root, rank folder or file) against the TOML expectation SPEC.

    Prints every expectation as PASS or FAIL with what was expected, what was found, and the IR
    line (file:line) that shows it. Exits 1 when any expectation fails, 2 when the spec or the
    dump cannot be read. The spec format is described in msinspect/spec.py and the specs of
    train_jobs/*.toml are examples. --json: the whole report; --csv: one row per expectation.
    """
    from msinspect.check import check as run_check

    with errors():
        report = run_check(spec, dump, jobs=jobs, lenient=lenient, scheduler=scheduler, world=world)
    warn_skipped(report.skipped)
    for plan in report.reads.values():
        tell_plan(plan)
    data = report.to_dict()
    if failed_only:
        data["outcomes"] = [o for o in data["outcomes"] if not o["passed"]]
    if as_json:
        click.echo(to_json(data))
    elif as_csv:
        click.echo(to_csv(data["outcomes"], columns=CSV_COLUMNS), nl=False)
    else:
        console = stdout()
        for line in report.format(only_failed=failed_only).splitlines():
            style = "bold green" if line.startswith("PASS") else "bold red" if line.startswith("FAIL") else None
            console.print(line, style=style)
    sys.exit(0 if report.ok else EXIT_FINDING)
