"""``msinspect summary DUMP``: one line per rank: stage file, strategies, communication, stage."""
from __future__ import annotations

from pathlib import Path

import click

from msinspect.analysis.groups import rank_groups
from msinspect.analysis.summary import summary_frame
from msinspect.cli.output import analysed, emit, errors, stage_option, stdout, table_options


def _ranks_text(ranks) -> str | None:
    return "-".join(map(str, ranks)) if isinstance(ranks, list) else None


@click.command()
@click.argument("dump", type=click.Path())
@stage_option
@table_options
def summary(dump, stage, as_json, as_csv, jobs, scheduler, lenient, world):
    """One line per rank: which file was read, strategies (how many the user set), communication
    operators by kind and the bytes they send on the wire per step, and the ranks of its pipeline stage."""
    with errors():
        analysis = analysed(dump, stage, jobs, quiet=as_json or as_csv, lenient=lenient,
                            world=world, scheduler=scheduler)
        groups = rank_groups(analysis)
        frame = summary_frame(analysis, groups)
    if as_json or as_csv:
        emit(frame, as_json=as_json, as_csv=as_csv, title="")
        return
    shown = frame.assign(
        rank=frame["rank_label"], file=[Path(f).name if isinstance(f, str) else None for f in frame["file"]],
        by_kind=[", ".join(f"{k} {v}" for k, v in kinds.items()) if isinstance(kinds, dict) and kinds else None
                 for kinds in frame["by_kind"]],
        stage_ranks=[_ranks_text(r) for r in frame["stage_ranks"]])
    flags = [c for c in ("other_stage", "note") if frame[c].notna().any() and frame[c].astype(bool).any()]
    hidden = ("rank_label", "rank_group_odd", "rank_group_distinct")  # the group lines below say them
    emit(frame, as_json=False, as_csv=False, title=f"summary of {dump}", shown=shown,
         columns=[c for c in frame.columns if c not in hidden and (c not in ("other_stage", "note") or c in flags)])
    stages = sorted(set(shown["stage_ranks"].dropna()))
    for line in groups.lines():
        stdout().print(line, soft_wrap=True)
    if len(stages) > 1:
        stdout().print(f"pipeline stages (ranks holding the same weights): {', '.join(stages)}")
