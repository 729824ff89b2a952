"""The caches of parsed files and of analysed ranks: one command run twice on the same dump, with
empty caches and then with the caches the first run filled, in fresh processes; against the same
command with --no-cache, and with the parsed files kept but the analysed ranks removed (what the
parse cache alone gives). Goal (issue 13): the second run >= 10x faster than the first.
Usage: python bench/bench_cache.py [DUMP] [--command summary] [--repeat N]

Measured here (2 cores, MindSpore-free run of `summary --json`, best of 2): zoo 09 (one 10 MB
rank) first 9.26 s, second 0.81 s wall (11.4x; CPU 8.75 -> 0.80 s, 11.0x); zoo 01 (8 small ranks)
5.10 -> 1.16 s (4.4x): a second run costs Python's start and imports (pandas, networkx) plus
reading each rank's rows back, so small dumps gain less.
With the parser of 2026-11-23 (2.1x faster) the first run of zoo 09 fell to 4.39 s and the second
stayed at 0.88 s (5.0x: the second run is now mostly Python's start and its pandas / networkx
imports, some 0.6 s); a 400-block GPT rank of 38 MB (`nets/09_large_gpt.py --layers 400`, not in
the zoo): 15.44 -> 1.17 s (13.2x wall, 12.1x CPU).
Later that day (grammar tables kept in the cache, the collector paused through each rank, a
second run loading no networkx), same run against the morning's code: zoo 09 first 3.41 -> 2.99 s,
second 0.66 -> 0.52 s (5.2x -> 5.7x); the 38 MB rank first 11.45 -> 9.09 s, second 1.09 -> 0.85 s
(10.5x -> 10.7x). What a second run of zoo 09 still pays is Python's start and pandas' import.
A `summary` answered from the cache then stopped importing pandas (its rows are counts) and, with
--json, Rich; same run against the session's start (9705333), best of 3: zoo 09 first 3.01 ->
2.58 s, second 0.65 -> 0.22 s (4.7x -> 11.5x).
On 2026-11-24, with the parser 1.7x faster in a fresh process (0.96 -> 0.57 s on zoo 09's rank),
no pool imported when every rank is cached, and msinspect's modules compiled (compiled(); until
then every run on this machine compiled the modules that had no bytecode): zoo 09 first 2.12 s,
second 0.18 s (11.5x wall, 11.6x CPU). Later that day (a cached run imports no importlib.metadata,
3 MB and 15 ms of every process for the email package it reads distributions with; the cache's
keys name Lark and lark-cython by their __init__.py): first 2.15 s, second 0.16 s (13.5x wall
and CPU).

Prints seconds per run and the ratios. Machines are noisy: read the ratios.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str], cache_dir: str) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, the command and its workers) of one run."""
    env = {**os.environ, "MSINSPECT_PARSE_CACHE_DIR": cache_dir,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop("MSINSPECT_NO_CACHE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # see compiled()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "msinspect", *args], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"msinspect {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds, cpu


def compiled() -> None:
    """msinspect's modules compiled to bytecode, as an installed package has them (pip writes
    them at install): a shell with PYTHONDONTWRITEBYTECODE set (this machine's) would otherwise
    have every run compile the modules that have none, some 30 ms of each run."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "msinspect")], check=True,
                   env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # the zoo's large transformer (a 10 MB step_parallel_end): the size the cache is for
    ap.add_argument("dump", nargs="?", default=str(ROOT / "fixtures" / "zoo" / "09_large_gpt"))
    ap.add_argument("--command", default="summary")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    command = [args.command, args.dump, "--json"]
    compiled()
    colds, warms, offs, parsed_only = [], [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="bench-cache-") as cache_dir:
            colds.append(run(command, cache_dir))
            warms.append(run(command, cache_dir))
            offs.append(run(["--no-cache", *command], cache_dir))
            shutil.rmtree(Path(cache_dir) / "results")
            parsed_only.append(run(command, cache_dir))
    print(f"msinspect {' '.join(command)}  (best of {args.repeat}; wall and CPU seconds, CPU: the "
          "command and its workers, the fairer measure on a shared machine)")
    print(f"{'':32} {'wall s':>7} {'cpu s':>7} {'first / this (wall, cpu)':>26}")
    cold = (min(c[0] for c in colds), min(c[1] for c in colds))
    for title, runs in (("empty caches (first run)", colds), ("--no-cache", offs),
                        ("parsed files kept, no ranks", parsed_only), ("caches filled (second run)", warms)):
        wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
        print(f"{title:32} {wall:7.2f} {cpu:7.2f} {cold[0] / wall:12.1f}x {cold[1] / cpu:12.1f}x")


if __name__ == "__main__":
    main()
