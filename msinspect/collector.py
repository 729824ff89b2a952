"""Python's cycle collector paused while a parse or a rank's analysis builds its objects.

A parse allocates a model of tens of thousands of objects, and a rank's analysis a networkx graph
of as many again; none of them is cyclic garbage, yet the collector's full passes walk all of
them again and again as they grow: 15% of a large dump's parse, and a third of a rank's parse and
analysis (zoo 09: 1.8-2.6 s with the collector on, 1.3 s paused). What is made while paused and
is cyclic garbage (networkx's views, the rank's graph) is collected once the collector is back.

A Lark error does make cyclic garbage (its parser state and tracebacks, some 250 KB each), so the
parser resumes the collector at the first error it catches (:func:`resume`), and a file of many
errors costs no more memory than with the collector on. A caller that turned the collector off
keeps it off: :func:`paused` then changes nothing, nor does a nested :func:`paused`.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

#: Whether :func:`paused` has turned the collector off (and it has not been resumed since).
_paused = False


@contextmanager
def paused():
    """The collector off for the ``with`` block, back on after it (if it was on before)."""
    global _paused
    if not gc.isenabled():  # off already: by the caller, an outer pause, or a pause in another thread
        yield
        return
    gc.disable()
    _paused = True
    try:
        yield
    finally:
        _paused = False
        gc.enable()


def resume() -> None:
    """The collector back on, where :func:`paused` turned it off (called where an error that
    leaves cyclic garbage is caught)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
