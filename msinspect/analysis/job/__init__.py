"""The job: :func:`~msinspect.analysis.job.collect.analyse` over every rank of a dump and what is
folded over its ranks (costs, totals, the summary, rank groups, pipeline stages, MindSpore's
records held against the IR, rows chosen by ``--op``)."""
