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
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from regen_common import REPO, Failed, refuse_uncommitted, replace_when_all_built

RECORDS = REPO / "fixtures" / "records"
MSINSPECT = [sys.executable, "-m", "msinspect.cli"]
NETS = {
    "01_semi_auto_tp4dp2": (REPO / "fixtures/zoo/nets/01_semi_auto_tp4dp2.py", 8, "0,5", False),
    "04_pipeline_hsdp_recompute": (REPO / "fixtures/zoo/nets/04_pipeline_hsdp_recompute.py", 8, "0,5", False),
    "own_records": (REPO / "tests/dryrun/nets/own_records.py", 4, "0", True),
    "two_axes_layout": (REPO / "tests/dryrun/nets/two_axes_layout.py", 8, "0", False),
}
#: Absolute paths in a binary file: a ``/`` then a name, after a byte that cannot be in a name.
_ABSOLUTE = re.compile(rb"(?<![A-Za-z0-9_.\-])/(?:tmp|home|root|work|usr|opt|var)/")


def _copy(src: Path, dest: Path) -> None:
    from msinspect.mindspore.records import is_record_file
    from msinspect.scrub import scrub_text

    dest.mkdir(parents=True)
    for path in sorted(src.iterdir()):
        if not (path.is_file() and (is_record_file(path.name) or path.suffix == ".json")):
            continue
        if path.suffix == ".json":
            (dest / path.name).write_text(scrub_text(path.read_text(encoding="utf-8")), encoding="utf-8")
            continue
        data = path.read_bytes()
        if _ABSOLUTE.search(data):
            raise Failed(f"{path} holds an absolute path; it cannot be kept as it is")
        (dest / path.name).write_bytes(data)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="regenerate even with uncommitted changes")
    parser.add_argument("--keep-runs", action="store_true", help="keep the dry runs' folders")
    args = parser.parse_args(argv)
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
