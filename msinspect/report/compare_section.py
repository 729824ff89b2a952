"""The report's "Compared with" section: a job-to-job diff (:func:`msinspect.analysis.compare.runs.compare_runs`)
of the reported run and another run of the same model, as ``msinspect compare`` prints it."""
from __future__ import annotations

from msinspect.analysis.compare.runs import change_text
from msinspect.schema import is_missing

#: Rows of each table shown; the rest are counted (``msinspect compare --json`` has them all).
SHOWN = 40


def _strategy(value) -> str:
    return "-" if is_missing(value) else str(value).replace(" ", "")


def _bytes(value) -> str | None:
    return None if is_missing(value) else f"{int(value):,}"


def compare_section(diff) -> dict:
    """Plain rows of a :class:`~msinspect.analysis.compare.runs.JobDiff` for the template."""
    from msinspect.ranks_text import ranks_text

    def groups(value) -> str:
        if not value:
            return "-"
        return "; ".join(ranks_text(g) if isinstance(g, (tuple, list)) else str(g) for g in value)

    strategies = [{"op": r["op"], "name": r["name"], "scope": r["scope"], "n": int(r["n"]),
                   "left": _strategy(r["left_strategy"]), "right": _strategy(r["right_strategy"]),
                   "gradient": bool(r["gradient"])} for r in diff.strategies.to_dict("records")]
    comm = [{"kind": r["kind"], "op": r["op"], "scope": r["scope"], "change": r["change"],
             "count": f"{r['left_count']} -> {r['right_count']}",
             "groups": f"{groups(r['left_groups'])} -> {groups(r['right_groups'])}",
             "bytes": f"{_bytes(r['left_wire_bytes']) or '-'} -> {_bytes(r['right_wire_bytes']) or '-'}"}
            for r in diff.comm_changes().to_dict("records")]

    def before_after(frame, key: str) -> list[dict]:
        if frame is None:
            return []
        return [{"what": r[key], "left": _bytes(r["left_bytes"]), "right": _bytes(r["right_bytes"]),
                 "change": change_text(r["left_bytes"], r["right_bytes"], "cannot tell")} for r in frame.to_dict("records")]

    return {
        "left": diff.left_label, "right": diff.right_label, "right_run": diff.right_run, "rank": diff.rank,
        "left_file": diff.left_file, "right_file": diff.right_file, "settings": diff.settings, "notes": diff.notes,
        "strategy_changes": diff.strategy_changes, "strategies": strategies[:SHOWN],
        "strategies_left_out": max(0, len(strategies) - SHOWN),
        "comm": comm[:SHOWN], "comm_left_out": max(0, len(comm) - SHOWN),
        "axes": before_after(diff.axes, "axis"), "axes_why": diff.axes_why,
        "memory": before_after(diff.memory, "part"), "memory_why": diff.memory_why,
    }
