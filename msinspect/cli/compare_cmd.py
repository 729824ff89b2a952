"""``msinspect compare RUN_A RUN_B``: two runs of one model (another parallel configuration, another
MindSpore release), compared operator by operator at one rank."""
from __future__ import annotations

import click

from msinspect.cli.output import errors, json_option, lenient_option, stage_option, stdout, to_json, warn_skipped
from msinspect.schema import is_missing

#: How a ``comm`` row's change reads.
CHANGE_WORDS = {"removed": "removed", "added": "added", "fewer": "fewer on the right",
                "more": "more on the right", "regrouped": "other groups", "resized": "other bytes"}


def size_text(value) -> str:
    """A byte count as a person reads it: ``6.0 MiB``, ``512 B``, ``0``; ``-`` when unknown."""
    if is_missing(value):
        return "-"
    value = int(value)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.1f} {unit}"
    return f"{value} B" if value else "0"


def cell_scope(scope) -> str:
    """The scope's last cell, for a narrow table: ``.../attention-Attention`` (the pieces a
    gradient or a redistribution adds, ``Grad_...``, left out: the kind says as much)."""
    if not isinstance(scope, str) or not scope:
        return "-"
    parts = scope.split("/")
    while len(parts) > 1 and parts[-1].startswith(("Grad_", "Grad")) and not parts[-1].endswith("-Head"):
        parts.pop()
    return parts[-1] if len(parts) == 1 else ".../" + parts[-1]


def _bytes(value, why: str = "cannot tell") -> str:
    """Bytes with thousands separators and a readable size: ``3,145,728 (3.0 MiB)``."""
    if is_missing(value):
        return why
    value = int(value)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value:,} ({value / size:.1f} {unit})"
    return f"{value:,}"




def _arrow(left, right) -> str:
    """``4 -> 0``; one value when both sides agree."""
    return str(left) if left == right else f"{left} -> {right}"


def _table(rows: list[dict], columns: list[str], width: int | None, priority: list[str] | None = None) -> list[str]:
    """Rows as text for ``width`` columns: the columns that fit, most telling first (``priority``),
    the rest named under the table (``--json`` gives every field)."""
    from msinspect.cli.display import cell

    rows = [{c: cell(r.get(c)) for c in columns} for r in rows]
    left_out: list[str] = []
    if width is not None:
        chosen, used = [], 0  # the indent (2) less the last column's gap (2)
        for column in [c for c in (priority or columns) if c in columns]:
            need = max([len(column)] + [len(r[column]) for r in rows]) + 2
            if chosen and used + need > width:
                left_out.append(column)
                continue
            chosen.append(column)
            used += need
        columns = [c for c in columns if c in chosen]
    lines = ["  " + line for line in plain_table(rows, columns)]
    if left_out:
        lines.append(f"  (left out to fit {width} columns: {', '.join(left_out)}; --json gives every field)")
    return lines


