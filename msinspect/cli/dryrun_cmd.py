"""``msinspect dryrun``: compile-only dry run of a MindSpore script as N simulated ranks."""
from __future__ import annotations

import sys

import click

from msinspect.cli.choice import Choice
from msinspect.cli.exits import launcher_errors
from msinspect.cli.output import console as make_console, styled, to_json


@click.command("dryrun", context_settings={"ignore_unknown_options": False})
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--ranks", "-n", type=click.IntRange(min=1), required=True, help="Number of simulated ranks.")
@click.option("--only", default=None, help="Run only these ranks, e.g. 0,4 or 0-3.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=2, show_default=True,
              help="Ranks compiled at the same time (about 0.7 GB of memory each for small nets).")
@click.option("--out", "out_root", default="runs", show_default=True,
              help="Folder under which a new run folder dryrun-<script>-<time>/ is created.")
@click.option("--keep-all-passes", is_flag=True, help="Keep every IR pass MindSpore writes (about 90 files a rank), not only those the analyses read "
                   "(the parallel stages and validate).")
@click.option("--timeout", type=click.FloatRange(min=1), default=600, show_default=True,
              help="Seconds allowed per rank.")
@click.option("--keep-going", is_flag=True,
              help="Compile every rank even after two failed alike for a reason that does not depend on the rank "
                   "(by default the others are then cancelled).")
@click.option("--force", is_flag=True, help="Dry-run even where a real GPU / Ascend is present.")
@click.option("--python", "python", default=None, metavar="PATH",
              help="Run the script with this interpreter (another environment's, e.g. MindSpore 2.7 - 2.9); "
                   "default: msinspect's own.")
@click.option("--build-device", type=Choice(["cpu", "gpu"]), default="cpu", show_default=True,
              help="Where operations the script runs eagerly while building its network (after init(), before "
                   "the first compile) execute; the dry run's GPU is a stand-in that executes nothing.")
@click.option("--env", "env_items", multiple=True, metavar="NAME=VALUE",
              help="Set an environment variable in every rank's processes (repeatable); recorded in the run's "
                   "config.json, so that `msinspect compare` shows two runs that differ in it.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON instead of a table.")
def dryrun(script, script_args, ranks, only, jobs, out_root, keep_all_passes, timeout, force, python, build_device,
           env_items, keep_going, as_json) -> None:
    """Run SCRIPT as RANKS simulated ranks through MindSpore's real parallel planner, on CPU.

    Nothing is computed: each rank compiles its graph and writes the IR the analyses read
    (step_parallel_begin / step_parallel_end and validate, the first pass with per-rank shapes;
    --keep-all-passes keeps every pass) into a new folder, with the run's settings in its
    config.json; losses printed by MindSpore in this mode are not losses. Arguments after `--`
    go to the script.

    The script must call mindspore.communication.init() and must not set the device target to
    CPU (leave it unset). Run `msinspect setup-dryrun` once first. A rank whose IR is whole but
    that msinspect's parser cannot read yet is listed as "compiled", with the files.
    """
    from rich.table import Table

    from msinspect.dryrun import NOTHING_COMPUTED, DryRunInterrupted, run_dryrun
    from msinspect.dryrun.progress import RankProgress

    console = make_console(stderr=True)

    def interrupted(exc: KeyboardInterrupt) -> None:
        if isinstance(exc, DryRunInterrupted):  # the run had begun: what it did
            _print_summary(console, exc.report, Table, NOTHING_COMPUTED)
        console.print("interrupted: every scheduler and worker process was stopped", style="yellow")

    with launcher_errors(interrupted):
        from msinspect.dryrun.launcher import parse_env_options, select_ranks
        total = len(select_ranks(only, ranks))
        env_options = parse_env_options(env_items)
        with RankProgress(total, console=console) as progress:
            report = run_dryrun(script, ranks, out_root=out_root, only=only, jobs=jobs,
                                script_args=script_args, keep_all_passes=keep_all_passes,
                                timeout=timeout, on_update=progress.update, allow_accelerator=force,
                                python=python, build_device=build_device, env_options=env_options,
                                keep_going=keep_going)
    if as_json:
        click.echo(to_json(report.to_dict()))
    else:
        _print_summary(console, report, Table, NOTHING_COMPUTED)
    sys.exit(0 if report.ok else 1)


def _print_summary(console, report, Table, note) -> None:
    from msinspect.dryrun.report import kept_note

    console.print(note, style="bold")
    table = Table(title=f"{report.script.name}: {len(report.ranks)} of {report.rank_size} ranks")
    for col in ("rank", "result", "wall s", "peak MB", "step_parallel_end / reason"):
        table.add_column(col, overflow="fold")
    # Ranks that failed alike are explained once, below the table (8 ranks, one reason); so are
    # ranks cancelled alike, after them.
    failures = report.failures() + report.cancelled()
    which = {rank: i for i, f in enumerate(failures, 1) for rank in f.ranks}
    for r in report.ranks:
        style = "green" if r.state.value == "ok" else "yellow" if r.ok or r.state.value == "cancelled" else "red"
        written = r.log is not None and r.log.is_file()
        log = styled((f"(log: {r.log.relative_to(report.run_dir)})" if written else "(no log)", "dim"))
        if r.state.value == "ok":
            detail = styled(str(r.step_parallel_end[0].relative_to(report.run_dir)) + (
                f" (+{len(r.step_parallel_end) - 1})" if len(r.step_parallel_end) > 1 else ""))
        elif r.rank in which:
            detail = styled(f"reason {which[r.rank]} below  " if len(failures) > 1 else "reason below  ", log)
        else:
            detail = styled(f"{r.reason}  ", log)
        peak = f"{r.peak_rss_bytes / 2**20:.0f}" if r.peak_rss_bytes else "-"
        table.add_row(str(r.rank), styled((r.state.value, style)), f"{r.wall_seconds:.1f}", peak, detail)
    console.print(table)
    for i, failure in enumerate(failures, 1):
        first, *rest = failure.lines(relative_to=report.run_dir)
        colour = "yellow" if failure.state == "cancelled" else "red"
        console.print(styled(((f"{i}. " if len(failures) > 1 else "") + first, colour)))
        for line in rest:
            console.print(styled(line))
    whole = sum(r.ir_complete for r in report.ranks)  # a rank cancelled after writing it counts
    console.print(f"{whole}/{len(report.ranks)} ranks wrote complete strategy IR in {report.wall_seconds:.1f} s; "
                  f"run folder: {report.run_dir}")
    if report.unreadable:
        console.print(f"{len(report.unreadable)} of them compiled, but msinspect cannot read all of their IR yet "
                      "(result 'compiled': the files and the parser's message are listed)", style="yellow")
    kept = kept_note(report)
    if kept:
        console.print(styled((kept, "dim")))
    if report.record is not None:
        console.print(styled((f"settings: {report.record.name} in the run folder", "dim")))
