"""Many ranks: the same small dump replicated to 8, 64, 256 and 1,024 ranks, analysed whole (every
rank parsed and analysed in the process pool, then the summary's tables and the rank groups made
in the main process). Prints seconds per rank and the main process' peak RSS per size.

Usage: python bench/bench_ranks.py [DUMP_ROOT] [--ranks 8 64 256 1024] [--jobs J] [--cache]

The dump root's rank folders (default: the sharding-propagation fixture, 8 ranks) are cycled into
a temporary root of N rank folders holding links to their files (no run record: the world is
the N folders). Each size runs in a fresh process, so peaks do not carry over. Without --cache
the caches are off (MSINSPECT_NO_CACHE=1): every rank is parsed and analysed, as on a first run.
Goals (issue 13): seconds per rank within 1.3x from 8 to 1,024 ranks; main peak RSS sub-linear.
Machines are noisy: read the ratios.

Measured here (2 cores, caches off): 8 ranks 0.164 s/rank, 64 0.053, 256 0.041, 1,024 0.042
(the pool's start weighs on 8 ranks only); main peak RSS 84, 88, 104, 168 MB. With the parser of
2026-11-23 (node items by template): 0.055, 0.015, 0.012, 0.010 s/rank; 84, 88, 102, 162 MB. With
the collector paused through each rank's analysis (later the same day): 0.055, 0.012, 0.008,
0.006 s/rank; 72, 76, 90, 151 MB. Seconds per rank fall, never rise, as ranks grow: what is
not flat is the fixed start of the pool (its workers' imports and grammar), spread over 8 ranks.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def replicate(source: Path, ranks: int, into: Path) -> Path:
    """``ranks`` folders ``rank_N`` of links to the files of the source's rank folders (cycled)."""
    have = sorted((p for p in source.iterdir() if p.is_dir() and p.name.startswith("rank_")),
                  key=lambda p: int(p.name.split("_")[1]))
    for r in range(ranks):
        dest = into / f"rank_{r}"
        dest.mkdir(parents=True)
        for f in have[r % len(have)].iterdir():
            (dest / f.name).symlink_to(f.resolve())
    return into


def one(root: str, jobs: int | None) -> None:
    """In a fresh process: analyse ``root`` as `summary` does; print seconds and peak RSS as JSON."""
    from memory import peak_kb
    from msinspect.analysis import analyse, rank_groups
    from msinspect.dumps import load_dump

    start = time.perf_counter()
    analysis = analyse(load_dump(root), jobs=jobs)
    rows = len(analysis.strategies()) + len(analysis.comm())
    groups = rank_groups(analysis)
    seconds = time.perf_counter() - start
    print(json.dumps({"ranks": len(analysis.results), "seconds": seconds, "peak_mb": peak_kb() / 1024,
                      "rows": rows, "groups": len(groups.groups)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?", type=Path, default=ROOT / "fixtures" / "sharding_propagation_dryrun_8rank")
    ap.add_argument("--ranks", type=int, nargs="+", default=[8, 64, 256, 1024])
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--cache", action="store_true", help="keep the caches on (a shared temporary one)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.one, args.jobs)
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("MSINSPECT_NO_CACHE", None)
    if not args.cache:
        env["MSINSPECT_NO_CACHE"] = "1"
    print(f"dump: {args.root}; cores: {os.cpu_count()}; caches {'on' if args.cache else 'off'}")
    print(f"{'ranks':>6} {'seconds':>8} {'s/rank':>8} {'vs first':>9} {'main peak MB':>13} {'MB/rank':>8} {'groups':>7}")
    first = None
    with tempfile.TemporaryDirectory(prefix="bench-ranks-") as tmp:
        env["MSINSPECT_PARSE_CACHE_DIR"] = str(Path(tmp) / "cache")
        for n in args.ranks:
            root = replicate(args.root, n, Path(tmp) / f"dump{n}")
            command = [sys.executable, __file__, "--one", str(root)] + (["--jobs", str(args.jobs)] if args.jobs else [])
            done = subprocess.run(command, capture_output=True, text=True, env=env)
            if done.returncode:
                raise SystemExit(f"{n} ranks failed:\n{done.stderr[-3000:]}")
            got = json.loads(done.stdout.strip().splitlines()[-1])
            per_rank = got["seconds"] / got["ranks"]
            first = first or per_rank
            print(f"{got['ranks']:>6} {got['seconds']:>8.1f} {per_rank:>8.3f} {per_rank / first:>8.2f}x "
                  f"{got['peak_mb']:>13.0f} {got['peak_mb'] / got['ranks']:>8.2f} {got['groups']:>7}", flush=True)


if __name__ == "__main__":
    main()
