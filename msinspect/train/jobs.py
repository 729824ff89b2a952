"""The training jobs msinspect ships (``train_jobs/``): where they are and how each is run."""
from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Job:
    """One training job of ``train_jobs/``."""

    mode: str
    """The name users type: ``manual_parallel``, ``sharding_propagation``, ``recursive_pipeline``."""
    seed: str
    """Which seed document it follows."""
    auto_parallel: bool
    """Whether it uses MindSpore's auto-parallel planner (refused on CPU: dry run there)."""
    uses_mnist: bool
    """Whether it reads MNIST (``--data``); seed 002 uses its own random data."""
    epochs: int
    """The seed's epoch count (the job's default)."""
    batch_size: int
    """The seed's batch size (the job's default; see the job for global vs per rank)."""
    cuts_batch: bool = False
    """Whether the job cuts each global batch evenly across the ranks itself (so they must divide it)."""

    @property
    def script(self) -> Path:
        """The job's script."""
        return jobs_dir() / f"{self.mode}.py"

    @property
    def spec(self) -> Path:
        """The job's expectation spec (TOML)."""
        return jobs_dir() / f"{self.mode}.toml"


JOBS: dict[str, Job] = {
    "recursive_pipeline": Job("recursive_pipeline", "000/001 double recursive search", True, True, 10, 32),
    "sharding_propagation": Job("sharding_propagation", "002 sharding propagation", True, False, 5, 2),
    "manual_parallel": Job("manual_parallel", "003 manual parallel", False, True, 10, 32, cuts_batch=True),
}
"""Every job, by mode name."""

MODES = tuple(JOBS)
"""The mode names (``all`` runs them in :data:`msinspect.train.workflow.ALL_MODES` order)."""


def jobs_dir() -> Path:
    """The ``train_jobs`` folder: ``$MSINSPECT_TRAIN_JOBS``, else the package
    ``msinspect.train_jobs`` (``msinspect/train_jobs`` links to the top-level ``train_jobs/`` in a
    checkout; a wheel holds a copy).

    The package is located, not imported: its scripts are run as files by msrun or the dry run.
    """
    env = os.environ.get("MSINSPECT_TRAIN_JOBS")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("msinspect.train_jobs")
    return Path(next(iter(spec.submodule_search_locations)))
