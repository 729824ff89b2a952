"""``msinspect report DUMP``: one self-contained HTML page of what the planner did."""
from __future__ import annotations

import sys

import click

from msinspect.cli.output import (EXIT_FINDING, errors, jobs_option, lenient_option, scheduler_option,
                                  stage_option, warn_skipped, world_option)
from msinspect.cli.reads import tell_plan


@click.command(epilog="Exit status: 0 report written; 1 written, and an expectation of --spec failed or a rank "
                      "could not be read; 2 bad input (no such path, no IR files, bad spec, output exists).")
@click.argument("dump", type=click.Path())
@click.option("-o", "--output", "out", type=click.Path(), default=None,
              help="The HTML file (default: report-<dump folder>.html in the current folder, or -2, -3 ... "
                   "after it: never an existing file).")
@click.option("--spec", type=click.Path(), default=None, help="Check this TOML expectation spec and show every "
                                                              "expectation, pass or fail, with its evidence.")
@click.option("--op", "ops", metavar="SELECTOR", multiple=True,
              help="Draw the graph around this operator (repeatable; as render --op: an instance name, "
                   "scope/name or a scope). Default: the operators --spec names and, per kind of "
                   "communication, the one with the most wire bytes.")
@click.option("--rank", type=int, default=None,
              help="Draw the pictures from this rank's file (default: each from the first rank whose file has "
                   "the operator; the busiest collective of a kind from the rank where it sends the most).")
@click.option("--overwrite", is_flag=True, help="Replace the -o file if it exists.")
@click.option("--compare", "other", type=click.Path(), default=None, metavar="RUN",
              help="Also compare DUMP with another run of the same model (another parallel configuration "
                   "or MindSpore release) at --rank (default: the lowest rank both hold), as msinspect compare does.")
@click.option("--device-memory", "device_memory", default=None, metavar="SIZE",
              help="A device's memory (32GiB, 80GB): the cost section says whether each rank's static memory "
                   "plus its activation estimate fits.")
@stage_option
@jobs_option
@scheduler_option
@lenient_option
@world_option
def report(dump, out, spec, ops, rank, overwrite, other, device_memory, stage, jobs, scheduler, lenient, world):
    """Write one HTML file (CSS, JavaScript and pictures inline; it fetches nothing) that shows DUMP:
    the run and the ranks read, a sortable, filterable table of strategies with repeats collapsed,
    communication per kind and per group with a bar chart of bytes, each weight's device grid, the
    graph around chosen operators (--op), why one rank's strategies and collectives are what they are,
    with --compare what changed against another run, and, with --spec, every expectation with its
    evidence. Open it in any browser."""
    from msinspect.analysis import analyse
    from msinspect.dumps import load_dump
    from msinspect.errors import MsInspectError
    from msinspect.report.files import check_writable, free_name, write_new
    from msinspect.report.html import default_output, report_html

    from msinspect.analysis.rank.activations import parse_size

    try:
        device_bytes = parse_size(device_memory) if device_memory is not None else None
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--device-memory")
    with errors():
        path = check_writable(out, overwrite=overwrite) if out else free_name(default_output(dump), ".html")
        loaded_spec = None
        if spec:
            from msinspect.spec import load_spec
            loaded_spec = load_spec(spec)  # a bad spec stops before any dump is read
        loaded = load_dump(dump)
        analysis = analyse(loaded, stage, jobs=jobs, lenient=lenient, scheduler=scheduler, world=world)
        read = sorted({r.rank for r in analysis.results if r.rank is not None})
        if rank is not None and rank not in read:
            raise MsInspectError(f"--rank {rank}: no such rank was read in {dump} (ranks read: "
                                 f"{', '.join(map(str, read)) or 'none'})")
        outcome = None
        if loaded_spec is not None:
            from msinspect.check import check
            outcome = check(loaded_spec, loaded, jobs=jobs, lenient=lenient, scheduler=scheduler,
                            analyses={stage: analysis}, world=world)
        compared = None
        if other is not None:
            from msinspect.analysis.compare.runs import compare_runs
            compared = compare_runs(dump, other, rank, stage, lenient=lenient, jobs=jobs)
        warn_skipped(analysis.skipped)
        if analysis.plan is not None:
            tell_plan(analysis.plan)
        written = write_new(path, report_html(analysis, outcome, ops=ops, lenient=lenient, rank=rank,
                                              compared=compared, device_memory=device_bytes), overwrite=overwrite)
    size = written.stat().st_size
    click.echo(f"wrote {written} ({size / 1024:,.0f} KiB); open it in a browser: file://{written.resolve()}")
    if outcome is not None:
        click.echo(f"{len(outcome.passed)} expectation(s) passed, {len(outcome.failed)} failed")
        if not outcome.ok:
            sys.exit(EXIT_FINDING)
