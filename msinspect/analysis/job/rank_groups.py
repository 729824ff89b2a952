"""Rank groups: ranks whose graphs are the same up to rank-specific values.

After tlparse's divergence groups. Every rank of an SPMD job compiles the same graph except for
what names the rank: communication group names and rank lists, Send / Receive peers, the offsets
of the slices it takes. A rank's :class:`~msinspect.analysis.rank.signature.Signature` (made in the
worker that analysed it, from its compact rows, so the main process never needs a graph) leaves
those out and keeps the rest:

- ``weights``: the weights its operators read (ranks of one pipeline stage hold the same ones);
- ``ops``: how many operators of each type it has;
- ``strategies``: every strategy (op, in / out strategy, set by user or planner);
- ``shapes``: the per-rank shapes of the operators with a strategy;
- ``comm``: the inserted communication by op, kind, group size, shape and dtype.

Ranks whose files hold the same weights (``: has_default`` parameters, by name) are group-mates:
the same pipeline stage. Among them, the
signature most of them share (more than half) is the group's; a rank with another one is *odd*
and flagged with what differs (a different op, a different strategy: often the bug a user
hunts). Where no signature holds more than half, each is a group of its own. Groups are named
A, B, ... by their lowest rank; each says what distinguishes it from the others (from the groups
before and after it when there are more than :data:`COMPARE_ALL`).

A rank read at another stage than the rest, read in part (``--lenient``) or not read at all is
in no group, with the reason: its graph cannot be compared.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from msinspect.mindspore.naming import stable_name
from msinspect.analysis.rank.signature import Signature, items_of
from msinspect.dumps import rank_folder, rank_of_name
from msinspect.ranks_text import ranks_text

if TYPE_CHECKING:
    from msinspect.analysis.job.collect import Analysis, RankResult

#: Up to this many groups, each is told apart from every other; beyond, from its neighbours.
COMPARE_ALL = 8

_PART_WORDS = {"weights": "weights", "ops": "operators", "strategies": "strategies",
               "shapes": "per-rank shapes", "comm": "communication"}


class RankLabels(Sequence):
    """Rank labels in order (``rank_3``), held as the ranks' numbers, each label made on access,
    and the labels of folders without a number: a group of 10,000 ranks holds no string for each."""

    def __init__(self, numbers: list[int | None], labels: list[str]):
        self._numbers = numbers
        self._loose = {i: label for i, (n, label) in enumerate(zip(numbers, labels)) if label != _label(n)}

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        index = range(len(self))[index]  # IndexError past the end; negative from the end
        return self._loose[index] if index in self._loose else _label(self._numbers[index])

    def __len__(self) -> int:
        return len(self._numbers)

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return repr(list(self))


def _label(number: int | None) -> str | None:
    return rank_folder(number) if number is not None else None


@dataclass
class RankGroup:
    """Ranks whose graphs are the same up to rank-specific values."""

    name: str
    """``A``, ``B`` ... by lowest rank."""
    ranks: Sequence[str]
    """Labels of its ranks (``rank_3``), odd ones included, in rank order (a list, or
    :class:`RankLabels`)."""
    numbers: list[int | None]
    """Their rank numbers (None for a folder without one)."""
    pipeline_stage: int | None = None
    """The pipeline stage its ranks hold (0 first), when the dump shows stages and has several."""
    pipelined: bool | None = None
    """Whether the job has more than one pipeline stage; None when that cannot be told."""
    distinct: list[str] = field(default_factory=list)
    """What distinguishes it from each other group: the parts that differ (``vs group B:
    weights, operators``)."""
    details: dict[str, list[str]] = field(default_factory=dict)
    """Other group's name -> what differs, in detail (what this group has more or fewer of)."""
    odd: dict[str, list[str]] = field(default_factory=dict)
    """Ranks of the group whose graph differs from their group-mates', with what differs."""

    def heading(self) -> str:
        """``ranks 0-3, 8-11: group A (pipeline stage 0)``."""
        where = (f" (pipeline stage {self.pipeline_stage})" if self.pipeline_stage is not None
                 else " (no pipeline)" if self.pipelined is False else "")
        return f"{self.ranks_text()}: group {self.name}{where}"

    def ranks_text(self) -> str:
        """``ranks 0-3, 8-11`` (:func:`~msinspect.ranks_text.ranks_text`), then the labels of its
        folders without a rank number."""
        unnumbered = [label for n, label in zip(self.numbers, self.ranks) if n is None]
        if not unnumbered:
            return ranks_text(self.numbers, word=True)
        numbered = ranks_text(n for n in self.numbers if n is not None)
        return ("rank " if len(self.ranks) == 1 else "ranks ") + ", ".join(filter(None, [numbered, *unnumbered]))

    def to_dict(self) -> dict:
        return {"group": self.name, "ranks": self.numbers, "rank_labels": list(self.ranks),
                "pipeline_stage": self.pipeline_stage, "distinct": self.distinct,
                "details": [{"vs": k, "differs": v} for k, v in self.details.items()],
                "odd": [{"rank_label": label, "differs": what} for label, what in self.odd.items()]}


