"""What the planner did, from the parsed files: :func:`analyse`, the entry point that reads one
file per rank of a dump, and its :class:`Analysis`. By role: ``dataflow`` (one file as the
analyses walk it), ``rank`` (the per-rank passes), ``job`` (what is folded over the ranks),
``compare`` (two ranks, two runs), ``explain``, and ``engine`` (how many ranks are read, private
to :func:`analyse`).

>>> from msinspect.analysis import analyse          # doctest: +SKIP
>>> analysis = analyse(load_dump("runs/x"))         # doctest: +SKIP
>>> analysis.strategies(); rank_groups(analysis)    # doctest: +SKIP
"""
__all__ = ["Analysis", "RankResult", "analyse", "rank_groups"]

from msinspect.lazy import lazy_exports  # noqa: E402 (a standard-library-only module)

# imported on first use: a submodule (msinspect.analysis.dataflow.flow ...) costs no pandas
_LAZY = {
    "Analysis": ("msinspect.analysis.job.collect", "Analysis"),
    "RankResult": ("msinspect.analysis.job.collect", "RankResult"),
    "analyse": ("msinspect.analysis.job.collect", "analyse"),
    "rank_groups": ("msinspect.analysis.job.rank_groups", "rank_groups"),
}


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, __all__)
