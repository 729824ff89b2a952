"""Regenerate ``fixtures/records/``: MindSpore's own records of its layouts, as msinspect's dry run
keeps them (``msinspect.dryrun.bootstrap``), for four small networks (about two minutes on two cores):

=========================  =============================================  ========================
folder                     network, run                                   kept
=========================  =============================================  ========================
``01_semi_auto_tp4dp2``    ``fixtures/zoo/nets/01_semi_auto_tp4dp2.py``,  each rank's
                           8 ranks, ranks 0 and 5                         ``parameter_layout_0.json``,
``04_pipeline_hsdp_        ``fixtures/zoo/nets/04_pipeline_hsdp_          ``strategy_0.ckpt``,
recompute``                recompute.py``, 8 ranks, ranks 0 and 5         ``group_info_0.pb``
``own_records``            ``tests/dryrun/nets/own_records.py``, 4        rank 0's layout and group
                           ranks, rank 0: an ``AutoParallel`` cell that   files; the script's own
                           saves its own JSON strategy checkpoint and     files under ``script/``
                           operator strategy file
``two_axes_layout``        ``tests/dryrun/nets/two_axes_layout.py``, 8    rank 0's files
                           ranks, rank 0: a weight dimension cut by two
                           device axes (``Layout``)
=========================  =============================================  ========================

The JSON files pass through msinspect's own scrubbing (``msinspect.scrub.scrub_text``: an
absolute path keeps its file name only); the protobuf files hold no path (checked). Like the
other regeneration tools it refuses while ``fixtures/records/`` has uncommitted changes
(``--force``), and replaces the old folders only when every run succeeded (``--keep-runs`` keeps
the runs).

``--dumps [DUMP ...]``: the same records beside the repository's existing dry-run dumps, which
were made before the dry run kept them. For each dump (default: every one; ``--group zoo|ut|training``
picks groups, a DUMP is a dump's folder name or path) the script that made it runs again with the
same settings through ``msinspect dryrun`` into a temporary folder: the same device count, the
kept ranks only, the same script arguments and per-rank timeout; then only the record files
(``parameter_layout_K.json``, ``strategy_K.ckpt``, ``group_info_K.pb``, every compile's) are copied
into the dump's ``rank_N/`` folders. Where the settings come from:

* the dry-run networks of ``fixtures/zoo/zoo.toml`` (``fixtures/zoo/NAME/``): the manifest's
  ``ranks``, ``run``, ``args``, ``timeout`` and ``needs``, which must agree with the dump's run
  record ``config.json`` (``ranks``, ``run_ranks``);
* the ports of MindSpore's own parallel tests (``fixtures/ut/NAME/``, manifests
  ``fixtures/ut/ut_*.toml``): the same, the run record's ``ranks`` / ``run_ranks`` first;
* the training jobs' dry-run fixtures (``fixtures/sharding_propagation_dryrun_8rank``,
  ``fixtures/recursive_pipeline_dryrun_8rank``, ``tools/regen_fixtures.py``): the job's script
  with the arguments ``msinspect train MODE --ranks 8`` gives it (the seed's epochs and batch,
  ``--data`` the cached MNIST subset), run in the jobs' folder, every rank.

The IR files are never touched: the record files are written under new names only (a check of
every other file's bytes before and after says so). A dump whose rank folders already hold a
record file is left alone unless ``--force``, which first removes those record files (and only
those). Nothing is copied unless every kept rank wrote records. The JSON files pass through
``scrub_text`` and are checked for absolute paths again; a protobuf file that holds one is
refused. Per dump it says what it did, the weights each rank's record holds and how they compare
with the parameters of the rank's step_parallel_end IR; ``--log FILE`` appends the times.
Extras a zoo network ``needs`` (MindFormers) must be installed (``--install-extras``).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from regen_common import DRYRUN_RECORD, REPO, Failed, kept_bytes, records_in, refuse_uncommitted, replace_when_all_built


RECORDS = REPO / "fixtures" / "records"
MSINSPECT = [sys.executable, "-m", "msinspect.cli"]
NETS = {
    "01_semi_auto_tp4dp2": (REPO / "fixtures/zoo/nets/01_semi_auto_tp4dp2.py", 8, "0,5", False),
    "04_pipeline_hsdp_recompute": (REPO / "fixtures/zoo/nets/04_pipeline_hsdp_recompute.py", 8, "0,5", False),
    "own_records": (REPO / "tests/dryrun/nets/own_records.py", 4, "0", True),
    "two_axes_layout": (REPO / "tests/dryrun/nets/two_axes_layout.py", 8, "0", False),
}
def _copy(src: Path, dest: Path) -> None:
    from msinspect.mindspore.records import is_record_file

    dest.mkdir(parents=True)
    for path in sorted(src.iterdir()):
        if path.is_file() and (is_record_file(path.name) or path.suffix == ".json"):
            (dest / path.name).write_bytes(kept_bytes(path))


def build(name: str, runs_root: Path) -> Path:
    script, ranks, only, own_out = NETS[name]
    out = runs_root / name
    out.mkdir()
    script_out = out / "script"
    cmd = [*MSINSPECT, "dryrun", str(script), "--ranks", str(ranks), "--only", only, "--out", str(out)]
    if own_out:
        script_out.mkdir()
        cmd += ["--", str(script_out)]
    print("$", " ".join(cmd[2:]), flush=True)
    if subprocess.run(cmd, cwd=REPO).returncode != 0:
        raise Failed(f"the dry run of {script.name} failed; see {out}")
    (run,) = out.glob("dryrun-*")
    new = RECORDS / f"{name}.new"
    for rank in only.split(","):
        _copy(run / f"rank_{rank}", new / f"rank_{rank}")
    if own_out:
        _copy(script_out, new / "script")
    return new


# ----------------------------------------------------------------------------- records beside the dumps
#: The record files the dry run writes into a rank folder, compile ``K`` by compile.
#: A parameter of an IR dump's ``# Params:`` block: ``%para3_embed.embedding: <Ref[...], is_parameter>``.
_IR_PARAM = re.compile(r"^%para\d+_(.+?): <(.*)$", re.M)
GROUPS = ("zoo", "ut", "training")
#: Networks a manifest names whose dump folder is not there (not made yet), said and left out.
LEFT_OUT: dict[str, str] = {}


@dataclass(frozen=True)
class Dump:
    """One dry-run dump of the repository and how it was made."""

    group: str
    """``zoo``, ``ut`` or ``training``."""
    folder: Path
    """The dump: ``rank_N/`` folders (and maybe ``config.json``)."""
    script: Path
    ranks: int
    """The device count."""
    run_ranks: tuple[int, ...]
    """The kept ranks, the only ones run."""
    script_args: tuple[str, ...] = ()
    timeout: float = 900.0
    needs: tuple[str, ...] = ()
    cwd: Path = REPO
    mnist: bool = False
    """Whether ``--data`` (the cached MNIST subset, msinspect train's default) goes to the script too."""

    @property
    def name(self) -> str:
        return self.folder.name

    def only(self) -> str:
        return ",".join(map(str, self.run_ranks))


def _run_record(folder: Path) -> dict:
    path = folder / "config.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _kept_ranks(folder: Path) -> tuple[int, ...]:
    return tuple(sorted(int(p.name[5:]) for p in folder.glob("rank_*") if p.is_dir() and p.name[5:].isdigit()))


def _manifest_dumps(group: str, manifest: Path) -> list[Dump]:
    import regen_zoo  # beside this file; it imports zoo_extras, also beside it

    dumps = []
    for net in regen_zoo.load_manifest(manifest):
        if net.mode != "dryrun":
            continue
        folder = manifest.parent / net.name
        if not folder.is_dir():
            LEFT_OUT[net.name] = f"{manifest.name} names it, but there is no folder {folder.relative_to(REPO)}"
            continue
        record = _run_record(folder)
        ranks, run_ranks = record.get("ranks", net.ranks), tuple(record.get("run_ranks", net.run_ranks()))
        kept = _kept_ranks(folder)
        if (ranks, run_ranks) != (net.ranks, tuple(net.run_ranks())) or kept != run_ranks:
            raise Failed(f"{folder}: its run record says {ranks} ranks, ranks {list(run_ranks)} run, it keeps "
                         f"rank folders {list(kept)}, and {manifest.name} says {net.ranks} ranks, run {net.run!r}: "
                         "which settings made it is not clear")
        dumps.append(Dump(group, folder, net.script, ranks, run_ranks, net.args, net.timeout, net.needs))
    return dumps


def _training_dumps() -> list[Dump]:
    import regen_fixtures  # beside this file
    from msinspect.train.jobs import JOBS

    dumps = []
    for recipe in regen_fixtures.FIXTURE_RECIPES:
        job = JOBS[recipe.mode]
        if not job.auto_parallel:  # manual parallel ran for real: MindSpore keeps no layouts there
            continue
        folder = REPO / "fixtures" / recipe.name
        # What msinspect train MODE --ranks 8 --no-check gave the script (train/launcher.py run_job).
        # The data folder (--data) is found when the job runs: the cached subset, made on first use.
        args = ["--epochs", str(job.epochs), "--batch-size", str(job.batch_size), "--ranks", str(regen_fixtures.RANKS)]
        record = _run_record(folder)
        if record and record.get("script_args", args)[:6] != args:
            raise Failed(f"{folder}: its run record's script arguments {record['script_args']} are not {args}")
        kept = _kept_ranks(folder)
        if kept != tuple(range(regen_fixtures.RANKS)):
            raise Failed(f"{folder}: rank folders {list(kept)}, expected all {regen_fixtures.RANKS}")
        dumps.append(Dump("training", folder, job.script, regen_fixtures.RANKS, kept, tuple(args), 1800.0,
                          cwd=job.script.parent, mnist=job.uses_mnist))
    return dumps


def repository_dumps(groups: tuple[str, ...] = GROUPS) -> list[Dump]:
    """Every dry-run dump of the repository, of ``groups``, in the order they are filled."""
    dumps: list[Dump] = []
    if "training" in groups:
        dumps += _training_dumps()
    if "ut" in groups:
        for manifest in sorted((REPO / "fixtures" / "ut").glob("ut_*.toml")):
            dumps += _manifest_dumps("ut", manifest)
    if "zoo" in groups:
        dumps += _manifest_dumps("zoo", REPO / "fixtures" / "zoo" / "zoo.toml")
    return dumps


def _fingerprint(folder: Path) -> dict[str, str]:
    """Every file of a dump but its dry-run record files, by its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not DRYRUN_RECORD.match(p.name)}


def ir_parameters(rank_folder: Path) -> dict[str, bool]:
    """The parameters of a rank's step_parallel_end IR (every such file), each with whether it is
    a parameter of the network (``is_parameter``: weights, optimizer states) or a graph input."""
    import gzip

    found: dict[str, bool] = {}
    for path in sorted(rank_folder.glob("*step_parallel_end*.ir*")):
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.name.endswith(".gz") else raw).decode("utf-8")
        for m in _IR_PARAM.finditer(text):
            found[m.group(1)] = found.get(m.group(1), False) or "is_parameter" in m.group(2)
    return found


def compare_with_ir(rank_folder: Path) -> dict:
    """What the rank's record holds against its IR's parameters."""
    from msinspect.mindspore.records import record_of

    record = record_of(rank_folder)
    names = set(record.weights) if record else set()
    every = set().union(*(r.weights for r in record.layouts), *(c.weights for c in record.checkpoints)) \
        if record else set()
    ir = ir_parameters(rank_folder)
    weights = {n for n, is_param in ir.items() if is_param}
    return {"compiles": len(record.layouts) if record else 0, "entries": len(names),
            "weights": len(names & weights), "inputs": len(names & (set(ir) - weights)),
            "record_only": sorted(every - set(ir)), "ir_only": sorted(weights - every)}


def _dryrun(dump: Dump, root: Path, jobs: int) -> tuple[Path, dict]:
    """Dry-run the dump's script into ``root``; return the run folder and the dry run's report."""
    out = root / "out"
    cmd = [*MSINSPECT, "dryrun", str(dump.script), "--ranks", str(dump.ranks), "--only", dump.only(),
           "--jobs", str(jobs), "--timeout", f"{dump.timeout:g}", "--out", str(out), "--json"]
    args = list(dump.script_args)
    if dump.mnist:
        from msinspect.data import resolve_data

        args += ["--data", str(resolve_data(None).path.resolve())]
    if args:
        cmd += ["--", *args]
    env = dict(os.environ)
    if "mindformers" in dump.needs:  # MindFormers logs into ./output/log unless told where
        env["LOCAL_DEFAULT_PATH"] = str(root / "mindformers_output")
    print("$", " ".join(cmd[2:]), flush=True)
    with open(root / "dryrun.log", "w") as log:
        done = subprocess.run(cmd, cwd=dump.cwd, env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    runs = sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else []
    if len(runs) != 1:
        raise Failed(f"expected one run folder under {out}, found {len(runs)} (exit status {done.returncode}; "
                     f"see {root / 'dryrun.log'})")
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        report = {}
    return runs[0], report


def fill(dump: Dump, root: Path, *, force: bool, jobs: int) -> dict:
    """Run ``dump``'s script again into ``root`` and copy its record files into the dump's rank
    folders; return what was done (``state``: added / replaced / skipped / failed)."""
    result: dict = {"dump": str(dump.folder.relative_to(REPO)), "ranks": dump.only(), "seconds": 0.0,
                    "rank_seconds": {}, "files": 0, "bytes": 0}
    existing = {r: records_in(dump.folder / f"rank_{r}") for r in dump.run_ranks}
    existing = {r: files for r, files in existing.items() if files}
    if existing and not force:
        first = next(iter(existing))
        return {**result, "state": "skipped", "why": f"rank_{first} already holds "
                f"{', '.join(p.name for p in existing[first])}; --force replaces the record files"}
    root.mkdir(parents=True)
    before = _fingerprint(dump.folder)
    start = time.monotonic()
    run_dir, report = _dryrun(dump, root, jobs)
    result["seconds"] = time.monotonic() - start
    by_rank = {r["rank"]: r for r in report.get("ranks", [])}
    result["rank_seconds"] = {r: round(by_rank[r]["wall_seconds"], 1) for r in dump.run_ranks if r in by_rank}
    result["rank_states"] = {r: by_rank[r]["state"] for r in dump.run_ranks if r in by_rank}
    kept: dict[int, dict[str, bytes]] = {}
    missing = []
    for rank in dump.run_ranks:
        files = records_in(run_dir / f"rank_{rank}")
        if not any(p.suffix in (".json", ".ckpt") for p in files):
            missing.append(rank)
            continue
        kept[rank] = {p.name: kept_bytes(p) for p in files}
        for name, data in kept[rank].items():
            if name.endswith(".json"):
                body = json.loads(data)
                if (body.get("rank"), body.get("rank_size")) != (rank, dump.ranks):
                    raise Failed(f"{run_dir}/rank_{rank}/{name}: says rank {body.get('rank')} of "
                                 f"{body.get('rank_size')}, not {rank} of {dump.ranks}")
    if missing:
        reasons = {r: by_rank.get(r, {}).get("reason") or by_rank.get(r, {}).get("state", "?") for r in missing}
        raise Failed("no layout record written by " + "; ".join(f"rank {r} ({why})" for r, why in reasons.items())
                     + f"; see {run_dir / 'logs'}")
    replaced = 0
    for rank, files in kept.items():
        folder = dump.folder / f"rank_{rank}"
        for old in existing.get(rank, ()):  # only with --force: the dry run's record files only
            old.unlink()
            replaced += 1
        for name, data in files.items():
            with open(folder / name, "xb") as out:  # never over a file
                out.write(data)
            result["files"] += 1
            result["bytes"] += len(data)
    if _fingerprint(dump.folder) != before:
        raise Failed(f"{dump.folder}: a file other than the records changed (this must never happen)")
    result["state"] = "replaced" if replaced else "added"
    result["per_rank"] = {rank: {"files": sorted(files), **compare_with_ir(dump.folder / f"rank_{rank}")}
                          for rank, files in kept.items()}
    return result


def _said(result: dict) -> str:
    lines = [f"{result['dump']}: {result['state']}"
             + (f" ({result['why']})" if result.get("why") else "")
             + (f", {result['files']} files, {result['bytes'] / 1024:.0f} KB, dry run {result['seconds']:.0f} s "
                f"(ranks {result['rank_seconds']})" if result["state"] in ("added", "replaced") else "")]
    for rank, what in result.get("per_rank", {}).items():
        line = (f"  rank_{rank}: {' '.join(what['files'])}; {what['compiles']} compile(s); last record: "
                f"{what['entries']} entries, {what['weights']} of them parameters of the IR, {what['inputs']} inputs")
        if what["record_only"]:
            line += f"; not in the IR: {_few(what['record_only'])}"
        if what["ir_only"]:
            line += f"; IR parameters not in the record: {_few(what['ir_only'])}"
        lines.append(line)
    return "\n".join(lines)


def _few(names: list[str], n: int = 6) -> str:
    return ", ".join(names[:n]) + (f" ... ({len(names)} in all)" if len(names) > n else "")


def main_dumps(args: argparse.Namespace) -> int:
    groups = tuple(args.group or GROUPS)
    try:
        dumps = repository_dumps(groups)
        if args.dumps:
            wanted = {Path(d).name for d in args.dumps}
            unknown = sorted(wanted - {d.name for d in dumps})
            if unknown:
                raise Failed(f"not a dry-run dump of the repository (of groups {', '.join(groups)}): {unknown}")
            dumps = [d for d in dumps if d.name in wanted]
        dumps = [d for d in dumps if d.name not in set(args.skip or ())]
        for name, why in LEFT_OUT.items():
            if not args.dumps or name in {Path(d).name for d in args.dumps}:
                print(f"left out {name}: {why}", flush=True)
        if args.plan:
            for d in dumps:
                print(f"{d.group:8} {d.folder.relative_to(REPO)}: {d.script.relative_to(REPO)} --ranks {d.ranks} "
                      f"--only {d.only()}" + (f" -- {' '.join(d.script_args)}" if d.script_args else "")
                      + (" --data <the MNIST subset>" if d.mnist else ""))
            return 0
        import regen_zoo

        regen_zoo.prepare_extras([n for n in regen_zoo.load_manifest() if n.name in {d.name for d in dumps}],
                                 install=args.install_extras)
    except Exception as exc:  # Failed, zoo_extras.ExtraError, a broken manifest
        print(f"error: {exc}", file=sys.stderr)
        return 2
    runs_root = Path(tempfile.mkdtemp(prefix="msinspect-records-dumps-"))
    print(f"run root: {runs_root}", flush=True)
    results, failed = [], False
    for dump in dumps:
        try:
            result = fill(dump, runs_root / dump.name, force=args.force, jobs=args.jobs)
        except (Failed, OSError, ValueError) as exc:
            failed = True
            result = {"dump": str(dump.folder.relative_to(REPO)), "ranks": dump.only(), "state": "failed",
                      "why": str(exc), "seconds": 0.0, "rank_seconds": {}, "files": 0, "bytes": 0}
        else:
            if not args.keep_runs:
                shutil.rmtree(runs_root / dump.name, ignore_errors=True)
        results.append(result)
        print(_said(result), flush=True)
        if args.log:
            with open(args.log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                                      **{k: v for k, v in result.items() if k != "per_rank"}}) + "\n")
    counts = {s: sum(r["state"] == s for r in results) for s in ("added", "replaced", "skipped", "failed")}
    print(f"\n{len(results)} dump(s): " + ", ".join(f"{n} {s}" for s, n in counts.items() if n)
          + f"; {sum(r['files'] for r in results)} files, {sum(r['bytes'] for r in results) / 1024:.0f} KB written; "
          f"dry runs {sum(r['seconds'] for r in results):.0f} s")
    if failed or args.keep_runs:
        print(f"runs kept in {runs_root}")
    else:
        shutil.rmtree(runs_root, ignore_errors=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true",
                        help="regenerate even with uncommitted changes; with --dumps: replace record files already "
                             "in the rank folders")
    parser.add_argument("--keep-runs", action="store_true", help="keep the dry runs' folders")
    parser.add_argument("--dumps", nargs="*", default=None, metavar="DUMP",
                        help="add the records beside the repository's dry-run dumps instead (default: every one; "
                             "DUMP: a dump's folder name or path)")
    parser.add_argument("--group", action="append", choices=GROUPS,
                        help="with --dumps: only the dumps of this group (repeatable)")
    parser.add_argument("--skip", action="append", metavar="NAME", help="with --dumps: leave this dump out")
    parser.add_argument("--jobs", type=int, default=2, metavar="N",
                        help="with --dumps: ranks a dry run compiles at a time (default 2)")
    parser.add_argument("--plan", action="store_true", help="with --dumps: list the dry runs; run nothing")
    parser.add_argument("--log", type=Path, default=None, metavar="FILE",
                        help="with --dumps: append one JSON line a dump (what, how long) to FILE")
    parser.add_argument("--install-extras", action="store_true",
                        help="with --dumps: install what the zoo networks name in `needs` (tools/zoo_extras.py)")
    args = parser.parse_args(argv)
    if args.dumps is not None:
        if args.jobs < 1:
            parser.error("--jobs must be at least 1")
        return main_dumps(args)
    if args.group or args.skip or args.plan or args.log or args.install_extras:
        parser.error("--group, --skip, --plan, --log and --install-extras go with --dumps")
    try:
        if not args.force:
            refuse_uncommitted([RECORDS], "fixtures/records/")
    except Failed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    RECORDS.mkdir(parents=True, exist_ok=True)
    for name in NETS:
        shutil.rmtree(RECORDS / f"{name}.new", ignore_errors=True)
    done = replace_when_all_built(RECORDS, list(NETS), build, prefix="msinspect-regen-records-",
                                  keep_runs=args.keep_runs)
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
