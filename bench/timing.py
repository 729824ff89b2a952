"""Timing shared by the benchmarks: the best of several runs (machines are noisy)."""
from __future__ import annotations

import time


def best_of(fn, repeat: int, clock=time.perf_counter) -> float:
    """The shortest time of ``repeat`` calls of ``fn``, in seconds: wall time, or with
    ``clock=time.process_time`` this process's own CPU time."""
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best
