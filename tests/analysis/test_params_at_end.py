"""A pass that states no weight's layout takes the weights of the rank's step_parallel_end beside
it (issue 39): the analysis decides it once (``Analysis.weights_at_end``), and ``shapes --params``,
the Python API (``Analysis.slices()``), the report, ``check`` and ``cost`` read the same rows (one
reader: :func:`msinspect.analysis.rank.params.params_at_end`).

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

import pytest

from tests.conftest import FIXTURES, dump_without, invoke

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
    root = dump_without(ZOO20, tmp_path / "zoo20", "rank_*/step_parallel_end*")
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
    from msinspect.analysis.job.second_opinion import compared_rows, verdict_counts

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
    from msinspect.analysis.compare.ranks import diff_ranks

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


# ------------------------------------------------------------------ per weight: zoo 15
# By hand, from fixtures/zoo/nets/15_mf_llama_moe_ep8.py (MindFormers' LLaMA, 2 layers, MoEV3
# experts, dp 4 x mp 2, expert_parallel 4, 8 ranks; the zoo keeps ranks 0 and 5), before reading
# the validate file's rows:
#
# - each layer's experts are one Morph whose Layout lays out w1 (4 experts, 512, 2 x 1536) and
#   w2 (4, 1536, 512) as ("inner_dp", "mp0", "mp1") over MoEV3's device matrix (2, 4, 1, 1, 1):
#   outer_dp = 8 // 4 = 2, inner_dp = expert_parallel = 4, the rest 1. The expert dimension is cut
#   4 ways by inner_dp; the other two by axes of size 1 (whole). MindSpore states a layout with
#   its axes of size 1 left out (as its parameter_layout_dict does for every weight of the zoo):
#   device matrix (2, 4), tensor map (0, -1, -1) (inner_dp is axis 0 counted from the right).
# - rank r sits at outer_dp = r // 4, inner_dp = r % 4 (the last axis fastest): rank 0 holds expert
#   0, [0:1, ...]; rank 5 holds expert 1, [1:2, ...].
# - no optimizer shard (mf_llama.start leaves enable_parallel_optimizer off): no shard group.
# MindSpore expands the Morph after the parallel passes: at validate no operator with a strategy
# or a Layout reads w1 / w2, while the other weights keep an operator that states their layout.
# So at validate these four, and only these, are the step_parallel_end's; the rest the file's own.
ZOO15 = FIXTURES / "zoo" / "15_mf_llama_moe_ep8"
EXPERTS = {f"model.layers.{layer}.feed_forward.ffn.{w}": shape
           for layer in (0, 1) for w, shape in (("w1", (4, 512, 3072)), ("w2", (4, 1536, 512)))}
EXPERT_OF = {0: 0, 5: 1}


@pytest.fixture(scope="module")
def zoo15():
    import msinspect
    from msinspect.analysis import analyse

    return analyse(msinspect.load_dump(ZOO15), "validate", jobs=1)


def test_zoo15_the_experts_weights_come_from_step_parallel_end_the_rest_from_validate(zoo15):
    slices = zoo15.slices()
    weights = slices[slices["kind"] == "weight"]
    experts = weights[weights["param"].isin(list(EXPERTS))]
    assert sorted(zip(experts["rank"], experts["param"])) == sorted((r, p) for r in (0, 5) for p in EXPERTS)
    for row in experts.to_dict("records"):
        whole = EXPERTS[row["param"]]
        e = EXPERT_OF[row["rank"]]
        assert tuple(row["global_shape"]) == whole
        assert tuple(row["device_matrix"]) == (2, 4) and tuple(row["tensor_map"]) == (0, -1, -1)
        assert [list(b) for b in row["slice"]] == [[e, e + 1], [0, whole[1]], [0, whole[2]]]
        assert tuple(row["slice_shape"]) == (1, *whole[1:]) and not row["opt_shard_group"]
        assert "step_parallel_end" in row["file"]
    rest = weights[~weights["param"].isin(list(EXPERTS))]
    assert len(rest) > 0 and all("validate" in f for f in rest["file"])  # the file's own, not replaced
    # each file read takes from beside it those four, by name, and nothing else
    assert {f: sorted(r["param"] for r in rows) for f, rows in zoo15.weights_at_end.items()} == {
        r.file: sorted(EXPERTS) for r in zoo15.results}


def test_zoo15_shapes_params_names_the_weights_it_read_beside_the_file():
    done = invoke("shapes", ZOO15, "--params", "--stage", "validate", "--json")
    assert done.exit_code == 0, done.stderr
    rows = json.loads(done.stdout)
    held = {(row["rank"], row["param"]): row["slice_text"] for row in rows if row["param"] in EXPERTS}
    assert held == {(r, p): f"[{EXPERT_OF[r]}:{EXPERT_OF[r] + 1}, 0:{s[1]}, 0:{s[2]}]"
                    for r in (0, 5) for p, s in EXPERTS.items()}
    assert {row["record"] for row in rows if row["param"] in EXPERTS} == {"same"}  # MindSpore's record
    # the note says which weights are the step_parallel_end's, not that the files state none
    assert "step_parallel_end beside" in done.stderr and "state no weight's layout" not in done.stderr
    assert "model.layers.0.feed_forward.ffn.w1" in done.stderr


def test_zoo15_without_step_parallel_end_the_experts_are_named_cannot_tell(tmp_path):
    # nothing beside validate lays out w1 / w2: no row for them, and the command says which
    # weights it cannot tell rather than printing a table that reads as "no such weight"
    root = dump_without(ZOO15, tmp_path / "zoo15", "rank_*/step_parallel_end*")
    done = invoke("shapes", root, "--params", "--stage", "validate", "--json")
    assert done.exit_code == 0, done.stderr
    assert not [row for row in json.loads(done.stdout) if row["param"] in EXPERTS]
    assert "cannot tell the slices of 4 weight(s)" in done.stderr
    assert all(name in done.stderr for name in EXPERTS) and "those as the step_parallel_end" not in done.stderr


def test_zoo15_the_report_lays_out_the_experts_and_says_where_from(zoo15):
    from msinspect.report.html import _params
    from msinspect.report.rollup import roll_up, weight_grids

    rolled = roll_up(zoo15, many=False)
    for param, whole in EXPERTS.items():
        weight = rolled.weights.params[param]
        grids, why = weight_grids(param, weight, {})
        assert why is None and [g.device_matrix for g in grids] == [(2, 4)]
        cells = {c.rank: [list(b) for b in c.slice] for panel in grids[0].panels for row in panel.rows
                 for c in row if c.read}
        assert cells == {r: [[e, e + 1], [0, whole[1]], [0, whole[2]]] for r, e in EXPERT_OF.items()}
    note = _params(rolled.weights)["note"]
    assert "no layout of 4 weight(s)" in note and "model.layers.1.feed_forward.ffn.w2" in note


def test_zoo15_cost_tries_the_files_own_weights_first(zoo15):
    # the attention's weights (dp 4 x mp 2: device matrix (4, 2)) are the validate file's own, the
    # experts' (2, 4) the step_parallel_end's. A group of all 8 ranks is a whole sub-grid of both;
    # the file's own answers it, so no rule leans on the file beside it, and the world group's
    # rule names (4, 2). (Zoo 20, whose every weight is read beside the file, says so: above.)
    from msinspect.analysis.job.cost_tables import comm_costs

    costs = comm_costs(zoo15)
    assert not costs["axis_from"].str.contains("step_parallel_end").any()
    world = costs[[isinstance(g, tuple) and sorted(g) == list(range(8)) for g in costs["group_ranks"]]]
    by_weights = world[world["axis_from"].str.startswith("group along")]
    assert len(by_weights) > 0 and by_weights["axis_from"].str.contains(r"device matrix \(4, 2\)", regex=True).all()


# ------------------------------------------------------------------ gradient accumulators: zoo 18
# By hand, from fixtures/zoo/nets/18_doc_pipeline_parallel.py (MindSpore's pipeline sample, 8
# ranks in 2 stages of 4, the zoo keeps ranks 0 and 5): the pipeline's training cell accumulates
# each weight's gradient over the 4 micro-batches in a buffer MindSpore clones from the weight
# (``accu_grads.<weight>``, same shape, same layout: no optimizer parallel here, so nothing shards
# it). Every weight of the sample is whole on its stage (device matrix [4], tensor map [-1, -1]:
# the docstring's derivation), so each accumulator is too: rank 0 (stage 0) holds all of
# accu_grads.layer1.param (784, 512), accu_grads.layer2.weight (512, 512) and .bias (512,);
# rank 5 (stage 1) all of accu_grads.layer3.weight (10, 512) and .bias (10,). At validate no
# operator with a strategy reads them; the step_parallel_end beside the file does.
ZOO18 = FIXTURES / "zoo" / "18_doc_pipeline_parallel"
ACCUMULATED = {
    (0, "accu_grads.layer1.param"): (784, 512), (0, "accu_grads.layer2.weight"): (512, 512),
    (0, "accu_grads.layer2.bias"): (512,), (5, "accu_grads.layer3.weight"): (10, 512),
    (5, "accu_grads.layer3.bias"): (10,),
}


def test_zoo18_gradient_accumulators_at_validate_as_at_step_parallel_end():
    import msinspect
    from msinspect.analysis import analyse

    slices = analyse(msinspect.load_dump(ZOO18), "validate", jobs=1).slices()
    rows = {(r["rank"], r["param"]): r for r in slices.to_dict("records") if r["param"].startswith("accu_grads.")}
    assert set(rows) == set(ACCUMULATED)
    for key, whole in ACCUMULATED.items():
        row = rows[key]
        assert tuple(row["global_shape"]) == whole and tuple(row["device_matrix"]) == (4,)
        assert tuple(row["tensor_map"]) == (-1,) * len(whole) and tuple(row["slice_shape"]) == whole
        assert [tuple(b) for b in row["slice"]] == [(0, n) for n in whole] and not row["opt_shard_group"]
        assert "step_parallel_end" in row["file"]
