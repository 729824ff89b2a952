"""Exports of a rank's graph to other tools' formats (:mod:`.model_explorer`)."""
