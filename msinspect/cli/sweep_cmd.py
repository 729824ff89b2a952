"""``msinspect sweep SCRIPT --ranks N --grid NAME=v1,v2``: the dry run once per setting of a grid,
and a table of what each setting costs or why it does not compile."""
from __future__ import annotations

import sys

from pathlib import Path

import click

from msinspect.cli.exits import launcher_errors
from msinspect.cli.output import console as make_console, to_json
from msinspect.ranks_text import ranks_text


def _size(value) -> str:
    if value is None:
        return "cannot tell"
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value} B"


def _spread(values: list, text) -> str:
    """One value when every rank has it, else the least and the most: ``2.0 MiB - 4.0 MiB``."""
    if not values:
        return "-"
    if any(v is None for v in values):
        return "cannot tell"
    low, high = min(values), max(values)
    return text(low) if low == high else f"{text(low)} - {text(high)}"


def axis_cell(result) -> str:
    """Bytes per step by axis over the ranks that compiled: ``data 16.3 MiB, tensor 13.5 MiB``."""
    if result.bytes_by_axis is None:
        return "cannot tell" if result.cost_why else "-"
    axes = list(dict.fromkeys(a for per in result.bytes_by_axis.values() for a in per))
    if not axes:
        return "none"
    return ", ".join(f"{a} {_spread([per.get(a, 0) for per in result.bytes_by_axis.values()], _size)}"
                     for a in axes)


def memory_cell(result) -> str:
    if result.memory is None:
        return "cannot tell" if result.memory_why else "-"
    return _spread([per.get("total") for per in result.memory.values()], _size)


def activations_cell(result) -> str:
    """The activation estimate per rank (an estimate: :mod:`msinspect.analysis.rank.activations`)."""
    if result.activations is None:
        return "cannot tell" if result.activations_why else "-"
    return _spread(list(result.activations.values()), _size)


def fits_cell(result, device_memory: int) -> str:
    """Whether every rank's static memory plus its activations fits ``device_memory``: ``fits``,
    ``does not fit: ranks 4-7``, ``cannot tell``; a rank that does not fit is said before one that
    cannot be told."""
    from msinspect.analysis.rank.activations import fit_of

    if result.memory is None:
        return "cannot tell"
    verdicts = {rank: fit_of(part.get("total"), (result.activations or {}).get(rank), device_memory)["fits"]
                for rank, part in result.memory.items()}
    short = [r for r, v in verdicts.items() if v.startswith("does not fit") and r is not None]
    if short:
        return f"does not fit: {ranks_text(sorted(short), word=True)}"
    if any(v.startswith("cannot tell") for v in verdicts.values()) or not verdicts:
        return "cannot tell"
    return "fits"


def columns_of(report) -> list[str]:
    """The table's columns: :data:`COLUMNS`, and a fit column where a device memory was stated."""
    if report.device_memory is None:
        return COLUMNS
    return COLUMNS[:-1] + [f"fits {_size(report.device_memory)}", COLUMNS[-1]]


def sweep_rows(report) -> list[dict]:
    """One row per setting, as the table shows it."""
    rows = []
    for s in report.settings:
        compiled = s.status in ("ok", "failed") and bool(s.ranks_ok)
        analysed = compiled and not s.analysis_error
        fit = {} if report.device_memory is None else {
            f"fits {_size(report.device_memory)}": fits_cell(s, report.device_memory) if analysed else "-"}
        rows.append({
            "setting": s.label,
            "result": s.status if s.status != "failed" else ("failed" if not s.ranks_ok else "some failed"),
            "ranks ok": f"{len(s.ranks_ok)}/{len(s.ranks_run)}" if s.ranks_run else "-",
            "collectives": _spread(list(s.collectives.values()), str) if s.collectives else "-",
            "bytes / step by axis": (axis_cell(s) if compiled and not s.analysis_error else "-"),
            "memory / rank": (memory_cell(s) if compiled and not s.analysis_error else "-"),
            "activations / rank": activations_cell(s) if analysed else "-",
            **fit,
            "wall s": f"{s.wall_seconds:.0f}",
        })
    return rows


