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
from msinspect.report.group_shapes import MANY
from msinspect.report.grid_svg import grid_svg
from msinspect.ranks_text import ranks_text
from msinspect.report.tables import (COMM_SHOWN, STRATEGY_SHOWN, blocks, compressed_names, param_blocks,
                                     scope_tail, text)
from msinspect.report.templating import environment

#: Run-record fields shown when a ``config.json`` lies beside the dump (``msinspect train`` writes it).
RECORD_FIELDS = ("mode", "seed", "run", "device", "mindspore", "ranks", "status", "started", "wall_seconds")


@dataclass
class Bar:
    label: str
    names: str
    """The group's names (MindSpore's ``4-6301172352641561019``, ``nccl_world_group`` ...)."""
    value: int | None
    """Wire bytes; None: cannot tell (no bar is drawn, ``why`` says why)."""
    width: float
    why: str = ""


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
        "present_count": len(dump.ranks),
        "present": _ranks_said([(r.rank, r.label) for r in dump.ranks]),
        "plan": plan,
        "plan_lines": plan.format() if plan else [],
        "reads": _reads(plan) if plan else [],
        "pipeline": [ranks_text(s) for s in stages],
        "record": _record(Path(dump.path)),
        "unreadable": [u.format() for u in dump.problems()],
        "complete": analysis.complete,
        "skipped": analysis.skipped,
    }


def _ranks_said(ranks: list[tuple[int | None, str]]) -> str:
    """Ranks as the page says them: numbered ones as ranges (``ranks 0-9999``), then any folder
    without a rank number by its name."""
    numbers = [rank for rank, _ in ranks if rank is not None]
    return ", ".join(([ranks_text(numbers, word=True)] if numbers else []) + [label for rank, label in ranks if rank is None])


def _reads(plan) -> list[dict]:
    """The file each rank read: ranks that read a file of one name, at one stage, with one note,
    as one row (a job of 10,000 ranks: one row, not 10,000); one rank's row names its file."""
    groups: dict[tuple, list] = {}
    for read in plan.ranks:
        name = Path(read.read_from).name if read.read_from else ""
        groups.setdefault((name, read.stage or "", read.other_stage, read.note or ""), []).append(read)
    rows = []
    for (name, stage, other, note), reads in groups.items():
        if len(reads) == 1:
            label, file = reads[0].label, shown_path(reads[0].file) if reads[0].file else ""
        else:
            label = _ranks_said([(r.rank, r.label) for r in reads])
            file = f"{name} (each in its rank's folder)" if name else ""
        rows.append({"label": label, "file": file, "stage": stage, "other_stage": other, "note": note})
    return rows


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


def _comm_summary(summary) -> dict:
    """Per kind and per group (its rank list, as ``msinspect comm --by kind`` / ``--by group`` count
    them: :func:`~msinspect.analysis.rank.comm.comm_totals`; per group shape from :data:`MANY` ranks):
    operators, ranks, and the tensor bytes and wire bytes per step summed over the ranks that run
    them (None: "cannot tell", where one of its operators has no byte count; ``why`` says why);
    the bars: wire bytes per group. ``summary``: a :class:`~msinspect.report.rollup.CommSummary`
    fed every comm row."""
    groups = summary.group_rows()
    top = max((g["wire"] or 0 for g in groups), default=0)
    bars = [Bar(f"ranks {g['members']}" if g["members"] != "cannot tell" else "ranks: cannot tell", g["names"],
                g["wire"], (g["wire"] / top * 100) if top and g["wire"] is not None else 0,
                f"{g['wire_missing']} of {g['ops']} operators without a byte count: {g['why']}"
                if g["wire"] is None else "")
            for g in groups]
    return {"kinds": summary.kind_rows(), "groups": groups, "bars": bars, "local": summary.local}


#: The most devices a device grid of the report draws, one square each; past that the grid is
#: named with the command that draws it.
GRID_DEVICES = 256

#: The cells of a weight's row that its repeats (the same weight of another layer) share.
PARAM_SHOWN = ["global_shape", "consumer", "op", "in_strategy", "device_matrix", "tensor_map", "ranks", "problem",
               "picture"]


