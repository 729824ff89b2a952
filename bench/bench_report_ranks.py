"""The report of many ranks: bench_ranks.py's dumps (one real transformer rank made into N ranks
that differ as real ranks do), ``msinspect report`` of each in a fresh process, then the page
loaded in headless Chromium (Selenium, as tests/report/ do): the seconds to write it (and of them,
making the page once the ranks are analysed), the main process's peak resident set (in all, while
the page is made, and above its resident set as the page starts), the page's size, and the
milliseconds from navigation start to the ``load`` event, each against the 256-rank one measured
in the same run (issue 28: the report of 10,000 ranks should load in about the time of 256).

Usage: python bench/bench_report_ranks.py [--ranks 256 2048 ...] [--keep DIR] [--no-browser]   (the load
time needs chromium and chromium-driver: without them, or with --no-browser, it is not measured;
--keep DIR shares bench_ranks.py's --keep folder)

Measured here (2 cores, 2026-11-26, the report's tables folded one rank at a time:
msinspect/report/rollup.py):

 ranks  write s  page s  peak MB page peak page +MB  page MB  load ms | vs 256: s/rank   peak page peak   load
   256      6.1     1.8      242       242       23     1.72      726 |          1.00x  1.00x     1.00x  1.00x
  2048     34.6    10.4     1068       959       26     1.38      536 |          0.71x  4.42x     3.96x  0.74x
 10000    149.6    52.2     5055      5055       54     2.48      428 |          0.63x 20.90x    20.90x  0.59x

Then, the pool queueing its tasks two a worker ahead and the workers writing the rows to the
spool themselves (msinspect/executors.py, msinspect/analysis/engine/spool.py), the same day:

 ranks  write s  page s  peak MB page peak page +MB  page MB  load ms | vs 256: s/rank   peak page peak   load
   256      4.2     1.8      148       148       43     1.72      456 |          1.00x  1.00x     1.00x  1.00x
  2048     19.6     9.5      162       162       51     1.38      316 |          0.58x  1.09x     1.09x  0.69x
 10000     98.1    51.4      245       245      115     2.49      363 |          0.60x  1.65x     1.65x  0.80x

Before (the tables DataFrames of every rank's rows): 256 ranks written in 12.5 s, 2,048 in 110 s,
10,000 stopped at 7 GB. The peak is now the page's: what it folds keeps some 7 kB a rank at
10,000 ranks (each merged row's ranks, each rank's bytes and weights).

Then the run section said by ranges, one row per file name (not per rank), run beside the test
suite (seconds not comparable):

 ranks  write s  page s  peak MB page peak page +MB  page MB  load ms | vs 256: s/rank   peak page peak   load
   256      4.6     1.8      148       148       43     1.68      691 |          1.00x  1.00x     1.00x  1.00x
  2048     25.7    11.2      161       161       50     1.10      553 |          0.69x  1.09x     1.09x  0.80x
 10000    159.7    74.0      232       232      103     1.12      409 |          0.88x  1.57x     1.57x  0.59x

The load times of one page vary by some 200 ms from run to run (the 256-rank page: 462, 535, 620,
726 ms in four runs).

2026-11-29 (the day's fifth session), 2 cores shared with three other sessions (load 5-6: the
seconds are not comparable, the peaks are), ``--ranks 256 10000``, after the report's folds kept
no more per rank than they must (issue 41: the 10,000-rank report within 1.5x of the 256-rank
one's peak; it was 1.70x, 191.7 / 112.8 MB, that morning): a weight's device grid past the drawn
size without a cell per device, each total's ranks as bits (``comm_totals.RankSet``), the ranks of
the wire, weights, memory and cost rows as runs (``rank_merge.Ranks``), the facts of the last 1,024
small communication groups only (``group_shapes.GroupLists``), one "no backward" sentence per
stage name, the activation rows read a chunk at a time:

 ranks  write s  page s  peak MB page peak page +MB  page MB  load ms | vs 256: s/rank   peak page peak   load
   256     11.4     5.2      114       114       41     1.88     2654 |          1.00x  1.00x     1.00x  1.00x
 10000    320.6   216.5      144       144       65     1.12     1025 |          0.72x  1.27x     1.27x  0.39x
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))
from bench_ranks import SOURCE, make_dump  # noqa: E402
from tests.report.conftest import CHROMIUM_FLAGS  # noqa: E402


def load_ms(page: Path) -> float:
    """Milliseconds from navigation start to the end of the ``load`` event, in a fresh headless
    Chromium."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    with tempfile.TemporaryDirectory(prefix="bench-report-profile-") as profile:
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        try:
            driver.set_page_load_timeout(600)
            driver.get(page.as_uri())
            timing = driver.execute_script("return performance.timing.toJSON()")
            return float(timing["loadEventEnd"] - timing["navigationStart"])
        finally:
            driver.quit()


