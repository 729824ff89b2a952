"""The bytes one rank sends for each collective (:func:`msinspect.mindspore.vocabulary.wire_bytes_for`),
worked by hand from the ring algorithms NCCL and HCCL run (docs/comm.md), for a tensor of
S = 1,200 bytes at the rank, chosen so that every division below is exact, and groups of 2, 3
and 4 ranks:

- AllReduce: a reduce-scatter then an all-gather, each (n - 1) steps of S / n: 2 (n - 1) S / n;
  n = 4: 1,800; n = 3: 1,600; n = 2: 1,200. A mirror operator's gradient is one.
- AllGather: the rank's slice S goes to each of the n - 1 others: n = 4: 3,600.
- ReduceScatter and AlltoAll: (n - 1) steps of S / n: n = 4: 900; n = 3: 800.
- Send and Receive: the tensor once, whatever the group: 1,200.
- A group of one rank moves nothing; an operator that moves no data (a virtual one, one not in
  the vocabulary) sends 0; an unknown tensor or group size is None, never 0."""
from __future__ import annotations

import pytest

from msinspect.mindspore.vocabulary import wire_bytes_for

S = 1_200


@pytest.mark.parametrize("op, n, expected", [
    ("AllReduce", 4, 1_800), ("AllReduce", 3, 1_600), ("AllReduce", 2, 1_200), ("AllReduce", 1, 0),
    ("_MirrorOperator", 4, 1_800), ("_MirrorMicroStepOperator", 2, 1_200),
    ("AllGather", 4, 3_600), ("AllGather", 2, 1_200), ("_MicroStepAllGather", 3, 2_400), ("AllGather", 1, 0),
    ("ReduceScatter", 4, 900), ("ReduceScatter", 3, 800), ("AlltoAll", 4, 900), ("AlltoAll", 3, 800),
    ("Send", 8, S), ("Receive", 2, S), ("Send", None, S),
])
def test_ring_bytes(op, n, expected):
    assert wire_bytes_for(op, S, n) == expected
    assert type(wire_bytes_for(op, S, n)) is int


@pytest.mark.parametrize("op", ["_VirtualDiv", "_VirtualAdd", "MatMul", "NoSuchPrimitive"])
def test_what_moves_nothing_sends_nothing(op):
    assert wire_bytes_for(op, S, 4) == 0
    assert wire_bytes_for(op, None, None) == 0


@pytest.mark.parametrize("op", ["AllReduce", "AllGather", "ReduceScatter", "AlltoAll", "Send"])
def test_an_unknown_tensor_is_no_answer(op):
    assert wire_bytes_for(op, None, 4) is None


@pytest.mark.parametrize("op", ["AllReduce", "AllGather", "ReduceScatter", "AlltoAll"])
@pytest.mark.parametrize("n", [None, 0, -1])
def test_an_unknown_group_is_no_answer(op, n):
    assert wire_bytes_for(op, S, n) is None


def test_the_variable_sized_exchanges_are_no_answer():
    """AlltoAllV sends parts whose sizes are given at run time: no ring formula holds."""
    assert wire_bytes_for("AlltoAllV", S, 4) is None
