"""``msinspect strategies | comm | shapes DUMP``: the analysis tables, filtered and printed."""
from __future__ import annotations

import sys

import click
import pandas as pd

from msinspect.analysis.comm import KINDS, comm_totals
from msinspect.cli.display import short_scope
from msinspect.analysis.ops import selector_matches
from msinspect.cli.output import (EXIT_FINDING, analysed, csv_option, emit, errors, jobs_option, json_option,
                                  lenient_option, only_ranks, rank_option, stage_option, stderr,
                                  world_option)


def _only_ops(frame: pd.DataFrame, selector: str | None, column: str = "name") -> pd.DataFrame:
    if not selector or frame.empty:
        return frame
    return frame[[selector_matches(n, s, selector, o) for n, s, o in zip(frame[column], frame["scope"], frame["op"])]]


def _nothing_matched(selector: str | None, before: pd.DataFrame, after: pd.DataFrame, what: str) -> None:
    """An --op that matched nothing is a mistake to say, not an empty table: say why and exit 1."""
    if selector and after.empty:
        reason = (f"none of the {len(before)} {what} read matches it" if not before.empty
                  else f"the dump has no {what} at this stage")
        stderr().print(f"no {what} for --op {selector!r}: {reason} (an instance name, op type, "
                       f"scope, or scope/name)", markup=False)
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
@json_option
@csv_option
@jobs_option
@lenient_option
@world_option
def strategies(dump, selector, ranks, stage, set_by, as_json, as_csv, jobs, lenient, world):
    """Every operator with a strategy: in/out strategy, whether the user set it (shard) or the
    planner inferred it, global and per-rank shapes, per rank."""
    with errors():
        frame = analysed(dump, stage, jobs, quiet=as_json or as_csv, lenient=lenient,
                         world=world).analyse(stage, lenient=lenient, world=world).strategies()
    before = only_ranks(frame, ranks)
    frame = _only_ops(before, selector)
    _nothing_matched(selector, before, frame, "strategies")
    if set_by:
        frame = frame[frame["set_by"] == set_by]
    emit(frame if as_json or as_csv else _short(frame), as_json=as_json, as_csv=as_csv, title="strategies",
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
@json_option
@csv_option
@jobs_option
@lenient_option
@world_option
def comm(dump, selector, ranks, stage, kind, by, as_json, as_csv, jobs, lenient, world):
    """Every communication and redistribution operator: kind, the operators it sits between,
    group and its ranks, the tensor at the rank and the bytes it sends on the wire per step;
    or totals over the job --by kind/group."""
    with errors():
        frame = analysed(dump, stage, jobs, quiet=as_json or as_csv, lenient=lenient,
                         world=world).analyse(stage, lenient=lenient, world=world).comm()
    frame = only_ranks(frame, ranks)
    before = frame
    if selector and not frame.empty:  # an operator the communication is next to, or its own name / op
        keep = [selector_matches(n, s, selector, o) or selector_matches(p, ps, selector)
                or any(selector_matches(c, cs, selector) for c, cs in zip(cc, ccs))
                for n, s, o, p, ps, cc, ccs in zip(frame["name"], frame["scope"], frame["op"], frame["producer"],
                                                   frame["producer_scope"], frame["consumers"],
                                                   frame["consumer_scopes"])]
        frame = frame[keep]
    _nothing_matched(selector, before, frame, "communication operators")
    if kind:
        frame = frame[frame["kind"] == kind]
    if by:
        emit(comm_totals(frame, by), as_json=as_json, as_csv=as_csv, title=f"communication per {by}, whole job")
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
@json_option
@csv_option
@jobs_option
@lenient_option
@world_option
def shapes(dump, selector, ranks, stage, params, param, mismatches, as_json, as_csv, jobs, lenient, world):
    """Per-rank shapes: for every operator input, the global shape divided by its strategy against
    the per-rank shape in the dump (exit 1 on any mismatch); or, with --params, which slice of
    each weight each rank holds ("which part of w does rank 5 hold": --params --param w --rank 5)."""
    with errors():
        analysis = analysed(dump, stage, jobs, quiet=as_json or as_csv, lenient=lenient,
                         world=world).analyse(stage, lenient=lenient, world=world)
        frame = analysis.slices() if params or param else analysis.shapes()
    frame = only_ranks(frame, ranks)
    if params or param:
        if param:
            frame = frame[frame["param"] == param]
        emit(frame, as_json=as_json, as_csv=as_csv, title="parameter slices",
             columns=["rank", "param", "global_shape", "rank_shape", "consumer", "in_strategy", "device_matrix",
                      "tensor_map", "slice_text"])
        return
    before = frame
    frame = _only_ops(frame, selector)
    _nothing_matched(selector, before, frame, "operator inputs")
    bad = frame[frame["ok"] == False]  # noqa: E712 (None means "cannot tell")
    if mismatches:
        frame = bad
    emit(frame if as_json or as_csv else _short(frame), as_json=as_json, as_csv=as_csv, title="per-rank shapes",
         columns=["rank", "name", "op", "input", "global_shape", "strategy", "expected", "found", "ok", "line"])
    if not bad.empty:
        if not (as_json or as_csv):
            stderr().print(f"[bold red]{len(bad)} per-rank shape(s) differ from global shape / strategy[/]")
        sys.exit(EXIT_FINDING)
