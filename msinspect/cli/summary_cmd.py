"""``msinspect summary DUMP``: one line per rank: stage file, strategies, communication, stage."""
from __future__ import annotations

import json

import click
import pandas as pd

from msinspect.analysis.groups import rank_groups
from msinspect.cli.output import (analysed, emit, errors, jobs_option, json_option, lenient_option, plain,
                                  stage_option, stdout, world_option)


def summary_frame(dump, stage: str | None = None, lenient: bool = False, world: int | None = None,
                  analysis=None) -> pd.DataFrame:
    """Per rank: the file read, its status, strategies (user / planner), communication operators
    per kind, bytes sent on the wire per step, and the ranks of its pipeline stage; ``other_stage`` and
    ``note`` flag a rank read at another stage than the rest, and ranks that could not be read
    get a row with status ``not read`` and the reason."""
    analysis = analysis or dump.analyse(stage, lenient=lenient, world=world)
    reads = {str(r.file): r for r in analysis.plan.read}
    rows = []
    for result in analysis.results:
        read = reads.get(result.file)
        strategies = pd.DataFrame(result.strategies)
        comm = pd.DataFrame(result.comm)
        kinds = comm["kind"].value_counts().to_dict() if not comm.empty else {}
        ctx = analysis.context(result.rank)
        rows.append({
            "rank": result.label, "file": result.file.rsplit("/", 1)[-1], "stage": result.stage,
            "family": result.family, "status": result.status,
            "strategies": len(strategies),
            "user_set": int((strategies["set_by"] == "user").sum()) if not strategies.empty else 0,
            "comm": len(comm), "by_kind": ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "-",
            # bytes this rank sends per step; None when an operator's bytes cannot be told
            "wire_bytes": (int(comm["wire_bytes"].sum()) if comm["wire_bytes"].notna().all() else None)
            if not comm.empty else 0,
            "wire_unknown": int(comm["wire_bytes"].isna().sum()) if not comm.empty else 0,
            "weights": result.weights,  # every parameter with a value
            "sharded_weights": len(result.params),  # those an operator with a strategy reads
            "stage_ranks": "-".join(map(str, ctx.stage_ranks)) if ctx.stage_ranks else None,
            "complete": result.complete,
            "other_stage": bool(read and read.other_stage), "note": read.note if read else None,
        })
    for missing in analysis.plan.not_read:  # the world is never silently smaller than the dump
        rows.append({"rank": missing.label, "file": None, "stage": None, "status": "not read",
                     "other_stage": False, "note": missing.note})
    return pd.DataFrame(rows)


@click.command()
@click.argument("dump", type=click.Path())
@stage_option
@json_option
@jobs_option
@lenient_option
@world_option
def summary(dump, stage, as_json, jobs, lenient, world):
    """One line per rank: which file was read, strategies (how many the user set), communication
    operators by kind and the bytes they send on the wire per step, and the ranks of its pipeline stage."""
    with errors():
        analysis = analysed(dump, stage, jobs, quiet=as_json, lenient=lenient, world=world)
        frame = summary_frame(analysis.dump, stage, lenient, world, analysis=analysis)
        groups = rank_groups(analysis)
        for column, values in groups.columns(frame["rank"]).items():
            frame[column] = values
    if as_json:
        click.echo(json.dumps([{k: plain(v) for k, v in r.items()} for r in frame.to_dict("records")], indent=2))
        return
    flags = [c for c in ("other_stage", "note") if frame[c].notna().any() and frame[c].astype(bool).any()]
    emit(frame, as_json=False, as_csv=False, title=f"summary of {dump}",
         columns=[c for c in frame.columns if c not in ("other_stage", "note", "group_odd", "group_distinct")
                  or c in flags])
    for line in groups.lines():
        stdout().print(line, markup=False, emoji=False, soft_wrap=True)
    stages = sorted(set(frame["stage_ranks"].dropna()))
    if len(stages) > 1:
        stdout().print(f"pipeline stages (ranks holding the same weights): {', '.join(stages)}")
