"""What the hand-derived cost tests of the zoo (``test_cost_zoo*.py``) read: the ring formulas
of docs/comm.md, a rank's bytes per (axis, phase) and its matrix cells as plain dicts, and what
the command prints with and without validate."""
from __future__ import annotations

import json

from msinspect.analysis.job.cost_tables import bytes_by, rank_matrix

from tests.conftest import dump_without, invoke


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


def splits(analysis, column: str = "step_bytes") -> dict:
    """rank -> (axis, phase) -> ``column`` (``step_bytes``: None is cannot tell; ``operators``) of
    every rank read, from one :func:`bytes_by` (a job of many ranks reads it once, not per rank)."""
    told: dict = {}
    for r in bytes_by(analysis, ("axis", "phase")).to_dict("records"):
        told.setdefault(r["rank"], {})[(r["axis"], r["phase"])] = r[column]
    return told


def cells(analysis) -> dict:
    """(src, dst) -> bytes per step, the non-zero cells of the rank matrix."""
    matrix = rank_matrix(analysis)
    return {(int(r["src"]), int(r["dst"])): r["bytes"] for r in matrix.to_dict("records") if r["bytes"]}


def told_by_command(dump) -> dict:
    """rank -> (axis, phase) -> step_bytes, as ``msinspect cost DUMP --by axis,phase --json`` prints them."""
    done = invoke("cost", dump, "--by", "axis,phase", "--json")
    assert done.exit_code == 0, done.stderr
    told: dict = {}
    for row in json.loads(done.stdout)["bytes"]:
        told.setdefault(row["rank"], {})[(row["axis"], row["phase"])] = row["step_bytes"]
    return told


def said_without_validate(dump, tmp_path) -> str:
    """What ``msinspect cost --by axis,phase`` prints, its spaces folded, of a copy of ``dump`` with
    its validate files taken out (a pass filter that left validate out)."""
    copy = dump_without(dump, tmp_path / "dump", "rank_*/*validate*")
    done = invoke("cost", copy, "--by", "axis,phase")
    assert done.exit_code == 0, done.stderr
    return " ".join(done.stdout.split())


def assert_backward_untold(analysis, ranks) -> None:
    """At step_parallel_end each of ``ranks`` says its backward "cannot tell" with
    :data:`~msinspect.analysis.job.cost.NO_BACKWARD`'s reason, and the by-(axis, phase) rows that
    say so carry the short note: never 0, never left out."""
    from msinspect.analysis.job.cost import NO_BACKWARD, SHORT, backward_missing
    from msinspect.analysis.job.cost_tables import bytes_by

    why = NO_BACKWARD.format(stage="step_parallel_end")
    assert backward_missing(analysis) == {rank: why for rank in ranks}
    frame = bytes_by(analysis, ("axis", "phase"))
    assert set(frame[frame["axis"] == "cannot tell"]["note"]) == {SHORT}
