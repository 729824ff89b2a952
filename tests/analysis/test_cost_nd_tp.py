"""Bytes of zoo 20, MindSpore's 2-D tensor-parallel sample (``enable_nd_tp``,
``fixtures/zoo/nets/20_doc_high_dimension_tp.py``), at step_parallel_end and at validate, derived
by hand before msinspect sized the ReduceScatters at step_parallel_end.

From the script and its docstring (layouts), 8 devices, and MindSpore's definitions: float32 (4
bytes); wire bytes as docs/comm.md: AllGather (n-1) S_in, ReduceScatter (n-1)/n S_in, AlltoAll
(n-1)/n S. ``Layout((2, 4), ("x", "y"))``: rank r at x = r // 4, y = r % 4; the "y" group of a rank
is the 4 ranks of its x (0-3 or 4-7), the "x" group the 2 ranks of its y ({r % 4, r % 4 + 4}).
Rank 0: y group 0-3, x group {0, 4}; rank 3: 0-3, {3, 7}; rank 6: 4-7, {2, 6}. The batch: each
rank's (1024, 256) is an eighth of the global (8192, 256) (dataset strategy "data_parallel").

``matmul_info.cc`` (``MatMul::ComputeNDTPReplaceGraph``, ``ComputePreAllGatherGraph``,
``ComputePostMatMulGraph``): with ``enable_nd_tp`` the MatMul is replaced by an AllGather of the
activation over the axis its contracted dimension is cut by and the weight's is not (MindSpore's
AllGather concatenates along dimension 0; a Split along 0 and a Concat along the contracted
dimension move the parts there), a MatMul of the gathered activation with the weight's slice, and
a ReduceScatter of the partial sums over the axis both contracted dimensions are cut by, on the
rows (the release dumped writes it between two Transposes, scattering dimension 0 of the
transposed (columns, rows) product). The new MatMul has no strategy; its output at the rank is
(the gathered activation's rows, the weight slice's columns).

- matmul1: x ``("None", ("x", "y"))`` on (8192, 256): (8192, 32) at the rank; fc1_weight
  ``("x", "y")`` on (256, 512): (128, 128). The contracted dimension: 256 cut 8 by (x, y) in x, 2
  by x in the weight: x is gathered over "y" (4 ranks): AllGather input (8192, 32) = 1,048,576
  bytes, wire 3 x 1,048,576 = 3,145,728; gathered (8192, 128). MatMul (8192, 128) @ (128, 128) =
  (8192, 128), partial sums over "x"; transposed (128, 8192) = 4,194,304 bytes, ReduceScatter over
  the "x" pair: wire 1/2 x 4,194,304 = 2,097,152; out (64, 8192), transposed back (8192, 64):
  relu's ``("None", ("y", "x"))`` at the rank, 512 / 8 = 64 columns.
- matmul2: relu's (8192, 64) = 2,097,152 bytes gathered over "x" (the contracted 512 is cut 8 by
  (y, x) in the activation, 4 by y in fc2_weight ``("y", "x")``, (512, 256): (128, 128)): wire
  1 x 2,097,152; (8192, 128) @ (128, 128) = (8192, 128), partial over "y"; transposed (128, 8192)
  = 4,194,304 bytes, ReduceScatter over the "y" group of 4: wire 3/4 x 4,194,304 = 3,145,728; out
  (32, 8192), back (8192, 32): 256 / 8 columns.
- Cross-check with the tutorial (``high_dimension_tensor_parallel.md``, 2-D: 2bs[e(x-1) + h(y-1)]/xy
  elements a rank over both MatMuls, bs = 8192, h = 256, e = 512, x = 2, y = 4): 2 x 8192 x (512 +
  768) / 8 = 2,621,440 elements = 10,485,760 bytes = 3,145,728 + 2,097,152 + 2,097,152 + 3,145,728.
- The data-parallel input into matmul1's layout and matmul2's output back to the output's ((8192,
  256) rows cut 8 <-> columns cut 8): 262,144 elements = 1,048,576 bytes a rank before and after;
  MindSpore's redistribution exchanges them by an AlltoAll over each of the two groups (IR rank 0
  step_parallel_end lines 40, 43 and 137, 140): 3/4 x 1,048,576 = 786,432 over "y", 1/2 x
  1,048,576 = 524,288 over "x", twice: 2,621,440.
- Axis (docs/cost.md): both axes cut a weight, so every group is ``tensor``; phase ``forward``; the
  network compiles the forward only (no grad): no backward row at any pass. Per rank, 8 operators:
  10,485,760 + 2,621,440 = 13,107,200 bytes, at step_parallel_end and at validate alike (the two
  MatMuls' chains and redistributions are not merged: each runs once).
"""
from __future__ import annotations

