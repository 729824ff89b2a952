"""Bytes of one element (:func:`msinspect.mindspore.dtypes.element_bytes`) by either of the names
MindSpore's dumper prints: the long ones of its abstracts (``<Tensor[Float16], ...>``) and the
short ones of a primitive's attributes and scalars (``dtype: F16``). The sizes are MindSpore's
``abstract::TypeIdSize`` (``mindspore/core/abstract/utils.cc``): float16 and bfloat16 two bytes,
float32 and int32 four, int64 eight, bool one."""
from __future__ import annotations

import pytest

from msinspect.mindspore.dtypes import element_bytes
from msinspect.parser import parse_file
from tests.conftest import FIXTURES


def test_a_sends_short_dtype_is_sized():
    """Zoo 13's pipeline Send states what it sends as ``dtype: F16`` (float16): 2 bytes."""
    path = next((FIXTURES / "zoo" / "13_mf_llama_pp_interleave" / "rank_0").glob("step_parallel_end_*.ir.gz"))
    send = next(n for n in parse_file(path).nodes() if n.op == "Send")
    assert send.primitive_attrs["dtype"] == "F16"
    assert element_bytes(send.primitive_attrs["dtype"]) == 2


@pytest.mark.parametrize("dtype, size", [
    ("Float16", 2), ("F16", 2), ("BFloat16", 2), ("BF16", 2), ("Float32", 4), ("F32", 4), ("Int64", 8),
    ("I64", 8), ("Bool", 1), ("U8", 1),
])
def test_long_and_short_names_alike(dtype, size):
    assert element_bytes(dtype) == size


@pytest.mark.parametrize("dtype", [None, "String", "TypeType"])
def test_no_fixed_size_cannot_tell(dtype):
    """No type told, or one with no fixed element size (a string, a type object): None."""
    assert element_bytes(dtype) is None
