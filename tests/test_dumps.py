"""Dump folders: ranks, stages by name, nothing written beside the dumps."""
from __future__ import annotations

import pytest

from msinspect import DumpNotFoundError, load_dump
from msinspect.stages import stage_of
from tests.conftest import FIXTURES

ROOT = FIXTURES / "manual_parallel_8rank"


@pytest.mark.parametrize("name, stage", [
    ("step_parallel_end_0133.ir", "step_parallel_end"), ("24_execute_0142.ir.gz", "execute"),
    ("opt_pass_10_optimize_parallel_all_gather_comm_0024.ir", "opt_pass_optimize_parallel_all_gather_comm"),
    ("graph_build_0_0139.ir", "graph_build"), ("12_pipeline_split_0013.ir", "pipeline_split"),
])
def test_stage_of(name, stage):
    assert stage_of(name) == stage


def test_root_with_rank_folders():
    dump = load_dump(ROOT)
    assert [r.rank for r in dump.ranks] == list(range(8))
    assert dump.rank(5).file("validate").name == "21_validate_0076.ir.gz"
    assert dump.rank(0).stages() == ["type_inference", "validate", "execute"]
    assert len(dump.files("execute")) == 8
    assert dump.rank(6).load("execute").complete


def test_rank_folder_and_single_file():
    assert load_dump(ROOT / "rank_2").ranks[0].rank == 2
    single = load_dump(ROOT / "rank_2" / "24_execute_0142.ir.gz")
    assert single.ranks[0].files == [ROOT / "rank_2" / "24_execute_0142.ir.gz"]


def test_errors_name_what_is_missing(tmp_path):
    with pytest.raises(DumpNotFoundError, match="no such file"):
        load_dump(tmp_path / "nope")
    with pytest.raises(DumpNotFoundError, match="no MindSpore IR files"):
        load_dump(tmp_path)
    with pytest.raises(DumpNotFoundError, match="no 'step_parallel_end' IR file .*validate"):
        load_dump(ROOT).rank(0).file("step_parallel_end")
    with pytest.raises(DumpNotFoundError, match="no rank_9"):
        load_dump(ROOT).rank(9)


def test_reading_writes_nothing(tmp_path):
    import shutil

    copy = tmp_path / "dump"
    shutil.copytree(ROOT / "rank_1", copy / "rank_1")
    for f in copy.rglob("*"):
        f.chmod(0o444 if f.is_file() else 0o555)
    before = sorted(p.name for p in copy.rglob("*"))
    load_dump(copy).rank(1).load("validate")
    assert sorted(p.name for p in copy.rglob("*")) == before
    for f in copy.rglob("*"):
        f.chmod(0o755)


def test_folders_below_a_rank_are_not_ranks(tmp_path):
    """A real run writes rank_N/actor_set/ (runtime listings) and rank_N/verbose_ir_files/."""
    import shutil

    source = FIXTURES / "manual_parallel_8rank" / "rank_1"
    rank = tmp_path / "rank_1"
    shutil.copytree(source, rank)
    for extra in ("actor_set", "verbose_ir_files"):
        (rank / extra).mkdir()
        shutil.copy(source / "21_validate_0076.ir.gz", rank / extra / "hwopt_pass_0001.ir.gz")
    dump = load_dump(tmp_path)
    assert [r.label for r in dump.ranks] == ["rank_1"]
    assert len(load_dump(rank / "verbose_ir_files").ranks) == 1  # named directly, it is read
