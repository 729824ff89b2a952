"""``msinspect parse PATH...``: parse dumps and report, per file, what was read."""
from __future__ import annotations

import json
from pathlib import Path
import sys

import click
from rich.console import Console
from rich.table import Table

from msinspect.cli.output import scheduler_option
from msinspect.cli.reads import tell_unreadable
from msinspect.dumps import Unreadable, duplicate_ranks, load_dump, parse_many
from msinspect.stages import is_ir_file, stage_of
from msinspect.cli.exits import errors
from msinspect.errors import MsInspectError
from msinspect.graph import lint
from msinspect.model import IRFile, where


def summarize(ir: IRFile) -> dict:
    """The per-file facts ``parse`` prints."""
    return {
        "path": ir.path,
        "stage": ir.stage,
        "family": ir.family,
        "status": ir.status,
        "subgraphs": len(ir.subgraphs),
        "stated_subgraphs": ir.stated_subgraphs,
        "nodes": sum(1 for n in ir.nodes() if n.index is not None),
        "cnodes": ir.cnode_count,
        "stated_cnodes": ir.stated_cnodes,
        "params": len(ir.params),
        "lines": ir.lines,
        "diagnostics": [
            {"line": d.line, "column": d.column, "end_line": d.end_line, "message": d.message}
            for d in ir.diagnostics
        ],
        "findings": [{"line": f.line, "what": f.what} for f in lint(ir)],
    }


def unreadable_row(problem: Unreadable) -> dict:
    """A folder or file that could not be read, as a row of the report (status ``unreadable``)."""
    counts = dict.fromkeys(("subgraphs", "stated_subgraphs", "nodes", "cnodes", "stated_cnodes", "params", "lines"))
    return {"path": str(problem.path), "stage": stage_of(problem.path) if is_ir_file(problem.path) else None,
            "family": None, "status": "unreadable", **counts, "reason": problem.reason, "diagnostics": [],
            "findings": []}


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--lenient", is_flag=True, help="Keep going past errors; report every unparsed span.")
@click.option("--stage", help="Only files of this stage (e.g. step_parallel_end).")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parser processes (default: every core).")
@scheduler_option
def parse(paths, as_json, lenient, stage, jobs, scheduler):
    """Parse IR files, rank_N/ folders or dump roots; print stage, subgraph, node and cnode
    counts and diagnostics per file. Exits 0 only when every file was read completely and the
    counts each file states hold."""
    err = Console(stderr=True)
    with errors():
        files, problems = [], []
        for path in paths:
            dump = load_dump(path, one_job=False)  # files, not ranks: several runs are fine
            twice = duplicate_ranks(dump)
            if twice:  # said, not refused: each file is read on its own
                err.print(f"note: {twice}\n  each file is read on its own; an analysis needs the folder of one run",
                          markup=False, highlight=False, soft_wrap=True)
            files += dump.files(stage) if stage else dump.files()
            problems += [p for p in dump.problems() if not stage or not is_ir_file(p.path) or stage_of(p.path) == stage]
        tell_unreadable(problems)
        if not files:
            raise MsInspectError(f"no files of stage '{stage}' under {', '.join(paths)}")
        with err.status(f"parsing {len(files)} file(s)") if not as_json and len(files) > 1 else _null():
            results = parse_many(files, lenient=lenient, jobs=jobs, scheduler=scheduler)
    rows = [summarize(ir) for ir in results] + [unreadable_row(p) for p in problems]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        _print_table(rows)
        _warn_findings(rows, err)
    sys.exit(0 if all(r["status"] != "incomplete" for r in rows) else 1)


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _print_table(rows) -> None:
    console = Console()
    if not console.is_terminal:
        console.width = max(console.width, 140)
    table = Table(title=f"{len(rows)} IR file(s)")
    for col in ("rank", "file", "stage", "family", "graphs", "nodes", "cnodes/stated", "status"):
        table.add_column(col, overflow="fold")
    for r in rows:
        path = Path(r["path"])
        stated = "-" if r["stated_cnodes"] is None else str(r["stated_cnodes"])
        style = {"complete": "green", "excerpt": "cyan", "incomplete": "bold red", "unreadable": "bold red"}[r["status"]]
        if r["status"] == "unreadable":
            table.add_row(path.parent.name, path.name, r["stage"] or "-", "-", "-", "-", "-",
                          f"[{style}]unreadable[/]")
            continue
        table.add_row(path.parent.name, path.name, r["stage"], r["family"], str(r["subgraphs"]), str(r["nodes"]),
                      f"{r['cnodes']} / {stated}", f"[{style}]{r['status']}[/]")
    console.print(table)
    for r in rows:
        for d in r["diagnostics"]:
            place = f"{r['path']}:{d['line']}:{d['column']}" if d["line"] else r["path"]
            console.print(f"[red]{place}:[/] {d['message']}", highlight=False, soft_wrap=True)


#: The most findings printed per file; ``--json`` lists every one.
MAX_FINDINGS = 10


def _warn_findings(rows, err: Console) -> None:
    """What :func:`msinspect.graph.lint` found, as warnings: they leave the exit status alone (the
    file was read whole), but the graph has no edge for such an operand."""
    for r in rows:
        found = r["findings"]
        if not found:
            continue
        if r["family"] == "excerpt":  # an excerpt leaves out what its nodes take: one line says so
            err.print(f"note: {r['path']}: {len(found)} operand(s) name a node or parameter the excerpt leaves out "
                      f"(first at line {found[0]['line']}); the graph has no edge for them",
                      markup=False, highlight=False, soft_wrap=True)
            continue
        for f in found[:MAX_FINDINGS]:
            err.print(f"warning: {where(r['path'], f['line'])}: {f['what']}", markup=False, highlight=False, soft_wrap=True)
        if len(found) > MAX_FINDINGS:
            err.print(f"warning: {r['path']}: {len(found) - MAX_FINDINGS} more such operand(s) (--json lists them)",
                      markup=False, highlight=False, soft_wrap=True)
