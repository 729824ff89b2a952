"""The report of a large dump: ``msinspect report`` against ``msinspect summary --json`` of the
same dump (the analysis alone, the baseline), each in a fresh process, with empty caches (a first
run) and with the caches the first run filled. The ratio is what the page adds to the analysis:
its tables, device grids and graph pictures.
Usage: python bench/bench_report.py [DUMP] [--repeat N]

Measured here (2 cores, zoo 09: one 10 MB rank, 1,245 weights, best of 2; a first run includes
building the grammar's tables), 2026-11-23: the report's weights went through a DataFrame each (a
groupby, then one to_dict per weight); read as one table of dicts, against the code before in the
same session: report with caches filled 4.03 -> 2.91 s, first run 6.92 -> 6.02 s (summary --json
0.28 and 3.21 s), the HTML unchanged (8 dumps compared, the time stamp aside). A DataFrame per
weight cost about a millisecond each: seconds for a transformer's thousand weights
(report.grid.weight_rows now converts the whole table once).

Machines are noisy: read the ratios.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench_cache import ROOT, run  # one fresh `msinspect` process on a given cache folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump", nargs="?", default=str(ROOT / "fixtures" / "zoo" / "09_large_gpt"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    times: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-report-") as out:
        page = str(Path(out) / "report.html")
        commands = {"summary --json": ["summary", args.dump, "--json"],
                    "report": ["report", args.dump, "-o", page, "--overwrite"]}
        for _ in range(args.repeat):
            for name, command in commands.items():
                with tempfile.TemporaryDirectory(prefix="bench-report-cache-") as cache_dir:
                    times.setdefault((name, "first run"), []).append(run(command, cache_dir)[0])
                    times.setdefault((name, "caches filled"), []).append(run(command, cache_dir)[0])
        size = Path(page).stat().st_size
    print(f"{args.dump}: report of {size / 2**20:.1f} MB (best of {args.repeat}, wall seconds)")
    print(f"{'':16} {'summary --json':>15} {'report':>8} {'report / summary':>17}")
    for when in ("first run", "caches filled"):
        base, page_s = min(times[("summary --json", when)]), min(times[("report", when)])
        print(f"{when:16} {base:15.2f} {page_s:8.2f} {page_s / base:16.1f}x")


if __name__ == "__main__":
    main()
