"""Many ranks of a real transformer: one rank's file made into N ranks that differ the way real
ranks differ, then ``msinspect --no-cache summary --json --jobs 1`` over them in a fresh process,
against a gunzip + regex line scan of the same files measured in the same run.

Usage: python bench/bench_ranks.py [--source FILE] [--ranks 8 64 ...] [--10k] [--keep DIR] [--jobs J]
       [--repeat R] [--also CHECKOUT] [--world W] [--contradict] [--shuffle]

``--shuffle`` (issue 40, item 12): per size, ranks made from a MindFormers LLaMA rank (default zoo
12's rank 0 ``step_parallel_end``, 2.0 MB) that vary as its real ranks do (:func:`shuffled_names`:
the ``$``-parts of every debug name in the rank's own order, as zoo 12's rank 5 and 16's ranks
print them, and a node count stated 0 - 3 higher, as zoo 16's do) against the same ranks varied in
values only, each against a line scan of its own files, in the same run. 2026-11-29, 2 cores
shared with three other sessions (load 6: read the CPU column), ``--jobs 1``:
``--ranks 64 --also`` a checkout of 05852d6 (before): shuffled names 16.6x the scan's CPU before
(each rank read in full, 0.57 s a rank), 2.4x after (values only: 2.5x before, 2.3x after);
``--ranks 512`` (after only: before, each shuffled rank is read in full, some 4.5 minutes): 1.2x the
scan's CPU shuffled, 0.7x in values only (the exemplar's full read spread over more ranks; the scan,
one regex a line, costs 24 ms a rank), peak 78 MB (73 MB at 64 ranks: flat).

``--contradict`` (issue 40, item 11): per size, ranks whose group names hash to no rank list and
whose lists are the source rank's (:func:`vary`'s ``contradict``: ranks 1-3 state a data-parallel
list 0-4 that does not hold them, ranks 4 on every list) against the same ranks made as usual,
both read with ``--world W``; the ratio is the cost of searching for those names' lists. 2026-11-29,
2 busy cores, ``--ranks 32 --world 2048 --repeat 2 --also`` a checkout of 0d091cb (before):
before 1.23 s usual, 21.91 s contradicting (17.8x: each rank's rows searched the 2,048-rank
world's strided lists again, some 4,000 hashed a row); after 1.31 s and 1.52 s (1.2x: a name is
searched once, by the first rank that cannot use its stated list, and what it found, a list or
"cannot tell", is every rank's: ``comm_groups.StridedSearch``).

The source (default: ``fixtures/zoo/01_semi_auto_tp4dp2`` rank 0's ``step_parallel_end``, a
TP4 x DP2 transformer, 0.39 MB of text) is written gzipped as rank 0 .. N-1 of a temporary dump
root (``--keep DIR``: kept there and reused by the next run), each copy its own rank's:

- its communication groups: every group the source names with its rank list (``group:
  "4-6301172352641561019" ... group_ranks: "0-1-2-3"``) becomes the group of the same shape
  (size, stride) that holds the copy's rank (``4-7``), named as MindSpore names it (its size and
  the hash of its rank list: :func:`msinspect.mindspore.comm_groups.mindspore_name`) wherever the
  name occurs (``related_fusion_key`` too); the world group states N devices;
- its pointers (``subgraph instance: ... : 0x56098f8f84c0``) and its ``compile_phase`` line.

What is measured, per size, in a fresh ``msinspect`` process (one process: ``--jobs 1``):
seconds (wall and CPU, user + system, of the child), seconds per rank, the process's own peak
RSS (``VmHWM`` at its exit: bench/memory.py says why not ``ru_maxrss``), and the ratio of its
seconds to the line scan's (each file gunzipped and its lines matched by one regex, in this
process, wall and CPU). Goals (issue 28): the main process' peak at 2,048 (and 10,000) ranks within
1.3x of that at 256; seconds per rank at most 3x the line scan. Machines are noisy: read the ratios,
measured back to back in one run, not the seconds.

Measured here (2 cores, 2026-11-26, the day's fourth session), with ``--also`` a checkout of
4704661 (the session's start). "this" is the code after: a follower's communication rows made of
the part the ranks of its program share and its own groups (``comm._shared_row``), its text
compared whole between the lines followers differ in (``alike.Exemplar.differing_text``), its
derived rows made only when read, its operator rows taken whole where no changed node changes
them (``operators.operator_reads``). Up to 2,048 ranks with ``--repeat 3`` (the best of three runs
taken in turn: single runs of the same code moved by a fifth, 2.5x - 3.0x at 2,048 ranks in one
process); 10,000 ranks once. ``--jobs 1`` (one process), then ``--jobs 2`` (the default on these
two cores: two workers read, the main process gathers; its peak is the main process'):

     jobs  code  ranks  seconds  s/rank  scan s  x scan x scan CPU  peak MB  vs 256
        1  this    256      1.2   0.005    0.34    3.7x       3.7x       55   1.00x
        1  also    256      1.7   0.007    0.34    5.0x       5.0x       55   1.00x
        1  this   1024      3.7   0.004    1.39    2.7x       2.7x       57   1.04x
        1  also   1024      5.7   0.006    1.39    4.1x       4.1x       57   1.03x
        1  this   2048      7.1   0.003    2.73    2.6x       2.6x       58   1.06x
        1  also   2048     11.6   0.006    2.73    4.2x       4.2x       58   1.05x
        1  this  10000     53.8   0.005   19.14    2.8x       3.2x       65   1.18x
        1  also  10000     85.7   0.009   19.14    4.5x       5.1x       65   1.18x
        2  this    256      1.0   0.004    0.37    2.6x       4.5x       26   1.00x
        2  also    256      1.3   0.005    0.37    3.6x       6.4x       26   1.00x
        2  this   1024      2.4   0.002    1.49    1.6x       2.9x       26   1.02x
        2  also   1024      3.8   0.004    1.49    2.5x       4.8x       26   1.02x
        2  this   2048      4.5   0.002    2.92    1.5x       2.8x       27   1.05x
        2  also   2048      7.1   0.003    2.92    2.4x       4.6x       27   1.04x
        2  this  10000     37.6   0.004   17.19    2.2x       4.2x       31   1.21x
        2  also  10000     51.4   0.005   17.19    3.0x       5.9x       31   1.20x

Issue 28's goals: seconds per rank at 2,048 ranks at most 3x the line scan (2.6x in one process,
1.5x with the two workers; 4.2x and 2.4x at the session's start), and the main process' peak at
10,000 ranks within 1.3x of its 256-rank peak (1.18x in one process, 1.21x with the two workers).
What the main process holds for each rank: its RankDump (the parent folder is shared, the folder's
name made from the rank number) and its plan entry (about 170 bytes with the rank's int), and
some 30 bytes of columns; the groups the ranks name wait in the spool unless one is to be filled.
The 256-rank peak of the pool's main process, 26 MB, is 22 MB of imports. Where a follower's time
goes now (one process, 2,048 ranks, each step timed in place, which slows it: 3.2 ms a rank read
and 0.7 ms spooling its rows): its analysis 1.0 ms (its communication rows 0.5), reading its
changed nodes again 0.6 ms, gunzip and decoding 0.6 ms.
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from msinspect.mindspore.comm_groups import mindspore_name  # noqa: E402 (the same names MindSpore gives)

SOURCE = ROOT / "fixtures" / "zoo" / "01_semi_auto_tp4dp2" / "rank_0" / "step_parallel_end_0020.ir.gz"
#: ``--shuffle``'s default source: a MindFormers LLaMA rank (TP8), 2.0 MB of text.
MF_SOURCE = ROOT / "fixtures" / "zoo" / "12_mf_llama_tp8" / "rank_0" / "step_parallel_end_0020.ir.gz"
NODE = re.compile(r"^\s+(?:%\d+\(|Return\()")  # bench_parse.py's line scan

#: What names a rank in the text: a group's name (``2-16453000547691086251``, in ``group: "..."``
#: and inside ``related_fusion_key``), a group's rank list, a pointer, the compile phase.
_VARYING = re.compile(r'(?P<group>\b\d+-\d{8,}\b)|group_ranks: "(?P<ranks>\d+(?:-\d+)*)"'
                      r'|(?P<pointer>\b0x[0-9a-f]{8,}\b)|compile_phase: (?P<phase>\S+)')
_GROUP = re.compile(r'group: "(\d+-\d{8,})".*?group_ranks: "(\d+(?:-\d+)*)"')
_WORLD_DEVICES = re.compile(r'(group: "(?:nccl|hccl)_world_group".*?dev_num: I64\()(\d+)(\))')


def shaped_like(source: list[int], of: int, rank: int, world: int) -> list[int]:
    """The group holding ``rank`` of the same shape as ``source`` (which holds ``of``): an evenly
    strided list of the same size and stride, aligned as MindSpore's device matrix aligns it;
    any other list shifted by ``rank - of`` (modulo ``world``)."""
    size = len(source)
    stride = source[1] - source[0] if size > 1 else 1
    if size > 1 and source == [source[0] + i * stride for i in range(size)] and stride > 0:
        start = rank - ((rank // stride) % size) * stride
        if start >= 0 and start + (size - 1) * stride < world:
            return [start + i * stride for i in range(size)]
    return sorted((m - of + rank) % world for m in source)


def vary(text: str, of: int, rank: int, world: int, contradict: bool = False, shuffle: bool = False) -> str:
    """The text of rank ``of`` made rank ``rank``'s of a ``world``-rank job (see the docstring).
    ``contradict``: each group keeps the rank list of rank ``of`` (which need not hold ``rank``)
    under a name of the MindSpore form that is the hash of no rank list (the hash of its own list
    plus one): names that contradict their stated ranks, the search of issue 40's item 11.
    ``shuffle``: also as ranks of one MindFormers job differ (issue 40, item 12; zoo 12 and 16):
    the ``$``-joined parts of each node's debug name in an order of the rank's own
    (:func:`shuffled_names`), and a node count stated a few nodes off the source's."""
    groups = {name: [int(m) for m in ranks.split("-")] for name, ranks in _GROUP.findall(text)}
    names, lists = {}, {}
    for name, members in groups.items():
        mine = shaped_like(members, of, rank, world)
        names[name] = mindspore_name(mine)
        if contradict:
            size, _, hashed = names[name].partition("-")
            names[name] = f"{size}-{(int(hashed) + 1) % (1 << 64)}"
            mine = members
        lists["-".join(map(str, members))] = "-".join(map(str, mine))
    rng = hashlib.sha256(f"rank {rank}".encode()).digest()

    def swap(m: re.Match) -> str:
        if m["group"]:
            return names.get(m["group"], m["group"])
        if m["ranks"]:
            return f'group_ranks: "{lists.get(m["ranks"], m["ranks"])}"'
        if m["pointer"]:
            pointer = int(m["pointer"], 16) ^ (int.from_bytes(rng[:4], "big") << 4)
            return f"0x{pointer:0{len(m['pointer']) - 2}x}"
        head, _, tail = m["phase"].partition(".")
        return f"compile_phase: {head}.{int.from_bytes(rng[4:12], 'big') >> 1}.{int.from_bytes(rng[12:18], 'big')}.0"

    text = _VARYING.sub(swap, text)
    if shuffle:
        text = shuffled_names(text, rank)
    return _WORLD_DEVICES.sub(lambda m: f"{m[1]}{world}{m[3]}", text)


