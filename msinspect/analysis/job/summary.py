"""One row per rank of an analysed dump: the file read, strategies, communication per kind, wire
bytes, weights and the ranks of its pipeline stage (what ``msinspect summary`` prints).

The rows are counts over each rank's rows, made by the worker that read the rank
(:mod:`msinspect.analysis.engine.tally`), without pandas: ``summary`` answered from the
cache (:mod:`msinspect.cache`) then never imports it, which is most of what such a run would cost."""
from __future__ import annotations

from typing import Iterator

from msinspect.analysis.engine.tally import tally
from msinspect.ranks_text import ranks_text

SUMMARY_COLUMNS = [
    "rank", "rank_label", "file", "stage", "family", "status", "strategies", "set_by_user", "comm", "by_kind",
    "wire_bytes", "wire_unknown", "weights", "sharded_weights", "stage_ranks", "complete", "other_stage", "note",
    "rank_group", "rank_group_odd", "rank_group_distinct", "failure",
]


def summary_rows(analysis, groups=None) -> list[dict]:
    """Per rank of ``analysis`` (:class:`~msinspect.analysis.job.collect.Analysis`), a dict of every
    one of :data:`SUMMARY_COLUMNS`: the file read, its status, strategies (and how many the user
    set), communication operators per kind, the bytes they send on the wire per step (None when an
    operator's bytes cannot be told), the weights, and the ranks of its pipeline stage (None when
    they cannot be told). ``other_stage`` and ``note`` flag a rank read at another stage than the
    rest; ``note`` also says why a pipeline's stage cannot be told; a rank that could not be read
    gets a row with status ``not read`` and the reason, its counts None (not 0: nothing was read).
    ``rank_group*``: the rank's group (:func:`~msinspect.analysis.job.rank_groups.rank_groups`, or
    ``groups`` when the caller made them already), what sets it apart from its group-mates and its
    group from the others."""
    return list(iter_summary_rows(analysis, groups))


def iter_summary_rows(analysis, groups=None) -> Iterator[dict]:
    """:func:`summary_rows` one row at a time, as each rank's rows are read (a job of many ranks
    keeps them on disk: :mod:`msinspect.analysis.engine.spool`), to write them as they come.
    ``stage_ranks`` is the stage's ranks as :func:`~msinspect.ranks_text.ranks_text` writes them
    (``0-3``), one string per stage: a list per row would make the JSON grow as the square of the
    ranks."""
    from msinspect.analysis.job.rank_groups import rank_groups

    grouped = groups or rank_groups(analysis)
    # a rank read at another stage is flagged, with why: only those are looked up (no entry a rank)
    odd = {r.read_from: r for r in analysis.plan.other_stage}
    stage_texts: dict[tuple, str] = {}  # one string per stage
    stage_note = f"pipeline stage cannot be told: {analysis.stages_note}" if analysis.stages_note else None
    for result in analysis.results:
        read = odd.get(result.file)
        stage_ranks = analysis.context(result.rank).stage_ranks
        if stage_ranks:
            if stage_ranks not in stage_texts:
                stage_texts[stage_ranks] = ranks_text(stage_ranks)
            stage_ranks = stage_texts[stage_ranks]
        counts = tally(result)  # counted by the worker: no rows read back from the spool
        yield _complete({
            "rank": result.rank, "rank_label": result.label, "file": result.file, "stage": result.stage,
            "family": result.family, "status": result.status,
            "strategies": counts.strategies, "set_by_user": counts.set_by_user,
            "comm": counts.comm, "by_kind": dict(counts.by_kind),
            "wire_bytes": counts.wire_bytes, "wire_unknown": counts.wire_unknown,
            "weights": result.weights,  # every parameter with a value
            "sharded_weights": counts.sharded_weights,  # those an operator with a strategy reads
            "stage_ranks": stage_ranks or None,
            "complete": result.complete,
            "other_stage": bool(read and read.other_stage),
            "note": _note(read.note if read else None, None if stage_ranks else stage_note),
            "failure": result.failure,
        }, grouped)
    for missing in analysis.plan.not_read:  # the world is never silently smaller than the dump
        yield _complete({"rank": missing.rank, "rank_label": missing.label, "status": "not read",
                         "complete": False, "other_stage": False, "note": missing.note}, grouped)


def _note(*notes: str | None) -> str | None:
    """The row's notes in one text: why its rank was read at another stage, why its pipeline
    stage cannot be told (:attr:`~msinspect.analysis.job.collect.Analysis.stages_note`)."""
    told = [note for note in notes if note]
    return "; ".join(told) if told else None


def _complete(row: dict, groups) -> dict:
    """``row`` with its rank's group columns, every one of :data:`SUMMARY_COLUMNS` in order."""
    grouped = groups.columns_of(row["rank_label"])
    return {column: grouped[column] if column in grouped else row.get(column) for column in SUMMARY_COLUMNS}
