"""The parallel axis of the collectives issue 39, item 3 left "cannot tell" although the plan tells
it: groups that cross pipeline stages (zoo 13), the user's own AlltoAll / AlltoAllV of a mixture
of experts (zoo 15), and 2-D tensor parallelism at validate (zoo 20). Each expectation below was
derived by hand from the network script, its device count and MindSpore's definitions before the
command was run on it.

Zoo 13 (``fixtures/zoo/nets/13_mf_llama_pp_interleave.py``: MindFormers' LLaMA, dp 2 x mp 2 x pp 2
on 8 ranks, optimizer parallel, MindFormers' pipeline wrapper with loss scale and gradient
clipping). MindSpore splits the devices into stages in order: stage s is ranks 4s .. 4s + 3, and
inside a stage rank = 4s + dp_index * 2 + mp_index (the stage's device matrix (2, 2): data, then
tensor). The step has two AllReduces of a scalar whose groups cross the stages:

- the global norm of the gradients (MindFormers' ``ClipGradNorm``, ``clip_grad.py``: the sum of
  squares) is summed first over the stage (``PARALLEL_GLOBALNORM_IN_STAGES``: ranks 0-3, data and
  tensor), then between the stages (``PARALLEL_GLOBALNORM_BETWEEN_STAGES``) over the ranks at the
  same place of each stage: rank 0 with 4, rank 7 with 3. Those ranks differ in their stage only:
  the pipeline axis.
- the loss scale's overflow flag (MindSpore's ``loss_scale.py``,
  ``_get_distributed_overflow_status_on_infnan_mode``) is summed over the world group, ranks 0-7:
  every place of both stages, so the pipeline axis and, within a stage, the data and tensor axes:
  ``pipeline+data+tensor`` (outermost first, as the device matrix lists them).

Zoo 15 (``fixtures/zoo/nets/15_mf_llama_moe_ep8.py``: dp 4 x mp 2 on 8 ranks, MoEV3 with 4 experts,
expert_parallel 4). MoEV3 treats all 8 ranks as data parallel for its tokens (``self.dp =
data_parallel * model_parallel``; the router's Dense ``((8, 1), (1, 1))``, its weight held whole
by every rank: one data axis of 8). The experts are cut over ``inner_dp`` = ep = 4, the fast part
of that data axis (outer_dp 2 x inner_dp 4), and the function dispatches the tokens over the
expert group ``FFN._get_ep_group_name`` makes: ranks rank // 4 * 4 .. + 3, {0, 1, 2, 3} for rank
0 and {4, 5, 6, 7} for rank 5: 4 of the 8 data-parallel replicas. Data parallelism never exchanges
activations between replicas; this exchange is expert parallelism's, its axis ``expert``. A
layer's forward calls one AlltoAll (the counts) and three AlltoAllV (the tokens, their expert ids,
the results back): 4 a layer, 8 for the 2 layers; the gradient graph holds the bprops of the two
AlltoAllV that carry floating-point data (tokens and results; the expert ids are integers, no
gradient): 2 a layer, 4. 12 a rank, 24 over ranks 0 and 5, all ``expert``.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.cost import across_stages
from msinspect.analysis.job.cost_tables import comm_costs

from tests.conftest import FIXTURES, dump_without

ZOO = FIXTURES / "zoo"


@pytest.fixture(scope="module")
def zoo13():
    return comm_costs(analyse(msinspect.load_dump(ZOO / "13_mf_llama_pp_interleave"), "validate"))


@pytest.fixture(scope="module")
def zoo15():
    return comm_costs(analyse(msinspect.load_dump(ZOO / "15_mf_llama_moe_ep8"), "validate"))


@pytest.mark.parametrize("rank", [0, 7])
def test_the_global_norm_between_stages_runs_along_the_pipeline_axis(zoo13, rank):
    mine = zoo13[(zoo13["rank"] == rank) & (zoo13["name"] == "PARALLEL_GLOBALNORM_BETWEEN_STAGES")]
    place = rank % 4  # the rank's place in its stage of 4
    assert set(mine["group_ranks"]) == {(place, place + 4)}
    assert set(mine["axis"]) == {"pipeline"}
    assert mine["axis_from"].str.contains("stage").all()


@pytest.mark.parametrize("rank", [0, 7])
def test_the_global_norm_in_a_stage_runs_along_its_data_and_tensor_axes(zoo13, rank):
    mine = zoo13[(zoo13["rank"] == rank) & (zoo13["name"] == "PARALLEL_GLOBALNORM_IN_STAGES")]
    first = rank // 4 * 4
    assert set(mine["group_ranks"]) == {tuple(range(first, first + 4))}
    assert set(mine["axis"]) == {"data+tensor"}


@pytest.mark.parametrize("rank", [0, 7])
def test_the_overflow_flag_over_the_world_runs_along_every_axis(zoo13, rank):
    world = zoo13[(zoo13["rank"] == rank) & (zoo13["op"] == "AllReduce")
                  & (zoo13["group_ranks"] == tuple(range(8)))]
    assert len(world) == 1
    assert set(world["axis"]) == {"pipeline+data+tensor"}


@pytest.mark.parametrize("rank", [0, 7])
def test_the_global_norm_runs_in_the_optimizers_phase(zoo13, rank):
    """zoo 13's step cell clips gradients by their global norm (``use_clip_grad=True``,
    fixtures/zoo/nets/mf_llama.py): the two AllReduces the parallel pass adds sum the squares of
    gradients, after the backward and for the optimizer's step: phase optimizer, not forward."""
    mine = zoo13[(zoo13["rank"] == rank) & zoo13["name"].str.startswith("PARALLEL_GLOBALNORM")]
    assert len(mine) == 2 and set(mine["phase"]) == {"optimizer"}


