"""Rewrite the absolute paths a dump embeds (``# In file /home/me/...``) into neutral ones, so
dumps can be shared and committed without the paths of the machine that wrote them.

What scrub promises
-------------------
*No absolute path survives.* An absolute path is a ``/`` that starts a name, that is a ``/`` at
the start of a line or after any character other than a letter, a digit, ``_`` or ``.`` (so
``Default/network-Net/MatMul-op0`` is a scope, ``./x/y`` and ``a/b`` relative paths, while
``/root``, ``x-/root/a.py``, ``HOME=/root``, ``"/a/b"`` and ``file:///a/b`` hold absolute paths),
followed by one or more names separated by ``/``. A name is a run of characters other than
``/``, white space, ``:``, ``(``, ``)``, ``"``, ``'``, ``,``, ``<`` and ``>``; a folder's name may
hold single spaces (``/home/alice smith/proj/train.py``). Each such path becomes:

* ``<site-packages>/X`` when it runs through ``site-packages/`` or ``dist-packages/`` (X: the path
  inside the installed packages, e.g. ``mindspore/nn/cell.py``);
* ``<python>/X`` when it runs through ``lib/pythonX.Y/`` (the standard library);
* ``<src>/NAME`` otherwise: only its last name is kept (``train.py``), no folder.

What is kept: everything else, byte for byte (scopes, code excerpts, line numbers), the file
names after ``<src>/``, and the package-relative paths after ``<site-packages>/`` and
``<python>/`` (scrubbing is idempotent: a scrubbed file scrubs to itself). Windows paths
(``C:\\...``) are not recognised.

*The source is never touched, and no partial copy is left.* ``scrub_tree`` reads SRC and writes
into a temporary folder beside DEST, renamed to DEST only when every file is written; on any
error (a corrupt ``.gz``, a file that is not UTF-8 text) nothing is left and the error names the
file. DEST must not exist and must not lie inside SRC. Symbolic links in SRC (to files or
folders) are refused, never followed: they could copy files from outside SRC.
"""
from __future__ import annotations

import gzip
import os
import re
import shutil
import tempfile
import zlib
from pathlib import Path

from msinspect.errors import MsInspectError
from msinspect.stages import is_ir_file, stage_of

_NAME = r"[^/\s:()\"',<>]+"
_FOLDER = rf"{_NAME}(?: {_NAME})*"  # a folder's name may hold single spaces
#: An absolute path (see the module docstring); a ``<src>`` before it is taken along, so that
#: ``<src>/train.py`` scrubs to itself and ``<src>/home/me/train.py`` to ``<src>/train.py``. Not
#: after a word or a dot (``a/b``, ``./b``, ``../b`` are relative), but after a word and a dot: a
#: ``jit`` function's phase joins its module, name and file so
#: (``__main__.train_one_step./work/jobs/train.py.1650...``).
_ABS_PATH = re.compile(rf"(?:<src>)?(?:(?<![A-Za-z0-9_.])|(?<=[A-Za-z0-9_]\.))(?<!<python>)(?<!<site-packages>)"
                       rf"/(?:{_FOLDER}/)*{_NAME}")
_SITE = re.compile(r"^.*/(?:site|dist)-packages/")
_STDLIB = re.compile(r"^.*/lib/python\d+(?:\.\d+)?/")
_MAX_LISTED = 10


class ScrubError(MsInspectError):
    """scrub cannot copy SRC as asked: DEST exists or lies inside SRC, SRC holds links or a file
    that cannot be read; nothing was written."""


def scrub_path(path: str) -> str:
    """The neutral spelling of one absolute path."""
    path = path.removeprefix("<src>")
    if _SITE.match(path):
        return _SITE.sub("<site-packages>/", path)
    if _STDLIB.match(path):
        return _STDLIB.sub("<python>/", path)
    return "<src>/" + path.rstrip("/").rsplit("/", 1)[-1]


