"""``diff`` between two pipeline stages of one run, and between two ranks of one stage (issue 26,
point 3). Worked out by hand before the tool was run:

- ``fixtures/recursive_pipeline_dryrun_8rank`` is ``train_jobs/recursive_pipeline.py`` on 8 ranks
  with 2 stages (``train_jobs/networks.py`` ``STAGE_CONFIG``: flatten/layer1/relu1 on stage 0,
  layer2/relu2/layer3 and the MAE loss on stage 1), so ranks 0-3 are stage 0 and 4-7 stage 1. The
  global batch of 32 is read whole by every rank (``full_batch``) and cut in 4 micro-batches of 8:
  stage 0 slices the images, (32, 1, 28, 28) -> (8, 1, 28, 28), for layer1; stage 1 slices the
  labels, (32, 1) -> (8, 1), for the loss. Those are different operators, one on each side: not
  a shape or strategy difference. Ranks 0 and 4 lie in one run folder beside one run record
  (``config.json``): one run, whatever numbers MindSpore gave their files.
- ``fixtures/zoo/04_pipeline_hsdp_recompute`` (``zoo/nets/04_*.py``): stages of 4 ranks, dp 2 x tp 2
  inside each, tensor parallel innermost, so in stage 0 the tensor-parallel groups are (0, 1),
  (2, 3) and the data-parallel groups (0, 2), (1, 3); optimizer parallel (``hsdp``) shards the
  weights' optimizer state over the data-parallel ranks: rank 0's optimizer group is (0, 2), rank
  1's (1, 3). Ranks 0 and 1 run one stage and one network: nothing but those per-rank groups and
  the weight columns they hold tells them apart; the groups are expected, not findings.
"""
from __future__ import annotations

import gzip
import re
import shutil

import pandas as pd
import pytest

from msinspect.analysis.compare.ranks import diff_ranks, per_rank
from msinspect.cli.diff_cmd import format_diff
from tests.conftest import FIXTURES, invoke

RP = FIXTURES / "recursive_pipeline_dryrun_8rank"
Z04 = FIXTURES / "zoo" / "04_pipeline_hsdp_recompute"
IMAGES, LABELS = (32, 1, 28, 28), (32, 1)
MICRO, MICRO_ROWS = 4, 32 // 4
MISSING = re.compile(r"\b(NaN|None|nan|<NA>)\b")


def _cli(*args):
    return invoke("diff", *args)


@pytest.fixture(scope="module")
def stages_0_4():
    return diff_ranks(RP / "rank_0", RP / "rank_4")


@pytest.fixture(scope="module")
def hsdp_0_1():
    return diff_ranks(Z04 / "rank_0", Z04 / "rank_1")


# ---------------------------------------------------------------- one run, two stages
def test_two_stages_of_one_run_are_not_called_different_runs(stages_0_4):
    assert stages_0_4.same_stage is False
    assert stages_0_4.warnings == []
    run = _cli(RP / "rank_0", RP / "rank_4")
    assert run.exit_code == 0, run.output
    assert "warning" not in run.stderr and "different runs" not in run.stderr


