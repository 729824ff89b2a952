"""``msinspect diff LEFT RIGHT``: what differs between two ranks."""
from __future__ import annotations

import sys

import click

from msinspect.cli.display import lay_out, short_scope
from msinspect.cli.output import (csv_option, errors, json_option, lenient_option, stage_option, stdout, to_csv,
                                  to_json, warn_skipped)
from msinspect.cli.reads import tell_pair
from msinspect.ranks_text import ranks_text
from msinspect.schema import is_missing

TITLES = {
    "only": "operators present in one rank only (or a different number of times)",
    "shapes": "shape differences",
    "strategies": "strategy differences",
    "comm": "communication groups that differ",
    "slices": "parameter slices that differ or cannot be told",
}


def _stage(ranks) -> str:
    """``ranks 0-3`` (:func:`~msinspect.ranks_text.ranks_text`); ``ranks ?`` when unknown."""
    return ranks_text(ranks, word=True) if ranks else "ranks ?"


def stage_line(result) -> str:
    """One line on the pipeline stages of the two ranks."""
    left, right = result.left_label, result.right_label
    if result.pipelined is False and result.same_stage:
        return f"no pipeline: both ranks run the whole network ({_stage(result.left_stage_ranks)})"
    if result.pipelined is False and result.same_stage is False:
        return (f"no pipeline: each rank runs the whole network of its own job ({left}: "
                f"{_stage(result.left_stage_ranks)}; {right}: {_stage(result.right_stage_ranks)})")
    if result.same_stage is None:
        return "pipeline stage: unknown (read a dump root to compare stages)"
    if result.same_stage:
        return f"same pipeline stage ({_stage(result.left_stage_ranks)})"
    return (f"different pipeline stages: {left} is in the stage of {_stage(result.left_stage_ranks)}, "
            f"{right} in the stage of {_stage(result.right_stage_ranks)}")


def _cell(value):
    """A table cell as a terminal shows it: "-" for what is missing (never ``NaN`` / ``None``),
    also inside a shape or a tuple of shapes."""
    if isinstance(value, (tuple, list)) and any(_has_missing(v) for v in value):
        inner = [str(_cell(v)) for v in value]
        return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
    return "-" if is_missing(value) else value


def _has_missing(value) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_has_missing(v) for v in value)
    return is_missing(value)


#: The columns a narrow terminal keeps first: what the operator is, then how the two sides differ.
PRIORITY = ["name", "op", "left", "right", "left_count", "right_count", "left_group", "right_group",
            "left_slice", "right_slice", "left_record", "right_record", "kind", "param", "output", "inputs", "scope", "gradient", "line"]


def _table(frame, width: int | None = None) -> list[str]:
    """The frame as text lines; with ``width``, the columns that fit it (taken in
    :data:`PRIORITY` order), the rest named under it (``--json`` / ``--csv`` give every field)."""
    shown = frame.astype(object).copy()
    if "scope" in shown:
        shown["scope"] = [short_scope(v) for v in shown["scope"]]
    for column in shown.columns:
        shown[column] = [_cell(v) for v in shown[column]]
    left_out: list[str] = []
    if width is not None:
        columns = list(shown.columns)
        priority = [c for c in PRIORITY if c in columns] + [c for c in columns if c not in PRIORITY]
        layout = lay_out(shown.to_dict("records"), columns, width=width, priority=priority)
        left_out = layout.left_out
        shown = shown[layout.columns]
    lines = [shown.to_string(index=False, max_colwidth=56)]
    if left_out:
        lines.append(f"(left out to fit {width} columns: {', '.join(left_out)}; --json / --csv give every field)")
    return lines


def _per_rank_lines(result, groups) -> list[str]:
    """One line per kind and pair of groups: the communication groups that differ only as each
    rank's own group does (:func:`msinspect.analysis.compare.ranks.per_rank`)."""
    lines = [f"\ncommunication groups per rank, as expected: {len(groups)} (each side's group holds its own "
             "rank, as many ranks spaced alike: not a finding)"]
    counts: dict[tuple, int] = {}
    for row in groups.to_dict("records"):
        key = (row["kind"], tuple(row["left_group"]), tuple(row["right_group"]))
        counts[key] = counts.get(key, 0) + 1
    for (kind, left, right), n in counts.items():
        lines.append(f"  {kind}: {n} ({result.left_label}: {ranks_text(left, word=True)}; "
                     f"{result.right_label}: {ranks_text(right, word=True)})")
    return lines


