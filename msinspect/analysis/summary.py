"""One row per rank of an analysed dump: the file read, strategies, communication per kind, wire
bytes, weights and the ranks of its pipeline stage (what ``msinspect summary`` prints)."""
from __future__ import annotations

import pandas as pd

SUMMARY_COLUMNS = [
    "rank", "rank_label", "file", "stage", "family", "status", "strategies", "set_by_user", "comm", "by_kind",
    "wire_bytes", "wire_unknown", "weights", "sharded_weights", "stage_ranks", "complete", "other_stage", "note",
    "rank_group", "rank_group_odd", "rank_group_distinct",
]


def summary_frame(analysis, groups=None) -> pd.DataFrame:
    """Per rank of ``analysis`` (:class:`~msinspect.analysis.collect.Analysis`): the file read, its
    status, strategies (and how many the user set), communication operators per kind, the bytes
    they send on the wire per step (None when an operator's bytes cannot be told), the weights, and
    the ranks of its pipeline stage (None when they cannot be told). ``other_stage`` and ``note``
    flag a rank read at another stage than the rest; a rank that could not be read gets a row with
    status ``not read`` and the reason, its counts None (not 0: nothing was read). ``rank_group*``:
    the rank's group (:func:`~msinspect.analysis.groups.rank_groups`, or ``groups`` when the caller
    made them already), what sets it apart from its group-mates and its group from the others."""
    from msinspect.analysis.groups import rank_groups

    reads = {str(r.file): r for r in analysis.plan.read}
    rows = []
    for result in analysis.results:
        read = reads.get(result.file)
        strategies = pd.DataFrame(result.strategies)
        comm = pd.DataFrame(result.comm)
        kinds = comm["kind"].value_counts().to_dict() if not comm.empty else {}
        stage_ranks = analysis.context(result.rank).stage_ranks
        rows.append({
            "rank": result.rank, "rank_label": result.label, "file": result.file, "stage": result.stage,
            "family": result.family, "status": result.status,
            "strategies": len(strategies),
            "set_by_user": int((strategies["set_by"] == "user").sum()) if not strategies.empty else 0,
            "comm": len(comm), "by_kind": {k: int(v) for k, v in sorted(kinds.items())},
            "wire_bytes": (int(comm["wire_bytes"].sum()) if comm["wire_bytes"].notna().all() else None)
            if not comm.empty else 0,
            "wire_unknown": int(comm["wire_bytes"].isna().sum()) if not comm.empty else 0,
            "weights": result.weights,  # every parameter with a value
            "sharded_weights": len(result.params),  # those an operator with a strategy reads
            "stage_ranks": list(stage_ranks) if stage_ranks else None,
            "complete": result.complete,
            "other_stage": bool(read and read.other_stage), "note": read.note if read else None,
        })
    for missing in analysis.plan.not_read:  # the world is never silently smaller than the dump
        rows.append({"rank": missing.rank, "rank_label": missing.label, "file": None, "stage": None,
                     "status": "not read", "complete": False, "other_stage": False, "note": missing.note})
    frame = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    for column, values in (groups or rank_groups(analysis)).columns(frame["rank_label"]).items():
        frame[column] = values
    return frame.astype({c: "Int64" for c in ("rank", "strategies", "set_by_user", "comm", "wire_bytes",
                                              "wire_unknown", "weights", "sharded_weights")})
