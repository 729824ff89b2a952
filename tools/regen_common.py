"""What ``tools/regen_fixtures.py`` and ``tools/regen_zoo.py`` share: a failed step
(:class:`Failed`), the question to git whether the folders to replace have changes of their own
(:func:`refuse_uncommitted`), and the one rule of both: build every ``NAME.new`` folder in a temporary
run root, and replace the old folders only when every one was built (:func:`replace_when_all_built`).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable

REPO = Path(__file__).resolve().parents[1]


class Failed(Exception):
    """A step failed; the message says which and where to look."""


def refuse_uncommitted(paths: Iterable[Path], what: str) -> None:
    """Raise :class:`Failed` when ``git status --porcelain`` shows changes under ``paths`` (the
    folders to replace, ``what`` in words), or when git cannot answer."""
    paths = [str(p) for p in paths]
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", *paths], cwd=REPO,
                             capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise Failed(f"cannot ask git about {what} ({exc}); use --force to regenerate anyway")
    if out.stdout:
        raise Failed(f"{what} has uncommitted changes; commit or restore them first (or --force):\n{out.stdout}")


def replace_when_all_built(parent: Path, names: list[str], build: Callable[[str, Path], Path], *,
                           prefix: str, keep_runs: bool) -> bool:
    """Build ``parent/NAME.new`` for every name (``build(name, runs_root)`` returns it), in a new
    temporary run root; then, only when every build succeeded, put each in place of
    ``parent/NAME`` (git keeps the old ones). On a :class:`Failed` or ``OSError``, every
    ``NAME.new`` is removed, nothing under ``parent`` changes, the run root is kept and said, and
    False is returned. The run root is removed after a success unless ``keep_runs``."""
    runs_root = Path(tempfile.mkdtemp(prefix=prefix))
    print(f"run root: {runs_root}", flush=True)
    built: dict[str, Path] = {}
    try:
        for name in names:
            built[name] = build(name, runs_root)
    except (Failed, OSError) as exc:
        for name in names:
            shutil.rmtree(parent / f"{name}.new", ignore_errors=True)
        print(f"error: {exc}\nnothing in {_shown(parent)}/ was changed; the runs are kept in {runs_root}",
              file=sys.stderr)
        return False
    for name, new in built.items():
        old = parent / name
        if old.exists():
            shutil.rmtree(old)
        new.rename(old)
        print(f"replaced {_shown(old)}", flush=True)
    if keep_runs:
        print(f"runs kept in {runs_root}")
    else:
        shutil.rmtree(runs_root, ignore_errors=True)
    return True


def _shown(path: Path) -> str:
    """``fixtures/zoo`` for a folder of the checkout, else the path as it is."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


# ---------------------------------------------------------------- MindSpore's records in a rank folder
#: The record files the dry run keeps beside a rank's IR (msinspect.mindspore.records).
DRYRUN_RECORD = re.compile(r"^(?:parameter_layout_\d+\.json|strategy_\d+\.ckpt|group_info_\d+\.pb)$")
#: Absolute paths in a binary file: a ``/`` then a name, after a byte that cannot be in a name.
_ABSOLUTE = re.compile(rb"(?<![A-Za-z0-9_.\-])/(?:tmp|home|root|work|usr|opt|var)/")
#: An absolute path of this kind of machine left in a text after scrubbing.
_ABSOLUTE_TEXT = re.compile(r"(?<![A-Za-z0-9_.\-<>])/(?:tmp|home|root|work|usr|opt|var)/")


def records_in(folder: Path) -> list[Path]:
    """The record files of a rank folder, by name."""
    return sorted(p for p in folder.iterdir() if p.is_file() and DRYRUN_RECORD.match(p.name)) if folder.is_dir() else []


def kept_bytes(path: Path) -> bytes:
    """A record file's bytes as they may be kept: JSON scrubbed; :class:`Failed` where an absolute
    path remains."""
    from msinspect.scrub import scrub_text

    if path.suffix == ".json":
        scrubbed = scrub_text(path.read_text(encoding="utf-8"))
        json.loads(scrubbed)  # still JSON
        if _ABSOLUTE_TEXT.search(scrubbed):
            raise Failed(f"{path}: an absolute path survives scrubbing")
        return scrubbed.encode("utf-8")
    data = path.read_bytes()
    if _ABSOLUTE.search(data):
        raise Failed(f"{path} holds an absolute path; it cannot be kept as it is")
    return data