#: A node's debug name of ``$``-joined parts (``%141(CNode_3630$overflow$flag_sum$overflow$cond)``),
#: and the node count a 2.10 file states (``Total number of nodes: 2219``).
_DOLLAR_NAME = re.compile(r"(?<=\()([^()$\s]+)((?:\$[^()$\s]+)+)(?=\) = )")
_STATED_NODES = re.compile(r"^(Total number of nodes: )(\d+)$", re.M)


def shuffled_names(text: str, rank: int) -> str:
    """``text`` with the ``$``-parts of each node's debug name in an order drawn for ``rank`` (as
    MindSpore prints them: ``CNode_3645$overflow$flag_sum$cond$overflow`` on one rank,
    ``CNode_3645$overflow$overflow$flag_sum$cond`` on another), and its ``Total number of nodes``
    0 - 3 more (zoo 16's ranks state 2219, 2222 and 2221 for files of the same lines)."""
    import random

    rng = random.Random(f"names of rank {rank}")

    def shuffle(m: re.Match) -> str:
        parts = m[2].split("$")[1:]
        rng.shuffle(parts)
        return m[1] + "".join("$" + p for p in parts)

    text = _DOLLAR_NAME.sub(shuffle, text)
    return _STATED_NODES.sub(lambda m: f"{m[1]}{int(m[2]) + rng.randrange(4)}", text)


