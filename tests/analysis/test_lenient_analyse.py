"""``analyse(..., lenient=True)`` on a dump with one rank that cannot be read at all (its .gz is
garbage): that rank is reported with the reason and no rows, every other rank as usual."""
from __future__ import annotations

import shutil

import pytest

from msinspect.analysis.job.collect import analyse
from msinspect.dumps import load_dump
from msinspect.errors import IRDecodeError
from tests.conftest import FIXTURES


@pytest.fixture(scope="module")
def dump(tmp_path_factory):
    root = tmp_path_factory.mktemp("unreadable") / "dump"
    shutil.copytree(FIXTURES / "sharding_propagation_dryrun_8rank", root)
    bad = next((root / "rank_5").glob("*_validate_*.ir.gz"))
    bad.chmod(0o644)
    bad.write_bytes(b"\x1f\x8b this is not a gzip stream")
    return load_dump(root), bad


def test_strict_raises_naming_the_file(dump):
    dumped, bad = dump
    with pytest.raises(IRDecodeError) as info:
        analyse(dumped, jobs=2)
    assert info.value.path == str(bad)


def test_lenient_keeps_the_other_ranks(dump):
    dumped, bad = dump
    analysis = analyse(dumped, jobs=2, lenient=True)
    by_rank = {r.rank: r for r in analysis.results}
    assert sorted(by_rank) == list(range(8))
    five = by_rank[5]
    assert (five.complete, five.status, five.strategies) == (False, "unreadable", [])
    assert five.error.startswith(f"{bad}: cannot decompress")
    assert analysis.skipped == [five.error] and not analysis.complete
    frame = analysis.strategies()
    assert sorted(set(frame["rank"])) == [0, 1, 2, 3, 4, 6, 7] and frame["complete"].all()
    assert analysis.context(5).stage_ranks is None        # cannot tell the stage of a rank not read
