"""One view of an IR file (msinspect.analysis.dataflow.file_view), read by explain, the expectation kinds and
the graph walks: its nodes by line and by (graph, index), the names ParallelValidator prints, each
input's producer; read once per process while the file is unchanged.

The file: the UT port test_matmul_tensor::test_two_matmul at step_parallel_begin (rank 0). By the
network script (fixtures/ut/nets/a_test_matmul_tensor__test_two_matmul.py) the forward is
``out1 = matmul1(fill, x)``, ``out2 = matmul2(y, fill)``, ``matmul3(out1, out2)``, all three
inlined into NetWithLoss's graph, in that order, before the parallel pass inserts anything.
"""
from __future__ import annotations

import shutil

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.rank_file import RankFile
from msinspect.analysis.dataflow.file_view import FileView, view_of
from msinspect.graph import node_id
from msinspect.model import ParamRef
from msinspect.parser import parse_file

from tests.conftest import FIXTURES

FILE = FIXTURES / "ut/a_test_matmul_tensor__test_two_matmul/rank_0/step_parallel_begin_0146.ir.gz"


def _named(view: FileView, name: str):
    return next(n for n in view.by_line.values() if n.instance_name == name)


def test_each_input_names_its_producer():
    view = FileView(parse_file(FILE, lenient=True))
    matmul1, matmul2, matmul3 = (_named(view, f"matmul{i}") for i in (1, 2, 3))
    # matmul3(out1, out2) takes matmul1's and matmul2's outputs, then transpose_a / transpose_b
    # (MatMul's two flags, False by default): constants, made by no operator
    assert view.input_nodes(matmul3) == [matmul1, matmul2, None, None]
    assert view.by_index[(matmul3.graph, matmul3.index)] is matmul3
    assert view.by_line[matmul3.line] is matmul3


def test_names_as_parallel_validator_prints_them():
    view = FileView(parse_file(FILE, lenient=True))
    # the primitive's name (MatMul: the file writes PrimFunc_MatMul, ParallelValidator the
    # primitive), numbered in file order within the graph: matmul1, matmul2, matmul3 are its first
    # three MatMuls
    names = [view.type_name(_named(view, f"matmul{i}")) for i in (1, 2, 3)]
    assert names == ["MatMul-0", "MatMul-1", "MatMul-2"]
    assert view.validator_inputs(_named(view, "matmul3")) == ["MatMul-0", "MatMul-1", False, False]
    # a node is named for a person by its instance name
    assert view.label(node_id(_named(view, "matmul3"))) == "matmul3"


def test_a_file_is_read_once_while_unchanged(tmp_path):
    path = tmp_path / "a.ir.gz"
    shutil.copy(FILE, path)
    first = view_of(path)
    assert view_of(str(path)) is first
    other = FIXTURES / "ut/a_test_matmul_tensor__test_two_matmul/rank_0/step_parallel_end_0147.ir.gz"
    shutil.copy(other, path)  # another file at the same path: read again
    again = view_of(path)
    assert again is not first
    # step_parallel_end holds what the parallel pass inserted as well (matmul3 takes out1 cut
    # (2, 2) as (2, 4): a redistribution between them)
    assert len(again.by_line) > len(first.by_line)


def test_a_parameter_is_named_less_mindspore_number():
    view = FileView(parse_file(FILE, lenient=True))
    # GradWrap.construct(x, y) calls grad_all(network)(x, y): the call takes the graph's inputs,
    # which MindSpore writes %para1_x, %para2_y and ParallelValidator names x, y
    call = next(n for n in view.by_line.values() if "GradWrap" in n.graph
                and n.inputs and all(isinstance(o, ParamRef) for o in n.inputs))
    assert view.validator_inputs(call) == ["x", "y"]
    assert view.input_nodes(call) == [None, None]


def test_explain_reads_the_file_the_kinds_read():
    analysis = analyse(msinspect.load_dump(FILE.parent.parent), "step_parallel_begin")
    result = analysis.results[0]
    assert RankFile(analysis, result).view is view_of(result.file)
