"""Writing the report's files: never over something the user had unless asked, never over a folder,
never half a file (written beside, then moved into place)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from msinspect.errors import MsInspectError
from msinspect.render.files import OutputExistsError  # the one "output exists" error of every command


def check_writable(path: str | os.PathLike, *, overwrite: bool = False) -> Path:
    """``path`` as a Path when it may be written; :class:`OutputExistsError` /
    :class:`MsInspectError` with the reason otherwise. Checked before any work is done."""
    path = Path(path)
    if path.is_dir():
        raise OutputExistsError(f"{path}: is a folder, not a file; name a file (e.g. -o {path / 'report.html'})")
    if path.exists() and not overwrite:
        raise OutputExistsError(f"{path}: exists already; not overwritten (choose another name, or --overwrite)")
    if not path.parent.is_dir():
        raise MsInspectError(f"{path.parent}: no such folder")
    return path


def write_new(path: str | os.PathLike, data: bytes | str, *, overwrite: bool = False) -> Path:
    """Write ``data`` to ``path`` whole (a temporary file beside it, then moved into place)."""
    path = check_writable(path, overwrite=overwrite)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.chmod(tmp, 0o644)
        if not overwrite and path.exists():  # appeared meanwhile
            raise OutputExistsError(f"{path}: exists already; not overwritten")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def free_name(stem: str, suffix: str, folder: str | os.PathLike = ".") -> Path:
    """``stem.suffix`` in ``folder``, or ``stem-2.suffix``, ``stem-3.suffix`` ... whichever does not
    exist yet: a default output name that never replaces a file."""
    folder = Path(folder)
    candidate, n = folder / f"{stem}{suffix}", 1
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = folder / f"{stem}-{n}{suffix}"
    return candidate
