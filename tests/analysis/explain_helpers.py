"""The shape the explain tests of gradient collectives share: read a zoo or UT dump at a stage,
keep the one backward collective whose forward collective is named, and check the step it takes
(action, dimensions, parts). Written once here; the expectations stay in each test, derived by
hand in the comment above it."""
from __future__ import annotations

from functools import lru_cache

import msinspect
from msinspect.analysis import analyse
from msinspect.analysis.explain.answers import Explanation, explain

from tests.conftest import FIXTURES

ZOO = FIXTURES / "zoo"
UT = FIXTURES / "ut"


@lru_cache(maxsize=8)
def read(root, stage: str = "validate", rank: int = 0):
    """The analysis of ``rank`` of the dump at ``root`` (a path under fixtures/) at ``stage``."""
    return analyse(msinspect.load_dump(root), stage, only=[rank])


def backward(found: list[Explanation]) -> list[Explanation]:
    """The answers about collectives of the gradient graph."""
    return [e for e in found if e.kind == "backward"]


def one_bprop(analysis, op: str, after: str | None = None, rank: int = 0) -> Explanation:
    """The one backward ``op`` of ``rank`` whose forward collective is ``after`` (how the answer
    names it: ``the AllGather after lm_matmul``); ``after`` None: the only backward ``op``."""
    found = [e for e in backward(explain(analysis, f"type:{op}", rank=rank))
             if after is None or (e.forward or "").startswith(f"{after} ")]
    assert len(found) == 1, [e.headline for e in found]
    return found[0]


def step(e: Explanation) -> tuple:
    """``(action, dims, parts)`` of an answer: what a test compares with its hand derivation."""
    return e.action, e.dims, e.parts