def _copy_run(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(RP, root)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def test_a_rank_folder_from_another_run_is_still_warned_about(tmp_path):
    """Rank 4's network built an hour after rank 0's, in a run that took 34 s (its record): a
    rank folder copied in from another run."""
    root = _copy_run(tmp_path)
    for validate in (root / "rank_4").glob("*validate*"):
        text = gzip.decompress(validate.read_bytes()).decode()
        phase = re.search(r"compile_phase: train\.(\d+)\.", text)
        later = str(int(phase.group(1)) + 3600 * 10**9)
        validate.write_bytes(gzip.compress(text.replace(phase.group(1), later).encode()))
    d = diff_ranks(root / "rank_0", root / "rank_4")
    (warning,) = [w for w in d.warnings if "another run" in w]
    gap = int(re.search(r"rank_4 built its network ([\d,]+) s after rank_0", warning).group(1).replace(",", ""))
    assert 3600 <= gap <= 3600 + 35, warning  # one run's ranks build within its 34.4 s


def test_one_stage_numbered_otherwise_or_other_passes_is_still_warned_about(tmp_path):
    """Ranks 0 and 1 compile one program: their files carry the same numbers and passes."""
    root = _copy_run(tmp_path)
    validate = next((root / "rank_1").glob("*validate*"))
    validate.rename(validate.with_name("21_validate_0600.ir.gz"))
    d = diff_ranks(root / "rank_0", root / "rank_1")
    assert any("differently numbered" in w for w in d.warnings), d.warnings
    next((root / "rank_5").glob("step_parallel_begin*")).unlink()
    d = diff_ranks(root / "rank_0", root / "rank_5")
    assert any("different passes (step_parallel_begin" in w for w in d.warnings), d.warnings


# ---------------------------------------------------------------- operators of two stages
def _micro_slices(frame):
    return frame[(frame["op"] == "StridedSlice") & frame["scope"].str.contains("_MicroBatch", na=False)]


def test_image_and_label_slices_of_two_stages_are_not_paired(stages_0_4):
    assert _micro_slices(stages_0_4.shapes).empty
    assert _micro_slices(stages_0_4.strategies).empty
    for frame in (stages_0_4.shapes, stages_0_4.strategies):
        assert frame.empty or not frame["op"].eq("StridedSlice").any()
    only = _micro_slices(stages_0_4.only)
    images = only[[tuple(i) == (IMAGES,) for i in only["inputs"]]]
    labels = only[[tuple(i) == (LABELS,) for i in only["inputs"]]]
    assert (images["left_count"].sum(), images["right_count"].sum()) == (MICRO, 0)
    assert (labels["left_count"].sum(), labels["right_count"].sum()) == (0, MICRO)
    assert set(images["output"]) == {(MICRO_ROWS,) + IMAGES[1:]} and set(labels["output"]) == {(MICRO_ROWS, 1)}


def test_paired_operators_have_alike_shapes(stages_0_4):
    """What is paired across the stages is one operator: as many dimensions in and out."""
    for row in stages_0_4.shapes.to_dict("records"):
        assert [len(s) for s in row["left_inputs"]] == [len(s) for s in row["right_inputs"]], row
        assert len(row["left_output"] or ()) == len(row["right_output"] or ()), row


def test_cli_says_stage_only_operators_are_on_one_side(stages_0_4):
    run = _cli(RP / "rank_0", RP / "rank_4")
    assert "different pipeline stages" in run.stdout
    assert "each stage's own operators are on its side only" in run.stdout
    shapes = run.stdout.split("shape differences:")[1].split("\n\n")[0]
    assert "(32, 1, 28, 28)" not in shapes and "strided_slice" not in shapes


# ---------------------------------------------------------------- per-rank groups
def test_per_rank_groups():
    assert per_rank((0, 2), (1, 3), 0, 1)
    assert per_rank((0, 1, 2, 3), (4, 5, 6, 7), 0, 4)
    assert per_rank((0, 1), (6, 7), 0, 7)
    assert not per_rank((0, 2), (1, 5), 0, 1)       # spaced otherwise
    assert not per_rank((0, 2), (1, 3, 5, 7), 0, 1)  # another size
    assert not per_rank((0, 2), (1, 3), 0, 5)       # rank 5's group without rank 5
    assert not per_rank(None, (1, 3), 0, 1) and not per_rank((0, 2), (1, 3), None, 1)


def test_optimizer_shard_groups_are_per_rank_not_findings(hsdp_0_1):
    d = hsdp_0_1
    assert d.same_stage is True and d.only.empty and d.shapes.empty and d.strategies.empty
    optimizer = d.comm[d.comm["kind"] == "optimizer"]
    assert not optimizer.empty
    assert set(map(tuple, optimizer["left_group"])) == {(0, 2)}
    assert set(map(tuple, optimizer["right_group"])) == {(1, 3)}
    assert optimizer["per_rank"].all()
    assert d.comm["per_rank"].all()  # nothing else differs between the two ranks' groups
    text = format_diff(d)
    assert "communication groups that differ: 0" in text
    assert re.search(r"optimizer: \d+ \(rank_0: ranks 0, 2; rank_1: ranks 1, 3\)", text), text
    assert "parallel_optimizer_allgather" not in text  # not listed one by one


def test_a_group_laid_out_otherwise_is_still_a_finding():
    d = diff_ranks(Z04 / "rank_0", Z04 / "rank_1")
    rows = d.comm.to_dict("records")
    rows[0].update(right_group=(1, 3, 5, 7), per_rank=per_rank(rows[0]["left_group"], (1, 3, 5, 7), 0, 1))
    d.comm = pd.DataFrame(rows, columns=d.comm.columns)
    text = format_diff(d)
    assert "communication groups that differ: 1" in text and "1, 3, 5, 7" in text


# ---------------------------------------------------------------- no NaN / None
@pytest.mark.parametrize("sides", [(RP / "rank_0", RP / "rank_4"), (Z04 / "rank_0", Z04 / "rank_1")],
                         ids=["stages", "one_stage"])
def test_tables_never_print_nan_or_none(sides):
    run = _cli(*sides)
    assert run.exit_code == 0, run.output
    assert not MISSING.search(run.stdout), MISSING.search(run.stdout)


def test_the_tables_fit_a_120_column_terminal():
    """In 120 columns each table keeps the columns that fit (the operator, then how the sides
    differ) and names the rest, where every column came to some 230 (issue 26, point 5)."""
    d = diff_ranks(RP / "rank_0", RP / "rank_4")
    wide, narrow = format_diff(d), format_diff(d, width=120)
    assert max(map(len, wide.splitlines())) > 120
    table_lines = [line for line in narrow.splitlines() if not line.startswith(("diff left:", "     right:"))]
    assert max(map(len, table_lines)) <= 120
    assert "left out to fit 120 columns:" in narrow and "--json / --csv give every field" in narrow
    header = next(line for line in narrow.splitlines() if line.split()[:2] == ["name", "op"])
    assert "left_count" in header and "right_count" in header
