"""What an analysis of one file needs to know beyond the file: which rank wrote it, how many
ranks there are, and which ranks share its pipeline stage."""
from __future__ import annotations

from dataclasses import dataclass

from msinspect.stages import GLOBAL_SHAPE_STAGES, stage_of


@dataclass(frozen=True, slots=True)
class RankContext:
    """Facts about the rank a file belongs to."""

    rank: int | None = None
    """The rank that wrote the file (``rank_N``), when known."""
    world: tuple[int, ...] | None = None
    """Every rank of the job, when known (the dump's ranks, or its run record)."""
    stage_ranks: tuple[int, ...] | None = None
    """The ranks of this rank's pipeline stage, when known."""
    pipelined: bool = False
    """Whether the job has pipeline stages: then a stage not known is not the world."""

    @property
    def stage_ranks_or_world(self) -> tuple[int, ...] | None:
        """The ranks of the rank's stage: its pipeline stage's, else, in a job without a pipeline,
        the world; None where they cannot be told."""
        return self.stage_ranks or (None if self.pipelined else self.world)

    @property
    def stage_devices(self) -> int | None:
        """How many devices share the rank's pipeline stage."""
        ranks = self.stage_ranks_or_world
        return len(ranks) if ranks else None

    @property
    def local_rank(self) -> int | None:
        """The rank's index within its stage."""
        if self.rank is None:
            return None
        ranks = self.stage_ranks_or_world
        if ranks and self.rank in ranks:
            return ranks.index(self.rank)
        return None


class Stages:
    """Each stage's rank list (a tuple of the analysis) as one object per content, with each
    rank's index in it: a list of 10,000 ranks is hashed or searched once, not once per row."""

    def __init__(self):
        self._ids: dict[int, tuple] = {}
        self._values: dict[tuple, tuple] = {}
        self._index: dict[int, dict[int, int]] = {}

    def canonical(self, ranks):
        """The one tuple of ``ranks``' content (compared by ``is`` from then on); None for None."""
        if ranks is None:
            return None
        found = self._ids.get(id(ranks))
        if found is None or found[0] is not ranks:
            found = self._ids[id(ranks)] = (ranks, self._values.setdefault(ranks, ranks))
        return found[1]

    def position(self, ranks: tuple) -> dict[int, int]:
        """``{rank: index}`` of a canonical ``ranks``."""
        found = self._index.get(id(ranks))
        if found is None:
            found = self._index[id(ranks)] = {r: i for i, r in enumerate(ranks)}
        return found

    def context(self, analysis, rank) -> RankContext:
        """``analysis.context(rank)``, its rank lists canonical and its ``local_rank`` looked up."""
        ctx = analysis.context(rank)
        world, stage = self.canonical(ctx.world), self.canonical(ctx.stage_ranks)
        ranks = stage or (None if ctx.pipelined else world)
        local = self.position(ranks).get(ctx.rank) if ranks and ctx.rank is not None else None
        return _Context(ctx.rank, world, stage, local, ctx.pipelined)


class _Context(RankContext):
    """A :class:`RankContext` with its ``local_rank`` given."""

    def __init__(self, rank, world, stage_ranks, local: int | None, pipelined: bool = False):
        super().__init__(rank, world, stage_ranks, pipelined)
        object.__setattr__(self, "_local", local)

    @property
    def local_rank(self) -> int | None:
        return self._local


def shapes_are_global(path: str) -> bool:
    """Whether a file's abstracts show global (uncut) shapes, judged by its stage.

    MindSpore 2.10 re-infers per-rank shapes only after ``step_parallel_end`` (first seen in
    ``validate``); 2.2's ``execute`` shows them too.
    """
    return stage_of(path) in GLOBAL_SHAPE_STAGES