def format_diff(result, width: int | None = None) -> str:
    """Plain text for a terminal of ``width`` columns (None: every column): ``left`` / ``right``
    columns, named by the ranks' labels in the header. Missing values read "-"; communication groups that differ only as every rank's own
    group does are summed up per kind below the groups that differ, not listed as findings."""
    lines = [f"diff left:  {result.left_label} ({result.left_file})",
             f"     right: {result.right_label} ({result.right_file})", stage_line(result)]
    for section in result.SECTIONS:
        frame = getattr(result, section)
        expected = None
        if section == "comm" and not frame.empty:
            expected, frame = frame[frame["per_rank"] == True], frame[frame["per_rank"] != True]  # noqa: E712
            frame = frame.drop(columns="per_rank")
        lines.append(f"\n{TITLES[section]}: {len(frame)}")
        if section == "only" and not frame.empty:
            lines.extend(_stage_note(result))
        if not frame.empty:
            if section == "comm":
                frame = frame.assign(left_group=[_group(g) for g in frame["left_group"]],
                                     right_group=[_group(g) for g in frame["right_group"]])
            if section == "slices":
                frame = frame.assign(left_slice=[_slice(v, result.left_label) for v in frame["left_slice"]],
                                     right_slice=[_slice(v, result.right_label) for v in frame["right_slice"]])
                if not result.recorded:  # MindSpore's own record, beside, only where a rank folder kept one
                    frame = frame.drop(columns=["left_record", "right_record"])
            lines.extend(_table(frame, width))
        if expected is not None and not expected.empty:
            lines.extend(_per_rank_lines(result, expected))
    for section, counts in result.unaligned.items():
        if any(counts.values()):
            lines.append(f"\nnot aligned, so not compared ({section}): "
                         f"{counts['left']} of left ({result.left_label}), {counts['right']} of right "
                         f"({result.right_label})")
    if result.identical:
        lines.append("\nno differences")
    return "\n".join(lines)


def _stage_note(result) -> list[str]:
    """Why operators are on one side only, when the two ranks hold (or may hold) different
    pipeline stages."""
    if result.same_stage is False:
        return [f"({result.left_label} and {result.right_label} hold different pipeline stages: each stage's own "
                "operators are on its side only, not compared)"]
    if result.same_stage is None and result.pipelined:
        return ["(the job has a pipeline and which stage each rank holds cannot be told: an operator of one "
                "stage only is listed here, not compared)"]
    return []


def _group(ranks) -> str:
    """A group's ranks as every message writes them (``0-3``)."""
    if is_missing(ranks) or not len(ranks):
        return "cannot tell (the file names no ranks)"
    return ranks_text(ranks)


def _slice(text: str, label: str) -> str:
    """``absent on rank_4`` for a weight the rank does not hold."""
    return f"absent on {label}" if text == "absent" else text


@click.command()
@click.argument("left", type=click.Path())
@click.argument("right", type=click.Path())
@stage_option
@json_option
@csv_option
@click.option("--exit-code", is_flag=True, help="Exit 1 when the ranks differ (like diff(1)).")
@lenient_option
def diff(left, right, stage, as_json, as_csv, exit_code, lenient):
    """Compare two ranks (two rank_N folders, or two files): pipeline stage, operators present in
    one only, shape and strategy differences, communication groups and parameter slices.

    Operators are aligned by their place among their data neighbours (op type, scope, the number
    of dimensions of their tensors, the operators and parameters around them), which survives
    renames and hashes; repeats (one per micro-batch) by their order in the file, within one
    pipeline stage. Each stage's own operators are listed as present on one side only. What
    cannot be aligned is counted, not compared. Communication groups that differ only as each
    rank's own group does (rank 0 in (0, 2), rank 1 in (1, 3)) are summed up as expected, not
    listed. Given two rank folders of one dump root, the whole root is read to learn the
    pipeline stages and each rank's place in the device grid. A warning says when the two sides
    seem to come from different runs. --csv: every section's rows in one table, with a section
    column.
    """
    from msinspect.analysis.compare.ranks import diff_ranks

    with errors():
        result = diff_ranks(left, right, stage, lenient=lenient)
    warn_skipped(result.skipped)
    stages = tell_pair(result.left_label, result.left_file, result.right_label, result.right_file)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(to_json({**result.to_dict(), **stages}))
    elif as_csv:
        click.echo(to_csv(result.rows()), nl=False)
    else:
        out = stdout()
        out.print(format_diff(result, out.width), markup=False, soft_wrap=True)
    sys.exit(1 if exit_code and not result.identical else 0)