def test_zoo13_axes_all_told(zoo13):
    assert "cannot tell" not in set(zoo13["axis"])


@pytest.mark.parametrize("rank", [0, 5])
def test_the_experts_token_exchange_is_the_expert_axis(zoo15, rank):
    mine = zoo15[(zoo15["rank"] == rank) & zoo15["op"].isin(["AlltoAll", "AlltoAllV"])]
    group = tuple(range(rank // 4 * 4, rank // 4 * 4 + 4))
    assert set(mine["group_ranks"]) == {group}
    forward = mine[mine["phase"] == "forward"]
    backward = mine[mine["phase"] == "backward"]
    assert (forward["op"] == "AlltoAll").sum() == 2 and (forward["op"] == "AlltoAllV").sum() == 6
    assert len(backward) == 4 and set(backward["op"]) == {"AlltoAllV"}
    assert set(mine["axis"]) == {"expert"}
    assert mine["axis_from"].str.contains("replicas").all()


def test_zoo15_axes_all_told(zoo15):
    assert "cannot tell" not in set(zoo15["axis"])
    assert (zoo15["axis"] == "expert").sum() == 24


@pytest.mark.parametrize("name", ["13_mf_llama_pp_interleave", "15_mf_llama_moe_ep8", "20_doc_high_dimension_tp"])
def test_the_report_names_the_same_axes(name):
    """The report's cost fold asks the same rules row by row (AxisRules): its bytes per (axis,
    phase) and its "cannot tell"s are the CLI's."""
    from msinspect.analysis import analyse
    from msinspect.analysis.job.cost_tables import bytes_by
    from msinspect.report.rollup import roll_up

    analysis = analyse(msinspect.load_dump(ZOO / name), stage="validate")
    costs = comm_costs(analysis)
    expected: dict = {}
    for row in bytes_by(analysis, ("axis", "phase"), costs).to_dict("records"):
        value = row["step_bytes"]
        expected.setdefault(int(row["rank"]), {})[(row["axis"], row["phase"])] = \
            None if value is None or value != value else value
    rolled = roll_up(analysis, many=False)
    assert {rank: dict(items) for items, ranks in rolled.cost.per_rank.items() for rank in ranks} == expected
    assert not rolled.cost.undecided


# Zoo 20 (``fixtures/zoo/nets/20_doc_high_dimension_tp.py``, MindSpore's 2-D tensor-parallel
# sample on 8 ranks): ``Layout((2, 4), ("x", "y"))``, rank r at x = r // 4, y = r % 4. Both axes cut
# a weight (fc1_weight ("x", "y"), fc2_weight ("y", "x")): both are tensor axes, and no axis is a
# repeated one (all 8 devices used). Every collective of the step runs along one of them: the
# AllGather before matmul1 and the ReduceScatter after matmul2 over the "y" group (the 4 ranks of one
# x: 0-3, 4-7), the ReduceScatter after matmul1 and the AllGather before matmul2 over the "x" group
# (the 2 ranks of one y: {0, 4}, {3, 7}, {2, 6}), and the AlltoAlls that move the data-parallel
# input into matmul1's layout and the output back, over the same groups. All 8 a rank: tensor, 24
# over ranks 0, 3 and 6. With ``enable_nd_tp`` validate's MatMuls print no strategy (and one shared
# name), so validate holds no weight layout; the rank's step_parallel_end, the parallel pass's own
# output, holds them, and validate runs under the same layouts.
def test_2d_tensor_parallel_at_validate_reads_the_layouts_of_step_parallel_end():
    costs = comm_costs(analyse(msinspect.load_dump(ZOO / "20_doc_high_dimension_tp"), "validate"))
    assert len(costs) == 24
    for rank in (0, 3, 6):
        mine = costs[costs["rank"] == rank]
        y_group = tuple(range(rank // 4 * 4, rank // 4 * 4 + 4))
        x_group = (rank % 4, rank % 4 + 4)
        assert set(mine["group_ranks"]) == {y_group, x_group}
        assert set(mine["axis"]) == {"tensor"}
    # the analysis reads the weights there (Analysis.weights_at_end), so the weights' rule, which
    # comes before the operators' next to a group, tells all 24 by the weights' (2, 4)
    read = costs[costs["axis_from"].str.contains("step_parallel_end")]
    assert len(read) == 24 and read["axis_from"].str.contains(r"\(2, 4\)").all()


def test_without_step_parallel_end_the_axis_cannot_tell_and_says_so(tmp_path):
    """The same dump without its step_parallel_end files: validate alone states no weight's layout
    (above). relu, with its user-set (1, 8), sits between the ReduceScatter after matmul1 and the
    AllGather before matmul2 (the operators around each collective in the graph put in place of
    a MatMul only move its parts): those 2 a rank run along part of relu's one cut axis, tensor
    (above). The 18 others no operator next to them names stay "cannot tell", never a guess, and
    the reason says that no step_parallel_end was beside the file."""
    root = dump_without(ZOO / "20_doc_high_dimension_tp", tmp_path / "zoo20", "rank_*/step_parallel_end*")
    costs = comm_costs(analyse(msinspect.load_dump(root), "validate"))
    unknown = costs[costs["axis"] == "cannot tell"]
    assert len(unknown) == 18
    told = costs[costs["axis"] != "cannot tell"]
    assert sorted(told["op"]) == ["AllGather"] * 3 + ["ReduceScatter"] * 3
    assert set(told["axis"]) == {"tensor"} and told["axis_from"].str.contains("relu's").all()
    assert unknown["axis_from"].str.contains("nor does a step_parallel_end beside the file read").all()


# MindSpore's stages of 8 ranks in 2: ranks 0-3 and 4-7, rank r at place r % 4 of stage r // 4.
@pytest.mark.parametrize("stage, group, expected", [
    ((0, 1, 2, 3), (0, 4), ((0, 1), (0,))),  # place 0 of both stages
    ((4, 5, 6, 7), (3, 7), ((0, 1), (7,))),  # place 3 of both, seen from stage 1
    ((0, 1, 2, 3), tuple(range(8)), ((0, 1), (0, 1, 2, 3))),  # every place of both
    ((0, 1, 2, 3), (0, 1), None),  # inside the stage: the stage's own rules
    ((0, 1, 2, 3), (0, 5), None),  # place 0 of one stage, 1 of the other: no sub-grid
    ((0, 1, 2, 3), (0, 1, 4), None),  # two places of one stage, one of the other
    ((0, 2, 4, 6), (0, 1), None),  # a stage that is no block of consecutive ranks
])
def test_a_group_across_stages_is_the_same_places_of_each(stage, group, expected):
    assert across_stages(group, {r: i for i, r in enumerate(stage)}) == expected