def make_dump(source: Path, of: int, ranks: int, into: Path, world: int | None = None,
              contradict: bool = False, shuffle: bool = False) -> Path:
    """``into``: ``rank_0`` .. ``rank_{ranks-1}``, each holding the source file made its own
    (:func:`vary`, a job of ``world`` ranks, by default ``ranks``), gzipped; kept as it is when a
    finished one is there already."""
    world = world or ranks
    done = into / ".complete"
    if done.exists():
        return into
    with gzip.open(source, "rt", encoding="utf-8") if source.name.endswith(".gz") else open(source) as f:
        text = f.read()
    name = source.name if source.name.endswith(".gz") else source.name + ".gz"
    for r in range(ranks):
        folder = into / f"rank_{r}"
        folder.mkdir(parents=True, exist_ok=True)
        with gzip.open(folder / name, "wt", encoding="utf-8", compresslevel=6) as out:
            out.write(vary(text, of, r, world, contradict, shuffle))
    done.touch()
    return into


def line_scan(root: Path) -> tuple[float, float, int]:
    """Gunzip every IR file under ``root`` and count its node lines with one regex: (wall, CPU
    seconds, nodes)."""
    wall, cpu = time.perf_counter(), time.process_time()
    nodes = 0
    for path in sorted(root.glob("rank_*/*.ir.gz")):
        with gzip.open(path, "rb") as f:
            text = f.read().decode("utf-8")
        nodes += sum(1 for line in text.splitlines() if NODE.match(line))
    return time.perf_counter() - wall, time.process_time() - cpu, nodes


