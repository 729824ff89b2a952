"""Pipeline stages told from the IR (issue 38, item 3): a rank's stage index, its Send / Receive
peers and the ranks of its in-stage groups give the stage size by MindSpore's rule
(:mod:`msinspect.analysis.job.pipeline_stages`), where the weights grouping cannot (some ranks only).

Every expectation is derived by hand from the net scripts and the ports' specs, before msinspect
was run on them:

- zoo 13 (``fixtures/zoo/nets/13_mf_llama_pp_interleave.py``): dp 2 x mp 2 x pp 2 on 8 ranks,
  "Stage s is ranks 4s .. 4s + 3"; the dump keeps ranks 0 and 7: rank 0 is stage 0 (0-3), rank 7
  stage 1 (4-7). Rank 7 alone tells it: its file states stage 1 (``stage: I64(1)``) and its peer
  3; n divides 8 and 7 - 3 = 4 and 7 // n == 1: only n = 4. Rank 0 states stage 0, peer 4 and
  groups {0, 1}, {0, 2}, {0, 1, 2, 3} (the cross-stage global norm {0, 4} and the world AllReduce of
  the overflow check are not in-stage groups): n divides 4 and 3 // n == 0: only n = 4.
  The weights' slices follow the stage: wq (512, 512) cut (2, 1) by mp (the last axis of the
  stage's device matrix (2, 1, 2)), then over the data-parallel group by the optimizer: rank 0
  (mp 0, first of {0, 2}) stores rows 0:128 of layer 0's wq, rank 7 (mp 1, second of {5, 7})
  rows 384:512 of layer 1's.
- zoo 04 (``nets/04_pipeline_hsdp_recompute.py``): 2 stages on 8 ranks, 0-3 and 4-7, every rank
  read: the weights grouping answers, and the IR's answer is the same.
- the pipeline UT ports (their ``.toml``): 32 ranks in 2 stages (0-15, 16-31), one rank kept;
  stage1_lazy_inline_2 8 ranks in 2 stages (0-3, 4-7), rank 4 kept.
- ``fixtures/recursive_pipeline_dryrun_8rank``: 2 stages on 8 ranks, 0-3 and 4-7.
"""
from __future__ import annotations

import shutil

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.job.collect import ir_stages
from msinspect.analysis.job.pipeline_stages import StageFacts, facts_from, stage_sizes, stages_from_ir
from tests.conftest import FIXTURES
from tests.test_cli_parse import msinspect as cli

ZOO = FIXTURES / "zoo"
UT = FIXTURES / "ut"


# ------------------------------------------------------------------ the rule, by itself
def test_a_peer_without_a_group_leaves_the_stage_size_open():
    """Rank 0 of 8, stage 0, sends to rank 4, no group: stages of 1, 2 or 4 ranks all put rank 4
    at rank 0's place in another stage (8 would put it in rank 0's own stage)."""
    facts = facts_from(0, stages=[0], peers=[4], members=[])
    assert stage_sizes(0, 8, facts) == (1, 2, 4)
    told = stages_from_ir([(0, facts)], range(8))
    assert told.stages == {} and "1, 2 or 4" in told.note


def test_a_group_of_four_closes_it():
    """The same rank in a group {0, 1, 2, 3}: its stage holds rank 3, so n >= 4; n divides 4."""
    facts = facts_from(0, stages=[0], peers=[4], members=[(0, 1), (0, 1, 2, 3)])
    assert stage_sizes(0, 8, facts) == (4,)
    assert dict(stages_from_ir([(0, facts)], range(8)).stages) == {0: (0, 1, 2, 3)}


def test_the_stage_index_alone_can_tell():
    """Rank 7 of 8 at stage 1 with peer 3: n divides 4 and 7 // n == 1: 4 (7 // 2 = 3, 7 // 1 = 7)."""
    assert stage_sizes(7, 8, facts_from(7, stages=[1], peers=[3], members=[])) == (4,)


def test_the_peers_stage_can_tell():
    """Rank 0, no stage stated, peer 4 said to be of stage 1 (PipelineTransformer's ``dest_rank``
    primal attribute): n divides 4 and 4 // n == 1: 4."""
    assert stage_sizes(0, 8, facts_from(0, stages=[], peers=[4], members=[], peer_stages={4: 1})) == (4,)


def test_facts_that_fit_no_stage_size():
    # a group holding rank 7 puts rank 7 in stage 0, the peer 4 says the stage has at most 4 ranks
    assert stage_sizes(0, 8, facts_from(0, stages=[0], peers=[4], members=[tuple(range(8))])) == ()
    # a file that states two stages of its own rank
    assert stage_sizes(0, 8, facts_from(0, stages=[0, 1], peers=[4], members=[])) == ()
    # a peer said to be of the rank's own stage: 4 // n == 0 needs n > 4, n divides 4
    assert stage_sizes(0, 8, facts_from(0, stages=[0], peers=[4], members=[], peer_stages={4: 0})) == ()
    # the rank its own peer
    assert stage_sizes(0, 8, facts_from(0, stages=[0], peers=[0], members=[])) == ()


