"""Rewrite the absolute paths a dump embeds (``# In file /home/me/...``) into neutral ones, so
dumps can be shared and committed without the paths of the machine that wrote them.

Rules, applied to every line:
* ``.../site-packages/X`` and ``.../dist-packages/X`` -> ``<site-packages>/X``
* ``.../lib/pythonX.Y/X`` (the standard library)      -> ``<python>/X``
* any other absolute path                              -> ``<src>/NAME`` (its last component)

The source folder is never written to: output goes to a new folder (or file) that must not exist.
"""
from __future__ import annotations

import gzip
import re
from pathlib import Path

from msinspect.errors import MsInspectError
from msinspect.stages import is_ir_file, stage_of

# An absolute path of at least two components, not part of a scope like "Default/net-Net".
_ABS_PATH = re.compile(r"(?<![\w.)\]>-])/(?:[^/\s:()\"',<>]+/)+[^/\s:()\"',<>]*")
_SITE = re.compile(r"^.*/(?:site|dist)-packages/")
_STDLIB = re.compile(r"^.*/lib/python\d+(?:\.\d+)?/")


def scrub_path(path: str) -> str:
    """The neutral spelling of one absolute path."""
    if _SITE.match(path):
        return _SITE.sub("<site-packages>/", path)
    if _STDLIB.match(path):
        return _STDLIB.sub("<python>/", path)
    return "<src>/" + path.rstrip("/").rsplit("/", 1)[-1]


def scrub_text(text: str) -> str:
    """The text with every absolute path made neutral. Idempotent."""
    return _ABS_PATH.sub(lambda m: scrub_path(m.group(0)), text)


def _read(path: Path) -> str:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return raw.decode("utf-8")


def scrub_tree(src: str | Path, dest: str | Path, *, stages: tuple[str, ...] = (), compress: bool = False) -> list[Path]:
    """Copy the IR files under ``src`` (a file or folder) into the new ``dest``, scrubbed.

    ``stages`` keeps only files of those stages; ``compress`` writes ``.ir.gz``. Returns the files
    written. Raises :class:`MsInspectError` if ``dest`` exists or nothing matches.
    """
    src, dest = Path(src), Path(dest)
    if dest.exists():
        raise MsInspectError(f"{dest}: already exists; scrub writes only into a new folder")
    if not src.exists():
        raise MsInspectError(f"{src}: no such file or folder")
    files = [src] if src.is_file() else sorted(p for p in src.rglob("*") if p.is_file() and is_ir_file(p))
    if stages:
        files = [f for f in files if stage_of(f) in stages]
    if not files:
        raise MsInspectError(f"{src}: no IR files" + (f" of stages {', '.join(stages)}" if stages else ""))
    written = []
    for f in files:
        rel = Path(f.name) if src.is_file() else f.relative_to(src)
        name = rel.name[:-3] if rel.name.endswith(".gz") else rel.name
        out = dest / rel.parent / (name + ".gz" if compress else name)
        out.parent.mkdir(parents=True, exist_ok=True)
        data = scrub_text(_read(f)).encode("utf-8")
        out.write_bytes(gzip.compress(data, mtime=0) if compress else data)
        written.append(out)
    return written
