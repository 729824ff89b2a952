"""The whole step, never a silent zero (issue 39, items 1, 2 and 4): a dump that holds the
parallel passes but no ``validate`` (a pass filter, a copy off a cluster) is read at
step_parallel_end, which MindSpore writes before it expands the backward (the file still holds
its ``J`` node). There the backward is "cannot tell", with the reason, and no total that needs it
is given; the mirror operators, which stand in the forward graph until then, count as backward;
and a collective whose output prints ``<null>`` is sized by its producer's strategy.

By hand, for zoo 01 (``fixtures/zoo/nets/01_semi_auto_tp4dp2.py``: gpt.py, 4 blocks, hidden 512,
batch 8 x sequence 64 = 512 rows, dp 2 x tp 4 on 8 ranks, rank = d * 4 + t; float32):

- forward, tensor axis: out_matmul and ffn_out_matmul ((2, 4), (4, 1)) contract the dimension
  cut 4: their (512, 512) output is a partial sum with rows cut 2, (256, 512) = 524,288 bytes,
  summed over the tp group of 4 by a ring AllReduce, 2 * 3 / 4 of it on the wire = 786,432; two
  per block, 8 in all. The head's lm_matmul ((2, 1), (1, 4)) gives (512, 1024) cut (2, 4):
  (256, 256) = 262,144 bytes at the rank, gathered over the tp group of 4 (3 x 262,144 =
  786,432 bytes sent). Tensor forward: 9 operators, 9 x 786,432 = 7,077,888 bytes.
- forward, data axis: loss_mean ((2,),) reduces the batch cut 2: a float32 scalar summed over
  the dp group of 2, 2 * 1 / 2 * 4 = 4 bytes.
- the mirrors: one per weight, 45 (the 2 embedding tables, 4 x 4 + 2 LayerNorm gammas and betas,
  4 x 6 block matrices, lm_head), each the sum of the weight's gradient over the ranks that hold
  the same slice (all 8 for the tables and norms, held whole; the dp pair for the matrices):
  backward, data axis, whatever the pass they are read at (test_comm_bytes.py sizes each).
"""
from __future__ import annotations

import json

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import NO_BACKWARD, SHORT, link_time
from msinspect.analysis.job.cost_tables import bytes_by, comm_costs, rank_matrix
from msinspect.ranks_read import most_held
from msinspect.stages import WHOLE_STEP_STAGES

from tests.conftest import FIXTURES, dump_without, invoke

ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2"
ROW = 256 * 512 * 4


def allreduce(n, s):
    return 2 * (n - 1) * s // n


@pytest.fixture(scope="module")
def no_validate(tmp_path_factory):
    """Zoo 01 as a pass filter that left out validate would have dumped it."""
    root = dump_without(ZOO01, tmp_path_factory.mktemp("no_validate") / "zoo01", "rank_*/*validate*")
    return root


@pytest.fixture(scope="module")
def analysis(no_validate):
    return analyse(msinspect.load_dump(no_validate))


def test_the_backward_is_cannot_tell_never_absent(analysis):
    split = bytes_by(analysis, ("axis", "phase"))
    assert set(split["rank"]) == set(range(8))
    for rank, rows in split.groupby("rank"):
        said = rows[(rows["axis"] == "cannot tell") & (rows["phase"] == "backward")]
        assert len(said) == 1 and said.iloc[0]["step_bytes"] is None and said.iloc[0]["note"] == SHORT
        # by axis alone, no axis total leaves the backward out
        per_axis = bytes_by(analysis, ("axis",))
        assert per_axis[per_axis["rank"] == rank]["step_bytes"].map(lambda v: v is None).all()


def test_the_forward_is_told_by_hand(analysis):
    split = bytes_by(analysis, ("axis", "phase"))
    for rank in (0, 5):
        mine = {(r["axis"], r["phase"]): (r["operators"], r["step_bytes"])
                for r in split[split["rank"] == rank].to_dict("records")}
        assert mine[("tensor", "forward")] == (9, 8 * allreduce(4, ROW) + 3 * 256 * 256 * 4)
        assert mine[("data", "forward")] == (1, 4)


def test_mirrors_are_the_backward_on_the_data_axis(analysis):
    costs = comm_costs(analysis)
    mirrors = costs[costs["op"] == "_MirrorOperator"]
    assert len(mirrors) == 8 * 45
    assert set(mirrors["phase"]) == {"backward"} and set(mirrors["axis"]) == {"data"}
    # the same 45 sums are validate's grad_mirror AllReduces under Gradients/: the same bytes
    whole = analyse(msinspect.load_dump(ZOO01), "validate")
    at_validate = bytes_by(whole, ("axis", "phase"))
    at_end = bytes_by(analysis, ("axis", "phase"))

    def data_backward(frame):
        return frame[(frame["rank"] == 0) & (frame["axis"] == "data") & (frame["phase"] == "backward")].iloc[0]

    assert data_backward(at_end)["operators"] == data_backward(at_validate)["operators"] == 45
    assert data_backward(at_end)["step_bytes"] == data_backward(at_validate)["step_bytes"]


def test_the_rank_matrix_and_the_time_say_it_too(analysis):
    matrix = rank_matrix(analysis)
    assert set(matrix["note"]) == {SHORT}
    times = link_time(matrix, {"intra": 100.0}, ranks_per_node=8)
    assert times["seconds"].map(lambda v: v is None).all()


def test_a_file_with_its_backward_has_none_of_this():
    whole = analyse(msinspect.load_dump(ZOO01), "validate")
    split = bytes_by(whole, ("axis", "phase"))
    assert "cannot tell" not in set(split["axis"]) and split["note"].map(lambda v: v is None).all()
    assert split["step_bytes"].map(lambda v: v is not None).all()


def test_cost_reads_the_pass_that_holds_the_whole_step(no_validate, tmp_path):
    assert most_held(msinspect.load_dump(ZOO01), WHOLE_STEP_STAGES) == "validate"
    assert most_held(msinspect.load_dump(no_validate), WHOLE_STEP_STAGES) is None
    # the manual-parallel run keeps validate and execute; without validate, execute holds the step
    manual = dump_without(FIXTURES / "manual_parallel_8rank", tmp_path / "manual", "rank_*/*validate*")
    assert most_held(msinspect.load_dump(manual), WHOLE_STEP_STAGES) == "execute"
    done = invoke("cost", ZOO01)
    assert "at validate" in done.stderr and "backward cannot tell" not in done.stdout


def test_the_command_says_why(no_validate):
    done = invoke("cost", no_validate, "--by", "axis,phase")
    assert done.exit_code == 0, done.stderr
    why = NO_BACKWARD.format(stage="step_parallel_end")
    assert f"backward cannot tell on ranks 0-7: {why}; no pass of the dump read holds it" in \
        " ".join(done.stdout.split())
    data = json.loads(invoke("cost", no_validate, "--json").stdout)
    rows = [r for r in data["bytes"] if r["axis"] == "tensor"]
    assert rows and all(r["step_bytes"] is None and "backward" in r["note"] for r in rows)


def test_the_report_says_it_at_a_glance_and_in_the_cost_section(no_validate, tmp_path):
    page = tmp_path / "r.html"
    assert invoke("report", no_validate, "-o", page).exit_code == 0
    text = page.read_text()
    assert "the backward cannot tell (the file read (step_parallel_end) holds no gradient graph" in text
    assert '<span class="unknown">Backward cannot tell</span> on ranks 0-7' in text
