"""``msinspect strategies | comm | shapes DUMP``: the analysis tables, filtered and printed."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from msinspect.analysis.comm import KINDS, comm_totals
from msinspect.analysis.select import comm_of, rows_of
from msinspect.cli.display import short_scope
from msinspect.ranks_text import ranks_text
from msinspect.cli.output import (EXIT_FINDING, analysed, emit, errors, only_ranks, rank_option, stage_option, stderr,
                                  table_options)

if TYPE_CHECKING:  # pandas loads where a table is made, not for `msinspect --help`
    import pandas as pd


def _nothing_matched(selector: str | None, before: pd.DataFrame, after: pd.DataFrame, what: str) -> None:
    """An --op that matched nothing is a mistake to say, not an empty table: say why and exit 1."""
    if selector and after.empty:
        reason = (f"none of the {len(before)} {what} read matches it" if not before.empty
                  else f"the dump has no {what} at this stage")
        stderr().print(f"no {what} for --op {selector!r}: {reason} (an instance name, op type, "
                       f"scope, or scope/name)")
        sys.exit(EXIT_FINDING)


def _short(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    if "scope" in frame:
        frame["scope"] = [short_scope(v) for v in frame["scope"]]
    return frame


def op_option(f):
    return click.option("--op", "selector", default=None,
                        help="Only operators matching: an instance name (matmul), an op type (MatMul), "
                             "scope/name (layer1-Dense/matmul) or a scope; none matching exits 1.")(f)


@click.command()
@click.argument("dump", type=click.Path())
@op_option
@rank_option
@stage_option
@click.option("--set-by", type=click.Choice(["user", "planner"]), default=None, help="Only strategies set so.")
@table_options
def strategies(dump, selector, ranks, stage, set_by, as_json, as_csv, jobs, scheduler, lenient, world):
    """Every operator with a strategy: in/out strategy, whether the user set it (shard) or the
    planner inferred it, global and per-rank shapes, per rank."""
    with errors():
        frame = analysed(dump, stage, jobs, quiet=as_json or as_csv, lenient=lenient,
                         world=world, scheduler=scheduler).strategies()
    before = only_ranks(frame, ranks)
    frame = rows_of(before, selector)
    _nothing_matched(selector, before, frame, "strategies")
    if set_by:
        frame = frame[frame["set_by"] == set_by]
    emit(frame, as_json=as_json, as_csv=as_csv, title="strategies", shown=_short(frame),
         columns=["rank", "name", "op", "scope", "in_strategy", "set_by", "global_inputs", "rank_inputs",
                  "rank_output", "line"],
         styles={"set_by": "cyan"})


@click.command()
@click.argument("dump", type=click.Path())
@op_option
@rank_option
@stage_option
@click.option("--kind", type=click.Choice(KINDS), default=None, help="Only communication of this kind.")
@click.option("--by", type=click.Choice(["kind", "group"]), default=None,
              help="Totals over the whole job per kind or per group instead of listing every operator.")
@table_options
def comm(dump, selector, ranks, stage, kind, by, as_json, as_csv, jobs, scheduler, lenient, world):
    """Every communication and redistribution operator: kind, the operators it sits between,
    group and its ranks, the tensor at the rank and the bytes it sends on the wire per step;
    or totals over the job --by kind/group."""
    with errors():
        frame = analysed(dump, stage, jobs, quiet=as_json or as_csv, lenient=lenient,
                         world=world, scheduler=scheduler).comm()
    frame = only_ranks(frame, ranks)
    before = frame
    frame = comm_of(frame, selector)  # its own name / op, or an operator it sits next to
    _nothing_matched(selector, before, frame, "communication operators")
    if kind:
        frame = frame[frame["kind"] == kind]
    if by:
        totals = comm_totals(frame, by)
        shown = totals
        if by == "group":  # a person reads a group as 0-1-2-3, and why a group is missing
            shown = totals.assign(group_ranks=["-".join(map(str, g)) if isinstance(g, tuple)
                                               else "cannot tell" if moving else "none (local)"
                                               for g, moving in zip(totals["group_ranks"], totals["moves_data"])])
        over = ranks_text(ranks, word=True) if ranks else "whole job"  # --rank: totals of those ranks only
        emit(totals, as_json=as_json, as_csv=as_csv, title=f"communication per {by}, {over}", shown=shown,
             columns=[c for c in totals.columns if c != "moves_data"])
        return
    emit(frame, as_json=as_json, as_csv=as_csv, title="communication",
         columns=["rank", "name", "op", "kind", "producer", "consumers", "group_ranks", "shape", "out_shape", "dtype",
                  "tensor_bytes", "wire_bytes", "micro", "line"],
         styles={"kind": "magenta"})


@click.command()
@click.argument("dump", type=click.Path())
@op_option
@rank_option
@stage_option
@click.option("--params", "params", is_flag=True,
              help="Show the slice of each weight every rank holds (device matrix, tensor map).")
@click.option("--param", default=None, help="With --params: only this weight (e.g. w, layer1.weight).")
@click.option("--mismatches", is_flag=True, help="Only per-rank shapes that differ from global / strategy.")
@table_options
def shapes(dump, selector, ranks, stage, params, param, mismatches, as_json, as_csv, jobs, scheduler, lenient, world):
    """Per-rank shapes: for every operator input, the global shape divided by its strategy against
    the per-rank shape in the dump (exit 1 on any mismatch); or, with --params, which slice of
    each weight each rank holds ("which part of w does rank 5 hold": --params --param w --rank 5)."""
    with errors():
        analysis = analysed(dump, stage, jobs, quiet=as_json or as_csv, lenient=lenient, world=world,
                            scheduler=scheduler)
        frame = analysis.slices() if params or param else analysis.shapes()
    frame = only_ranks(frame, ranks)
    if params or param:
        if param:
            frame = frame[frame["param"] == param]
        # the strategy of the one input that reads the weight: `strategy`, as in the rows of shapes
        frame = frame.rename(columns={"in_strategy": "strategy"})
        emit(frame, as_json=as_json, as_csv=as_csv, title="parameter slices",
             columns=["rank", "param", "global_shape", "rank_shape", "consumer", "strategy", "device_matrix",
                      "tensor_map", "slice_text"])
        return
    before = frame
    frame = rows_of(frame, selector)
    _nothing_matched(selector, before, frame, "operator inputs")
    bad = frame[frame["ok"] == False]  # noqa: E712 (None means "cannot tell")
    if mismatches:
        frame = bad
    emit(frame, as_json=as_json, as_csv=as_csv, title="per-rank shapes", shown=_short(frame),
         columns=["rank", "name", "op", "input", "global_shape", "strategy", "expected_rank_shape", "rank_shape",
                  "ok", "line"])
    if not bad.empty:
        if not (as_json or as_csv):
            stderr().print(f"{len(bad)} per-rank shape(s) differ from global shape / strategy", style="bold red")
        sys.exit(EXIT_FINDING)
