"""``search_lines`` finds what the line-start regex finds, past runs of blank lines at once.

The fuzzer's blank_lines_64mib mutation (64 MiB of line ends inside a dump) took 7.5 s of CPU to
parse strict, most of it ``_CUT`` and ``CANDIDATE`` trying each of the 64 million empty lines
(bench/fuzz_parse.py). The expected matches here are the pattern's own ``search`` over the same
range: the step-wise search must agree with it at every start, inside runs and across steps."""
from __future__ import annotations

import random

import pytest

from msinspect.parser.core import _CUT, _STEP, search_lines
from msinspect.parser.fastpath import CANDIDATE

NODE = "  %12(x) = Add(%para1_x, %3)\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n"
PIECES = [NODE, "\n", "\n" * 300, "\n" * (_STEP + 7), "subgraph attr:\n", "Return(%12)\n", "%para3_w\n",
          "x" * (_STEP + 3) + "\n", "   %4(y)\n", " " * 50 + "\n", "%7(z)"]


def _text(seed: int) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))


def _all(search, text: str, at: int, end: int) -> list[int]:
    """Start of every match from ``at`` on, each search starting past the last match (as
    ``_read_range`` and ``_windows`` move on)."""
    found = []
    while True:
        match = search(text, at, end)
        if match is None:
            return found
        found.append(match.start())
        at = match.end()


@pytest.mark.parametrize("pattern", [_CUT, CANDIDATE], ids=["cut", "candidate"])
def test_search_lines_agrees_with_the_pattern(pattern):
    for seed in range(300):
        text = _text(seed)
        rng = random.Random(seed)
        for _ in range(4):
            at = rng.randint(0, len(text))
            end = rng.randint(at, len(text))
            expected = _all(pattern.search, text, at, end)
            assert _all(lambda t, a, e: search_lines(pattern, t, a, e), text, at, end) == expected, (seed, at, end)


def test_a_node_after_a_run_of_blank_lines_is_found_at_its_line_start():
    # "\n" * 1000 then NODE: the node's line starts at 1000 + len("head\n") = 1005
    text = "head\n" + "\n" * 1000 + NODE
    assert search_lines(CANDIDATE, text, 0, len(text)).start() == 1005
    assert search_lines(_CUT, text, 0, len(text)).start() == 1005
    assert search_lines(CANDIDATE, text, 0, 1005) is None  # the range ends before the node
