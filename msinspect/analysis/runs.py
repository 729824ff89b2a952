"""Whether two ranks come from one run: run folder, run record, world and graph set.

Two sides come from different runs when they lie in different run folders (the folder holding
the ``rank_N/`` folders), their run records (``config.json`` beside the rank folders) differ,
their worlds differ (the record's ``ranks``, else the size the IR states over the world group), or
their graph sets differ (the IR file names of each rank folder: MindSpore numbers its dumps in
writing order, so every rank of one run holds the same names; two runs with the same dump
settings hold the same names too, so this alone does not tell them apart).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from msinspect.analysis.collect import RankResult
from msinspect.dumps import RankDump


def run_folder(rank: RankDump) -> Path:
    """The folder of the run a rank belongs to: the one holding its ``rank_N/`` folder, or its
    own folder when it has no rank number."""
    folder = rank.path if rank.path.is_dir() else rank.path.parent
    return folder.parent if rank.rank is not None and folder.name == f"rank_{rank.rank}" else folder


def run_record(rank: RankDump) -> dict | None:
    """The run record (``config.json``) beside the rank folders; None when there is none or it
    cannot be read as a JSON object."""
    path = run_folder(rank) / "config.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def graph_set(rank: RankDump) -> str | None:
    """A short hash of the IR file names of a rank folder (MindSpore numbers them in writing
    order; every rank of one run holds the same names); None for a single file."""
    if not rank.path.is_dir():
        return None
    names = sorted(p.name for p in rank.files) + sorted(u.path.name for u in rank.unreadable)
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:12]


def _world(record: dict | None, result: RankResult) -> int | None:
    ranks = record.get("ranks") if record else None
    if isinstance(ranks, int) and not isinstance(ranks, bool) and ranks > 0:
        return ranks
    return result.world_size


def run_warnings(left: RankDump, right: RankDump, lr: RankResult, rr: RankResult,
                 labels: tuple[str, str]) -> list[str]:
    """Why ``left`` and ``right`` may come from different runs, in words (empty: nothing says so)."""
    found = []
    lf, rf = run_folder(left), run_folder(right)
    if os.path.realpath(lf) != os.path.realpath(rf):
        found.append(f"{labels[0]} and {labels[1]} lie in different run folders ({lf}, {rf}): "
                     "they may come from different runs")
    l_rec, r_rec = run_record(left), run_record(right)
    if os.path.realpath(lf) != os.path.realpath(rf):
        if l_rec is not None and r_rec is not None and l_rec != r_rec:
            found.append(f"their run records differ ({lf / 'config.json'}, {rf / 'config.json'}): different runs")
        elif (l_rec is None) != (r_rec is None):
            has = lf if l_rec is not None else rf
            found.append(f"only one side has a run record ({has / 'config.json'})")
    lw, rw = _world(l_rec, lr), _world(r_rec, rr)
    if lw is not None and rw is not None and lw != rw:
        found.append(f"their worlds differ ({labels[0]}: {lw} ranks, {labels[1]}: {rw}): different jobs")
    lg, rg = graph_set(left), graph_set(right)
    if lg is not None and rg is not None and lg != rg:
        found.append(f"their rank folders hold different IR files ({lg} vs {rg}: names or writing order differ): "
                     "different runs or different dump settings")
    return found
