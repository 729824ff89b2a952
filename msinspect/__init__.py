"""msinspect: what MindSpore's auto-parallel planner did, read from its IR dumps.

>>> import msinspect
>>> ir = msinspect.parse_file("fixtures/seed_002/step_parallel_begin_0041.excerpt.ir")
>>> ir.node("matmul").strategy.in_strategy
((2, 4), (4, 1))
"""
from msinspect.dumps import Dump, RankDump, load_dump, parse_many
from msinspect.errors import DumpNotFoundError, IRParseError, MsInspectError
from msinspect.graph import find_nodes, to_networkx
from msinspect.model import IRFile, Node, Strategy, Subgraph
from msinspect.parser import parse_file, parse_text

__all__ = [
    "CheckReport", "RankDiff", "check_dump", "diff_ranks",
    "Dump", "DumpNotFoundError", "IRFile", "IRParseError", "MsInspectError", "Node", "RankDump",
    "Strategy", "Subgraph", "find_nodes", "load_dump", "parse_file", "parse_many", "parse_text",
    "to_networkx",
]

# The analyses need pandas: imported on first use, so `import msinspect` (and every CLI command)
# stays light.
_LAZY = {
    "RankDiff": ("msinspect.analysis.diff", "RankDiff"),
    "diff_ranks": ("msinspect.analysis.diff", "diff_ranks"),
    "CheckReport": ("msinspect.check", "CheckReport"),
    "check_dump": ("msinspect.check", "check"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'msinspect' has no attribute {name!r}")
