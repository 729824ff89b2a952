"""A dump of some ranks only (a user copies a few rank folders off a cluster): ranks 0, 1, 4 and 7
of zoo 01 (gpt.py, tensor parallel 4 x data parallel 2 on 8 ranks), with no run record. The world
comes from the IR (the world group's rank list and dev_num), or --world; slices follow MindSpore's
layouts for every rank present, and where nothing tells the world the answer is "cannot tell".

By hand: q_matmul is ((2, 1), (1, 4)): device matrix (2, 1, 4), the weight wq (512, 512) cut
(1, 4) along the last (fastest) axis, so rank r holds columns (r % 4) * 128 ... + 128, every row.
pos_add is ((2, 1, 1), (1, 1)): the position table (64, 512) is not cut, its device matrix
(2, 1, 1) uses 2 of 8 devices and the other 4 repeat (MindSpore's repeated-calculation axis on the
right): (2, 1, 1, 4), and every rank holds all of it."""
from __future__ import annotations

import json
import shutil

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.errors import MsInspectError
from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect as cli

PRESENT = (0, 1, 4, 7)


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    root = tmp_path_factory.mktemp("some_ranks")
    for r in PRESENT:
        shutil.copytree(FIXTURES / "zoo" / "01_semi_auto_tp4dp2" / f"rank_{r}", root / f"rank_{r}")
    return root


def _check_slices(slices):
    wq = slices[slices["param"] == "blocks.0.attention.wq"].set_index("rank")
    assert sorted(wq.index) == list(PRESENT)
    for r in PRESENT:
        assert wq.loc[r, "global_shape"] == (512, 512)
        # MatMul ((2, 1), (1, 4)): [2, 1, 4] and wq's map [1, 0], as MindSpore states a
        # parameter's layout (size-1 axes removed): [2, 4] and [-1, 0]
        assert (wq.loc[r, "device_matrix"], wq.loc[r, "tensor_map"]) == ((2, 4), (-1, 0))
        assert wq.loc[r, "slice"] == ((0, 512), ((r % 4) * 128, (r % 4) * 128 + 128))
    position = slices[slices["param"] == "embed.position"]
    assert set(position["device_matrix"]) == {(2, 4)}  # [2, 1, 1, 4], its size-1 axes removed
    assert set(position["slice"]) == {((0, 64), (0, 512))}


@pytest.mark.parametrize("stage", ["validate", "step_parallel_end"])
def test_world_and_slices_from_the_ir(partial, stage):
    analysis = analyse(msinspect.load_dump(partial), stage)
    assert analysis.world == tuple(range(8))
    _check_slices(analysis.slices())
    comm = analysis.comm()
    world_group = comm[comm["group"] == "nccl_world_group"]
    assert len(world_group) > 0 and set(world_group["group_ranks"]) == {tuple(range(8))}


def test_before_the_parallel_pass_the_world_cannot_be_told_unless_stated(partial):
    """step_parallel_begin has no communication yet: nothing in the files names the world."""
    dump = msinspect.load_dump(partial)
    unknown = analyse(dump, "step_parallel_begin").slices()
    assert unknown["slice"].isna().all() and set(unknown["slice_text"]) == {"cannot tell"}
    assert unknown["device_matrix"].isna().all()  # not (2, 1, 1, 2) from the 4 ranks present
    _check_slices(analyse(dump, "step_parallel_begin", world=8).slices())


def test_world_smaller_than_the_ranks_present_is_refused(partial):
    with pytest.raises(MsInspectError, match="rank_7"):
        analyse(msinspect.load_dump(partial), world=4)


def test_cli_world_option(partial):
    run = cli("shapes", partial, "--params", "--param", "blocks.0.attention.wq", "--rank", "7",
              "--stage", "step_parallel_begin", "--world", "8", "--json")
    assert run.returncode == 0, run.stderr
    (row,) = json.loads(run.stdout)
    assert row["slice"] == [[0, 512], [384, 512]]
    run = cli("summary", partial, "--world", "4")
    assert run.returncode != 0 and "rank_7" in run.stderr and "Traceback" not in run.stderr


def test_diff_of_two_ranks_present_shows_their_different_columns(partial):
    from msinspect.analysis.compare.ranks import diff_ranks
    from msinspect.cli.diff_cmd import stage_line

    d = diff_ranks(partial / "rank_0", partial / "rank_1")
    slices = d.slices.set_index("param")
    assert slices.loc["blocks.0.attention.wq", "left_slice"] == "[0:512, 0:128]"
    assert slices.loc["blocks.0.attention.wq", "right_slice"] == "[0:512, 128:256]"
    assert "same pipeline stage" not in stage_line(d)
