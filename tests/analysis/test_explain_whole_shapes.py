"""``explain`` of a redistribution step through a Reshape, which needs the whole shapes of both
ends (issue 39, item 5): where the producer is a Cast the parallel pass gave no strategy, or the
graph MindSpore puts in place of a Gather, the shape is its operator's; where a shape is dynamic,
"cannot tell" says so. Each expectation is worked out by hand in the comment above it.
"""
from __future__ import annotations

import pytest

from msinspect.analysis.explain.answers import explain

from tests.analysis.explain_helpers import UT, ZOO, read, step


def test_the_router_reads_the_normed_tokens_through_a_cast():
    # Zoo 15 (fixtures/zoo/nets/15_mf_llama_moe_ep8.py): global batch 4, sequence 64, hidden 512;
    # attention dp 4 x mp 2. The FFN norm's Mul (mul2, ((4, 1, 1), (1,))) gives (4, 64, 512) cut
    # (4, 1, 1): ranks 0 and 1 both hold batch 0. MindFormers casts it to fp16 (a Cast the
    # parallel pass gives no strategy: its input's layout) and MoEV3's router reads it as (256,
    # 512) with its Dense ((8, 1), (1, 1)) over dp x mp = 8. Row-major, the 4 parts of the 4
    # batches are 4 blocks of 64 rows: in the router's shape the cut is (4, 1); it needs (8, 1):
    # dimension 0 cut further, 2 parts (rank 0 keeps rows 0:32, rank 1 rows 32:64 of batch 0).
    # MindSpore does it with an AllGather, two Reshapes and a StridedSlice, once per layer (2);
    # at step_parallel_end no collective prints its shapes, so each answers for the whole step.
    found = [e for e in explain(read(ZOO / "15_mf_llama_moe_ep8", "step_parallel_end"), "re:redistribution_op_.*",
                                rank=0) if e.consumer == "matmul" and e.consumer_layout == (8, 1)]
    assert sorted(e.op for e in found) == ["AllGather"] * 2 + ["Reshape"] * 4 + ["StridedSlice"] * 2
    for e in found:
        assert (e.producer_layout, e.reshaped) == ((4, 1, 1), (4, 1))
        assert step(e) == ("split", (0,), 2)
        assert not e.cannot_tell


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_a_masked_lookup_reshaped_for_a_matmul_is_split_along_its_columns(stage):
    # fixtures/ut/a_test_auto_parallel_sapp_gather__test_auto_parallel_sapp_gather_2.toml: the
    # Gather ((4, 1), (2, 1)) of x (1024, 128) by the index (2, 1024) gives (2, 1024, 128) cut as
    # the index, (2, 1, 1), once the AllReduce adds the masked lookups. The net reshapes it to
    # (128, 2048) for matmul ((2, 4), (4, 1)): row-major the 2 parts of the first dimension are
    # the 2 blocks of 64 rows, (2, 1) in matmul's shape; matmul needs (2, 4): dimension 1 cut
    # into 4, on the rank's own data (rank 0 keeps columns 0:512: the StridedSlice's [0:4] of the
    # 16 blocks of 128).
    dump = UT / "a_test_auto_parallel_sapp_gather__test_auto_parallel_sapp_gather_2"
    found = [e for e in explain(read(dump, stage), "re:redistribution_op_.*", rank=0) if e.consumer == "matmul"
             and e.producer_layout == (2, 1, 1)]
    assert sorted(e.op for e in found) == ["Reshape", "StridedSlice"]
    for e in found:
        assert (e.reshaped, e.consumer_layout) == ((2, 1), (2, 4))
        assert step(e) == ("split", (1,), 4)
        assert not e.cannot_tell


@pytest.mark.parametrize("stage", ["step_parallel_end", "validate"])
def test_a_reshape_between_dynamic_shapes_says_which_are_dynamic(stage):
    # fixtures/ut/b_test_dynamic_shape_multi_axis__test_parallel_dynamic_shape_with_features_010:
    # add's output is (-1, 32, -1, 16) and relu reads it reshaped to (-1, -1): with two dimensions
    # unknown before the run, which of add's dimensions make each of relu's is not in the file, so
    # the cut in relu's shape cannot be told; the reason names both ends and why (at validate
    # relu's row gives its input (-1, -1); at step_parallel_end it gives none, and the Reshape's
    # shape is computed at run time).
    dump = UT / "b_test_dynamic_shape_multi_axis__test_parallel_dynamic_shape_with_features_010"
    found = [e for e in explain(read(dump, stage), "re:redistribution_op_.*", rank=0)
             if (e.producer, e.consumer) == ("add", "relu")]
    assert found
    for e in found:
        said = " ".join(e.cannot_tell)
        assert "add's output (-1, 32, -1, 16)" in said and "not known before the run" in said
        relu = "relu's input (-1, -1)" if stage == "validate" else "no whole shape of relu's input"
        assert relu in said
        assert "neither end, or of one only" not in said
