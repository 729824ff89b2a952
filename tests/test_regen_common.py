"""The regeneration tools' one rule (tools/regen_common.py): the old folders are replaced only
when every new one was built; a failure changes nothing and keeps the runs."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

from regen_common import Failed, replace_when_all_built  # noqa: E402


def _folders(tmp_path: Path) -> Path:
    parent = tmp_path / "fixtures"
    for name in ("a", "b"):
        (parent / name).mkdir(parents=True)
        (parent / name / "old.txt").write_text("old")
    return parent


def _build(parent: Path, failing: str | None):
    def build(name: str, runs_root: Path) -> Path:
        (runs_root / f"{name}.log").write_text("ran")
        new = parent / f"{name}.new"
        new.mkdir()
        (new / "new.txt").write_text("new")
        if name == failing:
            raise Failed(f"{name}: the job failed")
        return new
    return build


def test_every_folder_is_replaced_when_all_were_built(tmp_path, capsys):
    parent = _folders(tmp_path)
    assert replace_when_all_built(parent, ["a", "b"], _build(parent, None), prefix="msinspect-regen-test-", keep_runs=False)
    assert sorted(p.name for p in parent.iterdir()) == ["a", "b"]
    assert all((parent / n / "new.txt").is_file() and not (parent / n / "old.txt").exists() for n in "ab")
    runs_root = Path(capsys.readouterr().out.split("run root: ", 1)[1].split("\n", 1)[0])
    assert not runs_root.exists()


def test_one_failure_changes_nothing_and_keeps_the_runs(tmp_path, capsys):
    parent = _folders(tmp_path)
    assert not replace_when_all_built(parent, ["a", "b"], _build(parent, "b"), prefix="msinspect-regen-test-", keep_runs=False)
    assert sorted(p.name for p in parent.iterdir()) == ["a", "b"]  # no NAME.new left
    assert all((parent / n / "old.txt").read_text() == "old" for n in "ab")
    said = capsys.readouterr()
    assert "b: the job failed" in said.err and "nothing in" in said.err
    runs_root = Path(said.out.split("run root: ", 1)[1].split("\n", 1)[0])
    assert sorted(p.name for p in runs_root.iterdir()) == ["a.log", "b.log"]
    shutil.rmtree(runs_root)
