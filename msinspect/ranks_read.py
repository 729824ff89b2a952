"""Which ranks an analysis reads, at which stage, and which it cannot read and why.

The analyses read one file per rank. :func:`plan_reads` chooses them so that every rank is read
at the same stage where it can be: the stage asked for, else the first of
:data:`~msinspect.stages.PREFERRED_STAGES` held by more than half of the ranks (else
the one held by the most). A rank without a
readable file of that stage is read at its own best stage and flagged (:attr:`RankRead.other_stage`);
a rank with no file to read (``--stage`` it lacks, a folder that cannot be listed, a ``rank_N``
link leading nowhere) is listed with the reason. The world is never silently smaller than the dump.
"""
from __future__ import annotations

import difflib
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from msinspect.dumps import Dump, RankDump, Unreadable, pick_file, rank_folder
from msinspect.errors import DumpNotFoundError
from msinspect.ranks_text import ranks_text
from msinspect.stages import PREFERRED_STAGES, stage_of


@dataclass(frozen=True, slots=True)
class RankRead:
    """One rank of a dump: the file read, or why none was. Its label, folder and file are made on
    access from its :attr:`source`: a plan of 10,000 ranks holds no string of its own for each."""

    source: RankDump | None
    """The rank's files (None for a folder that could not be listed: :attr:`lost`)."""
    found: str | None
    """The name of the file read among :attr:`source`'s names; None when the rank could not be read."""
    stage: str | None
    """The stage of that file."""
    other_stage: bool = False
    """Read at another stage than the rest of the dump (see :attr:`note`)."""
    note: str | None = None
    """Why the rank was not read, or why it was read at another stage."""
    lost: Unreadable | None = None
    """The folder that could not be listed, where there is no :attr:`source`."""

    @property
    def label(self) -> str:
        """``rank_3``, or the folder's name."""
        if self.source is not None:
            return self.source.label
        return rank_folder(self.lost.rank) if self.lost.rank is not None else self.lost.path.name

    @property
    def rank(self) -> int | None:
        """N of ``rank_N``; None when the folder does not say."""
        return self.source.rank if self.source is not None else self.lost.rank

    @property
    def where(self) -> str:
        """The rank's folder (or file), as text (:attr:`folder`: as a path)."""
        return self.source.where if self.source is not None else str(self.lost.path)

    @property
    def read_from(self) -> str | None:
        """The file read, as text (:attr:`file`: as a path); None when the rank could not be read."""
        if self.found is None:
            return None
        where = self.source.where
        return where if self.source.single else os.path.join(where, self.found)

    @property
    def folder(self) -> Path:
        """The rank's folder (or file)."""
        return Path(self.where)

    @property
    def file(self) -> Path | None:
        """The file read; None when the rank could not be read."""
        read_from = self.read_from
        return Path(read_from) if read_from is not None else None

    @property
    def read(self) -> bool:
        return self.read_from is not None

    def to_dict(self) -> dict:
        return {"rank": self.rank, "rank_label": self.label, "folder": self.where,
                "file": self.read_from, "stage": self.stage, "read": self.read,
                "other_stage": self.other_stage, "note": self.note}


@dataclass
class ReadPlan:
    """The file each rank of a dump is read from, at one stage where possible."""

    stage: str | None
    """The stage the ranks are read at (the odd ones out are flagged)."""
    ranks: list[RankRead]

    @property
    def read(self) -> list[RankRead]:
        """The ranks read, in rank order."""
        return [r for r in self.ranks if r.read]

    @property
    def not_read(self) -> list[RankRead]:
        return [r for r in self.ranks if not r.read]

    @property
    def other_stage(self) -> list[RankRead]:
        return [r for r in self.ranks if r.read and r.other_stage]

    @property
    def complete(self) -> bool:
        """Every rank of the dump was read."""
        return not self.not_read

    def to_dict(self) -> dict:
        return {"stage": self.stage, "read_count": len(self.read), "not_read_count": len(self.not_read),
                "other_stage_count": len(self.other_stage), "ranks": [r.to_dict() for r in self.ranks]}

    def format(self) -> list[str]:
        """Lines for a person: what was read, then each rank read at another stage or not read."""
        same = [r for r in self.read if not r.other_stage]
        lines = [f"read {len(same)} rank(s) at {self.stage}: {_labels(same)}" if same else
                 "read no rank at one common stage"]
        lines += [f"read {r.label} at {r.stage}, not {self.stage}: {r.note}" for r in self.other_stage]
        lines += [f"could not read {who}: {note}" for who, note in grouped(self.not_read)]
        if self.other_stage or self.not_read:
            lines.append("pipeline stages are told by the files' Send / Receive and groups alone, not by the "
                         "weights, when not every rank is read at one stage")
        return lines