def test_ranks_that_disagree_are_cannot_tell():
    """Rank 0 fits only stages of 2 (peer 2, group {0, 1}), rank 7 only stages of 4."""
    zero = facts_from(0, stages=[0], peers=[2], members=[(0, 1)])
    seven = facts_from(7, stages=[1], peers=[3], members=[])
    assert stage_sizes(0, 8, zero) == (2,) and stage_sizes(7, 8, seven) == (4,)
    told = stages_from_ir([(0, zero), (7, seven)], range(8))
    assert told.stages == {} and "disagree" in told.note and "rank 7" in told.note


def test_a_rank_left_open_takes_the_size_the_others_tell():
    """Rank 0 alone allows 1, 2 or 4; rank 7 allows 4 only: the job's stage size is 4."""
    zero = facts_from(0, stages=[0], peers=[4], members=[])
    seven = facts_from(7, stages=[1], peers=[3], members=[])
    told = stages_from_ir([(0, zero), (7, seven)], range(8))
    assert dict(told.stages) == {0: (0, 1, 2, 3), 7: (4, 5, 6, 7)} and told.note is None


def test_facts_are_a_few_ints():
    facts = facts_from(5, stages=[1], peers=[1, 9], members=[(4, 5), (5, 7)], peer_stages={9: 2})
    assert facts == StageFacts(stage=1, step=4, peer=9, peer_stage=2, low=4, high=7)
    assert all(isinstance(v, int) for v in facts)


# ------------------------------------------------------------------ zoo 13: ranks 0 and 7 of 8
@pytest.fixture(scope="module")
def zoo13():
    return analyse(msinspect.load_dump(ZOO / "13_mf_llama_pp_interleave"), jobs=1)


def test_zoo13_stages_from_the_ir(zoo13):
    assert zoo13.world == tuple(range(8))
    assert zoo13.context(0).stage_ranks == (0, 1, 2, 3)
    assert zoo13.context(7).stage_ranks == (4, 5, 6, 7)
    assert zoo13.stages_by == "ir"


def test_zoo13_slices_follow_the_stage(zoo13):
    slices = zoo13.slices().set_index(["rank", "param"])
    assert slices.loc[(0, "model.layers.0.attention.wq.weight"), "slice"] == ((0, 128), (0, 512))
    assert slices.loc[(7, "model.layers.1.attention.wq.weight"), "slice"] == ((384, 512), (0, 512))


def test_zoo13_summary_and_diff_say_the_stages():
    run = cli("summary", ZOO / "13_mf_llama_pp_interleave", "--jobs", "1", "--json")
    assert run.returncode == 0, run.stderr
    import json

    assert [(row["rank"], row["stage_ranks"]) for row in json.loads(run.stdout)] == [(0, "0-3"), (7, "4-7")]
    run = cli("summary", ZOO / "13_mf_llama_pp_interleave", "--jobs", "1")
    assert "pipeline stages" in run.stdout and "0-3; 4-7" in run.stdout
    run = cli("diff", ZOO / "13_mf_llama_pp_interleave" / "rank_0", ZOO / "13_mf_llama_pp_interleave" / "rank_7")
    assert run.returncode in (0, 1), run.stderr
    assert "different pipeline stages: rank_0 is in the stage of ranks 0-3, rank_7 in the stage of ranks 4-7" \
        in run.stdout


def test_one_rank_of_zoo13_tells_its_stage_alone(tmp_path):
    """Rank 7 by itself (its run record gives the world of 8): its file's stage and peer tell 4-7."""
    root = tmp_path / "rank7_only"
    root.mkdir()
    shutil.copy(ZOO / "13_mf_llama_pp_interleave" / "config.json", root / "config.json")
    shutil.copytree(ZOO / "13_mf_llama_pp_interleave" / "rank_7", root / "rank_7")
    analysis = analyse(msinspect.load_dump(root), jobs=1, world=8)
    assert analysis.context(7).stage_ranks == (4, 5, 6, 7)


# ------------------------------------------------------------------ every rank read: weights and IR agree
@pytest.mark.parametrize("root", [ZOO / "04_pipeline_hsdp_recompute", FIXTURES / "recursive_pipeline_dryrun_8rank"],
                         ids=lambda p: p.name)
def test_the_ir_answers_as_the_weights_where_both_answer(root):
    analysis = analyse(msinspect.load_dump(root), jobs=1)
    expected = {r: (0, 1, 2, 3) if r < 4 else (4, 5, 6, 7) for r in range(8)}
    assert analysis.stages_by == "weights"
    assert dict(analysis.stages) == expected
    told = ir_stages(analysis.results, analysis.world)
    assert dict(told.stages) == expected and told.note is None


