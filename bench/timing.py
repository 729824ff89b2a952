"""Timing shared by the benchmarks: the best of several runs (machines are noisy)."""
from __future__ import annotations

import time


def best_of(fn, repeat: int) -> float:
    """The shortest wall time of ``repeat`` calls of ``fn``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
