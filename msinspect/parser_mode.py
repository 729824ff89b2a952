"""Which reading of the IR a process uses: ``MSINSPECT_PARSER=fast`` (the default) or ``reference``.

Both readings give the same model (``tests/parser/test_readings.py`` compares them on every file
the project holds, strict and lenient, and on mutated files). ``reference`` is Lark alone: every
token of every item through the grammar, no fast reader, no templates, no exemplars, no per-text
tables. ``fast`` puts the accelerators of :mod:`msinspect.parser.fastpath`, ``typelines``,
``attrtexts`` and the transformer's per-text tables in front of Lark; where they cannot say, Lark
reads the text. The whole test suite runs either way (``MSINSPECT_PARSER=reference make test``).
"""
from __future__ import annotations

import os

from msinspect.errors import ConfigError

VARIABLE = "MSINSPECT_PARSER"
FAST = "fast"
REFERENCE = "reference"
READINGS = (FAST, REFERENCE)


def current() -> str:
    """The reading in force: ``MSINSPECT_PARSER`` when set, else ``fast``; :class:`ConfigError`
    for any other value."""
    value = os.environ.get(VARIABLE, "").strip() or FAST
    if value not in READINGS:
        raise ConfigError(f"{VARIABLE} must be one of {', '.join(READINGS)}, not {value!r}")
    return value
