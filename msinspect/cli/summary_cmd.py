"""``msinspect summary DUMP``: one line per rank: stage file, strategies, communication, stage."""
from __future__ import annotations

from pathlib import Path

import click

from msinspect.analysis.job.rank_groups import rank_groups
from msinspect.analysis.job.summary import SUMMARY_COLUMNS, iter_summary_rows, summary_rows
from msinspect.cli.failure_text import print_failure
from msinspect.cli.output import analysed, emit, errors, one_format, stage_option, stdout, table_options, view_of
from msinspect.schema import is_missing


#: The columns most telling first: a terminal shows those that fit (the rest: --wide, --columns, --json).
SUMMARY_PRIORITY = ["rank", "file", "strategies", "set_by_user", "comm", "by_kind", "wire_bytes", "stage_ranks",
                    "rank_group", "weights", "note", "other_stage", "sharded_weights", "status", "wire_unknown",
                    "complete", "stage", "family"]

#: The columns each rank may hold its own value of: folded past FOLD_ROWS rows (cli.display).
SUMMARY_FOLD = ["file"]


@click.command()
@click.argument("dump", type=click.Path())
@stage_option
@table_options
def summary(dump, stage, as_json, as_jsonl, as_csv, wide, columns, jobs, scheduler, lenient, world):
    """One line per rank (in a terminal, ranks that agree are one line): which file was read,
    strategies (how many the user set), communication operators by kind and the bytes they send
    on the wire per step, and the ranks of its pipeline stage."""
    one_format(as_json, as_csv, as_jsonl)
    with errors():
        analysis = analysed(dump, stage, jobs, quiet=as_json or as_csv or as_jsonl, lenient=lenient,
                            world=world, scheduler=scheduler)
        groups = rank_groups(analysis)
        if as_json or as_jsonl:  # written rank by rank as each is read back (msinspect.analysis.engine.spool)
            emit(iter_summary_rows(analysis, groups), as_json=as_json, as_csv=False, as_jsonl=as_jsonl, title="")
            return
        rows = summary_rows(analysis, groups)
    if as_csv:
        emit(rows, as_json=False, as_csv=True, title="")
        return
    shown = [{**row, "rank": row["rank"] if row["rank"] is not None else row["rank_label"],
              "file": Path(row["file"]).name if row["file"] else None,
              "by_kind": ", ".join(f"{k} {v}" for k, v in row["by_kind"].items()) if row["by_kind"] else None,
              "stage_ranks": row["stage_ranks"]}
             for row in rows]
    flags = [c for c in ("other_stage", "note") if any(not is_missing(row[c]) and row[c] for row in rows)]
    hidden = ("rank_label", "rank_group_odd", "rank_group_distinct", "failure")  # said below the table
    emit(rows, as_json=False, as_csv=False, title=f"summary of {dump}", shown=shown,
         columns=[c for c in SUMMARY_COLUMNS if c not in hidden and (c not in ("other_stage", "note") or c in flags)],
         priority=SUMMARY_PRIORITY, merge=True, view=view_of(wide, columns), fold=SUMMARY_FOLD)
    for row in rows:  # an analyze_fail.ir: MindSpore's exception and where evaluation stopped
        if row.get("failure"):
            print_failure(stdout(), row["file"], row["failure"])
    stages = list(dict.fromkeys(row["stage_ranks"] for row in rows if row["stage_ranks"]))  # rank order
    for line in groups.lines():
        stdout().print(line, soft_wrap=True)
    if len(stages) > 1:
        how = {"weights": "ranks holding the same weights", "ir": "told by each file's Send / Receive and groups"}
        stdout().print(f"pipeline stages ({how.get(analysis.stages_by, 'as read')}): {'; '.join(stages)}")
    if analysis.stages_note and analysis.stages:  # where they cannot be told, each row's note says why
        stdout().print(f"pipeline stages: {analysis.stages_note}", soft_wrap=True)
