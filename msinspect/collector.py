"""Python's cycle collector, paused while a parse or a rank's analysis builds its objects, in
msinspect's own processes only.

A parse allocates a model of tens of thousands of objects, and a rank's analysis a networkx graph
of as many again; none of them is cyclic garbage, yet the collector's full passes walk all of
them again and again as they grow (``bench/bench_collector.py`` measures the share). What is made while
paused and is cyclic garbage (networkx's views, the rank's graph) is collected once the collector
is back.

The collector is one switch for the whole process, so msinspect turns it only in a process it
owns: the ``msinspect`` command (:func:`msinspect.cli.run`) and the workers of its process pools
call :func:`own_process`. A program that imports msinspect (a user's pytest session through the
plugin, a notebook) keeps its collector exactly as it set it: :func:`paused` changes nothing
there.

A Lark error does make cyclic garbage (its parser state and tracebacks, some 250 KB each), so the
parser resumes the collector at the first error it catches (:func:`resume`), and a file of many
errors costs no more memory than with the collector on. A caller that turned the collector off
keeps it off: :func:`paused` then changes nothing, nor does a nested :func:`paused`. A clean parse
hands its model straight to the collector's oldest generation (``paused(kept=True)``).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager

#: Whether this process is msinspect's own (:func:`own_process`): only then does :func:`paused` act.
_owned = False
#: Whether :func:`paused` has turned the collector off (and it has not been resumed since).
_paused = False


def own_process() -> None:
    """Mark this process as msinspect's own (the command line, a pool worker): from now on
    :func:`paused` may turn the collector off around a parse or a rank's analysis."""
    global _owned
    _owned = True


@contextmanager
def paused(kept: bool = False):
    """The collector off for the ``with`` block, back on after it (if it was on before), in a
    process msinspect owns; elsewhere the block runs with the collector as the host set it.

    ``kept``: the block makes only what its caller keeps (a parse: its model, and no cyclic
    garbage unless it fails, which resumes the collector; tests/test_collector.py). Then, as it
    ends, every object the collector tracks is moved to its oldest generation (``gc.freeze`` then
    ``gc.unfreeze``, which move them without visiting one): what the block made is not walked
    by the young generations' passes, which would find nothing to free in it, and anything young
    from before the block waits for the next full pass."""
    global _paused
    if not _owned or not gc.isenabled():  # a host's process, or off already: by the caller, an outer pause
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


#: glibc's ``malloc_trim``, where the C library has one (None elsewhere, or not found yet).
_malloc_trim = False


def trim() -> None:
    """Hand the heap's free pages back to the system (glibc's ``malloc_trim``), in msinspect's
    own process only (:func:`own_process`); nothing where the C library has no such call.

    A process pool's results are unpickled by the pool's own thread, whose allocations glibc
    serves from another arena than the main thread's; freed by the main thread once each rank's
    rows are spooled, those pages stay with the process: 10 kB a rank of resident memory in
    ``bench/bench_ranks.py --jobs 2`` without a trim now and then."""
    global _malloc_trim
    if not _owned:
        return
    if _malloc_trim is False:
        import ctypes
        import ctypes.util

        try:
            _malloc_trim = getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), "malloc_trim", None)
        except OSError:
            _malloc_trim = None
    if _malloc_trim is not None:
        _malloc_trim(0)
