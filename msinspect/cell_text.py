"""A table cell's text as the report and the exports show it: tuples as MindSpore prints them,
nothing for a missing value. (The terminal's cells, which show ``-`` for nothing, are
:func:`msinspect.cli.display.cell`.)"""
from __future__ import annotations

import math


def text(value) -> str:
    """A cell's text: tuples as MindSpore prints them, nothing for missing values."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(text(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return str(value)
