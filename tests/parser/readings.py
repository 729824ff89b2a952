"""Read a text with one of the parser's two readings (``MSINSPECT_PARSER``), as what a test
compares: the model's canonical form, or the error as the user sees it."""
from __future__ import annotations

import contextlib
import os

from msinspect.errors import IRParseError
from msinspect.model import canonical
from msinspect.parser import core
from msinspect.parser_mode import READINGS, VARIABLE


@contextlib.contextmanager
def reading(name: str):
    """``MSINSPECT_PARSER=name`` for the block (no fixture needed: hypothesis tests use it too)."""
    before = os.environ.get(VARIABLE)
    os.environ[VARIABLE] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(VARIABLE, None)
        else:
            os.environ[VARIABLE] = before


def read(text: str, name: str, lenient: bool, how: str):
    """The canonical model of ``text`` read ``how``, or ``"error: ..."``."""
    with reading(how):
        try:
            return canonical(core.parse_text(text, name, lenient=lenient))
        except IRParseError as err:
            return "error: " + str(err)


def both(text: str, name: str, lenient: bool):
    """What each reading makes of ``text``: ``{"fast": ..., "reference": ...}``."""
    return {how: read(text, name, lenient, how) for how in READINGS}


def assert_same(text: str, name: str, lenient: bool) -> None:
    found = both(text, name, lenient)
    assert found["fast"] == found["reference"], f"{name} ({'lenient' if lenient else 'strict'}) reads differently"
