"""``msinspect cost DUMP``: bytes on the wire per rank and step by parallel axis and phase, the
rank-to-rank matrix, static and activation memory per rank and whether they fit a stated device
memory, and a time estimate at stated link speeds (:mod:`msinspect.analysis.job.cost`,
:mod:`msinspect.analysis.rank.memory`, :mod:`msinspect.analysis.rank.activations`)."""
from __future__ import annotations

import click

from msinspect.cli.choice import Choice
from msinspect.cli.output import (analysed, emit, errors, jobs_option, json_option, lenient_option, only_ranks,
                                  rank_option, scheduler_option, stage_option, stdout, world_option)

BY_CHOICES = ("axis", "phase", "axis,phase")
#: The most rows of the --matrix table: past that many ranks, blocks of consecutive ranks.
MATRIX_MOST = 32


def _count(value) -> str:
    from msinspect.schema import is_missing

    return "cannot tell" if is_missing(value) else f"{int(value):,}"


def _by_reason(missing: dict) -> dict[str, str]:
    """Reason -> the ranks it holds for, in words (``ranks 0-7``)."""
    from msinspect.ranks_text import ranks_text

    grouped: dict[str, list] = {}
    for rank, why in missing.items():
        grouped.setdefault(why, []).append(rank)
    known = {why: [r for r in ranks if r is not None] for why, ranks in grouped.items()}
    return {why: ranks_text(ranks, word=True) if ranks else "the file read" for why, ranks in known.items()}


@click.command()
@click.argument("dump", type=click.Path())
@click.option("--by", "by", type=Choice(BY_CHOICES), default="axis", show_default=True,
              help="Split each rank's bytes per step by parallel axis, by phase, or both.")
@click.option("--matrix", is_flag=True, help="Also the rank-to-rank matrix of bytes per step (an assumption: ring "
                                             "collectives, pairwise AlltoAll; said with it).")
@click.option("--svg", "svg_path", type=click.Path(dir_okay=False), default=None,
              help="Write the rank-to-rank matrix as an SVG heat map to this file.")
@click.option("--memory", is_flag=True, help="Also memory per rank: weights, gradients, optimizer states, and "
                                             "the activations (an estimate).")
@click.option("--device-memory", "device_memory", default=None, metavar="SIZE",
              help="A device's memory (32GiB, 80GB, 16000MiB): say per rank whether static memory plus the "
                   "activation estimate fits (implies --memory).")
@click.option("--link", default=None, metavar="intra=GBPS,inter=GBPS",
              help="Link speeds in GB/s: an estimated time per step per rank from the matrix (an estimate).")
@click.option("--ranks-per-node", type=click.IntRange(min=1), default=None,
              help="Ranks on one node (with --link): rank // N is a rank's node.")
