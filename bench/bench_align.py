"""Aligning the operators of a later pass with a reference pass (``analysis/dataflow/align.py``): its time
next to building the two networkx graphs it walks (the baseline, measured in the same run), and
how many of the later file's strategy-carrying operators it paired.

Usage: python bench/bench_align.py REFERENCE.ir LATER.ir [--repeat R]

Default: zoo 01's rank 0, step_parallel_begin against validate. For a large case use the full
zoo output of 09_large_gpt (step_parallel_begin against step_parallel_end, 17,000 graph nodes).
Machines are noisy: compare the ratio, not the seconds.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from timing import best_of

from msinspect.analysis.dataflow.align import align
from msinspect.graph import node_id, to_networkx
from msinspect.parser import parse_file

ZOO01 = Path(__file__).resolve().parent.parent / "fixtures" / "zoo" / "01_semi_auto_tp4dp2" / "rank_0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reference", nargs="?", default=str(next(ZOO01.glob("step_parallel_begin*"))))
    parser.add_argument("later", nargs="?", default=str(next(ZOO01.glob("*validate*"))))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    reference, later = parse_file(args.reference), parse_file(args.later)
    keys = [node_id(n) for n in later.nodes() if n.strategy is not None]
    graphs = {}

    def build():
        graphs["ref"], graphs["later"] = to_networkx(reference), to_networkx(later)

    build_s = best_of(build, args.repeat)
    found = {}
    align_s = best_of(lambda: found.setdefault("a", align(graphs["ref"], graphs["later"], keys)), args.repeat)
    paired = len(found["a"].pairs)
    print(f"graph nodes: {graphs['ref'].number_of_nodes()} + {graphs['later'].number_of_nodes()}")
    print(f"build both graphs: {build_s:.3f} s (baseline)")
    print(f"align:             {align_s:.3f} s = {align_s / build_s:.2f} x the baseline")
    print(f"paired {paired} of {len(keys)} operators with a strategy; {len(keys) - paired} cannot be told")


if __name__ == "__main__":
    main()
