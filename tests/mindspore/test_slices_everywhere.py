"""Every weight slice msinspect tells, on every multi-rank dump of the repository (the zoo, the
ports of MindSpore's parallel unit tests, the training jobs' fixtures), against what the rank's own
file says: where the file is written after the parallel pass cut the weights (step_parallel_end,
validate), a weight's shape there *is* what the rank stores, so a slice told from the layout rule,
the rank's place in its stage and its optimizer-shard group must have exactly that extent. None
of these dumps was made for this test; a wrong device matrix, a stage taken for the world or an
optimizer shard left out each gives a slice of the wrong extent on some rank."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.errors import MsInspectError
from tests.conftest import FIXTURES

DUMPS = sorted([p for p in (FIXTURES / "zoo").iterdir() if p.is_dir() and any(p.glob("rank_*"))]
               + [p for p in (FIXTURES / "ut").iterdir() if p.is_dir() and any(p.glob("rank_*"))]
               + [FIXTURES / name for name in ("sharding_propagation_dryrun_8rank", "recursive_pipeline_dryrun_8rank")])


def _extent(bounds) -> tuple[int, ...]:
    return tuple(stop - start for start, stop in bounds)


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name)
def test_a_told_slice_has_the_shape_the_rank_stores(dump, stage):
    loaded = msinspect.load_dump(dump)
    try:
        slices = analyse(loaded, stage).slices()
    except MsInspectError as error:  # a dump without that pass
        pytest.skip(str(error).splitlines()[0])
    told = slices[slices["slice"].notna() & slices["rank_shape"].notna()]
    wrong = [(row["rank"], row["param"], row["slice_text"], row["rank_shape"])
             for row in told.to_dict("records") if _extent(row["slice"]) != tuple(row["rank_shape"])]
    assert not wrong, wrong
