"""Analyses of a whole dump root: time per rank and peak memory, next to the parse alone of the
same files measured in the same run (the baseline), with one worker and with every core.

Usage: python bench/bench_analyses.py [DUMP_ROOT] [--ranks N ...] [--repeat R]

The dump root (default: the recursive-pipeline fixture, the largest 2.10 one) is replicated into a
temporary root of N ranks (hard links, rank folders renumbered) to show how the process pool
scales. Machines are noisy: compare the ratios, not the seconds.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import tracemalloc
from pathlib import Path

from timing import best_of

from msinspect.analysis.job.collect import analyse
from msinspect.dumps import load_dump, parse_many, pick_file

ROOT = Path(__file__).resolve().parent.parent


def replicate(source: Path, ranks: int, into: Path) -> Path:
    """A dump root of ``ranks`` rank folders made of hard links to the source's ranks (cycled)."""
    have = sorted(p for p in source.iterdir() if p.is_dir() and p.name.startswith("rank_"))
    for r in range(ranks):
        dest = into / f"rank_{r}"
        dest.mkdir(parents=True)
        for f in have[r % len(have)].iterdir():
            os.link(f, dest / f.name)
    if (source / "config.json").exists():
        shutil.copy(source / "config.json", into / "config.json")
    return into




def children_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("root", nargs="?", type=Path, default=ROOT / "fixtures" / "recursive_pipeline_dryrun_8rank")
    ap.add_argument("--ranks", type=int, nargs="+", default=[8, 32])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    print(f"dump: {args.root.relative_to(ROOT) if args.root.is_relative_to(ROOT) else args.root}; cores: {cores}")
    print(f"{'ranks':>5} {'jobs':>4} {'parse s/rank':>13} {'analyse s/rank':>15} {'analyse/parse':>14} "
          f"{'speed-up':>9} {'main peak MB':>13}")
    for n in args.ranks:
        with tempfile.TemporaryDirectory() as tmp:
            root = replicate(args.root, n, Path(tmp) / "dump")
            files = [pick_file(r, None) for r in load_dump(root).ranks]
            serial = None
            for jobs in sorted({1, cores}):
                t_parse = best_of(lambda: parse_many(files, jobs=jobs), args.repeat)
                t_analyse = best_of(lambda: analyse(load_dump(root), jobs=jobs), args.repeat)
                serial = serial or t_analyse
                tracemalloc.start()
                analyse(load_dump(root), jobs=jobs)
                _, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                print(f"{n:>5} {jobs:>4} {t_parse / n:>13.3f} {t_analyse / n:>15.3f} {t_analyse / t_parse:>13.2f}x "
                      f"{serial / t_analyse:>8.2f}x {peak / 1e6:>13.1f}")
    print(f"peak RSS of a worker process: {children_peak_mb():.0f} MB")
    print("analyse = parse + strategies + communication + parameters + operator table, per rank's file;"
          " parse = the parse alone (baseline)")


if __name__ == "__main__":
    main()