@dataclass
class RankGroups:
    """Every rank of an analysis in its group, or why in none."""

    groups: list[RankGroup]
    ungrouped: dict[str, str] = field(default_factory=dict)
    """Rank label -> why the rank is in no group."""

    def group_of(self, label: str) -> str | None:
        """The group name of the rank labelled ``label``; None when it is in none."""
        group = self._group(label)
        return group.name if group else None

    def _group(self, label: str) -> RankGroup | None:
        """The group of the rank labelled ``label``, found by its number (``rank_N``) or, for a
        folder without one, its label: one entry a rank, no label held."""
        index = self.__dict__.get("_index")  # made once, on first use (not a field)
        if index is None:
            index = self.__dict__["_index"] = {
                n if n is not None and label == _label(n) else label: group
                for group in self.groups for n, label in zip(group.numbers, group.ranks)}
        number = rank_of_name(label)
        found = index.get(number) if number is not None else None
        return found or index.get(label)

    def columns(self, labels) -> dict[str, list]:
        """Per rank label (a table's rows): ``rank_group`` (its name, None when in none),
        ``rank_group_odd`` (what differs from its group-mates; None when nothing) and
        ``rank_group_distinct`` (what distinguishes its group from the others). Not ``group``:
        that is a communication operator's group everywhere else."""
        out: dict[str, list] = {"rank_group": [], "rank_group_odd": [], "rank_group_distinct": []}
        for label in labels:
            for column, value in self.columns_of(label).items():
                out[column].append(value)
        return out

    def columns_of(self, label: str) -> dict:
        """:meth:`columns` of one rank label."""
        group = self._group(label)
        return {"rank_group": group.name if group else None,
                "rank_group_odd": group.odd.get(label) if group else None,
                "rank_group_distinct": group.distinct if group else None}

    def lines(self) -> list[str]:
        """For a person: one line per group, then its odd ranks, then the ranks in no group."""
        out = []
        for group in self.groups:
            shown = group.distinct[:3] + ([f"and {len(group.distinct) - 3} other groups"]
                                          if len(group.distinct) > 3 else [])
            out.append(group.heading() + (": " + "; ".join(shown) if shown else ""))
            out += [f"  odd: {label} differs from its group-mates: {'; '.join(what)}"
                    for label, what in group.odd.items()]
        out += [f"in no group: {label}: {why}" for label, why in self.ungrouped.items()]
        return out

    def to_dict(self) -> dict:
        return {"groups": [g.to_dict() for g in self.groups],
                "ungrouped": [{"rank_label": k, "why": v} for k, v in self.ungrouped.items()]}


def _letters(i: int) -> str:
    name = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        name = chr(ord("A") + r) + name
    return name


def _counted(items: Counter, limit: int = 4) -> str:
    shown = [f"{k if isinstance(k, str) else _item_text(k)}" + (f" x{n}" if n > 1 else "")
             for k, n in sorted(items.items(), key=lambda kv: repr(kv[0]))[:limit]]
    more = len(items) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _item_text(item: tuple) -> str:
    return " ".join(str(v) for v in item if v is not None)


def _strategy_changes(mine: RankResult, theirs: RankResult, limit: int = 3) -> list[str]:
    """Operators whose strategy differs, paired by instance name (less hashes) and op."""
    def keyed(result):
        out: dict = {}
        for row in result.strategies:
            out.setdefault((stable_name(row["name"]), row["op"]), Counter())[
                (row["in_strategy"], row["out_strategy"], row["set_by"])] += 1
        return out

    a, b = keyed(mine), keyed(theirs)
    changed = []
    for key in sorted(set(a) & set(b), key=repr):
        if a[key] != b[key]:
            got, want = a[key] - b[key], b[key] - a[key]
            got_text = ", ".join(f"in {s[0]}" + (f" out {s[1]}" if s[1] else "") + f" ({s[2]})" for s in got)
            want_text = ", ".join(f"in {s[0]}" + (f" out {s[1]}" if s[1] else "") + f" ({s[2]})" for s in want)
            changed.append(f"{key[0]} ({key[1]}): {got_text or 'fewer'} where the others have {want_text or 'more'}")
    only_a, only_b = sorted(set(a) - set(b), key=repr), sorted(set(b) - set(a), key=repr)
    if only_a:
        changed.append("strategies only here: " + ", ".join(f"{n} ({o})" for n, o in only_a[:limit]))
    if only_b:
        changed.append("strategies missing here: " + ", ".join(f"{n} ({o})" for n, o in only_b[:limit]))
    more = len(changed) - limit
    return changed[:limit] + ([f"and {more} more strategy differences"] if more > 0 else [])


