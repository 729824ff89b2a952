"""Python's cycle collector paused while a parse or a rank's analysis builds its objects.

A parse allocates a model of tens of thousands of objects, and a rank's analysis a networkx graph
of as many again; none of them is cyclic garbage, yet the collector's full passes walk all of
them again and again as they grow: 15% of a large dump's parse, and a third of a rank's parse and
analysis (zoo 09: 1.8-2.6 s with the collector on, 1.3 s paused). What is made while paused and
is cyclic garbage (networkx's views, the rank's graph) is collected once the collector is back.

A Lark error does make cyclic garbage (its parser state and tracebacks, some 250 KB each), so the
parser resumes the collector at the first error it catches (:func:`resume`), and a file of many
errors costs no more memory than with the collector on. A caller that turned the collector off
keeps it off: :func:`paused` then changes nothing, nor does a nested :func:`paused`. A clean parse
hands its model straight to the collector's oldest generation (``paused(kept=True)``).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

#: Whether :func:`paused` has turned the collector off (and it has not been resumed since).
_paused = False


@contextmanager
def paused(kept: bool = False):
    """The collector off for the ``with`` block, back on after it (if it was on before).

    ``kept``: the block makes only what its caller keeps (a parse: its model, and no cyclic
    garbage unless it fails, which resumes the collector; tests/test_collector.py). Then, as it
    ends, every object the collector tracks is moved to its oldest generation (``gc.freeze`` then
    ``gc.unfreeze``, which move them without visiting one): what the block made is not walked
    by the young generations' passes, which would find nothing to free in it (zoo 09: some
    100,000 objects, 12-25 ms of a 0.6 s parse), and anything young from before the block waits
    for the next full pass."""
    global _paused
    if not gc.isenabled():  # off already: by the caller, an outer pause, or a pause in another thread
        yield
        return
    gc.disable()
    _paused = True
    try:
        yield
    finally:
        if kept and _paused:
            gc.freeze()
            gc.unfreeze()
        _paused = False
        gc.enable()


def resume() -> None:
    """The collector back on, where :func:`paused` turned it off (called where an error that
    leaves cyclic garbage is caught)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
