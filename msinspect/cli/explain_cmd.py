"""``msinspect explain DUMP OP``: why an operator has its strategy, why a collective is where it is."""
from __future__ import annotations

import textwrap

import click

from msinspect.cli.output import (errors, json_option, lenient_option, stage_option, stdout, styled, to_json,
                                  world_option)

#: The widest a block of text is laid out, whatever the terminal: it stays readable.
TEXT_WIDTH = 120
#: How each kind of line is marked, and its style.
MARKS = (("fact: ", "facts", "dim"), ("reconstruction: ", "reconstruction", "yellow"),
         ("cannot tell: ", "cannot tell", "red"))


def _where(e) -> str:
    from pathlib import Path

    lines = ", ".join(map(str, e.lines[:6])) + (f" ... ({len(e.lines)} in all)" if len(e.lines) > 6 else "")
    what = "line" if len(e.lines) == 1 else f"{len(e.lines)} operators, lines"
    rank = f"rank {e.rank}  " if e.rank is not None else ""
    return f"{rank}{e.name} ({e.op})  {Path(e.file).name}: {what} {lines}"


def _wrap(text: str, width: int, keep: int = 40) -> list[str]:
    """``text`` wrapped to ``width``, never inside a parenthesis of at most ``keep`` characters: a
    strategy or a shape stays on one line."""
    kept, start, depth = list(text), None, 0
    for i, char in enumerate(text):
        if char == "(":
            start = i if depth == 0 else start
            depth += 1
        elif char == ")" and depth:
            depth -= 1
            if depth == 0 and i - start <= keep:
                kept[start:i] = [c if c != " " else "\0" for c in text[start:i]]
    lines = textwrap.wrap("".join(kept), width, break_long_words=False, break_on_hyphens=False)
    return [line.replace("\0", " ") for line in lines]


def format_explanations(found, width: int = TEXT_WIDTH) -> list:
    """Each explanation as a block for a person: where (rank, operator, file lines), the headline,
    then its facts, reconstruction and what cannot be told, each wrapped to ``width`` columns.
    Lines of :class:`rich.text.Text` (styled, never read as markup)."""
    width = max(40, min(width, TEXT_WIDTH))
    out = []
    for i, e in enumerate(found):
        if i:
            out.append(styled(""))
        for line in _wrap(_where(e), width):
            out.append(styled((line, "bold")))
        for line in _wrap(e.headline, width - 2):
            out.append(styled("  " + line))
        for prefix, field, style in MARKS:
            for text in getattr(e, field.replace(" ", "_")):
                wrapped = _wrap(text, width - 4 - len(prefix))
                for j, line in enumerate(wrapped):
                    lead = (prefix if j == 0 else " " * len(prefix))
                    out.append(styled("    ", (lead, style), line))
    return out


@click.command()
@click.argument("dump", type=click.Path())
@click.argument("op")
@click.option("--rank", type=int, default=None, help="The rank to explain (default: the dump's first).")
@stage_option
@json_option
@world_option
@lenient_option
def explain(dump, op, rank, stage, as_json, world, lenient):
    """Why OP is as it is, on one rank. OP is a selector as in specs: an instance name (q_matmul),
    MatMul-0, type:AllGather, scope:GLOB, re:PATTERN, or a collective's instance name.

    For a strategy: set by the user (with the line of the network that calls the operator),
    reached by sharding propagation from which user-set operator along which path (a
    reconstruction: the IR does not record it), MindSpore's default, or chosen by the planner's
    search. For a collective or redistribution step: the layout its producer gives, the layout
    its consumer needs, which dimension is summed, gathered, split or exchanged, over which ranks.
    Reads step_parallel_end by default (at validate instances are renamed), and the backward's
    communication (each mirror as the gradient's AllReduce) from validate where the rank has it
    (--stage: that file only);
    operators with the same answer (one per block) are one block. A selector that selects
    nothing exits 2.
    """
    from msinspect.analysis.explain.answers import backward_stage, default_stage
    from msinspect.analysis.explain.answers import explain as run_explain
    from msinspect.analysis import analyse
    from msinspect.analysis.job.op_rows import check_ranks
    from msinspect.cli.output import warn_skipped
    from msinspect.dumps import load_dump

    with errors():
        loaded = load_dump(dump)
        present = [r.rank for r in loaded.ranks if r.rank is not None]
        if rank is not None:
            check_ranks([rank], present)
        elif present:
            rank = min(present)
        analysis = analyse(loaded, stage or default_stage(loaded, rank), lenient=lenient, world=world,
                           only=[rank] if rank is not None else None)
        later = backward_stage(loaded, rank, stage) if stage is None else None  # --stage: that file only
        backward = analyse(loaded, later, lenient=lenient, world=world,
                           only=[rank] if rank is not None else None) if later else None
        found = run_explain(analysis, op, rank=rank, backward=backward)
    warn_skipped(analysis.skipped)
    for read, what in ((analysis, ""), (backward, " for the backward's communication")):
        for result in (read.results[:1] if read is not None else ()):
            label = f"rank {result.rank}" if result.rank is not None else result.label
            click.echo(f"read {label} at {result.stage}{what}: {result.file}", err=True)
    if as_json:
        click.echo(to_json([e.to_dict() for e in found]))
        return
    out = stdout()
    for line in format_explanations(found, out.width):
        out.print(line, soft_wrap=True)
