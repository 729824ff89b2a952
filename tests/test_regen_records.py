"""tools/regen_records.py --dumps: MindSpore's records copied beside a dump's IR, never over it.

The dry run is replaced by a stand-in that writes what a dry run writes into its rank folders
(IR files and record files), so these tests need no MindSpore."""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

import regen_records  # noqa: E402
from regen_common import Failed  # noqa: E402

from msinspect.mindspore.records import LAYOUT_FIELDS  # noqa: E402

IR = ("# IR entry: @main\n# Params:\n%para1_inputs0: <Tensor[Float32], (8, 64)> : [8, 64]\n"
      "%para2_w: <Ref[Tensor[Float32]], (64, 16), ref_key=w, is_parameter>  :  has_default\n")


def _layout(rank: int, size: int, path: str = "strategy_0.ckpt") -> str:
    layouts = {"inputs0": [[8], [-1, -1], [8, 64], 0, True, "", [8, 64], [8, 64], False, False, 0, 0],
               "w": [[2, 4], [-1, 0], [64, 16], 0, True, "", [64, 64], [64, 16], False, False, 0, 0]}
    return json.dumps({"format": "msinspect parameter layout 1", "fields": list(LAYOUT_FIELDS), "compile": 0,
                       "rank": rank, "rank_size": size, "phase": "train.1.2.0", "parallel_mode": "semi_auto_parallel",
                       "pipeline_stages": 1, "strategy_checkpoint": path, "mindspore": "2.10.0", "layouts": layouts})


@pytest.fixture
def dump(tmp_path, monkeypatch):
    """A dump of two kept ranks (0, 5 of 8) under a fake repository."""
    monkeypatch.setattr(regen_records, "REPO", tmp_path)
    folder = tmp_path / "fixtures" / "zoo" / "net"
    for rank in (0, 5):
        (folder / f"rank_{rank}").mkdir(parents=True)
        (folder / f"rank_{rank}" / "step_parallel_end_0020.ir.gz").write_bytes(gzip.compress(IR.encode()))
    (folder / "config.json").write_text('{"ranks": 8, "run_ranks": [0, 5]}')
    return regen_records.Dump("zoo", folder, tmp_path / "net.py", 8, (0, 5))


def _stand_in(files_of_rank):
    """A ``_dryrun`` that writes ``files_of_rank(rank)`` ({name: bytes}) into each rank folder."""
    def dryrun(dump, root, jobs):
        run = root / "out" / "dryrun-net-1"
        for rank in dump.run_ranks:
            (run / f"rank_{rank}").mkdir(parents=True)
            (run / f"rank_{rank}" / "step_parallel_end_0099.ir").write_text("new IR: never copied")
            for name, data in files_of_rank(rank).items():
                (run / f"rank_{rank}" / name).write_bytes(data)
        return run, {"ranks": [{"rank": r, "wall_seconds": 1.0, "state": "ok"} for r in dump.run_ranks]}
    return dryrun


def _records(rank, path="strategy_0.ckpt"):
    return {"parameter_layout_0.json": _layout(rank, 8, path).encode(), "strategy_0.ckpt": b"\x08\x00",
            "group_info_0.pb": b"\x12\x00"}


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_only_the_record_files_are_added_beside_the_ir(dump, tmp_path, monkeypatch):
    monkeypatch.setattr(regen_records, "_dryrun", _stand_in(_records))
    before = _snapshot(dump.folder)
    result = regen_records.fill(dump, tmp_path / "runs" / "net", force=False, jobs=2)
    after = _snapshot(dump.folder)
    assert result["state"] == "added" and result["files"] == 6
    assert {k: v for k, v in after.items() if k in before} == before  # the IR and run record unchanged
    assert sorted(set(after) - set(before)) == sorted(f"rank_{r}/{n}" for r in (0, 5) for n in _records(0))
    assert result["per_rank"][5]["weights"] == 1 and result["per_rank"][5]["inputs"] == 1
    assert result["per_rank"][5]["record_only"] == [] and result["per_rank"][5]["ir_only"] == []


