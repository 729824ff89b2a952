"""Every multi-rank dump of the fixtures (the zoo, the demo runs, MindSpore's UT ports) read as one
batch twice: each rank in full, and each rank after the first by what differs from the last rank
read in full (msinspect.analysis.engine.alike); the answers must be the same, rank by rank.

Usage: python bench/alike_identity.py [ROOT ...]   (default: every dump under fixtures/)

Prints per dump: ranks, how many were read by what differs, the departures (read in full, and
why), the seconds of each way, and SAME or the first rank and field that differ; exits 1 on any
difference. tests/analysis/test_alike.py runs the comparison on a few of them in CI.

Ranks whose debug names' ``$``-parts are printed in an order of their own (issue 40, item 12):
``bench_ranks.py --shuffle --ranks 64 --keep DIR`` makes them (``DIR/mf64n``); 2026-11-29: 64 ranks,
63 read alike, SAME (26.2 s in full, 1.5 s alike). Zoo 12, 14 and 16, whose real ranks differ so
(and in the node count stated), are now read alike too, SAME.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from msinspect.analysis.job import collect  # noqa: E402
from msinspect.dumps import load_dump  # noqa: E402
from msinspect.errors import MsInspectError  # noqa: E402
from msinspect.ranks_read import plan_reads  # noqa: E402
from msinspect.selection import world_of  # noqa: E402


def tasks_of(root: Path) -> list[tuple]:
    dump = load_dump(root)
    return collect.rank_tasks(plan_reads(dump), world_of(dump))


def answers(result) -> dict:
    values = dataclasses.asdict(result) if not isinstance(result, MsInspectError) else {"error": str(result)}
    values.pop("read_by", None)
    values.pop("departure", None)
    values.pop("departed_from", None)
    return values


def first_difference(a: dict, b: dict) -> str:
    for key in a:
        if a[key] != b.get(key):
            if isinstance(a[key], list) and isinstance(b.get(key), list):
                for i, (x, y) in enumerate(zip(a[key], b[key])):
                    if x != y:
                        diff = {f: (x.get(f), y.get(f)) for f in x if x.get(f) != y.get(f)}
                        return f"{key}[{i}]: {diff}"
            return f"{key}: {str(a[key])[:80]} vs {str(b.get(key))[:80]}"
    return "?"


def main() -> None:
    roots = [Path(a) for a in sys.argv[1:]] or sorted(
        {p.parent.parent for p in (ROOT / "fixtures").rglob("rank_*/*.ir*")})
    bad = 0
    print(f"{'dump':<72} {'ranks':>5} {'alike':>5} {'departs':>7} {'full s':>7} {'alike s':>7}  answers")
    for root in roots:
        try:
            tasks = tasks_of(root)
        except MsInspectError as error:
            print(f"{str(root.relative_to(ROOT)):<72} cannot be read: {str(error).splitlines()[0]}")
            continue
        if len(tasks) < 2:
            continue
        start = time.perf_counter()
        full = collect._analyse_batch(tasks, alike=False)
        middle = time.perf_counter()
        read = collect._analyse_batch(tasks, alike=True)
        end = time.perf_counter()
        followers = sum(1 for r in read if getattr(r, "read_by", None))
        departs = [r for r in read if getattr(r, "departure", None)]
        verdict = "SAME"
        for a, f in zip(read, full):
            if answers(a) != answers(f):
                verdict = f"DIFFER at {getattr(a, 'label', '?')}: {first_difference(answers(a), answers(f))}"
                bad += 1
                break
        name = str(root.relative_to(ROOT)) if root.is_relative_to(ROOT) else str(root)
        print(f"{name:<72} {len(tasks):>5} {followers:>5} {len(departs):>7} {middle - start:>7.2f} "
              f"{end - middle:>7.2f}  {verdict}")
        for r in departs[:2]:
            print(f"    {r.label}: {r.departure}")
    raise SystemExit(1 if bad else 0)


if __name__ == "__main__":
    main()
