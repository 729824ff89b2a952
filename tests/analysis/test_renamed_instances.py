"""Later passes rename instances (MindSpore's backend graphs call tr_q, tr_k and tr_v all
``tr_ctx``): the per-rank shape check pairs each operator with its counterpart in the reference
by what survives the rename (op, scope, its place among its data neighbours: here the parameter
it reads), never by name, and says "cannot tell" where nothing tells them apart. Hand-written
files of one rank: a step_parallel_begin reference with four ReLUs of global shapes (8, 16),
(8, 32), (8, 64), (8, 128), each reading its own parameter and cut (2, 1), and a later pass that
shows their per-rank halves (4, 16) ... (4, 128), carrying no origin shapes."""
from __future__ import annotations

import pytest

from msinspect.analysis.rank.strategies import strategy_rows
from msinspect.parser import parse_file, parse_text
from tests.conftest import FIXTURES

WIDTHS = (16, 32, 64, 128)


def _file(names, rows: int) -> str:
    params = "\n".join(f"%para{i + 1}_x{i}: <Tensor[Float32], ({rows}, {w})>" for i, w in enumerate(WIDTHS))
    nodes = "\n".join(
        f"  %{i + 1}(CNode_{i + 1}) = ReLU(%para{i + 1}_x{i}) {{instance name: {name}}} {{in_strategy: ((2, 1))}}\n"
        f"      : (<Tensor[Float32], ({rows}, {w})>) -> (<Tensor[Float32], ({rows}, {w})>)\n"
        f"      # Fullname with scope: (Default/network-Attention/{name})"
        for i, (name, w) in enumerate(zip(names, WIDTHS)))
    return (f"# IR entry: @main_1\n# Total subgraphs: 1\n\n# Total params: {len(WIDTHS)}\n# Params:\n{params}\n\n"
            f"subgraph attr:\nsubgraph instance: main_1 : 0x1\nsubgraph @main_1() {{\n{nodes}\n"
            f"  Return(%4)\n      : (<Tensor[Float32], ({rows}, 128)>)\n}}\n\n\n")


REFERENCE = parse_text(_file(["tr_q", "tr_k", "tr_v", "tr_ctx"], 8), "step_parallel_begin_0001.ir")


def test_renamed_instances_pair_by_the_parameter_they_read():
    later = parse_text(_file(["tr_ctx"] * 4, 4), "hwopt_d_end_graph_0001.ir")
    rows = strategy_rows(later, reference=REFERENCE)
    assert [r["global_inputs"] for r in rows] == [((8, w),) for w in WIDTHS]
    assert [r["rank_inputs"] for r in rows] == [((4, w),) for w in WIDTHS]
    assert all(r["shapes_ok"] is True for r in rows)
    assert [r["reference_line"] for r in rows] == [n.line for n in REFERENCE.nodes() if n.index is not None]


def test_unrenamed_instances_still_pair_with_the_reference():
    later = parse_text(_file(["tr_q", "tr_k", "tr_v", "tr_ctx"], 4), "hwopt_d_end_graph_0001.ir")
    rows = strategy_rows(later, reference=REFERENCE)
    assert [r["global_inputs"] for r in rows] == [((8, w),) for w in WIDTHS]
    assert all(r["shapes_ok"] is True for r in rows)


def test_a_swapped_name_is_not_believed():
    """tr_q and tr_k swap names in the later pass: each still pairs with the operator that reads
    its parameter, so no mismatch of the tool's making."""
    later = parse_text(_file(["tr_k", "tr_q", "tr_v", "tr_ctx"], 4), "hwopt_d_end_graph_0001.ir")
    rows = strategy_rows(later, reference=REFERENCE)
    assert [r["global_inputs"] for r in rows] == [((8, w),) for w in WIDTHS]


def _same_input(names, rows: int) -> str:
    """Two ReLUs in one scope reading the same parameter: nothing tells them apart."""
    nodes = "\n".join(
        f"  %{i + 1}(CNode_{i + 1}) = ReLU(%para1_x) {{instance name: {name}}} {{in_strategy: ((2, 1))}}\n"
        f"      : (<Tensor[Float32], ({rows}, 16)>) -> (<Tensor[Float32], ({rows}, 16)>)\n"
        f"      # Fullname with scope: (Default/network-Attention/{name})"
        for i, name in enumerate(names))
    return (f"# IR entry: @main_1\n# Total subgraphs: 1\n\n# Total params: 1\n# Params:\n"
            f"%para1_x: <Tensor[Float32], ({rows}, 16)>\n\n"
            f"subgraph attr:\nsubgraph instance: main_1 : 0x1\nsubgraph @main_1() {{\n{nodes}\n"
            f"  %3(CNode_3) = MakeTuple(%1, %2)\n      : (<Tensor[Float32], ({rows}, 16)>, <Tensor[Float32], ({rows}, 16)>)"
            f" -> (<Tuple[Tensor[Float32]*2]>)\n"
            f"  Return(%3)\n      : (<Tuple[Tensor[Float32]*2]>)\n}}\n\n\n")