def scrub_text(text: str) -> str:
    """The text with every absolute path made neutral. Idempotent."""
    return _ABS_PATH.sub(lambda m: scrub_path(m.group(0)), text)


def _read(path: Path) -> str:
    """The text of an IR file; :class:`ScrubError` naming the file when it cannot be read."""
    try:
        raw = path.read_bytes()
        if path.name.endswith(".gz"):
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ScrubError(f"{path}: not UTF-8 text (byte {error.start}); is it a MindSpore IR file?") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as error:
        raise ScrubError(f"{path}: not a readable gzip file ({error or 'truncated'})") from None
    except OSError as error:
        raise ScrubError(f"{path}: cannot be read: {error.strerror or error}") from None


def _sources(src: Path) -> list[Path]:
    """Every IR file under ``src``, without following links; :class:`ScrubError` listing the links
    and unreadable folders found."""
    files: list[Path] = []
    refused: list[str] = []

    def unreadable(error: OSError) -> None:
        refused.append(f"{error.filename}: cannot be read: {error.strerror or error}")

    for folder, dirs, names in os.walk(src, onerror=unreadable):
        here = Path(folder)
        for name in dirs:
            if (here / name).is_symlink():
                refused.append(f"{here / name}: a link to a folder ({os.readlink(here / name)})")
        for name in sorted(names):
            path = here / name
            if not is_ir_file(name):
                continue
            if path.is_symlink():
                refused.append(f"{path}: a link ({os.readlink(path)})")
            elif not path.is_file():
                refused.append(f"{path}: not a regular file")
            else:
                files.append(path)
    if refused:
        more = f"\n  ... and {len(refused) - _MAX_LISTED} more" if len(refused) > _MAX_LISTED else ""
        raise ScrubError(f"{src}: scrub copies regular files only and never follows links out of SRC; "
                         "replace these by the files or folders they stand for, or remove them:\n  "
                         + "\n  ".join(refused[:_MAX_LISTED]) + more)
    return sorted(files)


def scrub_tree(src: str | Path, dest: str | Path, *, stages: tuple[str, ...] = (), compress: bool = False) -> list[Path]:
    """Copy the IR files under ``src`` (a file or folder) into the new folder ``dest``, scrubbed.

    ``stages`` keeps only files of those stages; ``compress`` writes ``.ir.gz``. Returns the files
    written. Raises :class:`ScrubError` (nothing written) if ``dest`` exists or lies inside
    ``src``, if nothing matches, if ``src`` holds links, or if a file cannot be read.
    """
    src, dest = Path(src), Path(dest)
    if dest.exists() or dest.is_symlink():
        raise ScrubError(f"{dest}: already exists; scrub writes only into a new folder")
    if not src.exists():
        raise ScrubError(f"{src}: no such file or folder")
    real_src = src.resolve()  # SRC itself may be a link: the user named it
    if real_src.is_dir() and dest.resolve().is_relative_to(real_src):
        raise ScrubError(f"{dest}: lies inside {src}; scrub never writes into its source (choose a DEST outside it)")
    files = [real_src] if real_src.is_file() else _sources(real_src)
    if stages:
        files = [f for f in files if stage_of(f) in stages]
    if not files:
        raise ScrubError(f"{src}: no IR files" + (f" of stages {', '.join(stages)}" if stages else ""))
    texts = []  # read (and check) every file before anything is written
    for f in files:
        rel = Path(f.name) if real_src.is_file() else f.relative_to(real_src)
        name = rel.name[:-3] if rel.name.endswith(".gz") else rel.name
        texts.append((rel.parent / (name + ".gz" if compress else name), f))
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.partial-", dir=dest.parent))
    try:
        for rel, f in texts:
            out = partial / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            data = scrub_text(_read(f)).encode("utf-8")
            out.write_bytes(gzip.compress(data, mtime=0) if compress else data)
        umask = os.umask(0)
        os.umask(umask)
        partial.chmod(0o777 & ~umask)
        os.rename(partial, dest)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return [dest / rel for rel, _ in texts]
