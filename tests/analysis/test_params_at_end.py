"""A pass that states no weight's layout takes the weights of the rank's step_parallel_end beside
it (issue 39): the analysis decides it once (``Analysis.weights_at_end``), and ``shapes --params``,
the Python API (``Analysis.slices()``), the report, ``check`` and ``cost`` read the same rows (one
reader: :func:`msinspect.analysis.params.params_at_end`).

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


# ------------------------------------------------------------------ one home: the analysis
# The analysis decides it (Analysis.weights_at_end), so the Python API, the report and check read
# the same rows as shapes --params; the slices are BY_HAND's, derived above from the script.

@pytest.fixture(scope="module")
def zoo20():
    import msinspect
    from msinspect.analysis import analyse

    return analyse(msinspect.load_dump(ZOO20), jobs=1)


def test_the_api_reads_the_weights_at_the_step_parallel_end_beside_validate(zoo20):
    assert {r.stage for r in zoo20.results} == {"validate"}
    assert sorted(zoo20.weights_at_end) == sorted(r.file for r in zoo20.results)  # every rank's file
    slices = zoo20.slices()
    weights = slices[slices["kind"] == "weight"]
    assert {(row["rank"], row["param"]): [list(b) for b in row["slice"]]
            for row in weights.to_dict("records")} == BY_HAND
    assert set(weights["slice_text"]) == {"[0:128, 0:128]", "[0:128, 384:512]", "[128:256, 256:384]",
                                          "[384:512, 0:128]", "[256:384, 128:256]"}
    assert all("step_parallel_end" in f for f in weights["file"])
    # the graph input stays the validate file's own row (the batch cut 8 ways: rank 3 rows 3072:4096)
    inputs = slices[slices["kind"] == "input"]
    assert all("validate" in f for f in inputs["file"]) and len(inputs) == 3


def test_the_report_lays_out_the_same_weights(zoo20):
    from msinspect.report.rollup import roll_up, weight_grids

    rolled = roll_up(zoo20, many=False)
    assert set(rolled.weights.params) == {"fc1_weight", "fc2_weight"}
    cells = {}
    for param, weight in rolled.weights.params.items():
        assert list(weight.ranks.numbers) == [0, 3, 6] and weight.problem is None
        grids, why = weight_grids(param, weight, {})
        assert why is None and len(grids) == 1
        (grid,) = grids
        assert grid.device_matrix == (2, 4) and grid.tensor_map == ((1, 0) if param == "fc1_weight" else (0, 1))
        for panel in grid.panels:
            for row in panel.rows:
                cells.update({(c.rank, param): [list(b) for b in c.slice] for c in row if c.read})
    assert cells == BY_HAND


def test_check_holds_the_same_weights_to_mindspores_record(zoo20):
    from msinspect.analysis.second_opinion import compared_rows, verdict_counts

    compared = compared_rows(zoo20)
    weights = compared[compared["kind"] == "weight"]
    assert {(row["rank"], row["param"]) for row in weights.to_dict("records")} == set(BY_HAND)
    # the six weights and the three ranks' graph input (its dataset strategy), each as recorded
    assert verdict_counts(compared) == "9 same"


def test_checks_record_outcome_counts_the_weights():
    from msinspect.check import check

    spec = FIXTURES / "zoo" / "nets" / "20_doc_high_dimension_tp.toml"
    (outcome,) = [o for o in check(spec, ZOO20).outcomes if o.expectation.kind == "record"]
    assert outcome.passed and outcome.found.startswith("9 weight(s) of the ranks with a record: 9 same")


def test_where_a_file_states_a_weight_nothing_is_read_beside_it():
    # zoo 19 (optimizer parallel) states its weights' layouts at validate: no fallback, no note
    import msinspect
    from msinspect.analysis import analyse

    analysis = analyse(msinspect.load_dump(FIXTURES / "zoo" / "19_doc_optimizer_parallel"), jobs=1)
    assert analysis.weights_at_end == {}
    assert (analysis.slices()["kind"] == "weight").any()
    assert all("step_parallel_end" not in f for f in analysis.slices()["file"])


def test_the_report_page_draws_them_and_says_where_they_come_from(tmp_path):
    import re

    page = tmp_path / "zoo20.html"
    done = invoke("report", ZOO20, "-o", page)
    assert done.exit_code == 0, done.stderr
    html = page.read_text()
    assert "step_parallel_end beside each states them" in html  # the params section's note
    # each rank read holds BY_HAND's slice of each weight, drawn in the weight's device grid
    # (fc1_weight's grid first, then fc2_weight's: two layouts, two pictures)
    read = re.findall(r'id="grid(\d)-rank(\d)" data-rank="\d" data-slice="([^"]+)" data-colour="\d+" '
                      r'data-read="yes"', html)
    want = {(0 if param == "fc1_weight" else 1, rank): "[" + ", ".join(f"{a}:{b}" for a, b in bounds) + "]"
            for (rank, param), bounds in BY_HAND.items()}
    assert {(int(g), int(r)): s for g, r, s in read} == want


def test_zoo20_diff_of_two_ranks_compares_the_weights_read_at_step_parallel_end():
    """``msinspect diff`` of ranks 3 and 6 at validate: both weights differ, each side's slice as
    :data:`BY_HAND` says (before, the diff read the validate file's rows alone and had no weight)."""
    from msinspect.analysis.diff import diff_ranks

    found = diff_ranks(ZOO20 / "rank_3", ZOO20 / "rank_6")
    weights = found.slices[found.slices["param"].isin(["fc1_weight", "fc2_weight"])]

    def text(rank, param):
        rows, cols = BY_HAND[(rank, param)]
        return f"[{rows[0]}:{rows[1]}, {cols[0]}:{cols[1]}]"

    assert {(r.param, r.left_slice, r.right_slice) for r in weights.itertuples()} == {
        (param, text(3, param), text(6, param)) for param in ("fc1_weight", "fc2_weight")}
    # MindSpore's own record (the strategy checkpoint each rank kept) says the same slices
    assert {(r.param, r.left_record, r.right_record) for r in weights.itertuples()} == {
        (param, text(3, param), text(6, param)) for param in ("fc1_weight", "fc2_weight")}
