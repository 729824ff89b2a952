"""What the planner did, from the parsed files: one free function per question over the model and
its graph, and :func:`analyse`, the entry point that reads one file per rank of a dump.

>>> from msinspect.analysis import analyse          # doctest: +SKIP
>>> analysis = analyse(load_dump("runs/x"))         # doctest: +SKIP
>>> analysis.strategies(); rank_groups(analysis)    # doctest: +SKIP
"""
__all__ = ["Analysis", "RankResult", "analyse", "rank_groups"]

# imported on first use: a submodule (msinspect.analysis.vocabulary ...) costs no pandas
_LAZY = {
    "Analysis": ("msinspect.analysis.collect", "Analysis"),
    "RankResult": ("msinspect.analysis.collect", "RankResult"),
    "analyse": ("msinspect.analysis.collect", "analyse"),
    "rank_groups": ("msinspect.analysis.groups", "rank_groups"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'msinspect.analysis' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