def grouped(reads: list[RankRead]) -> list[tuple[str, str]]:
    """``(ranks, note)`` once per distinct note, in rank order: a reason 64 ranks share is one
    line (``ranks 0-63``), not 64."""
    by_note: dict[str, list[RankRead]] = {}
    for read in reads:
        by_note.setdefault(read.note or "", []).append(read)
    out = []
    for note, same in by_note.items():
        numbers = [r.rank for r in same]
        one_by_one = None in numbers or len(same) == 1
        who = ", ".join(r.label for r in same) if one_by_one else ranks_text(numbers, word=True)
        out.append((who, note))
    return out


def _labels(ranks: list[RankRead]) -> str:
    """``0-3, 6`` (:func:`~msinspect.ranks_text.ranks_text`), then the folders without a rank number."""
    numbered = ranks_text(r.rank for r in ranks if r.rank is not None)
    return ", ".join(filter(None, [numbered, *(r.label for r in ranks if r.rank is None)]))


def _broken(rank: RankDump, stage: str) -> str:
    """Why the rank has no readable ``stage`` file, in words."""
    broken = [u for u in rank.unreadable if stage_of(u.path) == stage]
    if broken:
        return "; ".join(u.format() for u in broken)
    return f"no '{stage}' IR file (stages present: {', '.join(rank.stages()) or 'none'})"


def most_held(dump: Dump, stages: tuple[str, ...]) -> str | None:
    """The first of ``stages`` held by more than half of the dump's ranks; None where none is."""
    held = Counter(s for r in dump.ranks for s in set(r.stages()) if s in stages)
    return next((s for s in stages if held[s] * 2 > len(dump.ranks)), None)


def plan_reads(dump: Dump, stage: str | None = None) -> ReadPlan:
    """Choose the file of every rank (see the module docstring). :class:`DumpNotFoundError` when
    no rank can be read at all."""
    if stage is None:
        held = Counter(s for r in dump.ranks for s in set(r.stages()) if s in PREFERRED_STAGES)
        if held:  # the first stage most ranks hold, else the one the most ranks hold
            most = [s for s in PREFERRED_STAGES if held[s] * 2 > len(dump.ranks)]
            common = most[0] if most else max(PREFERRED_STAGES, key=lambda s: (held[s], -PREFERRED_STAGES.index(s)))
            fallback = True
        else:  # none of the usual stages: each rank's newest file, the most common stage wins
            newest = Counter(stage_of(r.files[-1]) for r in dump.ranks if r.files)
            common, fallback = (newest.most_common(1)[0][0] if newest else None), True
    else:
        common, fallback = stage, False
    reads = []
    for rank in dump.ranks:
        found = rank.file_name(common)
        if found is not None:
            reads.append(RankRead(rank, found, common))
        elif fallback and rank.files:
            file = pick_file(rank, None)
            reads.append(RankRead(rank, file.name, stage_of(file), True,
                                  f"{_broken(rank, common)}; read at {stage_of(file)} instead"))
        else:
            reads.append(RankRead(rank, None, None, False, _broken(rank, common)))
    for folder in dump.unreadable:
        reads.append(RankRead(None, None, None, False, folder.format(), folder))
    reads.sort(key=lambda r: (r.rank is None, r.rank if r.rank is not None else 0, r.where))
    plan = ReadPlan(common, reads)
    if not plan.read:
        raise DumpNotFoundError(f"{dump.path}: no rank could be read"
                                + (f" at stage '{stage}'" if stage else "") + _did_you_mean(dump, stage) + ":\n  "
                                + "\n  ".join(f"{who}: {note}" for who, note in grouped(plan.not_read)))
    return plan


def _did_you_mean(dump: Dump, stage: str | None) -> str:
    """`` (did you mean 'validate'?)`` where ``stage`` is close to a stage the dump holds."""
    if stage is None:
        return ""
    held = sorted({s for r in dump.ranks for s in r.stages()})
    close = difflib.get_close_matches(stage, held, n=1) or [s for s in held if s.lower() == stage.lower()]
    return f" (did you mean '{close[0]}'?)" if close else ""
