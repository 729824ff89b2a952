"""``msinspect report``: one self-contained HTML page (CSS, JavaScript and pictures inline; nothing
fetched from the network) of what the planner did in a dump: the run, the strategies, the
communication, each weight's device grid and, with a spec, every expectation with its evidence."""
from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from msinspect.errors import shown_path
from msinspect.report.grid import grids_of, weight_rows
from msinspect.report.grid_svg import grid_svg
from msinspect.ranks_text import ranks_text
from msinspect.report.tables import (COMM_SHOWN, STRATEGY_SHOWN, blocks, compressed_names, merged_rows, param_blocks,
                                     scope_tail, text)
from msinspect.report.templating import environment

#: Run-record fields shown when a ``config.json`` lies beside the dump (``msinspect train`` writes it).
RECORD_FIELDS = ("mode", "seed", "run", "device", "mindspore", "ranks", "status", "started", "wall_seconds")


@dataclass
class Bar:
    label: str
    ranks: str
    value: int
    width: float


def _record(path: Path) -> dict:
    for folder in (path, path.parent):
        record = folder / "config.json"
        if record.is_file():
            try:
                data = json.loads(record.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return {}
            return {k: data[k] for k in RECORD_FIELDS if k in data} if isinstance(data, dict) else {}
    return {}


def _run(analysis) -> dict:
    dump, plan = analysis.dump, analysis.plan
    stages = sorted({tuple(v) for v in analysis.stages.values()})
    return {
        "path": shown_path(dump.path),
        "world": len(analysis.world) if analysis.world else None,
        "present": [r.label for r in dump.ranks],
        "plan": plan,
        "plan_lines": plan.format() if plan else [],
        "reads": [{"label": r.label, "file": shown_path(r.file) if r.file else "", "stage": r.stage or "",
                   "other_stage": r.other_stage, "note": r.note or ""} for r in plan.ranks] if plan else [],
        "pipeline": [ranks_text(s) for s in stages],
        "record": _record(Path(dump.path)),
        "unreadable": [u.format() for u in dump.problems()],
        "complete": analysis.complete,
        "skipped": analysis.skipped,
    }


#: What the columns of the strategies and communication tables hold (their headers' hover text).
COLUMN_TITLES = {
    "in_strategy": "how the operator's inputs are cut (one tuple per input: parts per dimension)",
    "rank_inputs": "the input shapes at the rank", "rank_output": "the output shape at the rank",
    "shapes_ok": "whether the shapes at the rank are the global ones cut by the strategy",
    "global_inputs": "the input shapes of the whole (uncut) tensors", "global_output": "the whole output shape",
    "set_by": "who set the strategy: the user, or the planner", "micro": "the pipeline micro-batch",
    "scope": "the operator's scope (its tail shown; the whole on hover)",
    "shape": "the tensor the operator takes at the rank (a Send / Receive: the one it moves)",
    "wire_bytes": "bytes this rank sends for the operator per step, by its ring algorithm",
    "tensor_bytes": "bytes of the tensor the operator takes at the rank",
    "group_ranks": "the ranks of the operator's communication group (a Send / Receive: the pair)",
    "group": "MindSpore's name of the group", "peer": "a Send's destination, a Receive's source",
}


def _comm_summary(frame) -> dict:
    """Per kind and per group: operators, ranks and tensor bytes per step (summed over the ranks
    that run them; "cannot tell" where a row has no byte count)."""
    def summarise(rows):
        missing = int(rows["tensor_bytes"].isna().sum())
        return {"ops": len(rows), "ranks": ranks_text(rows["rank"].dropna()),
                "bytes": None if missing else int(rows["tensor_bytes"].sum()), "missing": missing,
                "known": int(rows["tensor_bytes"].dropna().sum())}

    kinds = [{"kind": kind, **summarise(rows)} for kind, rows in frame.groupby("kind", sort=False)]
    groups = []
    named = frame[frame["group"].notna()]
    for group, rows in named.groupby("group", sort=False):
        members = {text(g) for g in rows["group_ranks"]} - {""}
        groups.append({"group": group, "members": ", ".join(sorted(members)) or "cannot tell",
                       "kinds": ", ".join(dict.fromkeys(rows["kind"])), **summarise(rows)})
    top = max((g["known"] for g in groups), default=0)
    bars = [Bar(g["group"], g["members"], g["known"], (g["known"] / top * 100) if top else 0) for g in groups]
    return {"kinds": kinds, "groups": groups, "bars": bars, "local": int(frame["group"].isna().sum())}


#: The cells of a weight's row that its repeats (the same weight of another layer) share.
PARAM_SHOWN = ["global_shape", "consumer", "op", "in_strategy", "device_matrix", "tensor_map", "ranks", "problem",
               "picture"]


def _params(analysis) -> dict:
    """Each weight (repeated layers' weights collapsed into one block) and each distinct layout's
    device grid once."""
    out, by_layout = [], defaultdict(list)
    for param, rows in weight_rows(analysis.slices()).items():
        first = rows[0]
        try:
            grids = grids_of(analysis, param, rows)
            problem = None
        except ValueError as error:  # the message names the weight, which the row shows already
            grids, problem = [], str(error).replace(f"{param}: its layout cannot be told: ", "").replace(f"{param}: ", "")
        info = {"param": param, "global_shape": text(first["global_shape"]), "op": first["op"],
                "consumer": first["consumer"], "in_strategy": text(first["in_strategy"]),
                "device_matrix": text(first["device_matrix"]), "tensor_map": text(first["tensor_map"]),
                "ranks": ranks_text(r["rank"] for r in rows), "problem": problem, "grids": grids}
        out.append(info)
        for grid in grids:
            key = (grid.shape, grid.device_matrix, grid.tensor_map, grid.ranks)
            by_layout[key].append((param, grid))
    pictures = []
    for i, (key, members) in enumerate(by_layout.items()):
        names = list(dict.fromkeys(m[0] for m in members))
        pictures.append({"id": f"layout{i}", "params": names, "caption": ", ".join(compressed_names(names)),
                         "svg": grid_svg(members[0][1], index=i)})
    picture_of = {p: pic["id"] for pic in pictures for p in pic["params"]}
    for info in out:
        info["picture"] = picture_of.get(info["param"])
    return {"params": out, "pictures": pictures, "picture_of": picture_of,
            "blocks": param_blocks(out, PARAM_SHOWN)}


def group_rows(analysis) -> list[dict]:
    """The run's rank groups (:func:`msinspect.analysis.groups.rank_groups`) as the run section
    shows them: ``{name, ranks_text, stage, distinct, odd}``, then one row per rank in no group
    with the reason; none for a single rank."""
    from msinspect.analysis.groups import rank_groups

    if len(analysis.results) < 2:
        return []
    found = rank_groups(analysis)
    rows = [{"name": g.name, "ranks_text": g.ranks_text(),
             "stage": g.pipeline_stage if g.pipeline_stage is not None else ("no pipeline" if g.pipelined is False else None),
             "distinct": "; ".join(g.distinct),
             "odd": "; ".join(f"{label} differs from its group-mates: {'; '.join(what)}" for label, what in g.odd.items())}
            for g in found.groups]
    rows += [{"name": "in no group", "ranks_text": label, "stage": None, "distinct": why, "odd": ""}
             for label, why in found.ungrouped.items()]
    return rows


def report_html(analysis, check_report=None, *, title: str | None = None, ops=(), lenient: bool = False,
                rank: int | None = None) -> str:
    """The page for an :class:`~msinspect.analysis.collect.Analysis` (and a
    :class:`~msinspect.check.CheckReport`); ``ops``: the selectors to draw the graph around (default:
    see :func:`msinspect.report.around.choose`), from ``rank``'s file when given. The run section
    shows the rank groups (:func:`group_rows`)."""
    from msinspect.report.around import choose, draw

    strategy_rows = merged_rows(analysis.strategies(), STRATEGY_SHOWN)
    comm_frame = analysis.comm()
    comm_rows = merged_rows(comm_frame, COMM_SHOWN)
    return environment().get_template("report.html.j2").render(
        title=title or f"msinspect report: {shown_path(analysis.dump.path)}",
        made=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        run=_run(analysis),
        strategy_columns=STRATEGY_SHOWN, strategy_blocks=blocks(strategy_rows), strategy_count=len(strategy_rows),
        comm_columns=COMM_SHOWN, comm_blocks=blocks(comm_rows), comm_count=len(comm_rows),
        comm=_comm_summary(comm_frame) if len(comm_frame) else None,
        params=_params(analysis),
        around=draw(analysis, choose(analysis, ops, check_report, rank=rank), lenient=lenient, rank=rank),
        around_named=bool(ops),
        rank_groups=group_rows(analysis),
        check=check_report,
        evidence=lambda outcome: [ev.format() for ev in outcome.evidence],
        scope_tail=scope_tail, column_titles=COLUMN_TITLES,
    )


def default_output(dump: str | os.PathLike) -> str:
    """``report-<dump folder name>.html``."""
    name = Path(dump).resolve().name or "dump"
    return f"report-{name}"
