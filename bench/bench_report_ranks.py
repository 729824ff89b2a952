"""The report of many ranks: bench_ranks.py's dumps (one real transformer rank made into N ranks
that differ as real ranks do), ``msinspect report`` of each in a fresh process, then the page
loaded in headless Chromium (Selenium, as tests/report/ do): its size, the seconds to write it,
and the milliseconds from navigation start to the ``load`` event, each against the 256-rank one
measured in the same run (issue 28: the report of 10,000 ranks should load in about the time of
256).

Usage: python bench/bench_report_ranks.py [--ranks 256 2048 ...] [--keep DIR]   (needs chromium and
chromium-driver; --keep DIR shares bench_ranks.py's --keep folder)

Measured here (2 cores, 2026-11-26): in the closing note of issue 28 and docs/performance.md.
"""
from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, nargs="+", default=[256, 2048])
    ap.add_argument("--keep", type=Path, default=None, help="where the dumps are made and kept (bench_ranks.py --keep)")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "MSINSPECT_SCHEDULER"}
    with tempfile.TemporaryDirectory(prefix="bench-report-ranks-") as tmp:
        tmp = Path(tmp)
        env["MSINSPECT_PARSE_CACHE_DIR"] = str(tmp / "cache")
        print(f"{'ranks':>6} {'report s':>9} {'MB':>7} {'load ms':>8} {'MB vs 256':>9} {'load vs 256':>11}")
        base = None
        for n in sorted(set(args.ranks) | {256}):
            root = make_dump(SOURCE, 0, n, (args.keep or tmp) / f"dump{n}")
            page = tmp / f"report{n}.html"
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "msinspect.cli", "--no-cache", "report", str(root), "-o", str(page),
                            "--overwrite"], check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            seconds = time.perf_counter() - start
            size = page.stat().st_size / 1e6
            loaded = load_ms(page)
            base = base or (size, loaded)
            print(f"{n:>6} {seconds:>9.1f} {size:>7.2f} {loaded:>8.0f} {size / base[0]:>8.2f}x {loaded / base[1]:>10.2f}x",
                  flush=True)


if __name__ == "__main__":
    main()
