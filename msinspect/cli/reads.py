"""Every command says which ranks it read, at which stage, and which it could not read and why
(on stderr, so that --json / --csv on stdout stay machine-readable). A command that could not
read every rank of the dump exits 1 (a finding) after printing what it read: see
:func:`msinspect.cli.exits.final_code`. How msinspect read the files (which ranks it read by what
differs from another, and why one was read in full) is nothing a user acts on: said only under
``msinspect -v`` (:func:`verbose`)."""
from __future__ import annotations

import shutil
import sys
import textwrap

import click

_INCOMPLETE = "msinspect.incomplete"


def mark_incomplete(what: str) -> None:
    """Remember that part of the input could not be read: the command will exit 1."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta.setdefault(_INCOMPLETE, []).append(what)


def incomplete() -> list[str]:
    """What the running command could not read."""
    ctx = click.get_current_context(silent=True)
    return list(ctx.meta.get(_INCOMPLETE, ())) if ctx is not None else []


def verbose() -> bool:
    """Whether the running command was asked to say how it read the files (``msinspect -v``)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().params.get("verbose"))


def tell_plan(plan) -> None:
    """Print a :class:`~msinspect.ranks_read.ReadPlan`: the ranks read and at which stage, the
    ranks read at another stage, the ranks not read and why."""
    for line in plan.format():
        click.echo(("warning: " if not line.startswith("read ") or " not " in line else "") + line, err=True)
    for rank in plan.not_read:
        mark_incomplete(f"{rank.label}: {rank.note}")
    said = " ".join(r.note or "" for r in plan.ranks)
    for rank in plan.read:  # broken files of a stage not read: said, not counted
        for problem in rank.source.unreadable if rank.source else ():
            if str(problem.path) not in said:
                click.echo(f"note: could not read {problem.format()} (another stage; not needed here)", err=True)


def tell_alike(results) -> None:
    """Under ``-v`` (:func:`verbose`): say how many ranks were read by what differs from a rank
    read in full (:mod:`msinspect.analysis.engine.alike`), and each rank that was read in full because
    its text departs from the rank before it beyond rank-specific values, where the two still
    answer alike (ranks whose answers differ are told apart by the rank groups)."""
    from msinspect.analysis.job.collect import READ_EVERY_RANK_ENV

    if not verbose():
        return
    results = list(results)
    followers = sum(1 for r in results if r.read_by)
    if followers:
        _note(f"note: {followers:,} of {len(results):,} ranks read by what differs from a rank read in full "
              f"(the same answers; {READ_EVERY_RANK_ENV}=1 reads each in full)")
    departed = [r for r in results if r.departure]
    before = {r.departed_from for r in departed}  # the ranks they departed from: not every rank's
    signatures = {r.label: r.signature for r in results if r.label in before} if departed else {}
    for r in departed:
        if r.signature is not None and r.signature == signatures.get(r.departed_from):
            _note(f"note: {r.label}: {r.departure}")


def _note(text: str) -> None:
    """A note of a sentence or two on stderr: word-wrapped at a terminal's width, one line into a
    pipe or file (without Rich: ``--json`` output loads none)."""
    if sys.stderr.isatty():
        width = shutil.get_terminal_size().columns
        text = "\n".join(textwrap.wrap(text, width, subsequent_indent="  ", break_long_words=False,
                                       break_on_hyphens=False))
    click.echo(text, err=True)


def tell_unreadable(problems, *, finding: bool = True) -> None:
    """Print folders and files of a dump that could not be read (:meth:`Dump.problems`); with
    ``finding``, the command exits 1."""
    for problem in problems:
        click.echo(f"warning: could not read {problem.format()}", err=True)
        if finding:
            mark_incomplete(problem.format())


def tell_pair(left_label: str, left_file, right_label: str, right_file) -> dict:
    """Say which files two ranks were read from, warning when their stages differ; the facts as a
    dict for JSON output (``left_stage``, ``right_stage``, ``other_stage``)."""
    from msinspect.stages import stage_of

    left, right = stage_of(left_file), stage_of(right_file)
    click.echo(f"read {left_label} at {left} ({left_file}), {right_label} at {right} ({right_file})", err=True)
    if left != right:
        click.echo(f"warning: {left_label} and {right_label} were read at different stages ({left}, {right}): "
                   "differences may be the stages', not the ranks'; use --stage to compare one stage", err=True)
    return {"left_stage": left, "right_stage": right, "other_stage": left != right}
