"""An operand whose abstract MindSpore left unset (``<null>``) keeps its place among the inputs: the
shapes printed after it are never read as the shapes of the inputs before it."""
from __future__ import annotations

import gzip

from msinspect.analysis import analyse
from msinspect.dumps import load_dump
from tests.conftest import FIXTURES

RESHAPE_AUTO_7 = FIXTURES / "ut" / "a_test_auto_parallel_reshape__test_reshape_auto_7"


def test_an_unset_operand_leaves_the_shapes_cannot_tell():
    # By hand from the port's script (MindSpore's test_reshape_auto_7, 8 devices, rank 0): the
    # weight (128, 96) is reshaped to (1, 128, 96) and multiplied by itself, Mul cut
    # ((1, 2, 4), (2, 4)): whole inputs (1, 128, 96) and (128, 96), per rank (1, 64, 24) and
    # (64, 24). At step_parallel_end MindSpore prints the Reshape's output, Mul's first operand,
    # as <null>: the file tells the second input's whole shape, (128, 96), and not the first's,
    # which is "cannot tell" in its own place, never the second's moved onto it.
    text = next((RESHAPE_AUTO_7 / "rank_0").glob("step_parallel_end_*")).read_bytes()
    assert b"PrimFunc_Mul(%1, %2) {instance name: mul}" in gzip.decompress(text)
    frame = analyse(load_dump(RESHAPE_AUTO_7), "step_parallel_end").strategies()
    (mul,) = frame[frame["name"] == "mul"].to_dict("records")
    assert mul["in_strategy"] == ((1, 2, 4), (2, 4))
    assert mul["global_inputs"] == (None, (128, 96))
    assert mul["rank_inputs"] is None  # step_parallel_end prints whole shapes: none per rank
    assert mul["expected_rank_inputs"] is None and mul["shapes_ok"] is None