def test_operators_nothing_tells_apart_are_not_aligned():
    reference = parse_text(_same_input(["relu_a", "relu_b"], 8), "step_parallel_begin_0001.ir")
    later = parse_text(_same_input(["relu_b", "relu_b"], 4), "hwopt_d_end_graph_0001.ir")
    rows = strategy_rows(later, reference=reference)
    assert len(rows) == 2
    assert all(r["global_inputs"] is None and r["shapes_ok"] is None for r in rows)  # cannot tell
    assert all(r["reference_line"] is None for r in rows)


def test_an_operator_whose_input_the_reference_lacks_cannot_be_told():
    later_text = _file(["tr_q", "tr_k", "tr_v", "tr_new"], 4).replace("%para4_x3", "%para4_y3")
    rows = strategy_rows(parse_text(later_text, "hwopt_d_end_graph_0001.ir"), reference=REFERENCE)
    assert rows[3]["name"] == "tr_new" and rows[3]["global_inputs"] is None
    assert [r["global_inputs"] for r in rows[:3]] == [((8, w),) for w in WIDTHS[:3]]


# ---------------------------------------------------------------- on a real dump: zoo 01
# By hand from fixtures/zoo/nets/gpt.py with 01's dp 2, tp 4 (batch 8, sequence 64, hidden 512,
# 8 heads of 64): each block's q, k and v Transposes take (8, 64, 8, 64) cut (2, 1, 4, 1), so
# hold (4, 64, 2, 64) per rank; score_bmm takes q (8, 8, 64, 64) and k (8, 8, 64, 64) cut
# (2, 4, 1, 1): (4, 2, 64, 64) each; attn_add takes two (512, 512) rows cut (2, 1): (256, 512).
# Primitives of equal attributes are one primitive by validate, so the three Transposes print one
# instance name there, and so do score_bmm / context_bmm and attn_add / ffn_add.
ZOO01 = FIXTURES / "zoo" / "01_semi_auto_tp4dp2" / "rank_0"


@pytest.fixture(scope="module")
def zoo01_rows():
    validate = parse_file(str(next(ZOO01.glob("*validate*"))))
    reference = parse_file(str(next(ZOO01.glob("step_parallel_begin*"))))
    names = {n.instance_name for n in validate.nodes()}
    assert not names & {"q_transpose", "k_transpose", "score_bmm", "attn_add"}  # renamed there
    by_line = {n.line: n for n in reference.nodes()}
    return strategy_rows(validate, reference=reference), by_line


def test_renamed_operators_of_a_real_dump_pair_with_their_own_counterpart(zoo01_rows):
    rows, by_line = zoo01_rows
    for row in rows:
        if row["reference_line"] is not None:  # the same line of the network script built both
            assert by_line[row["reference_line"]].source_line == row["source_line"]
    paired = {}
    for row in rows:
        if row["op"] == "Transpose" and row["reference_line"] is not None:
            paired.setdefault(row["scope"], []).append(by_line[row["reference_line"]].instance_name)
    blocks = [s for s in paired if s.endswith("attention-Attention")]
    assert len(blocks) == 4
    for scope in blocks:  # merge_transpose too: it has its own strategy, so keeps its name
        assert sorted(paired[scope]) == ["k_transpose", "merge_transpose", "q_transpose", "v_transpose"]


def test_renamed_operators_of_a_real_dump_get_their_global_shapes(zoo01_rows):
    rows, by_line = zoo01_rows
    def of(name):
        return [r for r in rows if r["reference_line"] is not None
                and by_line[r["reference_line"]].instance_name == name]

    for name in ("q_transpose", "k_transpose", "v_transpose"):
        found = of(name)
        assert len(found) == 4
        assert {r["global_inputs"] for r in found} == {((8, 64, 8, 64),)}
        assert {r["rank_inputs"] for r in found} == {((4, 64, 2, 64),)}
    assert {(r["global_inputs"], r["rank_inputs"]) for r in of("score_bmm")} == \
        {(((8, 8, 64, 64), (8, 8, 64, 64)), ((4, 2, 64, 64), (4, 2, 64, 64)))}
    assert {(r["global_inputs"], r["rank_inputs"]) for r in of("attn_add")} == \
        {(((512, 512), (512, 512)), ((256, 512), (256, 512)))}
    assert all(r["shapes_ok"] is True for r in rows)  # none left as "cannot tell", none wrong
