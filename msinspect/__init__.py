"""msinspect: what MindSpore's auto-parallel planner did, read from its IR dumps.

>>> import msinspect
>>> ir = msinspect.parse_file("fixtures/seed_002/step_parallel_begin_0041.ir")
>>> ir.node("matmul").strategy.in_strategy
((2, 4), (4, 1))
"""
from msinspect.analysis.diff import RankDiff, diff_ranks
from msinspect.check import CheckReport
from msinspect.check import check as check_dump
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
