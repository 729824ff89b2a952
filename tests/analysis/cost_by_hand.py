"""What the hand-derived cost tests of the zoo (``test_cost_zoo*.py``) read: the ring formulas
of docs/comm.md, and a rank's bytes per (axis, phase) and its matrix cells as plain dicts."""
from __future__ import annotations

from msinspect.analysis.cost import bytes_by, rank_matrix


def allreduce(n: int, size: int) -> int:
    """A ring AllReduce of ``size`` bytes over ``n`` ranks: 2(n-1)/n x size on the wire."""
    return 2 * (n - 1) * size // n


def split(analysis, rank: int) -> dict:
    """(axis, phase) -> step_bytes (None: cannot tell) of one rank."""
    frame = bytes_by(analysis, ("axis", "phase"))
    return {(r["axis"], r["phase"]): r["step_bytes"] for r in frame[frame["rank"] == rank].to_dict("records")}


def operators(analysis, rank: int) -> dict:
    """(axis, phase) -> how many operator runs one rank's total holds."""
    frame = bytes_by(analysis, ("axis", "phase"))
    return {(r["axis"], r["phase"]): r["operators"] for r in frame[frame["rank"] == rank].to_dict("records")}


def cells(analysis) -> dict:
    """(src, dst) -> bytes per step, the non-zero cells of the rank matrix."""
    matrix = rank_matrix(analysis)
    return {(int(r["src"]), int(r["dst"])): r["bytes"] for r in matrix.to_dict("records") if r["bytes"]}
