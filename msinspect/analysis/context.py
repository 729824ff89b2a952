"""What an analysis of one file needs to know beyond the file: which rank wrote it, how many
ranks there are, and which ranks share its pipeline stage."""
from __future__ import annotations

from dataclasses import dataclass

from msinspect.stages import stage_of

#: Stages written before the parallel pass has cut the shapes: their abstracts are global.
GLOBAL_SHAPE_STAGES = frozenset({
    "bootstrap", "parse", "symbol_resolve", "combine_like_graphs", "meta_unpack_prepare",
    "abstract_specialize", "type_inference", "event_method", "auto_monad", "graph_reusing", "inline",
    "add_attr", "parallel-infer-symbol", "pre_auto_parallel", "insert-virtual-dataset",
    "parallel-infer-symbol-second", "dataset_repeat_opt", "pipeline_split", "step_parallel_begin",
    "step_parallel_end", "opt_pass_add_attr_with_inline", "opt_pass_py_interpret_to_execute",
})


@dataclass(frozen=True)
class RankContext:
    """Facts about the rank a file belongs to."""

    rank: int | None = None
    """The rank that wrote the file (``rank_N``), when known."""
    world: tuple[int, ...] | None = None
    """Every rank of the job, when known (the dump's ranks, or its run record)."""
    stage_ranks: tuple[int, ...] | None = None
    """The ranks of this rank's pipeline stage, when known."""

    @property
    def stage_devices(self) -> int | None:
        """How many devices share the rank's pipeline stage."""
        if self.stage_ranks:
            return len(self.stage_ranks)
        return len(self.world) if self.world else None

    @property
    def local_rank(self) -> int | None:
        """The rank's index within its stage."""
        if self.rank is None:
            return None
        ranks = self.stage_ranks or self.world
        if ranks and self.rank in ranks:
            return ranks.index(self.rank)
        return None


def shapes_are_global(path: str) -> bool:
    """Whether a file's abstracts show global (uncut) shapes, judged by its stage.

    MindSpore 2.10 re-infers per-rank shapes only after ``step_parallel_end`` (first seen in
    ``validate``); 2.2's ``execute`` shows them too.
    """
    return stage_of(path) in GLOBAL_SHAPE_STAGES