#: Runs ``msinspect report`` in this process (``argv[3:]``) and writes, as it exits, to the file
#: ``argv[1]`` (JSON): its own peak resident set before the page is made (the analysis) and while
#: it is made (``/proc/self/clear_refs`` resets the peak between them), its resident set as the page
#: starts, and the seconds the page took (kB, :func:`memory.peak_kb`).
WRITE = """
import atexit, json, runpy, sys, time
sys.path.insert(0, sys.argv[2])
from memory import peak_kb
import msinspect.report.html as html

def rss_kb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))

found, make, out = {}, html.report_html, sys.argv[1]

def measured(*args, **kwargs):
    found["analysis_kb"], found["start_kb"] = peak_kb(), rss_kb()
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    start = time.perf_counter()
    try:
        return make(*args, **kwargs)
    finally:
        found["page_s"] = time.perf_counter() - start

html.report_html = measured
atexit.register(lambda: open(out, "w").write(json.dumps({**found, "page_kb": peak_kb()})))
sys.argv = ["msinspect"] + sys.argv[3:]
runpy.run_module("msinspect.cli", run_name="__main__")
"""


def write_report(root: Path, page: Path, env: dict, tmp: Path) -> dict:
    """``msinspect --no-cache report ROOT -o PAGE`` in a fresh process: ``seconds`` in all and
    ``page_s`` making the page; the main process's peak resident set in MB (the workers that
    read the ranks not counted): ``peak`` in all, ``page_peak`` while the page is made, and
    ``page_more`` above its resident set as the page starts."""
    measured = tmp / "measured.json"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", WRITE, str(measured), str(ROOT / "bench"), "--no-cache", "report",
                    str(root), "-o", str(page), "--overwrite"], check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    found = json.loads(measured.read_text())
    return {"seconds": seconds, "page_s": found["page_s"],
            "peak": max(found["analysis_kb"], found["page_kb"]) / 1024, "page_peak": found["page_kb"] / 1024,
            "page_more": (found["page_kb"] - found["start_kb"]) / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, nargs="+", default=[256, 2048])
    ap.add_argument("--keep", type=Path, default=None, help="where the dumps are made and kept (bench_ranks.py --keep)")
    ap.add_argument("--no-browser", action="store_true", help="do not load the pages in Chromium (no load ms)")
    args = ap.parse_args()
    browser = not args.no_browser and bool(shutil.which("chromedriver")) and bool(
        shutil.which("chromium") or shutil.which("chromium-browser"))
    if not browser:
        print("the pages are not loaded in a browser: load ms not measured", flush=True)
    env = {k: v for k, v in os.environ.items() if k != "MSINSPECT_SCHEDULER"}
    with tempfile.TemporaryDirectory(prefix="bench-report-ranks-") as tmp:
        tmp = Path(tmp)
        env["MSINSPECT_PARSE_CACHE_DIR"] = str(tmp / "cache")
        print(f"{'ranks':>6} {'write s':>8} {'page s':>7} {'peak MB':>8} {'page peak':>9} {'page +MB':>8} "
              f"{'page MB':>8} {'load ms':>8} | vs 256: {'s/rank':>6} {'peak':>6} {'page peak':>9} {'load':>6}")
        base = None
        for n in sorted(set(args.ranks) | {256}):
            root = make_dump(SOURCE, 0, n, (args.keep or tmp) / f"dump{n}")
            page = tmp / f"report{n}.html"
            m = write_report(root, page, env, tmp)
            size = page.stat().st_size / 1e6
            loaded = load_ms(page) if browser else math.nan
            base = base or (m["seconds"] / n, m["peak"], m["page_peak"], loaded)
            print(f"{n:>6} {m['seconds']:>8.1f} {m['page_s']:>7.1f} {m['peak']:>8.0f} {m['page_peak']:>9.0f} "
                  f"{m['page_more']:>8.0f} {size:>8.2f} {loaded:>8.0f} | {'':>7} {m['seconds'] / n / base[0]:>5.2f}x "
                  f"{m['peak'] / base[1]:>5.2f}x {m['page_peak'] / base[2]:>8.2f}x {loaded / base[3]:>5.2f}x", flush=True)


if __name__ == "__main__":
    main()