import pytest

import msinspect
from msinspect.analysis import analyse

from tests.analysis.cost_by_hand import operators, split, told_by_command
from tests.conftest import FIXTURES, dump_without

ZOO20 = FIXTURES / "zoo" / "20_doc_high_dimension_tp"
RANKS = (0, 3, 6)
F32 = 4
GATHER1 = 3 * 8192 * 32 * F32
SCATTER1_IN = 128 * 8192 * F32
SCATTER1 = SCATTER1_IN // 2
GATHER2 = 1 * 8192 * 64 * F32
SCATTER2_IN = 128 * 8192 * F32
SCATTER2 = 3 * SCATTER2_IN // 4
EXCHANGES = 2 * (3 * 8192 * 32 * F32 // 4 + 8192 * 32 * F32 // 2)
TENSOR_FORWARD = GATHER1 + SCATTER1 + GATHER2 + SCATTER2 + EXCHANGES


def _y_group(rank: int) -> tuple[int, ...]:
    return tuple(range(rank // 4 * 4, rank // 4 * 4 + 4))


def _x_group(rank: int) -> tuple[int, ...]:
    return (rank % 4, rank % 4 + 4)


@pytest.fixture(scope="module", params=["step_parallel_end", "validate"])
def analysis(request):
    return analyse(msinspect.load_dump(ZOO20), request.param)


def test_the_numbers_are_the_derivation():
    assert (GATHER1, SCATTER1, GATHER2, SCATTER2) == (3_145_728, 2_097_152, 2_097_152, 3_145_728)
    assert GATHER1 + SCATTER1 + GATHER2 + SCATTER2 == 2 * 8192 * (512 * 1 + 256 * 3) // 8 * F32 == 10_485_760
    assert EXCHANGES == 2_621_440 and TENSOR_FORWARD == 13_107_200


def test_each_reduce_scatter_is_sized(analysis):
    rows = analysis.comm()
    for rank in RANKS:
        mine = rows[(rows["rank"] == rank) & (rows["op"] == "ReduceScatter")]
        found = sorted((tuple(r["group_ranks"]), tuple(r["shape"] or ()), r["dtype"], r["tensor_bytes"],
                        r["wire_bytes"]) for r in mine.to_dict("records"))
        assert found == sorted([(_x_group(rank), (128, 8192), "Float32", SCATTER1_IN, SCATTER1),
                                (_y_group(rank), (128, 8192), "Float32", SCATTER2_IN, SCATTER2)])


def test_every_collective_is_sized(analysis):
    rows = analysis.comm()
    moving = rows[rows["moves_data"]]
    assert len(moving) == 3 * 8 and moving["wire_bytes"].notna().all()


def test_bytes_by_axis_and_phase(analysis):
    for rank in RANKS:
        assert split(analysis, rank) == {("tensor", "forward"): TENSOR_FORWARD}
        assert operators(analysis, rank) == {("tensor", "forward"): 8}


def test_the_command_without_validate_reads_step_parallel_end_and_tells_all(tmp_path):
    """A dump copied without its validate files: ``cost`` reads step_parallel_end, and the forward
    (the whole step: no grad) is told there as at validate."""
    copy = dump_without(ZOO20, tmp_path / "zoo20", "rank_*/*validate*")
    assert told_by_command(copy) == {rank: {("tensor", "forward"): TENSOR_FORWARD} for rank in RANKS}