def plain_table(rows: list[dict], columns: list[str]) -> list[str]:
    """Rows of text cells as aligned lines under a header, each column as wide as its widest cell,
    left-aligned, two spaces apart."""
    widths = {c: max([len(c)] + [len(str(r.get(c, ""))) for r in rows]) for c in columns}
    out = ["  ".join(c.ljust(widths[c]) for c in columns).rstrip()]
    out += ["  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns).rstrip() for r in rows]
    return out


def format_compare(result, width: int | None = None) -> str:
    """Plain text: the two runs, what their records say differently, strategies that changed,
    communication added, removed or changed, bytes per axis and memory per rank."""
    left, right = result.left_label, result.right_label
    lines = [f"compare left:  {left} ({result.left_run}, {_world(result.left_world)})",
             f"        right: {right} ({result.right_run}, {_world(result.right_world)})",
             f"rank {result.rank}: {result.left_file}",
             f"{' ' * len(f'rank {result.rank}: ')}{result.right_file}"]
    if result.settings:
        lines.append("\nsettings that differ (run records):")
        lines += [f"  {s['name']}: {_setting(s['left'])} -> {_setting(s['right'])}" for s in result.settings]

    rows = result.strategies.to_dict("records")
    lines.append(f"\nstrategies that changed: {result.strategy_changes} operator(s)"
                 + (f", {len(rows)} row(s) (operators that changed alike, one per block, are one row: n)"
                    if rows else ""))
    if rows:
        gradient = any(r["gradient"] for r in rows)
        shown = [{**r, "scope": cell_scope(r["scope"]), "gradient": "yes" if r["gradient"] else "",
                  "left": r["left_strategy"], "right": r["right_strategy"]}
                 for r in sorted(rows, key=lambda r: (r["gradient"], r["scope"], r["op"]))]
        columns = ["op", "name", "n", "left", "right"] + (["gradient"] if gradient else []) + ["scope"]
        lines += _table(shown, columns, width, ["op", "n", "left", "right", "name", "gradient", "scope"])

    changed = result.comm_changes()
    same = len(result.comm) - len(changed)
    lines.append(f"\ncommunication inserted at rank {result.rank}, by kind, op and scope: {len(changed)} row(s) "
                 f"changed, {same} the same")
    for change in CHANGE_WORDS:
        rows = [r for r in changed.to_dict("records") if r["change"] == change]
        if not rows:
            continue
        lines.append(f"  {CHANGE_WORDS[change]} ({len(rows)}):")
        shown = [{"kind": r["kind"], "op": r["op"], "scope": cell_scope(r["scope"]),
                  "count": _arrow(r["left_count"], r["right_count"]),
                  "groups": _arrow(r["left_groups"], r["right_groups"]),
                  "wire_bytes": _arrow(size_text(r["left_wire_bytes"]), size_text(r["right_wire_bytes"]))}
                 for r in rows]
        lines += ["  " + line for line in _table(shown, ["kind", "op", "count", "groups", "wire_bytes", "scope"],
                                                 None if width is None else width - 2)]
    lines += _cost_lines(result)
    if result.notes:
        lines.append("")
        lines += [f"note: {n}" for n in result.notes]
    return "\n".join(lines)


def _cost_lines(result) -> list[str]:
    from msinspect.analysis.compare.runs import change_text

    lines = [f"\nbytes on the wire per step at rank {result.rank}, by parallel axis:"]
    if result.axes is None:
        lines.append(f"  {result.axes_why}")
    else:
        rows = [{"axis": r["axis"], "left": _bytes(r["left_bytes"]), "right": _bytes(r["right_bytes"]),
                 "change": change_text(r["left_bytes"], r["right_bytes"])} for r in result.axes.to_dict("records")]
        lines += _table(rows, ["axis", "left", "right", "change"], None)
    lines.append(f"\nstatic memory at rank {result.rank} (weights, gradients, optimizer states):")
    if result.memory is None:
        lines.append(f"  {result.memory_why}")
    else:
        rows = [{"part": r["part"], "left": _bytes(r["left_bytes"]), "right": _bytes(r["right_bytes"]),
                 "change": change_text(r["left_bytes"], r["right_bytes"])} for r in result.memory.to_dict("records")]
        lines += _table(rows, ["part", "left", "right", "change"], None)
    return lines


def _world(world) -> str:
    return f"{world} ranks" if world else "world unknown"


def _setting(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return " ".join(str(v) for v in value) or "(none)"
    return str(value)


@click.command()
@click.argument("run_a", type=click.Path())
@click.argument("run_b", type=click.Path())
@click.option("--rank", type=click.IntRange(min=0), default=None,
              help="The rank compared on both sides (default: the lowest both runs hold).")
@stage_option
@json_option
@lenient_option
def compare(run_a, run_b, rank, stage, as_json, lenient):
    """Compare two runs of one model: another parallel configuration, another MindSpore release,
    sequence parallel on or off (two ranks of one job: msinspect diff).

    One rank of each (the same rank number) is compared operator by operator after alignment
    (op type, scope, the number of dimensions of each tensor, the operators around it; never
    names): strategies that changed (operators that changed alike as one row), the communication
    the parallel pass inserted by kind, op and scope (added, removed, more, fewer, other groups,
    other bytes), bytes on the wire per step by parallel axis and static memory at that rank
    before and after, and what the two run records (config.json) say differently. RUN_A and
    RUN_B: run folders, or folders holding one run (a sweep's setting).
    """
    from msinspect.analysis.compare.runs import compare_runs

    with errors():
        result = compare_runs(run_a, run_b, rank, stage, lenient=lenient)
    if result.ranks is not None:
        warn_skipped(result.ranks.skipped)
    if as_json:
        click.echo(to_json(result.to_dict()))
    else:
        out = stdout()
        out.print(format_compare(result, out.width), markup=False, soft_wrap=True)