#: Run in the child: msinspect's command line, then its own peak RSS (kB) written at exit.
_CHILD = """
import atexit, sys
sys.path.insert(0, {bench!r})
from memory import peak_kb
atexit.register(lambda: open({peak!r}, "w").write(str(peak_kb())))
sys.argv = ["msinspect"] + {args!r}
from msinspect.cli import run
run()
"""


def measure(root: Path, jobs: int, env: dict, scratch: Path, code_root: Path = ROOT, world: int | None = None) -> dict:
    """``msinspect --no-cache summary --json --jobs J ROOT`` in a fresh process (msinspect imported
    from ``code_root``; ``--world`` where given): wall and CPU seconds, its own peak RSS in MB, the
    ranks its JSON holds."""
    peak = scratch / "peak"
    args = ["--no-cache", "summary", "--json", "--jobs", str(jobs), str(root)] + (["--world", str(world)] if world else [])
    code = _CHILD.format(bench=str(ROOT / "bench"), peak=str(peak), args=args)
    start = time.perf_counter()
    with open(scratch / "stderr", "wb") as err:
        child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=err, cwd=scratch,
                                 env={**env, "PYTHONPATH": os.pathsep.join([str(code_root), env.get("PYTHONPATH", "")])})
        # the JSON read as it comes, never whole: each summary row lists its stage's ranks, so
        # the text grows as the square of the ranks (10,000 ranks: some 1 GB)
        ranks, groups = 0, set()
        for line in child.stdout:
            if line == b"  {\n":
                ranks += 1
            elif line.startswith(b'    "rank_group": '):
                groups.add(line)
        child.stdout.close()
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{root}: msinspect failed ({child.returncode}):\n"
                         f"{(scratch / 'stderr').read_text(errors='replace')[-3000:]}")
    return {"seconds": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": int(peak.read_text()) / 1024,
            "ranks": ranks, "groups": len(groups)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", type=Path, default=None,
                    help="the rank's IR file (.ir or .ir.gz; default zoo 01's rank 0, with --shuffle zoo 12's)")
    ap.add_argument("--of", type=int, default=0, help="the source file's rank (default 0)")
    ap.add_argument("--ranks", type=int, nargs="+", default=[8, 64, 256, 1024, 2048])
    ap.add_argument("--10k", dest="ten_k", action="store_true", help="also 10,000 ranks")
    ap.add_argument("--jobs", type=int, default=1, help="msinspect's --jobs (default 1: the main process only)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the made dumps here and reuse them")
    ap.add_argument("--repeat", type=int, default=1, help="each size's scan and runs this many times, in turn; "
                                                          "the best seconds of each (peak: the highest)")
    ap.add_argument("--also", type=Path, default=None, metavar="CHECKOUT",
                    help="also measure the msinspect of this other checkout (an older commit: git archive "
                         "COMMIT msinspect | tar -x -C DIR), each size back to back with this one")
    ap.add_argument("--world", type=int, default=None, help="the job's size (default: the ranks made); "
                                                             "given to msinspect as --world")
    ap.add_argument("--contradict", action="store_true",
                    help="per size, ranks whose group names hash to no list and whose lists are rank 0's "
                         "(vary's contradict) against the same ranks made as usual, in the same run")
    ap.add_argument("--shuffle", action="store_true",
                    help="per size, ranks whose debug names' $-parts are in an order of their own and whose "
                         "node counts differ (vary's shuffle) against the same ranks made as usual, each "
                         "against its line scan, in the same run")
    args = ap.parse_args()
    args.source = args.source or (MF_SOURCE if args.shuffle else SOURCE)
    if args.contradict:
        return contradicting(args)
    if args.shuffle:
        return shuffling(args)
    sizes = args.ranks + ([10_000] if args.ten_k and 10_000 not in args.ranks else [])
    env = dict(os.environ)
    env.pop("MSINSPECT_SCHEDULER", None)
    with tempfile.TemporaryDirectory(prefix="bench-ranks-") as tmp:
        tmp = Path(tmp)
        env["MSINSPECT_PARSE_CACHE_DIR"] = str(tmp / "cache")  # --no-cache: nothing read or written there
        dumps = args.keep or tmp
        size = len(gzip.decompress(args.source.read_bytes())) if args.source.name.endswith(".gz") \
            else args.source.stat().st_size
        print(f"source: {args.source.relative_to(ROOT) if args.source.is_relative_to(ROOT) else args.source} "
              f"({size / 1e6:.2f} MB of text); cores: {os.cpu_count()}; msinspect --no-cache summary --json "
              f"--jobs {args.jobs}")
        print(f"{'code':>5} {'ranks':>6} {'seconds':>8} {'s/rank':>7} {'scan s':>7} {'x scan':>7} {'x scan CPU':>10} "
              f"{'peak MB':>8} {'vs 256':>7} {'groups':>6}")
        codes = [("this", ROOT)] + ([("also", args.also.resolve())] if args.also else [])
        at_256: dict[str, float] = {}
        for n in sizes:
            root = make_dump(args.source, args.of, n, dumps / f"dump{n}")
            scans, runs = [], {code: [] for code, _ in codes}
            for _ in range(args.repeat):  # in turn: each repeat sees the machine as the others of it do
                scans.append(line_scan(root))
                for code, code_root in codes:
                    runs[code].append(measure(root, args.jobs, env, tmp, code_root))
            scan_wall, scan_cpu = min(s[0] for s in scans), min(s[1] for s in scans)
            for code, _ in codes:
                got = {"seconds": min(r["seconds"] for r in runs[code]), "cpu": min(r["cpu"] for r in runs[code]),
                       "peak_mb": max(r["peak_mb"] for r in runs[code]), "ranks": runs[code][0]["ranks"],
                       "groups": runs[code][0]["groups"]}
                if got["ranks"] != n:
                    raise SystemExit(f"{n} ranks made, {got['ranks']} in the summary")
                if n == 256:
                    at_256[code] = got["peak_mb"]
                vs = f"{got['peak_mb'] / at_256[code]:6.2f}x" if code in at_256 else f"{'-':>7}"
                print(f"{code:>5} {n:>6} {got['seconds']:>8.1f} {got['seconds'] / n:>7.3f} {scan_wall:>7.2f} "
                      f"{got['seconds'] / scan_wall:>6.1f}x {got['cpu'] / scan_cpu:>9.1f}x {got['peak_mb']:>8.0f} "
                      f"{vs} {got['groups']:>6}", flush=True)


