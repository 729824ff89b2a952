"""Later passes rename instances (MindSpore's backend graphs call tr_q, tr_k and tr_v all
``tr_ctx``): the per-rank shape check must not pair the first renamed one with the reference's
tr_ctx and report a mismatch of its own making. Two hand-written files of one rank: a
step_parallel_begin reference with four ReLUs of global shapes (8, 16), (8, 32), (8, 64), (8, 128),
each cut (2, 1), and a later pass that shows their per-rank halves (4, 16) ... (4, 128), all
named tr_ctx and carrying no origin shapes."""
from __future__ import annotations

from msinspect.analysis.strategies import strategy_rows
from msinspect.parser import parse_text

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


def test_renamed_instances_are_not_paired_with_the_wrong_global_shape():
    later = parse_text(_file(["tr_ctx"] * 4, 4), "hwopt_d_end_graph_0001.ir")
    rows = strategy_rows(later, reference=REFERENCE)
    assert len(rows) == 4
    assert all(r["shapes_ok"] is not False for r in rows)  # no mismatch of the tool's making
    assert all(r["global_inputs"] is None for r in rows)  # cannot tell which tr_ctx was which
    assert [r["rank_inputs"] for r in rows] == [((4, w),) for w in WIDTHS]


def test_unrenamed_instances_still_pair_with_the_reference():
    later = parse_text(_file(["tr_q", "tr_k", "tr_v", "tr_ctx"], 4), "hwopt_d_end_graph_0001.ir")
    rows = strategy_rows(later, reference=REFERENCE)
    assert [r["global_inputs"] for r in rows] == [((8, w),) for w in WIDTHS]
    assert all(r["shapes_ok"] is True for r in rows)


def test_an_instance_the_reference_lacks_cannot_be_told():
    later = parse_text(_file(["tr_q", "tr_k", "tr_v", "tr_new"], 4), "hwopt_d_end_graph_0001.ir")
    rows = strategy_rows(later, reference=REFERENCE)
    assert rows[3]["name"] == "tr_new" and rows[3]["global_inputs"] is None
    assert [r["global_inputs"] for r in rows[:3]] == [((8, w),) for w in WIDTHS[:3]]
