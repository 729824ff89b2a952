"""MindSpore's tensor element types: the short names its dumper prints beside the long ones, and
the bytes of one element of each (MindSpore's ``abstract::TypeIdSize``, ``mindspore/core/abstract``)."""
from __future__ import annotations

#: MindSpore's short dtype names (``F16``: a Cast's target, a Send's ``dtype``, a ``BF16(...)``
#: value) and the long ones its abstracts print (``<Tensor[Float16], (8, 16)>``): every value and
#: row says the long one.
LONG_DTYPES = {
    "F16": "Float16", "F32": "Float32", "F64": "Float64", "BF16": "BFloat16",
    "I8": "Int8", "I16": "Int16", "I32": "Int32", "I64": "Int64",
    "U8": "UInt8", "U16": "UInt16", "U32": "UInt32", "U64": "UInt64",
}

#: Bytes of one element, by long name.
ELEMENT_BYTES = {
    "Float64": 8, "Float32": 4, "Float16": 2, "BFloat16": 2, "Int64": 8, "Int32": 4, "Int16": 2,
    "Int8": 1, "UInt64": 8, "UInt32": 4, "UInt16": 2, "UInt8": 1, "Bool": 1, "Complex64": 8,
    "Complex128": 16,
}


def element_bytes(dtype: str | None) -> int | None:
    """Bytes of one element of ``dtype`` (a long or a short name); None for a type with no fixed
    size or none."""
    return ELEMENT_BYTES.get(LONG_DTYPES.get(dtype, dtype)) if isinstance(dtype, str) else None