def contradicting(args) -> None:
    """``--contradict``: per size and code, the seconds of the ranks whose group names contradict
    their lists, and their ratio to the same ranks made as usual (the baseline), measured in turn."""
    env = dict(os.environ)
    env.pop("MSINSPECT_SCHEDULER", None)
    codes = [("this", ROOT)] + ([("also", args.also.resolve())] if args.also else [])
    print(f"msinspect --no-cache summary --json --jobs {args.jobs} --world {args.world or 'RANKS'}")
    print(f"{'code':>5} {'ranks':>6} {'usual s':>8} {'contra s':>9} {'ratio':>6}")
    with tempfile.TemporaryDirectory(prefix="bench-ranks-") as tmp:
        tmp = Path(tmp)
        env["MSINSPECT_PARSE_CACHE_DIR"] = str(tmp / "cache")
        dumps = args.keep or tmp
        for n in args.ranks:
            world = args.world or n
            usual = make_dump(args.source, args.of, n, dumps / f"dump{n}w{world}", world)
            contra = make_dump(args.source, args.of, n, dumps / f"dump{n}w{world}c", world, contradict=True)
            runs = {(code, kind): [] for code, _ in codes for kind in ("usual", "contra")}
            for _ in range(args.repeat):
                for code, code_root in codes:
                    for kind, root in (("usual", usual), ("contra", contra)):
                        runs[code, kind].append(measure(root, args.jobs, env, tmp, code_root, world)["seconds"])
            for code, _ in codes:
                a, b = min(runs[code, "usual"]), min(runs[code, "contra"])
                print(f"{code:>5} {n:>6} {a:>8.2f} {b:>9.2f} {b / a:>5.1f}x", flush=True)


