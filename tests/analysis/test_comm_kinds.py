"""Who put a collective there, from what MindSpore records: the primitive, the instance names its
parallel passes give (``forward_op_*``, ``redistribution_op_*``, an operator's replacement graph
``HashName(instance) + op + index``), and the flags the parallel pass sets on the graph. The
facts are worked out from the network scripts: the zoo's nets call no collective of their own,
train_jobs/manual_parallel.py calls one ``ops.AllReduce`` and sets no parallel mode.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.mindspore.comm_groups import std_hash
from msinspect.mindspore.vocabulary import KINDS, kind_of, planner_ran
from msinspect.model import Node
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
INTERLEAVE = Path(__file__).parent / "dumps" / "pipeline_interleave_4rank"


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_vocabulary_parallel_gather_scatter_is_the_planners(stage):
    """Zoo 05's ``vocab_gather`` cuts the (4096, 512) table by rows over 16 ranks: MindSpore's
    GatherInfo replaces it with a masked lookup whose partial rows are reduce-scattered over the
    16. The ReduceScatter is named by ``GenerateGraph::NewOpInst``: ``HashName("vocab_gather")``
    + ``ReduceScatter`` + its index in the replacement graph. It is the Gather's own forward
    communication (kind ``forward``), not the user's; its gradient (an AllGather, in the gradient
    graph at validate) is ``backward``."""
    prefix = str(std_hash("vocab_gather"))
    comm = analyse(msinspect.load_dump(ZOO / "05_expert_alltoall_16"), stage).comm()
    scatter = comm[comm["op"] == "ReduceScatter"]
    assert set(scatter["rank"]) == {0, 5, 15}
    assert all(name.startswith(prefix + "ReduceScatter") for name in scatter["name"])
    assert set(scatter["kind"]) == {"forward"}
    if stage == "validate":
        back = comm[comm["name"].str.startswith("grad" + prefix)]
        assert set(back["op"]) == {"AllGather"}
        assert set(back["kind"]) == {"backward"}


@pytest.mark.parametrize(("dump", "stages"), [
    (ZOO / "01_semi_auto_tp4dp2", ("step_parallel_end", "validate")),
    (ZOO / "04_pipeline_hsdp_recompute", ("step_parallel_end", "validate")),
    (ZOO / "05_expert_alltoall_16", ("step_parallel_end", "validate")),
    (ZOO / "09_large_gpt", ("step_parallel_end",)),
    (ZOO / "10_layout_api_8", ("step_parallel_end", "validate")),
    (INTERLEAVE, ("step_parallel_end", "validate")),
])
def test_the_zoo_calls_no_collective_of_its_own(dump, stages):
    """The zoo's networks (and the interleaved pipeline's) call no collective: every one in
    their dumps is the planner's, and each is told which of its kinds it is."""
    for stage in stages:
        kinds = set(analyse(msinspect.load_dump(dump), stage).comm()["kind"])
        assert kinds and not kinds & {"user", "unknown"}, (stage, kinds)


@pytest.mark.parametrize("stage", ["type_inference", "validate", "execute"])
def test_manual_allreduce_stays_the_users(stage):
    """train_jobs/manual_parallel.py sets no parallel mode and averages the loss with its own
    ``ops.AllReduce`` over the world (8 ranks). The parallel pass returned without running
    (``check_set_strategy_valid_once_only`` on the graph, no ``semi_auto_parallel_run_once_only``),
    and type_inference is before it: the forward AllReduce is the user's; the one in the gradient
    graph (from the AllReduce's bprop) is ``backward``. Only rank 0 kept type_inference."""
    comm = analyse(msinspect.load_dump(FIXTURES / "manual_parallel_8rank"), stage).comm()
    ranks = [0] if stage == "type_inference" else list(range(8))
    assert sorted(set(comm["rank"])) == ranks
    users = comm[comm["kind"] == "user"]
    assert sorted(users["rank"]) == ranks  # one per rank
    assert set(users["op"]) == {"AllReduce"}
    assert set(comm["kind"]) <= {"user", "backward"}


def _node(op: str, name: str | None) -> Node:
    return Node(graph="g", index=1, debug_name="x", op=op, kind="call_primitive", callee=op, inputs=(),
                line=1, instance_name=name)