def _params(weights) -> dict:
    """Each weight (repeated layers' weights collapsed into one block) and each distinct layout's
    device grid once (``weights``: a :class:`~msinspect.report.rollup.Weights` fed every rank's
    slices)."""
    from msinspect.report.rollup import weight_grids

    out, by_layout, cache = [], defaultdict(list), {}
    for param, weight in weights.params.items():
        first = weight.first
        grids, problem = weight_grids(param, weight, cache, cells_up_to=GRID_DEVICES)
        info = {"param": param, "global_shape": text(first["global_shape"]), "op": first["op"],
                "consumer": first["consumer"], "in_strategy": text(first["in_strategy"]),
                "device_matrix": text(first["device_matrix"]), "tensor_map": text(first["tensor_map"]),
                "ranks": ranks_text(weight.ranks.numbers), "problem": problem, "grids": grids}
        out.append(info)
        for grid in grids:
            key = (grid.shape, grid.device_matrix, grid.tensor_map, grid.ranks)
            by_layout[key].append((param, grid))
    pictures = []
    for i, (key, members) in enumerate(by_layout.items()):
        names = list(dict.fromkeys(m[0] for m in members))
        grid = members[0][1]
        drawn = len(grid.ranks) <= GRID_DEVICES
        caption = ", ".join(compressed_names(names))
        if not drawn:  # a square per device: megabytes at thousands of ranks
            caption += (f": {len(grid.ranks):,} devices, {len(grid.slices):,} distinct slices, not drawn "
                        f"(msinspect render DUMP --param {names[0]} draws it)")
        pictures.append({"id": f"layout{i}", "params": names, "caption": caption,
                         "svg": grid_svg(grid, index=i) if drawn else ""})
    picture_of = {p: pic["id"] for pic in pictures for p in pic["params"]}
    for info in out:
        info["picture"] = picture_of.get(info["param"])
    note = " ".join(weights.analysis.at_end_notes()) or None  # where the rows come from, or none could
    return {"params": out, "pictures": pictures, "picture_of": picture_of,
            "blocks": param_blocks(out, PARAM_SHOWN), "note": note}


def group_rows(analysis) -> list[dict]:
    """The run's rank groups (:func:`msinspect.analysis.job.rank_groups.rank_groups`) as the run section
    shows them: ``{name, ranks_text, stage, distinct, odd}``, then one row per rank in no group
    with the reason; none for a single rank."""
    from msinspect.analysis.job.rank_groups import rank_groups

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


def why_section(analysis, rank: int | None = None) -> dict | None:
    """Every strategy and collective of one rank (``rank``, else the first read) explained
    (:func:`msinspect.analysis.explain.answers.explain_rank`); None where no rank was read."""
    from msinspect.analysis.explain.answers import explain_rank
    from msinspect.errors import MsInspectError

    read = [r for r in analysis.results if r.status != "unreadable" and (rank is None or r.rank == rank)]
    if not read:
        return None
    first = read[0]
    try:
        rows = explain_rank(analysis, first.rank)
    except MsInspectError as error:  # the rank's file cannot be read again: said, not hidden
        return {"rank_label": first.label, "file": shown_path(first.file), "rows": [],
                "empty": f"cannot tell: {str(error).splitlines()[0]}"}
    return {"rank_label": first.label, "file": shown_path(first.file), "rows": rows,
            "empty": "No strategy and no collective in this rank's file."}


def report_html(analysis, check_report=None, *, title: str | None = None, ops=(), lenient: bool = False,
                rank: int | None = None, compared=None, device_memory: int | None = None) -> str:
    """The page for an :class:`~msinspect.analysis.job.collect.Analysis` (and a
    :class:`~msinspect.check.CheckReport`); ``ops``: the selectors to draw the graph around (default:
    see :func:`msinspect.report.around.choose`), from ``rank``'s file when given. The run section
    shows the rank groups (:func:`group_rows`). ``compared``: a job-to-job diff of this run and
    another (:func:`msinspect.analysis.compare.runs.compare_runs`), shown as its own section.
    ``device_memory`` (bytes): the cost section says whether each rank fits it."""
    from msinspect.check import evidence_lines
    from msinspect.report.around import choose, draw, selectors
    from msinspect.report.compare_section import compare_section
    from msinspect.report.glance import glance
    from msinspect.report.cost_section import cost_section
    from msinspect.report.rollup import roll_up

    many = len(analysis.results) >= MANY  # each rank's group by its shape (group_shapes)
    rolled = roll_up(analysis, many=many, selectors=selectors(ops, check_report), rank=rank)
    strategy_rows, comm_rows = rolled.strategies.rows(), rolled.comm_rows.rows()
    run, rank_groups = _run(analysis), group_rows(analysis)
    return environment().get_template("report.html.j2").render(
        title=title or f"msinspect report: {shown_path(analysis.dump.path)}",
        made=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        run=run,
        glance=glance(analysis, rolled, rank_groups, run, check_report),
        strategy_columns=STRATEGY_SHOWN, strategy_blocks=blocks(strategy_rows), strategy_count=len(strategy_rows),
        comm_columns=COMM_SHOWN, comm_blocks=blocks(comm_rows), comm_count=len(comm_rows),
        comm=_comm_summary(rolled.comm) if rolled.comm.count else None, groups_by_shape=many,
        cost=cost_section(rolled, analysis, device_memory),
        why=why_section(analysis, rank),
        compare=compare_section(compared) if compared is not None else None,
        params=_params(rolled.weights),
        around=draw(analysis, choose(analysis, ops, check_report, rank=rank, rolled=rolled), lenient=lenient,
                    rank=rank),
        around_named=bool(ops),
        rank_groups=rank_groups,
        check=check_report,
        evidence=lambda outcome: evidence_lines(outcome.evidence),
        scope_tail=scope_tail, column_titles=COLUMN_TITLES,
    )


def default_output(dump: str | os.PathLike) -> str:
    """``report-<dump folder name>.html``."""
    name = Path(dump).resolve().name or "dump"
    return f"report-{name}"
