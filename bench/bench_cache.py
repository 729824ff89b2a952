"""The cache of parsed files: one command run twice on the same dump, with an empty cache and then
with the cache the first run filled, in fresh processes, against the same command with --no-cache.
Usage: python bench/bench_cache.py [DUMP] [--command summary] [--repeat N]

Prints seconds per run and the ratio cold / warm. Machines are noisy: read the ratio.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str], cache_dir: str) -> float:
    env = {**os.environ, "MSINSPECT_PARSE_CACHE_DIR": cache_dir}
    env.pop("MSINSPECT_NO_CACHE", None)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "msinspect", *args], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"msinspect {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump", nargs="?", default=str(ROOT / "fixtures" / "zoo" / "01_semi_auto_tp4dp2"))
    ap.add_argument("--command", default="summary")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    command = [args.command, args.dump, "--json"]
    colds, warms, offs = [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="bench-cache-") as cache_dir:
            colds.append(run(command, cache_dir))
            warms.append(run(command, cache_dir))
            offs.append(run(["--no-cache", *command], cache_dir))
    cold, warm, off = min(colds), min(warms), min(offs)
    print(f"msinspect {' '.join(command)}  (best of {args.repeat})")
    print(f"empty cache (parse and store): {cold:7.2f} s")
    print(f"--no-cache (parse only):       {off:7.2f} s")
    print(f"cache filled (read back):      {warm:7.2f} s   cold / warm = {cold / warm:.1f}x, "
          f"no-cache / warm = {off / warm:.1f}x")


if __name__ == "__main__":
    main()
