"""``msinspect strategies | comm | shapes DUMP``: the analysis tables, filtered and printed."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from msinspect.cli.choice import Choice
from msinspect.analysis.rank.comm import comm_totals
from msinspect.mindspore.vocabulary import KINDS
from msinspect.analysis.job.second_opinion import with_records
from msinspect.analysis.job.op_rows import comm_of, no_match, no_operator, no_weight, not_on_ranks, rows_of
from msinspect.cli.display import named_apart, short_scope
from msinspect.cli.output import (EXIT_FINDING, analysed, emit, errors, one_format, only_ranks, rank_option,
                                  stage_option, stderr, table_options, view_of)
from msinspect.rank_merge import rank_number
from msinspect.ranks_text import ranks_text

if TYPE_CHECKING:  # pandas loads where a table is made, not for `msinspect --help`
    import pandas as pd


#: The columns of each table, most telling first: a terminal shows those that fit (the rest:
#: --wide, --columns, --json), in the order of the command's own list.
STRATEGY_PRIORITY = ["rank", "name", "op", "in_strategy", "set_by", "rank_inputs", "global_inputs", "rank_output",
                     "line", "scope"]
COMM_PRIORITY = ["rank", "op", "kind", "wire_bytes", "group_ranks", "producer", "consumers", "shape", "tensor_bytes",
                 "dtype", "micro", "name", "out_shape", "line"]
SHAPES_PRIORITY = ["rank", "name", "input", "global_shape", "strategy", "expected_rank_shape", "rank_shape", "ok",
                   "op", "line"]
SLICES_PRIORITY = ["rank", "param", "slice_text", "record", "global_shape", "rank_shape", "strategy",
                   "opt_shard_ranks", "device_matrix", "tensor_map", "kind", "consumer"]


def _selected(frame: pd.DataFrame, ranks: tuple[int, ...], selector: str | None, what: str,
              pick=rows_of) -> pd.DataFrame:
    """The rows of ``frame`` (every rank read) on ``ranks`` that the --op ``selector`` names
    (``pick``: :func:`~msinspect.analysis.job.op_rows.rows_of` or ``comm_of``). One that names nothing
    is bad input, not an empty table: NoMatchError (exit 2) with the close names, or the ranks it
    names something on."""
    on_ranks = only_ranks(frame, ranks)
    hit = pick(on_ranks, selector)
    if selector and hit.empty:
        elsewhere = pick(frame, selector) if ranks else hit
        if not elsewhere.empty:
            raise no_match(f"no {what} match --op {selector!r} on {ranks_text(ranks, word=True)}",
                           "ranks where it matches", ranks_text(r for r in map(rank_number, elsewhere["rank"])
                                                                if r is not None))
        raise no_operator(selector, frame, what)
    return hit


def _short(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    if "scope" in frame and "name" in frame:
        frame["name"] = named_apart(frame["name"], frame["scope"])
    if "scope" in frame:
        frame["scope"] = [short_scope(v) for v in frame["scope"]]
    return frame


def _neighbours_apart(frame: pd.DataFrame) -> pd.DataFrame:
    """The communication table with each producer and consumer named apart from operators of the
    same name in other scopes (:func:`~msinspect.cli.display.named_apart`), over the whole table."""
    if frame.empty or "producer_scope" not in frame:
        return frame
    pairs = [[(c, s) for c, s in zip(_listed(cs), _listed(ss) + [None] * len(_listed(cs)))]
             for cs, ss in zip(frame["consumers"], frame["consumer_scopes"])]
    names = list(frame["producer"]) + [c for row in pairs for c, _ in row]
    scopes = list(frame["producer_scope"]) + [s for row in pairs for _, s in row]
    told = iter(named_apart(names, scopes))
    producers = [next(told) for _ in range(len(frame))]
    consumers = [tuple(next(told) for _ in row) if isinstance(cs, (list, tuple)) else cs
                 for row, cs in zip(pairs, frame["consumers"])]
    return frame.assign(producer=producers, consumers=consumers)


def _listed(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else []


def op_option(f):
    return click.option("--op", "selector", default=None,
                        help="Only operators matching: an instance name (matmul), an op type (MatMul), "
                             "scope/name (layer1-Dense/matmul) or a scope; as written, else without case. "
                             "One that matches nothing exits 2 with the close names.")(f)


@click.command()
@click.argument("dump", type=click.Path())
@op_option
@rank_option
@stage_option
@click.option("--set-by", type=Choice(["user", "planner"]), default=None, help="Only strategies set so.")
@table_options
def strategies(dump, selector, ranks, stage, set_by, as_json, as_jsonl, as_csv, wide, columns, jobs, scheduler,
               lenient, world):
    """Every operator with a strategy: in/out strategy, whether the user set it (shard) or the
    planner inferred it, global and per-rank shapes, per rank (in a terminal, ranks that agree
    are one row)."""
    one_format(as_json, as_csv, as_jsonl)
    with errors():
        frame = analysed(dump, stage, jobs, quiet=as_json or as_csv or as_jsonl, lenient=lenient,
                         world=world, scheduler=scheduler, ranks=ranks).strategies()
        frame = _selected(frame, ranks, selector, "strategies")
    if set_by:
        frame = frame[frame["set_by"] == set_by]
    emit(frame, as_json=as_json, as_csv=as_csv, as_jsonl=as_jsonl, title="strategies", shown=_short(frame),
         columns=["rank", "name", "op", "scope", "in_strategy", "set_by", "global_inputs", "rank_inputs",
                  "rank_output", "line"],
         styles={"set_by": "cyan"}, priority=STRATEGY_PRIORITY, merge=True, view=view_of(wide, columns),
         fold=["line"])


@click.command()
@click.argument("dump", type=click.Path())
@op_option
@rank_option
@stage_option
@click.option("--kind", type=Choice(KINDS), default=None, help="Only communication of this kind.")
@click.option("--by", type=Choice(["kind", "group"]), default=None,
              help="Totals over the whole job per kind or per group instead of listing every operator.")
@table_options
def comm(dump, selector, ranks, stage, kind, by, as_json, as_jsonl, as_csv, wide, columns, jobs, scheduler, lenient,
         world):
    """Every communication and redistribution operator: kind, the operators it sits between,
    group and its ranks, the tensor at the rank and the bytes it sends on the wire per step;
    or totals over the job --by kind/group (in a terminal, ranks that agree are one row; past
    1,000 rows, rows that differ only in each rank's own group too)."""
    one_format(as_json, as_csv, as_jsonl)
    with errors():
        frame = analysed(dump, stage, jobs, quiet=as_json or as_csv or as_jsonl, lenient=lenient,
                         world=world, scheduler=scheduler, ranks=ranks).comm()
        # its own name / op, or an operator it sits next to
        frame = _selected(frame, ranks, selector, "communication operators", pick=comm_of)
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
        emit(totals, as_json=as_json, as_csv=as_csv, as_jsonl=as_jsonl, title=f"communication per {by}, {over}",
             shown=shown,
             columns=[c for c in totals.columns if c != "moves_data"], view=view_of(wide, columns))
        return
    shown = _neighbours_apart(frame).assign(group_ranks=[ranks_text(g) if isinstance(g, tuple) else g
                                                         for g in frame["group_ranks"]])
    emit(frame, as_json=as_json, as_csv=as_csv, as_jsonl=as_jsonl, title="communication", shown=shown,
         columns=["rank", "name", "op", "kind", "producer", "consumers", "group_ranks", "shape", "out_shape", "dtype",
                  "tensor_bytes", "wire_bytes", "micro", "line"],
         styles={"kind": "magenta"}, priority=COMM_PRIORITY, merge=True, view=view_of(wide, columns),
         fold=["group_ranks", "line"])


@click.command()
@click.argument("dump", type=click.Path())
@op_option
@rank_option
@stage_option
@click.option("--params", "params", is_flag=True,
              help="Show the slice of each weight (and graph input) every rank holds (device matrix, tensor map).")
@click.option("--param", default=None, help="With --params: only this weight (e.g. w, layer1.weight).")
@click.option("--mismatches", is_flag=True, help="Only per-rank shapes that differ from global / strategy.")
@table_options
def shapes(dump, selector, ranks, stage, params, param, mismatches, as_json, as_jsonl, as_csv, wide, columns, jobs,
           scheduler, lenient, world):
    """Per-rank shapes: for every operator input, the global shape divided by its strategy against
    the per-rank shape in the dump (exit 1 on any mismatch); or, with --params, which slice of
    each weight each rank holds ("which part of w does rank 5 hold": --params --param w --rank 5)."""
    one_format(as_json, as_csv, as_jsonl)
    view = view_of(wide, columns)
    with errors():
        analysis = analysed(dump, stage, jobs, quiet=as_json or as_csv or as_jsonl, lenient=lenient, world=world,
                            scheduler=scheduler, ranks=ranks)
        frame = analysis.slices() if params or param else analysis.shapes()
        if param:  # a weight no rank holds, or none of those asked for, is bad input: say which there are
            if not (frame["param"] == param).any():
                raise no_weight(param, frame.loc[frame["kind"] != "input", "param"] if not frame.empty else [],
                                frame.loc[frame["kind"] == "input", "param"] if not frame.empty else [])
            held = frame[frame["param"] == param]
            if ranks and not held["rank"].isin(ranks).any():
                raise not_on_ranks(param, ranks, [r for r in map(rank_number, held["rank"]) if r is not None])
            frame = held
        if not (params or param):
            frame = _selected(frame, ranks, selector, "operator inputs")
    if params or param:
        frame = only_ranks(frame, ranks)
        for note in analysis.at_end_notes():  # weights read beside the files, or not told: say so
            click.echo(note, err=True)
        if not (frame["kind"] == "weight").any():  # an empty table would read as "no rank holds any weight"
            stages = sorted({r.stage for r in analysis.results if r.stage})
            earlier = {"validate": "step_parallel_end", "step_parallel_end": "step_parallel_begin"}.get(stages[-1]) \
                if len(stages) == 1 else None
            click.echo(f"cannot tell: no weight of the files read (at {', '.join(stages) or 'none'}) is read by an "
                       "operator with a strategy, so which slice each rank holds is not in them"
                       + (f" (an earlier pass, --stage {earlier}, may hold it)" if earlier else ""), err=True)
            if frame.empty and not (as_json or as_jsonl or as_csv):
                return
        # beside each weight, MindSpore's own record of it where the rank folder holds one
        with errors():
            frame = with_records(analysis, frame)
        recorded = bool((frame["record"] != "no record").any())
        # the strategy of the one input that reads the weight: `strategy`, as in the rows of shapes
        frame = frame.rename(columns={"in_strategy": "strategy"})
        emit(frame, as_json=as_json, as_csv=as_csv, as_jsonl=as_jsonl, title="parameter slices",
             columns=["rank", "param", "kind", "global_shape", "rank_shape", "consumer", "strategy", "device_matrix",
                      "tensor_map", "opt_shard_ranks", "slice_text"] + (["record"] if recorded else []),
             priority=SLICES_PRIORITY, merge=True, view=view)
        differs = frame[frame["record"] == "differs"]
        if not differs.empty:  # a finding: both values, never one of them silently
            for row in differs.head(20).to_dict("records"):
                click.echo(f"rank {row['rank']}: {row['param']}: {row['record_says']}", err=True)
            if len(differs) > 20:
                click.echo(f"... {len(differs) - 20} more weight(s) differ from MindSpore's record", err=True)
            sys.exit(EXIT_FINDING)
        return
    bad = frame[frame["ok"] == False]  # noqa: E712 (None means "cannot tell")
    if mismatches:
        frame = bad
    emit(frame, as_json=as_json, as_csv=as_csv, as_jsonl=as_jsonl, title="per-rank shapes", shown=_short(frame),
         columns=["rank", "name", "op", "input", "global_shape", "strategy", "expected_rank_shape", "rank_shape",
                  "ok", "line"], priority=SHAPES_PRIORITY, merge=True, view=view, fold=["line"])
    if not bad.empty:
        if not (as_json or as_csv or as_jsonl):
            stderr().print(f"{len(bad)} per-rank shape(s) differ from global shape / strategy", style="bold red")
        sys.exit(EXIT_FINDING)
