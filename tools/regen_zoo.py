"""Regenerate the model zoo in fixtures/zoo/ from its network scripts: ``make zoo``.

Every network of ``fixtures/zoo/zoo.toml`` runs into a new temporary run root:

- ``dryrun``: ``msinspect dryrun SCRIPT --ranks N --only RUN --keep-all-passes`` (MindSpore's real
  planner, compile only, on a CPU-only machine); every run rank must have written a
  step_parallel_end file (the dry run's own verdict is not used: it relies on the parser);
- ``cpu``: ``python SCRIPT`` for real on the CPU with ``MS_DEV_SAVE_GRAPHS=2``;
- ``expected_failure``: ``python SCRIPT`` in an empty folder; it must exit 0 (the script checks
  that the designed error came) and leave the file named by ``keep``.

The full output of each network (every IR file MindSpore wrote, its logs) is moved to
``--full DIR/<name>/`` as soon as the network has run, when ``--full`` is given (DIR/<name> must
not exist; keep DIR out of git), else deleted with the run root. The kept files are then scrubbed with the project's own
``msinspect scrub SRC DEST --stage ... --gzip`` into ``fixtures/zoo/<name>.new`` (a dry run's also
gets a run record ``config.json`` with its device count, which msinspect reads as the job's world
when only some ranks ran, and keeps MindSpore's own layout record beside each rank's IR, scrubbed:
``parameter_layout_K.json``, ``strategy_K.ckpt``, ``group_info_K.pb``); only when every
network ran and every scrub succeeded are the old ``fixtures/zoo/<name>`` folders replaced (git
keeps the old ones). It refuses to start while ``git status --porcelain`` shows uncommitted changes
in a folder it would replace, unless ``--force``.

``--manifest PATH`` reads another manifest of the same format (e.g. ``fixtures/ut/ut_a.toml``, the
ports of MindSpore's own parallel tests); its kept folders go beside it, ``<manifest folder>/<name>``.

Needs the train and dry-run extras (MindSpore 2.10) and ``msinspect setup-dryrun``; a network that
names more in zoo.toml's ``needs`` (MindFormers 2.0.0 for the networks 12 - 16) runs only where
those are usable: ``--install-extras`` installs them first (``tools/zoo_extras.py``; never needed by
msinspect or its tests). Slow: tens of minutes on two cores (the 124-block network alone compiles
for about 10 minutes); never part of CI.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import zoo_extras  # noqa: E402  (beside this file)
from regen_common import Failed, _shown, kept_bytes, records_in, refuse_uncommitted, replace_when_all_built  # noqa: E402  (beside this file)

REPO = Path(__file__).resolve().parents[1]
ZOO = REPO / "fixtures" / "zoo"
MANIFEST = ZOO / "zoo.toml"
MSINSPECT = [sys.executable, "-m", "msinspect.cli"]
MODES = ("dryrun", "cpu", "expected_failure")


@dataclass(frozen=True)
class Net:
    """One ``[[net]]`` of zoo.toml."""

    name: str
    script: Path
    mode: str
    ranks: int = 1
    run: str = "0"
    stages: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)
    keep: str | None = None
    spec: Path | None = None
    all_passes: bool = True
    timeout: float = 900.0
    args: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()

    def run_ranks(self) -> list[int]:
        """The ranks of ``run`` ("0-7", "0,31,63")."""
        ranks: set[int] = set()
        for part in self.run.split(","):
            lo, _, hi = part.strip().partition("-")
            ranks.update(range(int(lo), int(hi or lo) + 1))
        return sorted(ranks)


def load_manifest(path: Path = MANIFEST) -> list[Net]:
    """The networks of zoo.toml, checked."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    nets = []
    for raw in data.get("net", []):
        raw = dict(raw)
        if raw.get("mode") not in MODES:
            raise Failed(f"{path}: net {raw.get('name')!r}: mode must be one of {MODES}")
        raw["script"] = path.parent / raw["script"]
        if "spec" in raw:
            raw["spec"] = path.parent / raw["spec"]
        raw["stages"] = tuple(raw.get("stages", ()))
        raw["args"] = tuple(raw.get("args", ()))
        raw["needs"] = tuple(raw.get("needs", ()))
        unknown = sorted(set(raw["needs"]) - set(zoo_extras.EXTRAS))
        if unknown:
            raise Failed(f"{path}: net {raw.get('name')!r}: needs {unknown}: no such extra "
                         f"(tools/zoo_extras.py knows {sorted(zoo_extras.EXTRAS)})")
        nets.append(Net(**raw))
    return nets