@pytest.mark.parametrize(("name", "planner", "kind"), [
    ("all_reduce", False, "user"),       # the parallel pass inserted nothing into the file
    ("all_reduce", True, "unknown"),     # it did, and nothing tells this one apart: cannot tell
    ("all_reduce", None, "unknown"),     # the file does not say
    ("7206914136160063563AllReduce3", True, "forward"),  # a replacement graph's, HashName + op + index
    ("7206914136160063563AllReduce3", None, "forward"),
    ("7206914136160063563ReduceScatter3", None, "unknown"),  # another op's name: not this AllReduce's rule
    ("99999999999999999999AllReduce3", None, "unknown"),  # not a 64-bit hash
    ("forward_op_123", False, "forward"),
])
def test_kind_from_what_is_recorded(name, planner, kind):
    assert kind_of(_node("AllReduce", name), False, planner) == kind


@pytest.mark.parametrize(("stage", "attrs", "ran"), [
    ("type_inference", {}, False),
    ("step_parallel_begin", {}, False),
    ("step_parallel_end", {}, True),
    ("validate", {"check_set_strategy_valid_once_only": "1"}, False),
    ("validate", {"check_set_strategy_valid_once_only": "1", "semi_auto_parallel_run_once_only": "1"}, True),
    ("validate", {}, None),
])
def test_planner_ran(stage, attrs, ran):
    assert planner_ran(stage, attrs) is ran


def test_unknown_is_a_kind():
    assert KINDS[-1] == "unknown"


def test_vocabulary_parallel_embedding_allreduce_is_the_planners():
    """Zoo 14 (MindFormers' Llama with sequence parallel, mp 4; its script): the embedding Gather
    cuts the table's rows by mp, and GatherInfo forwards the partial lookups with an AllReduce of
    its replacement graph, named ``HashName("gather") + "AllReduce" + index`` (the Gather's
    instance name is ``gather``): the planner's, ``forward``."""
    comm = analyse(msinspect.load_dump(ZOO / "14_mf_llama_seq_parallel"), "step_parallel_end").comm()
    embedding = comm[comm["scope"].str.endswith("tok_embeddings-LlamaEmbedding") & comm["moves_data"]]
    assert len(embedding) == 2  # ranks 0 and 3
    assert all(name.startswith(str(std_hash("gather")) + "AllReduce") for name in embedding["name"])
    assert set(embedding["kind"]) == {"forward"}
    assert set(embedding["group_ranks"]) == {(0, 1, 2, 3)}


@pytest.mark.parametrize("dump", ["12_mf_llama_tp8", "13_mf_llama_pp_interleave", "15_mf_llama_moe_ep8",
                                  "16_mf_llama_256"])
def test_mindformers_global_norm_and_loss_scale(dump):
    """MindFormers' trainer clips gradients by their global norm and checks overflow with the
    loss-scale cell's own ``AllReduce`` (instance ``allreduce``, ``flag_reduce =
    self.allreduce(flag_sum)`` in MindSpore's ``nn/wrap/loss_scale.py``, which
    ``mindformers/wrapper/wrapper.py`` calls through ``get_overflow_status``). At
    step_parallel_end the parallel pass has added the global norm's AllReduces
    (``PARALLEL_GLOBALNORM_IN_STAGES`` / ``_BETWEEN_STAGES``): the planner's, ``forward``; the
    overflow check is ``loss-scale``, one per rank read, told by its ``# In file`` trace. At
    validate MindSpore's comm-op reuse makes collectives share one primitive and print its
    instance name (``comm_reuse``): the name tells nothing, the trace still does: one
    ``loss-scale`` row per rank, at every stage."""
    analysis = msinspect.load_dump(ZOO / dump)
    end = analyse(analysis, "step_parallel_end").comm()
    ranks = set(end["rank"])
    norm = end[end["name"].str.startswith("PARALLEL_GLOBALNORM")]
    assert len(norm) > 0 and set(norm["kind"]) == {"forward"}
    checks = end[end["kind"] == "loss-scale"]
    assert sorted(checks["rank"]) == sorted(ranks)
    assert set(checks["name"]) == {"allreduce"}
    assert "unknown" not in set(end["kind"])
    valid = analyse(analysis, "validate").comm()
    checks = valid[valid["kind"] == "loss-scale"]
    assert sorted(checks["rank"]) == sorted(ranks) and set(checks["name"]) == {"allreduce"}