def shuffling(args) -> None:
    """``--shuffle``: per size, the seconds of ranks that differ as real MindFormers ranks do (the
    ``$``-parts of names in their own order, a few more nodes stated) and of the same ranks made
    as usual (values only), each against a line scan of its own files, measured in turn."""
    env = dict(os.environ)
    env.pop("MSINSPECT_SCHEDULER", None)
    codes = [("this", ROOT)] + ([("also", args.also.resolve())] if args.also else [])
    print(f"source: {args.source.relative_to(ROOT) if args.source.is_relative_to(ROOT) else args.source}; "
          f"msinspect --no-cache summary --json --jobs {args.jobs}")
    print(f"{'code':>5} {'ranks':>6} {'ranks vary in':>14} {'seconds':>8} {'s/rank':>7} {'scan s':>7} "
          f"{'x scan':>7} {'x scan CPU':>10} {'peak MB':>8}")
    with tempfile.TemporaryDirectory(prefix="bench-ranks-") as tmp:
        tmp = Path(tmp)
        env["MSINSPECT_PARSE_CACHE_DIR"] = str(tmp / "cache")
        dumps = args.keep or tmp
        for n in args.ranks:
            made = {kind: make_dump(args.source, args.of, n, dumps / f"mf{n}{kind[0]}", shuffle=kind == "names")
                    for kind in ("values", "names")}
            scans = {kind: [] for kind in made}
            runs = {(code, kind): [] for code, _ in codes for kind in made}
            for _ in range(args.repeat):
                for kind, root in made.items():
                    scans[kind].append(line_scan(root))
                    for code, code_root in codes:
                        runs[code, kind].append(measure(root, args.jobs, env, tmp, code_root))
            for code, _ in codes:
                for kind in made:
                    got = runs[code, kind]
                    wall, cpu = min(r["seconds"] for r in got), min(r["cpu"] for r in got)
                    scan_wall, scan_cpu = min(s[0] for s in scans[kind]), min(s[1] for s in scans[kind])
                    if got[0]["ranks"] != n:
                        raise SystemExit(f"{n} ranks made, {got[0]['ranks']} in the summary")
                    label = "values" if kind == "values" else "values, names"
                    print(f"{code:>5} {n:>6} {label:>14} {wall:>8.1f} {wall / n:>7.3f} {scan_wall:>7.2f} "
                          f"{wall / scan_wall:>6.1f}x {cpu / scan_cpu:>9.1f}x "
                          f"{max(r['peak_mb'] for r in got):>8.0f}", flush=True)


if __name__ == "__main__":
    main()