def test_existing_records_are_kept_unless_forced(dump, tmp_path, monkeypatch):
    monkeypatch.setattr(regen_records, "_dryrun", _stand_in(_records))
    old = dump.folder / "rank_5" / "strategy_0.ckpt"
    old.write_bytes(b"old")
    result = regen_records.fill(dump, tmp_path / "runs" / "a", force=False, jobs=2)
    assert result["state"] == "skipped" and "rank_5" in result["why"]
    assert old.read_bytes() == b"old" and not (dump.folder / "rank_0" / "strategy_0.ckpt").exists()
    assert not (tmp_path / "runs" / "a").exists()  # nothing was run
    result = regen_records.fill(dump, tmp_path / "runs" / "b", force=True, jobs=2)
    assert result["state"] == "replaced" and old.read_bytes() == b"\x08\x00"
    assert (dump.folder / "rank_5" / "step_parallel_end_0020.ir.gz").is_file()


def test_nothing_is_copied_when_a_rank_wrote_no_record(dump, tmp_path, monkeypatch):
    monkeypatch.setattr(regen_records, "_dryrun", _stand_in(lambda rank: _records(rank) if rank == 0 else {}))
    before = _snapshot(dump.folder)
    with pytest.raises(Failed, match="rank 5"):
        regen_records.fill(dump, tmp_path / "runs" / "net", force=False, jobs=2)
    assert _snapshot(dump.folder) == before


def test_paths_are_scrubbed_from_json_and_refused_in_protobuf(dump, tmp_path, monkeypatch):
    monkeypatch.setattr(regen_records, "_dryrun", _stand_in(lambda rank: _records(rank, "/root/job/strategy.ckpt")))
    regen_records.fill(dump, tmp_path / "runs" / "a", force=False, jobs=2)
    text = (dump.folder / "rank_0" / "parameter_layout_0.json").read_text()
    assert "/root" not in text and json.loads(text)["strategy_checkpoint"] == "<src>/strategy.ckpt"

    def with_path(rank):
        return {**_records(rank), "group_info_0.pb": b"\x0a\x10/tmp/x/group.pb"}
    monkeypatch.setattr(regen_records, "_dryrun", _stand_in(with_path))
    before = _snapshot(dump.folder)
    with pytest.raises(Failed, match="absolute path"):
        regen_records.fill(dump, tmp_path / "runs" / "b", force=True, jobs=2)
    assert _snapshot(dump.folder) == before


def test_a_record_of_another_rank_is_refused(dump, tmp_path, monkeypatch):
    monkeypatch.setattr(regen_records, "_dryrun", _stand_in(lambda rank: _records(0)))
    with pytest.raises(Failed, match="not 5 of 8"):
        regen_records.fill(dump, tmp_path / "runs" / "net", force=False, jobs=2)
    assert not list(dump.folder.rglob("*.ckpt"))


def test_every_dry_run_dump_of_the_repository_is_found():
    dumps = regen_records.repository_dumps()
    names = {d.name for d in dumps}
    assert {"sharding_propagation_dryrun_8rank", "recursive_pipeline_dryrun_8rank", "01_semi_auto_tp4dp2",
            "16_mf_llama_256"} <= names
    assert not names & {"07_cpu_while_grad", "08_analyze_fail", "manual_parallel_8rank"}
    by_name = {d.name: d for d in dumps}
    assert (by_name["16_mf_llama_256"].ranks, by_name["16_mf_llama_256"].run_ranks) == (256, (0, 131, 255))
    assert by_name["b_test_pipeline_split__test_pipeline_split_stage1"].run_ranks == (16,)
    assert by_name["recursive_pipeline_dryrun_8rank"].script_args[:6] == (
        "--epochs", "10", "--batch-size", "32", "--ranks", "8")
