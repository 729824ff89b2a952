"""Benchmark of the compile-only dry run: launcher cost per simulated rank vs MindSpore's compile.

For each seed network (tests/dryrun/nets) and rank count (8 and 32 by default) it dry-runs
every rank and reports, per rank: the wall time the launcher spent (scheduler start to the
last process gone), the worker's peak resident memory (kernel rusage), and the time of
MindSpore's own graph compile measured inside the worker (a wrapper times
``_CellGraphExecutor.compile``, the call ``Model.train`` compiles through). The ratio
wall / compile shows what the dry run costs beyond the compile itself (interpreter and
MindSpore start-up, the cluster handshake, tear-down).

    PYTHONPATH=. python bench/bench_dryrun.py [--ranks 8 32] [--jobs 2] [--nets seed002 seed000]

Runs write into a temporary folder that is removed afterwards (``--keep`` keeps it).
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from msinspect.dryrun import load_environment, run_dryrun  # noqa: E402

NETS = {
    "seed002": REPO / "tests" / "dryrun" / "nets" / "seed002_sharding_propagation.py",
    "seed000": REPO / "tests" / "dryrun" / "nets" / "seed000_recursive_pipeline.py",
}

_WRAPPER = '''\
# Times MindSpore's own graph compile inside a dry-run worker, then runs the script unchanged.
import runpy, sys, time
from mindspore.graph import api as _api

_compile = _api._CellGraphExecutor.compile


def _timed(self, *args, **kwargs):
    start = time.perf_counter()
    try:
        return _compile(self, *args, **kwargs)
    finally:
        print("MSINSPECT_BENCH_COMPILE_SECONDS %.4f" % (time.perf_counter() - start), flush=True)


_api._CellGraphExecutor.compile = _timed
sys.argv[0] = {target!r}
runpy.run_path({target!r}, run_name="__main__")
'''

_COMPILE = re.compile(r"^MSINSPECT_BENCH_COMPILE_SECONDS ([0-9.]+)$", re.M)


def bench_one(name: str, ranks: int, jobs: int, root: Path) -> dict:
    wrapper = root / f"{name}.py"
    wrapper.write_text(_WRAPPER.format(target=str(NETS[name])))
    start = time.monotonic()
    report = run_dryrun(wrapper, ranks, out_root=root, jobs=jobs, environment=load_environment(), timeout=900)
    total = time.monotonic() - start
    rows = []
    for r in report.ranks:
        text = r.log.read_text(errors="replace") if r.log and r.log.is_file() else ""
        compile_s = sum(float(x) for x in _COMPILE.findall(text))
        rows.append((r.rank, r.ok, r.wall_seconds, (r.peak_rss_bytes or 0) / 2**20, compile_s))
    ok = [row for row in rows if row[1]]
    walls, peaks, compiles = [row[2] for row in ok], [row[3] for row in ok], [row[4] for row in ok]
    return {
        "net": name, "ranks": ranks, "jobs": jobs, "ok": len(ok), "total_s": total,
        "per_rank_throughput_s": total / ranks,
        "wall_median_s": statistics.median(walls) if walls else float("nan"),
        "wall_max_s": max(walls) if walls else float("nan"),
        "peak_rss_median_mb": statistics.median(peaks) if peaks else float("nan"),
        "peak_rss_max_mb": max(peaks) if peaks else float("nan"),
        "compile_median_s": statistics.median(compiles) if compiles else float("nan"),
        "ratio": (statistics.median(walls) / statistics.median(compiles)) if compiles and min(compiles) > 0
        else float("nan"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--nets", nargs="+", default=list(NETS), choices=list(NETS))
    parser.add_argument("--keep", action="store_true", help="keep the run folders")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="msinspect-bench-dryrun-"))
    results = []
    try:
        for name in args.nets:
            for ranks in args.ranks:
                res = bench_one(name, ranks, args.jobs, root)
                results.append(res)
                print(f"{name} x{ranks}: {res['ok']}/{ranks} ok in {res['total_s']:.1f} s", file=sys.stderr, flush=True)
    finally:
        if args.keep:
            print(f"run folders kept in {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    print("Dry run: nothing is computed; times are compile-only.")
    header = (f"{'net':<8} {'ranks':>5} {'jobs':>4} {'ok':>4} {'total s':>8} {'s/rank':>7} {'wall med':>9} "
              f"{'wall max':>9} {'RSS med MB':>10} {'RSS max MB':>10} {'compile s':>9} {'wall/compile':>12}")
    print(header)
    print("-" * len(header))
    for r in results:
        print(f"{r['net']:<8} {r['ranks']:>5} {r['jobs']:>4} {r['ok']:>4} {r['total_s']:>8.1f} "
              f"{r['per_rank_throughput_s']:>7.2f} {r['wall_median_s']:>9.2f} {r['wall_max_s']:>9.2f} "
              f"{r['peak_rss_median_mb']:>10.0f} {r['peak_rss_max_mb']:>10.0f} {r['compile_median_s']:>9.2f} "
              f"{r['ratio']:>12.1f}")
    return 0 if all(r["ok"] == r["ranks"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