@rank_option
@stage_option
@world_option
@lenient_option
@jobs_option
@scheduler_option
@json_option
def cost(dump, by, matrix, svg_path, memory, device_memory, link, ranks_per_node, ranks, stage, world, lenient, jobs,
         scheduler, as_json):
    """What one step costs: the bytes each rank sends on the wire per step (the comm rows' wire
    bytes, times the runs of a subgraph called several times; micro-batches as unrolled in the
    IR) by parallel axis (data, tensor, expert, pipeline, optimizer shard; "cannot tell" where
    the IR does not say) and phase (forward, backward, optimizer); with --matrix who sends to
    whom; with --memory weights, gradients and optimizer states per rank and an estimate of its
    activations (the forward outputs the backward reads, recompute and the micro-batches 1F1B
    keeps in flight counted); with --device-memory whether they fit; with --link an estimated
    time; with --rank those ranks only. --json: every number.

    By default it reads the pass that holds the whole step (validate, else execute); a file
    written before MindSpore expands the backward (step_parallel_end) holds the forward and the
    mirrors only, and its backward is said "cannot tell", never left out."""
    from msinspect.analysis.job import cost as costs_
    from msinspect.analysis.job.cost_tables import CostFold, bytes_by
    from msinspect.analysis.rank import activations as activations_
    from msinspect.analysis.rank.memory import memory_per_rank

    if link and not ranks_per_node:
        raise click.UsageError("--link needs --ranks-per-node N (which ranks share a node)")
    device_bytes = None
    if device_memory is not None:
        try:
            device_bytes = activations_.parse_size(device_memory)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--device-memory")
        memory = True
    speeds = None
    if link:
        try:
            speeds = costs_.parse_link(link)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--link")
    with errors():
        if svg_path:
            from pathlib import Path

            from msinspect.report.files import check_writable

            check_writable(Path(svg_path), overwrite=True)
        from msinspect.dumps import load_dump
        from msinspect.ranks_read import most_held
        from msinspect.stages import WHOLE_STEP_STAGES

        whole = most_held(load_dump(dump), WHOLE_STEP_STAGES)
        stage = stage or whole
        analysis = analysed(dump, stage, jobs, quiet=as_json, lenient=lenient, world=world, scheduler=scheduler,
                            ranks=ranks)
        fold = CostFold.of(analysis, keep_rows=True)
        costs = fold.frame()
        split = bytes_by(analysis, tuple(by.split(",")), costs)
        pairs = fold.matrix() if (matrix or svg_path or speeds or as_json) else None
        held = memory_per_rank(analysis) if (memory or as_json) else None
        active = activations_.activations_per_rank(analysis) if (memory or as_json) else None
        times = costs_.link_time(pairs, speeds, ranks_per_node) if speeds else None
    if ranks:  # --rank: what those ranks send, hold and cost (the job was read whole)
        split, costs, held, active, times = (only_ranks(f, ranks) if f is not None else None
                                             for f in (split, costs, held, active, times))
        pairs = pairs[pairs["src"].isin(ranks)] if pairs is not None and not pairs.empty else pairs
    fits = activations_.fit_per_rank(held, active, device_bytes) if device_bytes is not None else None
    if svg_path:
        from pathlib import Path

        from msinspect.report.matrix_svg import matrix_svg

        Path(svg_path).write_text(matrix_svg(pairs) or "", encoding="utf-8")
        click.echo(f"wrote {svg_path}", err=True)
    missing = {r: why for r, why in costs_.backward_missing(analysis).items() if not ranks or r in ranks}
    before = {r: why for r, why in costs_.forward_missing(analysis).items() if not ranks or r in ranks}
    silent = costs_.no_communication(costs, {**before, **missing})
    if as_json:
        import json

        from msinspect.schema import plain, records

        def rows(frame):
            return records(frame) if frame is not None else None

        click.echo(json.dumps(plain({
            "by": by, "no_communication": costs_.NO_COMMUNICATION if silent else None,
            "bytes": rows(split), "operators": rows(costs), "matrix": rows(pairs),
            "matrix_assumption": costs_.MATRIX_ASSUMPTION, "memory": rows(held),
            "activations": rows(active), "activations_estimate": activations_.LEAVES_OUT, "fit": rows(fits),
            "link_time": rows(times), "link_estimate": costs_.ESTIMATE_NOTE if times is not None else None,
        }), indent=2, ensure_ascii=False))
        return
    shown = split.assign(**{c: [_count(v) for v in split[c]] for c in ("operators", "step_bytes", "unknown")})
    if split["note"].map(lambda v: v is None).all():
        shown = shown.drop(columns="note")
    if silent:
        stdout().print(costs_.NO_COMMUNICATION)
    else:
        emit(split, as_json=False, as_csv=False, title=f"wire bytes per rank and step, by {by}", shown=shown,
             merge=True)
    for phase, lacking in (("forward", before), ("backward", missing)):
        for why, ranks in _by_reason(lacking).items():
            stdout().print(f"{phase} cannot tell on {ranks}: {why}; " + (f"--stage {whole} reads it" if whole else
                                                                         "no pass of the dump read holds it"))
    counts = sorted(set(costs["count_basis"])) if not costs.empty else []
    if counts:
        stdout().print("counted: " + "; ".join({
            "once": "once per operator in the file",
            "unrolled": "micro-batches as MindSpore unrolls them (one copy per micro index)",
            "called": "times the file calls the subgraph holding it",
            costs_.MERGED: "0 for a copy MindSpore's common-subexpression pass merges into an earlier one "
                           "(comm's merged_into; the file is written before that pass)"}.get(c, c) for c in counts))
    undecided = costs[costs["axis"] == "cannot tell"] if not costs.empty else costs
    if len(undecided):
        reasons = undecided.groupby("axis_from").size()
        for why, n in reasons.items():
            stdout().print(f"axis cannot tell for {n} operator(s): {why}")
    untold = costs[costs["bytes_why"].notna()] if not costs.empty else costs
    for why, n in (untold.groupby("bytes_why").size().items() if len(untold) else ()):
        stdout().print(f"bytes cannot tell for {n} operator(s){' (in no cell of the matrix)' if matrix else ''}: {why}")
    if matrix:
        table = costs_.matrix_blocks(pairs, MATRIX_MOST)
        if silent:
            stdout().print("rank-to-rank matrix: no communication")
        elif table.empty:
            stdout().print("rank-to-rank matrix: cannot tell (no bytes between two ranks are known)")
        else:
            rows = [{"from": src, **{f"to {d}": f"{v:,}" if v else "" for d, v in row.items()}}
                    for src, row in table.iterrows()]
            if any(isinstance(r, str) for r in table.index):
                stdout().print(f"{len(table)} blocks of consecutive ranks, their bytes summed (--json: every pair)")
            emit(rows, as_json=False, as_csv=False, title="bytes per step, sender (row) to receiver (column)")
            stdout().print(costs_.MATRIX_ASSUMPTION)
            for ranks in _by_reason(missing).values():
                stdout().print(f"{ranks}: the forward and the mirrors only (the backward cannot tell, above)")
    if held is not None:
        shown = held.assign(**{c: [_count(v) for v in held[c]]
                               for c in ("weights", "gradients", "states", "states_expected", "other", "total")})
        emit(held, as_json=False, as_csv=False, title="static memory per rank, bytes", shown=shown, merge=True)
        _activations(active, fits)
    if times is not None:
        shown = times.assign(seconds=["cannot tell" if s is None or s != s else f"{s:.6f}" for s in times["seconds"]])
        emit(times, as_json=False, as_csv=False, title="time on the wire per step (estimate)", shown=shown,
             columns=["rank", "intra_bytes", "inter_bytes", "seconds"])
        stdout().print(costs_.ESTIMATE_NOTE)


def _activations(active, fits) -> None:
    """The activation estimate per rank, what it leaves out, and whether each rank fits."""
    numbers = ("micro_batches", "in_flight", "per_micro", "shared", "inputs", "activations")
    shown = active.assign(**{c: [_count(v) for v in active[c]] for c in numbers})
    columns = ["rank", "stage", *numbers] + (["why"] if any(active["why"]) else [])
    emit(active, as_json=False, as_csv=False, title="activation memory per rank, bytes (an estimate)", shown=shown,
         columns=columns, merge=True)
    from msinspect.analysis.rank.activations import LEAVES_OUT

    stdout().print(LEAVES_OUT)
    if fits is None:
        return
    shown = fits.assign(**{c: [_count(v) for v in fits[c]] for c in ("static", "activations", "total",
                                                                      "device_memory")},
                        headroom=["cannot tell" if h is None else f"{int(h):,}" for h in fits["headroom"]])
    emit(fits, as_json=False, as_csv=False, title="will it fit: static + activations against the device memory",
         shown=shown, merge=True, styles={"fits": "bold"})
