"""Dump folders: ranks, stages by name, nothing written beside the dumps."""
from __future__ import annotations

from pathlib import Path

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


@pytest.mark.parametrize("given", [".", "./", "./rank_2/..", "rank_2/../."])
def test_rank_folders_are_named_as_pathlib_writes_them(given, monkeypatch):
    """The ranks' folders are kept as text (no path made for each of 10,000 ranks), written as
    pathlib writes them: ``rank_0``, not ``./rank_0``; ranks writing the same file names share
    one tuple of them."""
    monkeypatch.chdir(ROOT)
    dump = load_dump(given)
    for rank in dump.ranks:
        assert rank.where == str(Path(given, f"rank_{rank.rank}"))
        assert rank.file_text("validate") == str(rank.file("validate"))
    assert stage_of(dump.ranks[0].file_text("execute")) == "execute"
    assert len({id(r.names) for r in dump.ranks}) == len({r.names for r in dump.ranks}) < len(dump.ranks)


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


def test_a_folder_of_several_runs_is_refused_with_each_run_and_its_ranks():
    """fixtures/zoo holds one run per network of zoo.toml: 01, 04, 06 and 10 keep all 8 ranks; 02 keeps ranks
    0, 31, 63 of 64, 03 ranks 0, 15, 31 of 32, 05 ranks 0, 5, 15 of 16; 09 keeps rank 0 only; 07
    (a CPU run) and 08 (its analyze_fail.ir) keep their IR files with no rank folder."""
    from msinspect.dumps import SeveralRunsError

    zoo = FIXTURES / "zoo"
    with pytest.raises(SeveralRunsError) as info:
        load_dump(zoo)
    text = str(info.value)
    from tests.zoo.zoo_manifest import networks

    assert f"holds {len(networks())} runs" in text
    for run, ranks in [("01_semi_auto_tp4dp2", "8 rank(s): 0-7"),
                       ("02_sharding_propagation_64", "3 rank(s): 0, 31, 63"),
                       ("03_recursive_programming_32", "3 rank(s): 0, 15, 31"),
                       ("05_expert_alltoall_16", "3 rank(s): 0, 5, 15"),
                       ("09_large_gpt", "1 rank(s): 0"),
                       ("07_cpu_while_grad", "IR files, no rank folders"),
                       ("08_analyze_fail", "IR files, no rank folders")]:
        assert f"{zoo / run} ({ranks})" in text
    # parse reads files, not ranks: the same folder is read whole
    assert len(load_dump(zoo, one_job=False).ranks) > 10
    # one run of it is a dump
    assert [r.rank for r in load_dump(zoo / "01_semi_auto_tp4dp2").ranks] == list(range(8))


def test_every_analysis_command_refuses_several_runs_and_lists_them():
    from tests.test_cli_parse import msinspect
    from tests.zoo.zoo_manifest import networks

    zoo = FIXTURES / "zoo"
    for command in ("summary", "shapes"):
        run = msinspect(command, zoo)
        assert run.returncode == 2 and f"holds {len(networks())} runs" in run.stderr and "Traceback" not in run.stderr
        assert f"{zoo / '04_pipeline_hsdp_recompute'} (8 rank(s): 0-7)" in run.stderr
