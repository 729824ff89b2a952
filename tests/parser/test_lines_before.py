"""The lines before a parsed window are the parse's own (a context variable set around it), not
the shared transformer's: parses in threads, each reading past errors at other lines, number
every line as a parse alone does, and no parse leaves an offset to the next."""
from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

from msinspect.parser import core
from msinspect.parser.transformer import _LINES_BEFORE

HEADER = "# IR entry: @g\n# Total subgraphs: 1\n\nsubgraph attr:\nsubgraph @g(%para1_x) {\n"
FOOTER = "  Return(%1)\n      : (<Tensor[Float32], (2)>)\n}\n\n\n"


def _text(bad_at: int, nodes: int = 40) -> str:
    """A subgraph of ``nodes`` nodes whose node ``bad_at`` does not parse."""
    lines = []
    for i in range(1, nodes + 1):
        operands = "%para1_x, ]]]" if i == bad_at else "%para1_x"
        lines.append(f"  %{i}(y) = PrimFunc_Foo({operands})\n      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)\n")
    return HEADER + "".join(lines) + FOOTER


def _lines(bad_at: int) -> list[tuple]:
    ir = core.parse_text(_text(bad_at), f"bad{bad_at}.ir", lenient=True)
    return [(n.name, n.line) for n in ir.subgraphs[0].nodes] + [(d.line, d.column) for d in ir.diagnostics]


def test_a_parse_leaves_no_lines_before_to_the_next():
    assert _LINES_BEFORE.get() == 0
    first = _lines(30)  # the tail past node 30 is read on its own
    assert _LINES_BEFORE.get() == 0
    assert first == _lines(30)
    assert first[4] == ("y", 5 + 1 + 2 * 4)  # the header's five lines, then two lines per node
    assert first[-1] == (5 + 1 + 2 * 29, 3 + len("%30(y) = PrimFunc_Foo(%para1_x, "))  # node 30's "]]]"


def test_parses_in_threads_number_lines_as_a_parse_alone():
    alone = {bad: _lines(bad) for bad in range(2, 40, 3)}
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns inside each parse
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            for _ in range(3):
                together = dict(zip(alone, pool.map(_lines, alone)))
                assert together == alone
    finally:
        sys.setswitchinterval(interval)
