"""Regenerate the 2.10 fixtures in fixtures/ from the training jobs: ``make fixtures``.

For each 2.10 fixture of fixtures/README.md this runs its job with ``msinspect train MODE
--no-check`` into a new temporary run root, then ``msinspect scrub RUN DEST --stage ... --gzip``
with the stages that README lists into ``fixtures/NAME.new`` (manual parallel also keeps rank 0's
``type_inference``; the recursive pipeline also keeps its run record ``config.json``, scrubbed).
Only when every job and every scrub succeeded are the old fixture folders replaced by the new
ones; git keeps the old ones (``git checkout -- fixtures/`` brings them back, and ``git status
fixtures/`` lists files that are new). It refuses to start while ``git status --porcelain
fixtures/`` shows uncommitted changes, unless ``--force``.

Needs the train and dry-run extras (MindSpore 2.10) and a prepared dry-run environment
(``msinspect setup-dryrun``); a few minutes (about 2.5 on two idle cores).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from msinspect.stages import TRAIN_DRYRUN_PASSES
from regen_common import Failed, refuse_uncommitted, replace_when_all_built

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
MSINSPECT = [sys.executable, "-m", "msinspect.cli"]
RANKS = 8
DRY_RUN_STAGES = TRAIN_DRYRUN_PASSES  # what the training jobs keep of a dry run


@dataclass(frozen=True)
class Fixture:
    """One 2.10 fixture folder and how fixtures/README.md says it was made."""

    name: str
    mode: str
    train_args: tuple[str, ...]
    stages: tuple[str, ...]
    rank0_stages: tuple[str, ...] = ()
    keep_config: bool = False


FIXTURE_RECIPES = (
    # 2 epochs of 20 steps: 640 images in global batches of 32.
    Fixture("manual_parallel_8rank", "manual_parallel", ("--epochs", "2", "--num-samples", "640"),
            ("validate", "execute"), rank0_stages=("type_inference",)),
    Fixture("sharding_propagation_dryrun_8rank", "sharding_propagation", (), DRY_RUN_STAGES),
    Fixture("recursive_pipeline_dryrun_8rank", "recursive_pipeline", (), DRY_RUN_STAGES,
            keep_config=True),
)


def run(cmd: list[str]) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    code = subprocess.call([str(c) for c in cmd], cwd=REPO)
    if code != 0:
        raise Failed(f"exit status {code}: {' '.join(str(c) for c in cmd)}")


def train(fixture: Fixture, runs_root: Path) -> Path:
    """Run the fixture's job into a root of its own; return its run folder."""
    out_root = runs_root / fixture.mode
    run([*MSINSPECT, "train", fixture.mode, "--ranks", str(RANKS), "--no-check", "--out", out_root,
         *fixture.train_args])
    runs = [p for p in out_root.iterdir() if (p / "config.json").is_file()]
    if len(runs) != 1:
        raise Failed(f"{fixture.mode}: expected one run folder under {out_root}, found {len(runs)}")
    status = json.loads((runs[0] / "config.json").read_text()).get("status")
    if status != "ok":
        raise Failed(f"{fixture.mode}: the run record says status {status!r} ({runs[0]})")
    return runs[0]


def scrub(fixture: Fixture, run_dir: Path, runs_root: Path) -> Path:
    """Scrub the kept stages of *run_dir* into ``fixtures/NAME.new``; return that folder."""
    from msinspect.scrub import scrub_text
    from msinspect.stages import stage_of

    dest = FIXTURES / f"{fixture.name}.new"
    if dest.exists():  # left by an earlier attempt that failed
        shutil.rmtree(dest)
    stage_args = [a for s in fixture.stages for a in ("--stage", s)]
    run([*MSINSPECT, "scrub", run_dir, dest, *stage_args, "--gzip"])
    if fixture.rank0_stages:
        extra = runs_root / f"{fixture.name}-rank_0-extra"
        if extra.exists():
            shutil.rmtree(extra)
        run([*MSINSPECT, "scrub", run_dir / "rank_0", extra,
             *[a for s in fixture.rank0_stages for a in ("--stage", s)], "--gzip"])
        for f in sorted(extra.iterdir()):
            shutil.move(str(f), dest / "rank_0" / f.name)
    if fixture.keep_config:
        text = (run_dir / "config.json").read_text()
        (dest / "config.json").write_text(scrub_text(text))
    for rank in range(RANKS):
        rank_dir = dest / f"rank_{rank}"
        stages = {stage_of(p) for p in rank_dir.iterdir()} if rank_dir.is_dir() else set()
        wanted = set(fixture.stages) | (set(fixture.rank0_stages) if rank == 0 else set())
        if stages != wanted:
            raise Failed(f"{fixture.name}: rank_{rank} has stages {sorted(stages)}, "
                         f"expected {sorted(wanted)} ({run_dir})")
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true",
                        help="run even though fixtures/ has uncommitted changes (those inside the "
                             "replaced folders are lost)")
    parser.add_argument("--keep-runs", action="store_true",
                        help="keep the temporary run root (it is always kept when a step fails)")
    parser.add_argument("--only", choices=[f.name for f in FIXTURE_RECIPES], action="append",
                        help="regenerate only this fixture (repeatable; default: all three)")
    args = parser.parse_args(argv)

    recipes = [f for f in FIXTURE_RECIPES if not args.only or f.name in args.only]
    try:
        if not args.force:
            refuse_uncommitted([FIXTURES], "fixtures/")
    except Failed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    by_name = {f.name: f for f in recipes}

    def build(name: str, runs_root: Path) -> Path:
        return scrub(by_name[name], train(by_name[name], runs_root), runs_root)

    if not replace_when_all_built(FIXTURES, list(by_name), build, prefix="msinspect-fixtures-",
                                  keep_runs=args.keep_runs):
        return 1
    print("done. Review with `git status fixtures/` and `git diff --stat fixtures/`, then run "
          "`python -m pytest tests/parser tests/test_dumps.py tests/test_graph.py`; "
          "`git checkout -- fixtures/` restores the committed fixtures.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
