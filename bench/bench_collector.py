"""What pausing Python's cycle collector buys: a rank's parse and its analysis in a process
msinspect owns (the ``msinspect`` command, a pool worker: collector paused around each) next to
the same work in a host's process (a user's pytest session: collector left as the host set it),
the host's time being the baseline measured in the same run.

Usage: python bench/bench_collector.py [DUMP_ROOT] [--repeat R]

Default dump: the zoo's large GPT (fixtures/zoo/09_large_gpt), rank 0's chosen file. Caches are
off. Machines are noisy: compare the ratios, not the seconds.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from timing import best_of

from msinspect import collector
from msinspect.analysis.job import collect
from msinspect.analysis.rank.context import RankContext
from msinspect.dumps import load_dump, pick_file
from msinspect.parser import parse_file

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("root", nargs="?", type=Path, default=ROOT / "fixtures" / "zoo" / "09_large_gpt")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    os.environ["MSINSPECT_NO_CACHE"] = "1"
    path = str(pick_file(load_dump(args.root).ranks[0], None))
    work = {
        "parse": lambda: parse_file(path, cache=False),
        "parse + analysis": lambda: collect._compute(path, None, RankContext(rank=0), "rank_0", False),
    }
    print(f"file: {Path(path).relative_to(ROOT) if Path(path).is_relative_to(ROOT) else path}")
    print(f"{'work':<18} {'host s':>8} {'owned s':>8} {'host/owned':>11}")
    for name, fn in work.items():
        fn()  # fragments and grammar known
        collector._owned = False
        host = best_of(fn, args.repeat)
        collector._owned = True
        owned = best_of(fn, args.repeat)
        collector._owned = False
        print(f"{name:<18} {host:>8.3f} {owned:>8.3f} {host / owned:>10.2f}x")


if __name__ == "__main__":
    main()
