"""msinspect: what MindSpore's auto-parallel planner did, read from its IR dumps.

>>> import msinspect
>>> ir = msinspect.parse_file("fixtures/seed_002/step_parallel_begin_0041.excerpt.ir")
>>> ir.node("matmul").strategy.in_strategy
((2, 4), (4, 1))
"""
__version__ = "0.1.0"
"""msinspect's version (setup.cfg reads it from here)."""

__all__ = [
    "CheckReport", "RankDiff", "check_dump", "diff_ranks",
    "Dump", "DumpNotFoundError", "IRFile", "IRParseError", "MsInspectError", "Node", "RankDump",
    "Strategy", "Subgraph", "find_nodes", "load_dump", "parse_file", "parse_many", "parse_text",
    "to_networkx",
]

from msinspect.lazy import lazy_exports  # noqa: E402 (a standard-library-only module)

# Every public name is imported on first use: `import msinspect` (every CLI command, and the pytest
# plugin that each pytest session of an environment with msinspect loads) pays for none of Lark,
# networkx or pandas until it needs them.
_LAZY = {
    "Dump": ("msinspect.dumps", "Dump"),
    "RankDump": ("msinspect.dumps", "RankDump"),
    "load_dump": ("msinspect.dumps", "load_dump"),
    "parse_many": ("msinspect.dumps", "parse_many"),
    "DumpNotFoundError": ("msinspect.errors", "DumpNotFoundError"),
    "IRParseError": ("msinspect.errors", "IRParseError"),
    "MsInspectError": ("msinspect.errors", "MsInspectError"),
    "find_nodes": ("msinspect.graph", "find_nodes"),
    "to_networkx": ("msinspect.graph", "to_networkx"),
    "IRFile": ("msinspect.model", "IRFile"),
    "Node": ("msinspect.model", "Node"),
    "Strategy": ("msinspect.model", "Strategy"),
    "Subgraph": ("msinspect.model", "Subgraph"),
    "parse_file": ("msinspect.parser", "parse_file"),
    "parse_text": ("msinspect.parser", "parse_text"),
    "RankDiff": ("msinspect.analysis.compare.ranks", "RankDiff"),
    "diff_ranks": ("msinspect.analysis.compare.ranks", "diff_ranks"),
    "CheckReport": ("msinspect.check", "CheckReport"),
    "check_dump": ("msinspect.check", "check"),
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
