"""The naming rules of :mod:`msinspect.mindspore.naming` on real names of the zoo: what of a
generated name differs between ranks and runs (:func:`stable_name`) and what ``ParallelValidator``
counts a node as (:func:`validator_type`).

Where each fact comes from:

- a replacement graph's instance names are ``HashName(instance) + op + index``
  (``GenerateGraph::NewOpInst``, ``graph_util/generate_graph.cc``; ``HashName`` is a ``std::hash``,
  a 64-bit ``size_t`` of up to 20 digits): zoo 20's ``enable_nd_tp`` Split is
  ``3815130986688897272Split2``; a redistribution's are ``redistribution_op_`` + the hash + the
  operator (``redistribution_op_4478498464723551734Reshape_``);
- an operator without an instance name is shown by its full name's last part, ``Type-opN``, N
  its count within the file (zoo 04's ``.../network-GPT/Load-op3`` at validate);
- ``ParallelValidator`` (``tests/ut/python/parallel/utils/utils.py``) counts a call of a subgraph
  as the subgraph's name, any other node as its primitive.
"""
from __future__ import annotations

from functools import lru_cache

from msinspect.mindspore.naming import stable_name, validator_type
from msinspect.model import Node, NodeKind
from msinspect.parser import parse_file
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"


@lru_cache(maxsize=None)
def _nodes(folder: str, stage: str) -> tuple[Node, ...]:
    return tuple(parse_file(next((ZOO / folder / "rank_0").glob(f"*{stage}_*.ir.gz"))).nodes())


def test_a_hash_becomes_one_mark_and_the_rest_stays():
    split = next(n for n in _nodes("20_doc_high_dimension_tp", "step_parallel_end") if n.op == "Split")
    assert split.instance_name == "3815130986688897272Split2"
    # the 19 digits of the hash are one run of six or more: one "#"; the operator and its index stay
    assert stable_name(split.instance_name) == "#Split2"
    reshape = next(n for n in _nodes("20_doc_high_dimension_tp", "step_parallel_end")
                   if n.instance_name == "redistribution_op_4478498464723551734Reshape_")
    assert stable_name(reshape.name) == "redistribution_op_#Reshape_"


def test_the_file_ordinal_goes():
    scope = "Default/network-AutoParallel/network-Pipeline/network-GPT"
    load = next(n for n in _nodes("04_pipeline_hsdp_recompute", "validate")
                if n.instance_name is None and n.fullname == f"{scope}/Load-op3")
    assert load.name == "Load-op3"
    assert stable_name(load.name) == "Load"  # "-op3" counts within the file: gone


def test_a_tuple_of_names_is_made_stable_name_by_name():
    names = ("3815130986688897272Split2", "Load-op3", "q_matmul")
    assert stable_name(names) == ("#Split2", "Load", "q_matmul")  # a user's own name has nothing to drop


def test_what_is_no_name_stays_as_it_is():
    assert stable_name(None) is None
    assert stable_name(7) == 7


def test_a_call_of_a_subgraph_counts_as_the_subgraph():
    nodes = _nodes("11_lazy_inline_8", "step_parallel_end")
    call = next(n for n in nodes if n.kind == NodeKind.CALL_GRAPH)
    assert call.op == "call"  # what the parser says of every call: not what the validator counts
    assert validator_type(call) == call.callee.name == "13___main___Net_construct_58"
    matmul = next(n for n in nodes if n.kind == NodeKind.CALL_PRIMITIVE and n.op == "MatMul")
    assert validator_type(matmul) == "MatMul"
