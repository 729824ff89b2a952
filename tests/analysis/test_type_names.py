"""``Type-N`` names (MindSpore's ``ParallelValidator``: a node's type, then its count among the
nodes of that type before it in its graph) are numbered by one rule,
``msinspect.mindspore.naming.type_ordinals``, for the ``--op Type-N`` selectors over operator rows and for the expectation kinds over a parsed file;
both readings agree on every operator of every graph of a dump with called subgraphs, and the
count starts again in each graph (by MindSpore's definition: per graph, not per file)."""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.dataflow.file_view import view_of
from msinspect.mindspore.naming import type_ordinals
from msinspect.analysis.dataflow.spec_selector import type_name

from tests.conftest import FIXTURES


def test_the_count_is_per_key_in_order():
    assert type_ordinals([("g", "MatMul"), ("g", "ReLU"), ("g", "MatMul"), ("h", "MatMul")]) == [0, 0, 1, 0]


@pytest.mark.parametrize("dump", ["zoo/11_lazy_inline_8", "zoo/13_mf_llama_pp_interleave"])
def test_rows_and_files_name_every_operator_alike(dump):
    analysis = analyse(msinspect.load_dump(FIXTURES / dump), "validate")
    ops = analysis.operators()
    ops = ops[ops["rank"] == ops["rank"].min()]
    names = dict(zip(ops["line"], type_name(ops)))
    view = view_of(ops["file"].iloc[0])
    assert ops["graph"].nunique() > 1
    assert {line: view.type_name(view.by_line[line]) for line in names} == names
    firsts = ops.loc[[n.endswith("-0") for n in type_name(ops)]]
    assert firsts.groupby("type")["graph"].nunique().max() > 1  # a type numbered from 0 in two graphs
