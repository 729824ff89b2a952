"""render's output path: a folder in place of the picture (or its .dot) is refused with a message,
with or without --overwrite, and the folder is left as it was."""
from __future__ import annotations

import pytest

from msinspect.errors import MsInspectError
from msinspect.render import render_dump, write
from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect

RANK = FIXTURES / "sharding_propagation_dryrun_8rank" / "rank_0"


@pytest.mark.parametrize("folder", ["some_dir.svg", "some_dir.dot"])
@pytest.mark.parametrize("overwrite", [False, True])
def test_cli_picture_onto_a_folder(tmp_path, folder, overwrite):
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "kept.txt").write_text("mine")
    args = ["render", RANK, "--op", "relu", "-o", "some_dir.svg"] + (["--overwrite"] if overwrite else [])
    run = msinspect(*args, cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    assert f"{folder}: is a folder" in run.stderr and "Traceback" not in run.stderr
    assert (tmp_path / folder / "kept.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder]


def test_write_onto_a_folder_raises_before_writing(tmp_path):
    picture = render_dump(RANK, around="relu")
    (tmp_path / "g.svg").mkdir()
    with pytest.raises(MsInspectError, match="is a folder"):
        write(picture.digraph, tmp_path / "g.svg", "svg", overwrite=True)
    assert not (tmp_path / "g.dot").exists()
