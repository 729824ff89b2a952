"""What a follower's differing lines cost to compare: :data:`msinspect.analysis.engine.alike.VALUE`
splitting the lines of the zoo's runs, against the same values as the regex was first written
(each alternative led by an assertion; ``tests/analysis/test_alike.py`` holds the two to the same
splits), measured in the same run.

Usage: python bench/bench_values.py [--repeat R]

Machines are noisy: read the ratio, not the seconds.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from timing import best_of

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from msinspect.analysis.engine.alike import VALUE, lines_of  # noqa: E402
from tests.analysis.test_alike import _VALUE_AS_WRITTEN  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    lines = [line for path in sorted((ROOT / "fixtures" / "zoo").glob("*/rank_*/*.ir.gz"))
             for line in lines_of(path) or ()]
    first = re.compile(_VALUE_AS_WRITTEN)
    now = best_of(lambda: [VALUE.split(line) for line in lines], args.repeat)
    before = best_of(lambda: [first.split(line) for line in lines], args.repeat)
    print(f"{len(lines):,} lines of the zoo's runs, best of {args.repeat}")
    print(f"  as first written  {before:6.2f} s")
    print(f"  VALUE             {now:6.2f} s   {before / now:.1f}x faster")


if __name__ == "__main__":
    main()