def differences(mine: RankResult, theirs: RankResult) -> list[str]:
    """What differs between two ranks' graphs, part by part, in words: what ``mine`` has more or
    fewer of than ``theirs``."""
    out = []
    for part in mine.signature.differing(theirs.signature):
        if part == "strategies":
            out += _strategy_changes(mine, theirs)
            continue
        a, b = items_of(mine, part), items_of(theirs, part)
        more, fewer = a - b, b - a
        what = _PART_WORDS[part]
        text = []
        if more:
            text.append(f"{sum(more.values())} more ({_counted(more)})")
        if fewer:
            text.append(f"{sum(fewer.values())} fewer ({_counted(fewer)})")
        out.append(f"{what}: " + "; ".join(text or ["the same items, in other numbers"]))
    return out


def _pipeline_stages(analysis: Analysis) -> tuple[dict[int, int], bool | None]:
    """Rank -> pipeline stage number (0 first, stages ordered by their lowest rank) and whether
    the job has several stages; ({}, None) when stages cannot be told."""
    stages = sorted(set(analysis.stages.values()), key=lambda ranks: min(ranks) if ranks else -1)
    if not stages:
        return {}, None
    if len(stages) == 1:
        return {}, False
    number = {ranks: i for i, ranks in enumerate(stages)}
    return {rank: number[ranks] for rank, ranks in analysis.stages.items()}, True


def rank_groups(analysis: Analysis) -> RankGroups:
    """The rank groups of an analysis (see the module's docstring)."""
    odd_stage = {str(r.file) for r in analysis.plan.other_stage} if analysis.plan else set()
    ungrouped: dict[str, str] = {}
    mates: dict[str, list[RankResult]] = {}
    for result in analysis.results:
        if result.error:
            ungrouped[result.label] = f"cannot tell: not read ({result.error})"
        elif result.file in odd_stage:
            ungrouped[result.label] = f"cannot tell: read at {result.stage}, not at the stage of the others"
        elif not result.complete:
            ungrouped[result.label] = "cannot tell: its file was read in part (--lenient)"
        elif result.signature is None:
            ungrouped[result.label] = "cannot tell: no signature"
        else:
            mates.setdefault(result.signature.holds, []).append(result)
    if analysis.plan:
        for missing in analysis.plan.not_read:
            ungrouped[missing.label] = f"cannot tell: not read ({missing.note})"
    stage_of, pipelined = _pipeline_stages(analysis)
    found: list[tuple[list[RankResult], RankResult, dict[str, list[str]]]] = []  # members, norm, odd
    for members in mates.values():
        by_sig: dict[Signature, list[RankResult]] = {}
        for result in members:
            by_sig.setdefault(result.signature, []).append(result)
        common = min(by_sig.values(), key=lambda rs: (-len(rs), _order(rs[0])))
        if len(common) * 2 > len(members):
            odd = {r.label: differences(r, common[0])
                   for r in members if r.signature != common[0].signature}
            found.append((members, common[0], odd))
        else:
            found += [(rs, rs[0], {}) for rs in by_sig.values()]
    found.sort(key=lambda item: min(_order(r) for r in item[0]))
    groups = []
    for i, (members, norm, odd) in enumerate(found):
        members = sorted(members, key=_order)
        stages = {stage_of.get(r.rank) for r in members}
        numbers = [r.rank for r in members]
        group = RankGroup(_letters(i), RankLabels(numbers, [r.label for r in members]), numbers,
                          stages.pop() if len(stages) == 1 else None, pipelined, odd=odd)
        groups.append((group, norm))
    for i, (group, norm) in enumerate(groups):
        # every other group when there are a few; else the groups before and after it (bounded work)
        near = groups if len(groups) <= COMPARE_ALL else groups[max(0, i - 1):i + 2]
        for other, other_norm in near:
            if other is not group:
                parts = norm.signature.differing(other_norm.signature)
                group.distinct.append(f"vs group {other.name}: "
                                      + (", ".join(_PART_WORDS[p] for p in parts) if parts else "the same graph"))
                group.details[other.name] = differences(norm, other_norm)
    return RankGroups([g for g, _ in groups], ungrouped)


def _order(result: RankResult) -> tuple:
    return (result.rank is None, result.rank if result.rank is not None else 0, result.label)
