"""How many ranks are read: a rank read by what differs from one read in full (``alike``), rows
kept on disk (``spool``) and held in columns (``spooled_results``), counts made where the
rows are (``tally``). Private to :func:`~msinspect.analysis.job.collect.analyse`."""
