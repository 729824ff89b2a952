"""Which file the analyses read beside a rank's file for its global shapes, and how many ranks the
job has: facts about a dump's files, chosen before anything is parsed (no analysis is imported
here). Which file of a rank is read is :func:`msinspect.dumps.pick_file`."""
from __future__ import annotations

import json
from pathlib import Path

from msinspect.dumps import Dump, RankDump
from msinspect.stages import GLOBAL_SHAPE_STAGES, REFERENCE_STAGES, stage_of


def pick_reference(rank: RankDump, path: Path) -> Path | None:
    """A pre-parallel file of the same rank, for global shapes, when ``path`` shows per-rank ones
    (its stage is not one of :data:`~msinspect.stages.GLOBAL_SHAPE_STAGES`), or per-rank weights
    (``step_parallel_end``: the parallel pass cuts parameters in place, not activations)."""
    found = reference_text(rank, str(path))
    return Path(found) if found is not None else None


def reference_text(rank: RankDump, path: str) -> str | None:
    """:func:`pick_reference` of the file ``path``, as text: no path made for each of 10,000
    ranks (see :meth:`~msinspect.dumps.RankDump.file_text`)."""
    stage = stage_of(path)
    if stage in GLOBAL_SHAPE_STAGES and stage != "step_parallel_end":
        return None
    have = rank.stages()
    for candidate in REFERENCE_STAGES:
        if candidate in have:
            return rank.file_text(candidate)
    return None


def world_of(dump: Dump) -> tuple[int, ...] | None:
    """Every rank of the job: from the run record (``config.json`` ``ranks``) beside the dump,
    else the ``rank_N`` folders found when they are 0..N-1."""
    for folder in (dump.path, dump.path.parent):
        record = Path(folder) / "config.json"
        if record.is_file():
            try:
                ranks = json.loads(record.read_text(encoding="utf-8")).get("ranks")
            except (OSError, ValueError):
                ranks = None
            if isinstance(ranks, int) and ranks > 0:
                return tuple(range(ranks))
    numbers = sorted({r.rank for r in dump.ranks if r.rank is not None}  # with ranks that could not be read
                     | {u.rank for u in dump.unreadable if u.rank is not None})
    if numbers and numbers == list(range(len(numbers))) and len(numbers) > 1:
        return tuple(numbers)
    return None
