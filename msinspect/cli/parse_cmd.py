"""``msinspect parse PATH...``: parse dumps and report, per file, what was read."""
from __future__ import annotations

from pathlib import Path
import sys

import click
from rich.table import Table

from msinspect.cli.failure_text import print_failure
from msinspect.cli.output import console, csv_option, json_option, scheduler_option, styled, to_csv, to_json
from msinspect.cli.reads import tell_unreadable
from msinspect.dumps import Unreadable, duplicate_ranks, load_dump, parse_many
from msinspect.stages import is_ir_file, stage_of
from msinspect.cli.exits import errors
from msinspect.analysis.rank.failure import failure_row
from msinspect.errors import MsInspectError
from msinspect.graph import lint
from msinspect.model import IRFile, where


def summarize(ir: IRFile, rank: int | None = None) -> dict:
    """The per-file facts ``parse`` prints (``rank``: N of the file's ``rank_N`` folder)."""
    return {
        "rank": rank,
        "file": ir.path,
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
        "reason": None,
        "diagnostics": [
            {"line": d.line, "column": d.column, "end_line": d.end_line, "message": d.message}
            for d in ir.diagnostics
        ],
        "findings": [{"line": f.line, "what": f.what} for f in lint(ir)],
        "failure": failure_row(ir),
    }


def unreadable_row(problem: Unreadable, rank: int | None = None) -> dict:
    """A folder or file that could not be read, as a row of the report (status ``unreadable``)."""
    counts = dict.fromkeys(("subgraphs", "stated_subgraphs", "nodes", "cnodes", "stated_cnodes", "params", "lines"))
    return {"rank": rank, "file": str(problem.path),
            "stage": stage_of(problem.path) if is_ir_file(problem.path) else None,
            "family": None, "status": "unreadable", **counts, "reason": problem.reason, "diagnostics": [],
            "findings": [], "failure": None}


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@json_option
@csv_option
@click.option("--lenient", is_flag=True, help="Keep going past errors; report every unparsed span.")
@click.option("--stage", help="Only files of this stage (e.g. step_parallel_end).")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Parser processes (default: every core).")
@scheduler_option
def parse(paths, as_json, as_csv, lenient, stage, jobs, scheduler):
    """Parse IR files, rank_N/ folders or dump roots; print stage, subgraph, node and cnode
    counts and diagnostics per file. Exits 0 only when every file was read completely and the
    counts each file states hold."""
    err = console(stderr=True)
    with errors():
        files, problems, ranks = [], [], {}
        for path in paths:
            dump = load_dump(path, one_job=False)  # files, not ranks: several runs are fine
            twice = duplicate_ranks(dump)
            if twice:  # said, not refused: each file is read on its own
                err.print(f"note: {twice}\n  each file is read on its own; an analysis needs the folder of one run")
            ranks.update({str(f): r.rank for r in dump.ranks for f in r.files})
            ranks.update({str(u.path): r.rank for r in dump.ranks for u in r.unreadable})
            files += dump.files(stage) if stage else dump.files()
            problems += [p for p in dump.problems() if not stage or not is_ir_file(p.path) or stage_of(p.path) == stage]
        tell_unreadable(problems)
        if not files:
            raise MsInspectError(f"no files of stage '{stage}' under {', '.join(paths)}")
        quiet = as_json or as_csv or len(files) < 2
        with err.status(f"parsing {len(files)} file(s)") if not quiet else _null():
            results = parse_many(files, lenient=lenient, jobs=jobs, scheduler=scheduler)
    rows = ([summarize(ir, ranks.get(str(ir.path))) for ir in results]
            + [unreadable_row(p, ranks.get(str(p.path))) for p in problems])
    if as_json:
        click.echo(to_json(rows))
    elif as_csv:
        click.echo(to_csv(rows), nl=False)
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
    out = console()
    table = Table(title=f"{len(rows)} IR file(s)")
    for col in ("rank", "file", "stage", "family", "graphs", "nodes", "cnodes/stated", "status"):
        table.add_column(col, overflow="fold")
    for r in rows:
        path = Path(r["file"])
        stated = "-" if r["stated_cnodes"] is None else str(r["stated_cnodes"])
        style = {"complete": "green", "excerpt": "cyan", "incomplete": "bold red", "unreadable": "bold red"}[r["status"]]
        if r["status"] == "unreadable":
            table.add_row(path.parent.name, path.name, r["stage"] or "-", "-", "-", "-", "-",
                          styled(("unreadable", style)))
            continue
        table.add_row(path.parent.name, path.name, r["stage"], r["family"], str(r["subgraphs"]), str(r["nodes"]),
                      f"{r['cnodes']} / {stated}", styled((r["status"], style)))
    out.print(table)
    for r in rows:
        for d in r["diagnostics"]:
            place = f"{r['file']}:{d['line']}:{d['column']}" if d["line"] else r["file"]
            out.print(styled((f"{place}:", "red"), f" {d['message']}"), soft_wrap=True)
    for r in rows:
        if r["failure"]:
            print_failure(out, r["file"], r["failure"])


#: The most findings printed per file; ``--json`` lists every one.
MAX_FINDINGS = 10


def _warn_findings(rows, err) -> None:
    """What :func:`msinspect.graph.lint` found, as warnings: they leave the exit status alone (the
    file was read whole), but the graph has no edge for such an operand."""
    for r in rows:
        found = r["findings"]
        if not found:
            continue
        if r["family"] == "excerpt":  # an excerpt leaves out what its nodes take: one line says so
            err.print(f"note: {r['file']}: {len(found)} operand(s) name a node or parameter the excerpt leaves out "
                      f"(first at line {found[0]['line']}); the graph has no edge for them",
                      markup=False, highlight=False, soft_wrap=True)
            continue
        for f in found[:MAX_FINDINGS]:
            err.print(f"warning: {where(r['file'], f['line'])}: {f['what']}", markup=False, highlight=False, soft_wrap=True)
        if len(found) > MAX_FINDINGS:
            err.print(f"warning: {r['file']}: {len(found) - MAX_FINDINGS} more such operand(s) (--json lists them)",
                      markup=False, highlight=False, soft_wrap=True)