COLUMNS = ["setting", "result", "ranks ok", "collectives", "bytes / step by axis", "memory / rank",
           "activations / rank", "wall s"]


def _what(report) -> str:
    ran = "all" if report.only is None else f"ranks {report.only} of"
    return (f"sweep of {report.script.name}: {ran} {report.ranks} ranks per setting, setting passed as "
            f"{'environment variables' if report.via == 'env' else 'script arguments'}")


def _notes(report) -> list[str]:
    """Why each setting that did not compile did not, and what could not be told of the others."""
    lines = []
    for s in report.settings:
        if s.failures:
            for f in s.failures:
                lines.append(f"{s.label}: {ranks_text(f['ranks'], word=True)} {f['state']}: {f['reason']}")
        elif s.reason:
            lines.append(f"{s.label}: {s.reason}")
        for what, why in (("bytes", s.cost_why), ("memory", s.memory_why), ("activations", s.activations_why)):
            if why and s.ranks_ok:
                lines.append(f"{s.label}: {what} {why}")
        if s.analysis_error:
            lines.append(f"{s.label}: compiled, but its IR could not be analysed: {s.analysis_error}")
    return lines


def write_page(report) -> Path:
    """``sweep.html`` beside ``sweep.json``: the table and the notes as a page for a browser."""
    from datetime import datetime, timezone

    from msinspect.report.templating import environment

    rows = [{**row, "status": s.status} for row, s in zip(sweep_rows(report), report.settings)]
    page = environment().get_template("sweep.html.j2").render(
        title=f"msinspect sweep: {report.script.name}", what=_what(report), columns=columns_of(report), rows=rows,
        notes=_notes(report), folder=str(report.sweep_dir),
        made=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    path = Path(report.sweep_dir) / "sweep.html"
    temporary = path.with_suffix(".html.tmp")
    temporary.write_text(page, encoding="utf-8")
    temporary.replace(path)
    return path


def format_sweep(report, width: int = 120) -> str:
    """The table, the reasons of the settings that did not compile, where the runs are."""
    import textwrap

    from msinspect.cli.compare_cmd import plain_table

    from msinspect.analysis.rank.activations import LEAVES_OUT

    lines = [_what(report)] + plain_table(sweep_rows(report), columns_of(report))
    fits = ("; fits: static memory plus activations against the device memory stated, every rank"
            if report.device_memory is not None else "")
    lines += textwrap.wrap("(collectives: communication operators that move data, per rank; bytes: what each rank "
                           "sends on the wire per step; memory: weights, gradients and optimizer states per rank; "
                           f"activations: {LEAVES_OUT}{fits}; a range: the ranks differ)",
                           width=max(60, min(width, 120)))
    lines += _notes(report)
    lines.append(f"run folders: {report.sweep_dir}/<setting>/dryrun-*/ (sweep.json holds every field, "
                 "sweep.html the table for a browser)")
    done = [s for s in report.settings if s.ranks_ok]
    if len(done) >= 2:
        lines.append(f"compare two: msinspect compare {report.sweep_dir / done[0].folder} "
                     f"{report.sweep_dir / done[-1].folder}")
    return "\n".join(lines)


@click.command("sweep")
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@click.option("--ranks", "-n", type=click.IntRange(min=1), required=True, help="Number of simulated ranks.")
@click.option("--grid", "grid", multiple=True, required=True, metavar="NAME=v1,v2",
              help="A setting's name and values (repeat for several names: every combination is run). Values "
                   "with commas: separate them with ';'.")
@click.option("--env", "via", flag_value="env", default=True, help="Pass each setting as environment variables "
              "(default).")
@click.option("--arg", "via", flag_value="arg", help="Pass each setting as script arguments: {NAME} in the "
              "arguments after -- is replaced by the value, else --NAME=VALUE is added.")
@click.option("--only", default=None, help="Run only these ranks of each setting, e.g. 0,4 or 0-3.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=2, show_default=True,
              help="Ranks compiled at the same time.")
@click.option("--out", "out_root", default="runs", show_default=True,
              help="Folder under which a new sweep folder sweep-<script>-<time>/ is created.")
@click.option("--timeout", type=click.FloatRange(min=1), default=600, show_default=True,
              help="Seconds allowed per rank.")
@click.option("--python", "python", default=None, metavar="PATH", help="Run the script with this interpreter.")
@click.option("--device-memory", "device_memory", default=None, metavar="SIZE",
              help="A device's memory (32GiB, 80GB): say per setting whether every rank's static memory plus "
                   "its activation estimate fits.")
@click.option("--json", "as_json", is_flag=True, help="Print the sweep (every setting, every field) as JSON.")
def sweep(script, script_args, ranks, grid, via, only, jobs, out_root, timeout, python, device_memory,
          as_json) -> None:
    """Dry-run SCRIPT once per setting of a grid (MP=1,2,4,8), RANKS simulated ranks each, and
    tabulate per setting: compiled or MindSpore's reason why not, collectives per rank, bytes per
    step by parallel axis, memory and an activation estimate per rank, and with --device-memory
    whether each setting fits.

    Each setting's dry-run folder is kept (compare two with msinspect compare); sweep.json holds
    the table. A setting that fails does not stop the sweep; Ctrl-C stops every process and says
    what was done. Exit 0 when every setting compiled, 1 when some did not (that is the finding),
    130 when interrupted. Run `msinspect setup-dryrun` once first.
    """
    from msinspect.dryrun.progress import RankProgress
    from msinspect.dryrun.sweep import SweepInterrupted, parse_grid, run_sweep, settings_of

    from msinspect.analysis.rank.activations import parse_size

    device_bytes = None
    if device_memory is not None:
        try:
            device_bytes = parse_size(device_memory)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--device-memory")
    console = make_console(stderr=True)
    state = {"progress": None}

    def interrupted(exc: KeyboardInterrupt) -> None:
        if state["progress"] is not None:
            state["progress"].__exit__(None, None, None)
        if isinstance(exc, SweepInterrupted):
            write_page(exc.report)
            console.print(format_sweep(exc.report, console.width))
        console.print("interrupted: every scheduler and worker process was stopped")

    with launcher_errors(interrupted):
        parsed = parse_grid(grid)
        total = len(settings_of(parsed))
        from msinspect.dryrun.launcher import select_ranks

        per_setting = len(select_ranks(only, ranks))

        def on_setting(index, result) -> None:
            if result.status == "running":
                console.print(f"setting {index + 1}/{total}: {result.label}")
                state["progress"] = RankProgress(per_setting, console=console).__enter__()
                return
            if state["progress"] is not None:
                state["progress"].__exit__(None, None, None)
                state["progress"] = None
                if not console.is_terminal:
                    console.line()
            said = result.status if not result.reason else f"{result.status}: {result.reason[:160]}"
            console.print(f"  {result.label}: {said} ({result.wall_seconds:.0f} s)")

        def on_update(rank_result, n_files) -> None:
            if state["progress"] is not None:
                state["progress"].update(rank_result, n_files)

        report = run_sweep(script, ranks, parsed, via=via, only=only, out_root=out_root, jobs=jobs,
                           timeout=timeout, script_args=script_args, python=python,
                           on_setting=on_setting, on_update=on_update, device_memory=device_bytes)
        write_page(report)
    if as_json:
        click.echo(to_json(report.to_dict()))
    else:
        out = make_console()
        out.print(format_sweep(report, out.width), markup=False, soft_wrap=True)
    sys.exit(0 if report.ok else 1)
