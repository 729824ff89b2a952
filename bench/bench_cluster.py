"""Dask vs local on the same dump: every rank's parse + analysis (``msinspect.analysis.job.collect.analyse``)
in this process, in a local process pool, and on a Dask cluster of as many single-threaded worker
processes (``distributed.LocalCluster`` on 127.0.0.1), with the parse cache off so that every run
parses. Checks that the Dask results equal the local ones. Dask runs twice: as msinspect does
(ranks batched, :func:`msinspect.executors.batches`, each batch reading its ranks alike) and one
rank a Dask task, each read in full (as before issue 28), so a dump of many ranks shows what the
batching buys (bench_ranks.py --keep DIR makes one).
Usage: python bench/bench_cluster.py [DUMP] [--workers N] [--repeat N]   (needs msinspect[cluster])

Prints seconds per run (best of --repeat) and each ratio to the local pool of the same run.

Measured here (2 cores, 2026-11-26; 1,024 ranks of bench_ranks.py's transformer rank, --workers 2
--repeat 1): serial 23.5 s, local pool 13.6 s (1.00), Dask batched 15.3 s (1.13), Dask one rank a
task 41.7 s (3.06): batches cut the Dask run 2.7x (scheduler round trips, and the ranks of a batch
read by what differs from its first).
Machines are noisy: read the ratios. On one machine the cluster cannot beat the pool (same cores,
plus sending tasks and rows over TCP); what it shows is the cost of going through Dask, which a
cluster of many machines repays.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["MSINSPECT_NO_CACHE"] = "1"  # before the workers start: they inherit it

from timing import best_of  # noqa: E402
from msinspect import executors  # noqa: E402
from msinspect.analysis.job import collect  # noqa: E402
from msinspect.analysis.job.collect import analyse  # noqa: E402
from msinspect.dumps import load_dump  # noqa: E402


def _one_rank_a_task(dump, address):
    """``analyse`` on Dask as before issue 28: one rank a Dask task, each read in full (a batch of
    one rank reads no rank by what differs from another)."""
    before = executors.BATCH_MAX, collect.RANKS_A_TASK
    executors.BATCH_MAX = collect.RANKS_A_TASK = 1
    try:
        return analyse(dump, scheduler=address)
    finally:
        executors.BATCH_MAX, collect.RANKS_A_TASK = before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump", nargs="?", default=str(ROOT / "fixtures" / "zoo" / "01_semi_auto_tp4dp2"))
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from distributed import LocalCluster

    dump = load_dump(args.dump)
    size = sum(f.stat().st_size for f in dump.files()) / 1e6
    print(f"{args.dump}: {len(dump.ranks)} ranks, {size:.1f} MB of IR files; parse cache off; "
          f"{args.workers} process(es); best of {args.repeat}")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster:
        address = cluster.scheduler_address
        local = analyse(dump, jobs=args.workers).results
        remote = analyse(dump, scheduler=address).results
        same = [asdict(r) for r in local] == [asdict(r) for r in remote]
        times = {
            "serial (this process)": best_of(lambda: analyse(dump, jobs=1), args.repeat),
            f"local pool, {args.workers} processes": best_of(lambda: analyse(dump, jobs=args.workers), args.repeat),
            f"Dask, {args.workers} workers x 1 thread": best_of(lambda: analyse(dump, scheduler=address), args.repeat),
            "Dask, one rank a task": best_of(lambda: _one_rank_a_task(dump, address), args.repeat),
        }
    pool = times[f"local pool, {args.workers} processes"]
    print(f"{'how':<34} {'seconds':>8} {'s / rank':>9} {'/ pool':>7}")
    for how, seconds in times.items():
        print(f"{how:<34} {seconds:8.2f} {seconds / len(dump.ranks):9.3f} {seconds / pool:7.2f}")
    print(f"Dask results equal the local ones: {'yes' if same else 'NO'}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