def run(cmd: list, *, cwd: Path = REPO, env: dict | None = None, log: Path | None = None,
        timeout: float | None = None) -> int:
    """Run ``cmd``; its output goes to ``log`` (or the terminal). Returns the exit status."""
    print("+", " ".join(str(c) for c in cmd), flush=True)
    out = open(log, "w") if log else None
    try:
        return subprocess.call([str(c) for c in cmd], cwd=cwd, env=env, stdout=out,
                               stderr=subprocess.STDOUT if out else None, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failed(f"timed out after {timeout:g} s: {' '.join(str(c) for c in cmd)}") from None
    finally:
        if out:
            out.close()


def run_dryrun(net: Net, root: Path, jobs: int = 2) -> Path:
    """Dry-run the network, ``jobs`` ranks at a time; return the run folder (rank_N/, logs/)."""
    out_root = root / "out"
    cmd = [*MSINSPECT, "dryrun", net.script, "--ranks", net.ranks, "--only", net.run, "--jobs", jobs,
           "--out", out_root, "--timeout", net.timeout]
    if net.all_passes:
        cmd.append("--keep-all-passes")
    if net.args:
        cmd += ["--", *net.args]
    env = None
    if "mindformers" in net.needs:  # MindFormers logs into ./output/log unless told where
        env = dict(os.environ, LOCAL_DEFAULT_PATH=str(root / "mindformers_output"))
    run(cmd, env=env, log=root / "dryrun.log")  # its verdict uses the parser: judge by the files instead
    runs = sorted(p for p in out_root.iterdir() if p.is_dir()) if out_root.is_dir() else []
    if len(runs) != 1:
        raise Failed(f"{net.name}: expected one run folder under {out_root}, found {len(runs)}")
    missing = [r for r in net.run_ranks()
               if not any((runs[0] / f"rank_{r}").glob("*step_parallel_end*.ir"))]
    if missing:
        raise Failed(f"{net.name}: no step_parallel_end written by rank(s) {missing}; "
                     f"see {runs[0] / 'logs'}")
    return runs[0]


def run_python(net: Net, root: Path) -> Path:
    """Run a stand-alone script in ``root/work``; return that folder."""
    work = root / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MS_DEV_")}
    if net.mode == "cpu":
        env.update(MS_DEV_SAVE_GRAPHS="2", MS_DEV_SAVE_GRAPHS_PATH=str(work / "ir"))
    code = run([sys.executable, net.script, *net.args], cwd=work, env=env, log=root / "run.log",
               timeout=net.timeout)
    if code != 0:
        raise Failed(f"{net.name}: exit status {code}; see {root / 'run.log'}")
    if net.mode == "expected_failure" and not (work / net.keep).is_file():
        raise Failed(f"{net.name}: {net.keep} was not written; see {root / 'run.log'}")
    return work


def pick_files(net: Net, ir_dir: Path, staging: Path) -> None:
    """Copy the first file (by name) matching each family of ``net.files`` into ``staging``."""
    names = sorted(p.name for p in ir_dir.iterdir() if p.is_file())
    staging.mkdir(parents=True)
    for family, pattern in net.files.items():
        hits = [n for n in names if re.search(pattern, n)]
        if not hits:
            raise Failed(f"{net.name}: no file of family {family} ({pattern}) in {ir_dir}")
        shutil.copy2(ir_dir / hits[0], staging / hits[0])


def scrub(net: Net, out: Path, root: Path, folder: Path = ZOO) -> Path:
    """Scrub the kept files of a run into ``folder/<name>.new`` (``fixtures/zoo/`` by default);
    return that folder."""
    dest = folder / f"{net.name}.new"
    if dest.exists():  # left by an earlier attempt that failed
        shutil.rmtree(dest)
    if net.mode == "dryrun":
        run_or_fail([*MSINSPECT, "scrub", out, dest, *[a for s in net.stages for a in ("--stage", s)], "--gzip"])
        from msinspect.stages import stage_of

        for rank in net.run_ranks():
            rank_dir = dest / f"rank_{rank}"
            stages = sorted({stage_of(p) for p in rank_dir.iterdir()}) if rank_dir.is_dir() else []
            if stages != sorted(net.stages):
                raise Failed(f"{net.name}: rank_{rank} has stages {stages}, expected {sorted(net.stages)}")
            for record in records_in(out / f"rank_{rank}"):  # MindSpore's own record, beside the IR
                (rank_dir / record.name).write_bytes(kept_bytes(record))
        write_run_record(net, dest)
    elif net.mode == "cpu":
        staging = root / "kept"
        pick_files(net, out / "ir", staging)
        run_or_fail([*MSINSPECT, "scrub", staging, dest, "--gzip"])
    else:
        run_or_fail([*MSINSPECT, "scrub", out / net.keep, dest, "--gzip"])
    return dest


def write_run_record(net: Net, dest: Path) -> None:
    """``config.json`` beside a dry run's kept ranks: the run's device count (``ranks``), which
    msinspect reads as the job's world (its world group) when only some ranks were run."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        mindspore = version("mindspore")
    except PackageNotFoundError:
        mindspore = None
    record = {"mode": "dryrun", "run": "dry_run", "ranks": net.ranks, "run_ranks": net.run_ranks(),
              "script": Path(os.path.relpath(net.script, dest.parent)).as_posix(), "mindspore": mindspore,
              "all_passes": net.all_passes, "kept_stages": list(net.stages)}
    for extra in net.needs:  # the version each extra ran with, e.g. "mindformers": "2.0.0"
        try:
            record[extra] = version(extra)
        except PackageNotFoundError:
            record[extra] = None
    (dest / "config.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def prepare_extras(nets: list[Net], *, install: bool) -> None:
    """Make sure every extra the ``nets`` name in ``needs`` is usable here: install it when
    ``install``, else :class:`Failed` saying what is missing and how to get it."""
    for extra in sorted({e for n in nets for e in n.needs}):
        problem = zoo_extras.problem(extra)
        if problem is None:
            continue
        users = ", ".join(n.name for n in nets if extra in n.needs)
        if not install:
            raise Failed(f"{users} need(s) {extra}: {problem}; run with --install-extras "
                         f"(or: python tools/zoo_extras.py {extra})")
        print(f"{users} need(s) {extra}: {problem}; installing it", flush=True)
        zoo_extras.install(extra)


def run_or_fail(cmd: list) -> None:
    code = run(cmd)
    if code != 0:
        raise Failed(f"exit status {code}: {' '.join(str(c) for c in cmd)}")


def keep_full(output: Path, root: Path, dest: Path) -> Path:
    """Move a network's whole output to ``dest`` (a dry run's rank_N/ and logs/, a script's working
    folder with ``ir/`` or ``rank_0/om/``) with the run's own log beside it; return ``dest``."""
    if dest.exists():
        raise Failed(f"{dest} already exists; --full never overwrites")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(output), dest)
    for log in ("dryrun.log", "run.log"):
        if (root / log).is_file():
            shutil.move(str(root / log), dest / log)
    return dest


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", type=Path, default=None,
                        help="move every network's whole output (all IR files, logs) to FULL/<name>/ "
                             "(must not exist); default: deleted")
    parser.add_argument("--manifest", type=Path, default=MANIFEST, metavar="PATH",
                        help="the manifest to read (default: fixtures/zoo/zoo.toml); the kept folders go "
                             "beside it, <manifest folder>/<name>")
    parser.add_argument("--jobs", type=int, default=2, metavar="N",
                        help="ranks a dry run compiles at a time (default 2)")
    parser.add_argument("--only", action="append", default=None, metavar="NAME",
                        help="regenerate only this network (repeatable; default: all)")
    parser.add_argument("--force", action="store_true",
                        help="run even though the folders to replace have uncommitted changes")
    parser.add_argument("--keep-runs", action="store_true",
                        help="keep the temporary run root (it is always kept when a step fails)")
    parser.add_argument("--install-extras", action="store_true",
                        help="install what the networks name in `needs` (e.g. MindFormers 2.0.0) into this "
                             "environment when it is missing (tools/zoo_extras.py)")
    args = parser.parse_args(argv)
    folder = args.manifest.resolve().parent
    if not args.manifest.is_file():
        print(f"error: {args.manifest}: no such manifest", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("error: --jobs must be at least 1", file=sys.stderr)
        return 2

    try:
        nets = load_manifest(args.manifest)
        known = {n.name for n in nets}
        unknown = sorted(set(args.only or ()) - known)
        if unknown:
            print(f"error: unknown network(s) {unknown}; known: {sorted(known)}", file=sys.stderr)
            return 2
        nets = [n for n in nets if not args.only or n.name in args.only]
        if args.full is not None:
            taken = [str(args.full / n.name) for n in nets if (args.full / n.name).exists()]
            if taken:
                print(f"error: {', '.join(taken)} already exist(s); --full never overwrites",
                      file=sys.stderr)
                return 2
        if not args.force:
            refuse_uncommitted([folder / n.name for n in nets], f"{_shown(folder)}/ (the folders to replace)")
        prepare_extras(nets, install=args.install_extras)
    except (Failed, zoo_extras.ExtraError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    by_name = {n.name: n for n in nets}
    timings: dict[str, float] = {}

    def build(name: str, runs_root: Path) -> Path:
        net = by_name[name]
        root = runs_root / name
        root.mkdir()
        start = time.monotonic()
        output = run_dryrun(net, root, args.jobs) if net.mode == "dryrun" else run_python(net, root)
        timings[name] = time.monotonic() - start
        if args.full is not None:  # at once, network by network: the rest may take long
            output = keep_full(output, root, args.full / name)
            print(f"full output: {output}", flush=True)
        return scrub(net, output, root, folder)

    if not replace_when_all_built(folder, list(by_name), build, prefix="msinspect-zoo-", keep_runs=args.keep_runs):
        return 1
    print(f"\n{'network':32} {'run s':>7} {'kept files':>10} {'kept KB':>8}")
    for net in nets:
        kept = [p for p in (folder / net.name).rglob("*") if p.is_file()]
        print(f"{net.name:32} {timings[net.name]:7.0f} {len(kept):10} {size_of(folder / net.name) / 1024:8.0f}")
    print(f"done. Review with `git status {_shown(folder)}/`, then run the tests that read it "
          f"(tests/zoo for the zoo); `git checkout -- {_shown(folder)}/` restores the committed folders.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
