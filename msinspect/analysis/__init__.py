"""What the planner did, from the parsed files: one free function per question over the model and
its graph, and :func:`analyse`, the entry point that reads one file per rank of a dump.

>>> from msinspect.analysis import analyse          # doctest: +SKIP
>>> analysis = analyse(load_dump("runs/x"))         # doctest: +SKIP
>>> analysis.strategies(); rank_groups(analysis)    # doctest: +SKIP
"""
__all__ = ["Analysis", "RankResult", "analyse", "rank_groups"]

from msinspect.lazy import lazy_exports  # noqa: E402 (a standard-library-only module)

# imported on first use: a submodule (msinspect.analysis.vocabulary ...) costs no pandas
_LAZY = {
    "Analysis": ("msinspect.analysis.collect", "Analysis"),
    "RankResult": ("msinspect.analysis.collect", "RankResult"),
    "analyse": ("msinspect.analysis.collect", "analyse"),
    "rank_groups": ("msinspect.analysis.groups", "rank_groups"),
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
