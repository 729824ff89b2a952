"""Comparisons: two ranks of one job (:mod:`~msinspect.analysis.compare.ranks`), two runs of one
model (:mod:`~msinspect.analysis.compare.runs`), and whether two ranks come from one run
(:mod:`~msinspect.analysis.compare.same_run`)."""
