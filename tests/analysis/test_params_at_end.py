"""``shapes --params`` on a pass that states no weight's layout reads the rank's
step_parallel_end beside it (issue 39), as ``cost`` does (one reader:
:func:`msinspect.analysis.params.weights_at_end`).

By hand, from ``fixtures/zoo/nets/20_doc_high_dimension_tp.py`` (MindSpore's 2-D tensor-parallel
sample, 8 ranks, the zoo keeps ranks 0, 3 and 6) and MindSpore's Layout definitions:

- ``Layout((2, 4), ("x", "y"))``: device matrix (2, 4), "x" the outer axis of size 2, "y" the
  inner of size 4, the last fastest: rank r sits at x = r // 4, y = r % 4: rank 0 = (0, 0),
  rank 3 = (0, 3), rank 6 = (1, 2).
- ``fc1_weight`` (256, 512), cut ``("x", "y")`` by matmul1: rows in 2 parts of 128 by x,
  columns in 4 parts of 128 by y; tensor map (1, 0) (axes counted from the right):
  rank 0 [0:128, 0:128], rank 3 [0:128, 384:512], rank 6 [128:256, 256:384].
- ``fc2_weight`` (512, 256), cut ``("y", "x")`` by matmul2: rows in 4 parts by y, columns in 2
  by x; tensor map (0, 1): rank 0 [0:128, 0:128], rank 3 [384:512, 0:128],
  rank 6 [256:384, 128:256].
- Every slice is (128, 128); no optimizer (the sample compiles the forward only): no shard group.

At validate ``enable_nd_tp``'s new MatMuls carry no strategy and share one printed name, so
the file itself states neither weight's layout; the rank's step_parallel_end beside it does.
"""
from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import FIXTURES, invoke

ZOO20 = FIXTURES / "zoo" / "20_doc_high_dimension_tp"

BY_HAND = {
    (0, "fc1_weight"): [[0, 128], [0, 128]],
    (3, "fc1_weight"): [[0, 128], [384, 512]],
    (6, "fc1_weight"): [[128, 256], [256, 384]],
    (0, "fc2_weight"): [[0, 128], [0, 128]],
    (3, "fc2_weight"): [[384, 512], [0, 128]],
    (6, "fc2_weight"): [[256, 384], [128, 256]],
}


def test_zoo20_weights_at_validate_come_from_step_parallel_end():
    done = invoke("shapes", ZOO20, "--params", "--json")
    assert done.exit_code == 0, done.stderr
    weights = {(row["rank"], row["param"]): row for row in json.loads(done.stdout) if row["kind"] == "weight"}
    assert {key: row["slice"] for key, row in weights.items()} == BY_HAND
    for (rank, param), row in weights.items():
        assert row["device_matrix"] == [2, 4]
        assert row["tensor_map"] == ([1, 0] if param == "fc1_weight" else [0, 1])
        assert row["slice_shape"] == [128, 128] and not row["opt_shard_group"]
        assert "step_parallel_end" in row["file"]  # where it was read, said in the row
        assert row["record"] == "same"  # MindSpore's own strategy checkpoint agrees
    assert "step_parallel_end beside" in done.stderr and "cannot tell" not in done.stderr


def test_zoo20_one_weight_one_rank():
    done = invoke("shapes", ZOO20, "--params", "--param", "fc2_weight", "--rank", "6", "--json")
    assert done.exit_code == 0, done.stderr
    (row,) = json.loads(done.stdout)
    assert row["slice"] == BY_HAND[(6, "fc2_weight")] and row["slice_text"] == "[256:384, 128:256]"


def test_without_a_step_parallel_end_beside_it_stays_cannot_tell(tmp_path):
    root = tmp_path / "zoo20"
    shutil.copytree(ZOO20, root)
    for ir in root.glob("rank_*/step_parallel_end*"):
        ir.unlink()
    done = invoke("shapes", root, "--params", "--json")
    assert done.exit_code == 0, done.stderr
    assert "cannot tell: no weight" in done.stderr
    assert {row["kind"] for row in json.loads(done.stdout)} == {"input"}


@pytest.mark.parametrize("stage", ["step_parallel_end"])
def test_a_parallel_pass_reads_its_own_layouts(stage):
    # step_parallel_end states the layouts itself: the same slices, read from the file asked for
    done = invoke("shapes", ZOO20, "--params", "--stage", stage, "--json")
    assert done.exit_code == 0, done.stderr
    weights = {(row["rank"], row["param"]): row["slice"] for row in json.loads(done.stdout) if row["kind"] == "weight"}
    assert weights == BY_HAND
    assert "beside" not in done.stderr
