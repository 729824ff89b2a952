"""Parser throughput on the largest fixture, next to a plain line scan of the same text measured
in the same run, and peak memory. Usage: python bench/bench_parse.py [FILE] [--repeat N]

Prints MB/s for both and their ratio; machines are noisy, so compare ratios, not seconds.
"""
from __future__ import annotations

import argparse
import gzip
import re
import tracemalloc
from pathlib import Path

from timing import best_of

from msinspect.parser import parse_text

ROOT = Path(__file__).resolve().parent.parent
NODE = re.compile(r"^\s+(?:%\d+\(|Return\()")


def largest_fixture() -> Path:
    files = [p for p in (ROOT / "fixtures").rglob("*") if p.name.endswith((".ir", ".ir.gz"))]
    return max(files, key=lambda p: len(gzip.decompress(p.read_bytes())) if p.name.endswith(".gz") else p.stat().st_size)


def line_scan(text: str) -> int:
    """The baseline: split into lines and count node definitions with one regex."""
    return sum(1 for line in text.splitlines() if NODE.match(line))




def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("file", nargs="?", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    path = args.file or largest_fixture()
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8")
    mb = len(text.encode()) / 1e6
    parse_text(text, str(path))  # warm: grammar compiled once per process
    t_parse = best_of(lambda: parse_text(text, str(path)), args.repeat)
    t_scan = best_of(lambda: line_scan(text), args.repeat)
    tracemalloc.start()
    ir = parse_text(text, str(path))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"file: {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    print(f"size: {mb:.2f} MB, {text.count(chr(10))} lines, {ir.cnode_count} cnodes, {len(ir.subgraphs)} subgraphs")
    print(f"parse (Lark LALR + model):  {mb / t_parse:8.2f} MB/s  ({t_parse * 1e3:.0f} ms, best of {args.repeat})")
    print(f"line scan (baseline):       {mb / t_scan:8.2f} MB/s  ({t_scan * 1e3:.0f} ms)")
    print(f"ratio parse/scan time:      {t_parse / t_scan:8.1f}x")
    print(f"peak Python memory in parse: {peak / 1e6:.1f} MB ({peak / len(text.encode()):.1f}x the text)")


if __name__ == "__main__":
    main()
