"""``msinspect explain``: why an operator has its strategy and why a collective is where it is
(:mod:`~msinspect.analysis.explain.answers.answers`), from one rank's file as it reads it, the
layouts it reasons with and the steps of a redistribution."""
