"""Collectives MindSpore's common-subexpression pass merges (``CSE``, ``frontend/optimizer/cse.cc``:
in one graph, a node with the same primitive, attributes and inputs as an earlier one is replaced
by it, bottom up), derived by hand before msinspect read the files.

Zoo 14 (``fixtures/zoo/nets/14_mf_llama_seq_parallel.py``: dp 1, mp 4, sequence parallel, 2
layers): between the layers the activation is cut along the sequence, (2, 64, 512) / (1, 4, 1) =
(2, 16, 512) a rank, and every column-parallel Linear needs whole rows. The parallel pass writes a
redistribution (an AllGather over 0-3 with its Split and Concat) for each reader of the norm's
output: wq, wk and wv each get one, w1 and w3 each get one. They gather the same value over the
same group, so CSE keeps the first of each: 2 + 1 = 3 AllGathers merged a layer, 6 for 2 layers,
each of the float16 norm output (compute_dtype float16): (4 - 1) x 2 x 16 x 512 x 2 = 98,304 wire
bytes. The final norm's float32 input is gathered for its two readers (RMSNorm squares x and
multiplies x): 1 more, (4 - 1) x 2 x 16 x 512 x 4 = 196,608. In all 7 AllGathers, 786,432 bytes,
each merged into the first of its kind (a smaller line). The validate file, written after the
pass, holds none to merge.
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.dataflow.cse import merged_into
from msinspect.mindspore.vocabulary import is_comm
from msinspect.parser import parse_file
from msinspect.stages import files_of_stage
from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
MERGED = 6 * 3 * 2 * 16 * 512 * 2 + 3 * 2 * 16 * 512 * 4


@pytest.fixture(scope="module")
def zoo14():
    return analyse(msinspect.load_dump(ZOO / "14_mf_llama_seq_parallel"), "step_parallel_end")


def test_the_numbers_are_the_derivation():
    assert MERGED == 786_432


def test_the_copies_of_one_gather_are_merged_into_the_first(zoo14):
    for result in zoo14.results:
        rows = {row["line"]: row for row in result.comm}
        merged = [row for row in result.comm if row["merged_into"] is not None and row["moves_data"]]
        assert [row["op"] for row in merged] == ["AllGather"] * 7
        assert sum(row["wire_bytes"] for row in merged) == MERGED
        for row in merged:
            kept = rows[row["merged_into"]]
            assert kept["line"] < row["line"] and kept["merged_into"] is None
            assert (kept["op"], kept["group_ranks"], kept["shape"], kept["dtype"]) == \
                (row["op"], row["group_ranks"], row["shape"], row["dtype"])


def test_their_split_and_concat_go_with_them(zoo14):
    """Each merged gather's Split and Concat read merged values: merged too (bottom up)."""
    result = zoo14.results[0]
    merged = [row["op"] for row in result.comm if row["merged_into"] is not None and not row["moves_data"]]
    assert merged.count("Split") == 7 and merged.count("Concat") == 7


@pytest.mark.parametrize("name", sorted(p.name for p in ZOO.iterdir() if p.name[:2].isdigit()))
def test_a_file_written_after_the_pass_has_no_collective_left_to_merge(name):
    folders = sorted((ZOO / name).glob("rank_*")) or [ZOO / name]
    files = files_of_stage(folders[0], "validate")
    if not files:
        pytest.skip(f"{name}: no validate file")
    ir = parse_file(files[0])
    merged = merged_into(ir, is_comm)
    assert not [n.line for n in ir.nodes() if is_comm(n) and (n.graph, n.index) in merged]