# ------------------------------------------------------------------ the UT ports: one rank of a pipeline job
PORTS = {
    "b_test_pipeline_split__test_pipeline_split_shared_parameter_stage0": (0, range(0, 16)),
    "b_test_pipeline_split__test_pipeline_split_shared_parameter_stage1_predict": (16, range(16, 32)),
    "b_test_pipeline_split__test_pipeline_split_stage0": (0, range(0, 16)),
    "b_test_pipeline_split__test_pipeline_split_stage0_opt_shard": (0, range(0, 16)),
    "b_test_pipeline_split__test_pipeline_split_stage1": (16, range(16, 32)),
    "b_test_pipeline_split__test_pipeline_split_stage1_lazy_inline_2": (4, range(4, 8)),
    "b_test_pipeline_split__test_pipeline_split_with_micro_batch_interleaved_stage0": (0, range(0, 16)),
    "b_test_pipeline_split__test_pipeline_with_micro_batch_no_parallel_optimizer": (0, range(0, 16)),
    "b_test_pipeline_split__test_pipeline_with_no_parallel_optimizer_and_micro": (0, range(0, 16)),
    # 4 ranks in 2 stages (0-1, 2-3): rank 3 receives from rank 1 and gathers over {2, 3}; the
    # result broadcast's AllReduce over {1, 3} crosses the stages and is no in-stage group
    "b_test_pipeline_inference__test_pipeline_inference_last_stage": (3, range(2, 4)),
    "b_test_pipeline_inference__test_pipeline_inference_result_broadcast": (3, range(2, 4)),
}


@pytest.mark.parametrize("port", sorted(PORTS))
def test_one_rank_of_a_ut_port_tells_its_stage(port):
    rank, stage = PORTS[port]
    analysis = analyse(msinspect.load_dump(UT / port), jobs=1)
    assert analysis.context(rank).stage_ranks == tuple(stage)


def test_a_first_stage_with_nothing_but_a_peer_stays_cannot_tell():
    """The inference port's rank 0 of 4 sends to rank 2 and has no group, and its file states
    neither its stage nor its peer's: stages of 1 or 2 ranks both fit."""
    analysis = analyse(msinspect.load_dump(UT / "b_test_pipeline_inference__test_pipeline_inference_first_stage"), jobs=1)
    assert analysis.context(0).stage_ranks is None
    assert "1 or 2" in analysis.stages_note


# ------------------------------------------------------------------ groups filled once every rank arrived
@pytest.mark.parametrize("spool", [False, True])
def test_groups_a_rank_names_by_hash_only_tell_its_stage_once_filled(spool):
    """Rank 0 sends to rank 4 and mirrors a gradient over a group its file names by hash only
    (its ranks unknown when it was read): alone it allows stages of 1, 2 or 4 ranks. Rank 1 writes
    the group's ranks, 0-3; once both arrived, rank 0's group is filled in, and with it its stage
    facts: the group holds rank 3, so the stage has 4 ranks."""
    from msinspect.analysis.job.collect import Gathered, RankResult
    from msinspect.mindspore.comm_groups import mindspore_name

    name = mindspore_name((0, 1, 2, 3))
    mirror = {"rank": 0, "op": "AllReduce", "kind": "gradient", "name": "grad_mirror_MirrorMicroStepOperator",
              "group": name, "group_ranks": None, "group_size": 4, "moves_data": True, "tensor_bytes": 400,
              "wire_bytes": None}
    send = {"rank": 0, "op": "Send", "kind": "pipeline", "name": "Send", "group": "hccl_world_group",
            "group_ranks": (0, 4), "group_size": 2, "moves_data": True, "tensor_bytes": 400, "wire_bytes": 400,
            "peer": 4}
    written = {**mirror, "rank": 1, "group_ranks": (0, 1, 2, 3), "wire_bytes": 600}

    def result(rank, comm, facts):
        return RankResult(rank=rank, label=f"rank_{rank}", file=f"rank_{rank}/x.ir", stage="validate", family="",
                          status="ok", rows={"comm": comm}, world_size=8, pipelined=True, stage_facts=facts)

    alone = facts_from(0, stages=[], peers=[4], members=[])
    assert stage_sizes(0, 8, alone) == (1, 2, 4)
    gathered = Gathered(2, spool)
    gathered.arrive(1, result(1, [written], facts_from(1, stages=[], peers=[5], members=[(0, 1, 2, 3)])))
    gathered.arrive(0, result(0, [send, mirror], alone))
    results, world = gathered.finish(tuple(range(8)))
    assert results[0].stage_facts == alone._replace(low=0, high=3)
    assert dict(ir_stages(results, world).stages) == {0: (0, 1, 2, 3), 1: (0, 1, 2, 3)}
