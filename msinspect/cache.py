"""The user's cache folder, and the on-disk cache of parsed IR files.

One rule for where msinspect keeps things: ``$XDG_CACHE_HOME/msinspect`` when ``XDG_CACHE_HOME``
is an absolute path, else ``~/.cache/msinspect``. The dry-run environment, the MNIST subset and the
parsed files (``parsed/``, or ``$MSINSPECT_PARSE_CACHE_DIR``) live below it.

Parsed files are kept by what they hold, never by path or time: the key is the SHA-256 of the
file's text, of msinspect's version, of the grammar, of the parser's and the model's source and of
the parse mode (strict or lenient), so a changed file, a new msinspect or a changed parser never
meets an old entry. An entry that cannot be
read back (cut short, corrupt, from another Python) is removed and the file parsed again. The
cache is bounded (``MSINSPECT_PARSE_CACHE_MB``, 2048 MB by default): when a write takes it past
the bound, the entries used least recently go first. ``MSINSPECT_NO_CACHE=1`` (the CLI's
``--no-cache``) turns it off; ``msinspect cache clear`` empties it.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from functools import lru_cache
from importlib import metadata, resources
from pathlib import Path

#: Bound of the parsed-file cache, in MB, unless MSINSPECT_PARSE_CACHE_MB says otherwise.
DEFAULT_LIMIT_MB = 2048
_PICKLE_PROTOCOL = 5


def cache_root() -> Path:
    """Where msinspect keeps its caches (see the module's docstring)."""
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "msinspect"
    return Path.home() / ".cache" / "msinspect"


def parsed_dir() -> Path:
    """The folder of parsed IR files: ``$MSINSPECT_PARSE_CACHE_DIR``, else ``parsed/`` of the cache."""
    own = os.environ.get("MSINSPECT_PARSE_CACHE_DIR", "")
    return Path(own) if own else cache_root() / "parsed"


def enabled() -> bool:
    """Whether parsed files are cached (``MSINSPECT_NO_CACHE`` unset or 0)."""
    return os.environ.get("MSINSPECT_NO_CACHE", "") in ("", "0")


#: The code a parsed file depends on besides the grammar: an entry made by other code is never read.
_PARSE_CODE = ("msinspect.model", "msinspect.parser.core", "msinspect.parser.transformer",
               "msinspect.parser.assemble", "msinspect.parser.abstracts", "msinspect.parser.reading")


@lru_cache(maxsize=1)
def _salt() -> bytes:
    """What else an entry depends on: msinspect's version, the grammar's text and the source of
    the parser and the model (a checkout's version does not change with its code)."""
    import importlib.util

    try:
        version = metadata.version("msinspect")
    except metadata.PackageNotFoundError:
        version = "checkout"
    digest = hashlib.sha256(version.encode())
    digest.update(resources.files("msinspect.grammars").joinpath("mindspore_ir.lark").read_bytes())
    for module in _PARSE_CODE:
        digest.update(Path(importlib.util.find_spec(module).origin).read_bytes())
    return digest.digest()


def key(text: str, lenient: bool) -> str:
    """The entry's name for this text read in this mode."""
    digest = hashlib.sha256(_salt())
    digest.update(b"lenient\0" if lenient else b"strict\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _entry(name: str) -> Path:
    return parsed_dir() / name[:2] / f"{name}.pickle"


def load(name: str):
    """The parsed file kept under ``name``, or None (absent, or unreadable and now removed)."""
    path = _entry(name)
    try:
        with open(path, "rb") as f:
            value = pickle.load(f)
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - any damage to an entry means: parse again
        path.unlink(missing_ok=True)
        return None
    try:
        os.utime(path)  # recently used: kept longest when the cache is trimmed
    except OSError:
        pass
    return value


def store(name: str, value) -> None:
    """Keep ``value`` under ``name`` (written whole or not at all), then trim the cache. A cache
    that cannot be written is no cache, never an error."""
    path = _entry(name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as f:
            pickle.dump(value, f, protocol=_PICKLE_PROTOCOL)
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, RecursionError):
        Path(tmp).unlink(missing_ok=True)
        return
    trim()


def limit_bytes() -> int:
    try:
        return max(0, int(os.environ.get("MSINSPECT_PARSE_CACHE_MB", DEFAULT_LIMIT_MB))) << 20
    except ValueError:
        return DEFAULT_LIMIT_MB << 20


def entries() -> list[tuple[Path, os.stat_result]]:
    """Every entry with its stat, least recently used first."""
    found = []
    for path in parsed_dir().glob("*/*.pickle"):
        try:
            found.append((path, path.stat()))
        except OSError:
            continue
    return sorted(found, key=lambda item: item[1].st_mtime)


def trim(limit: int | None = None) -> int:
    """Remove the least recently used entries until the cache is within ``limit`` bytes; the
    number of entries removed."""
    limit = limit_bytes() if limit is None else limit
    found = entries()
    total = sum(st.st_size for _, st in found)
    removed = 0
    for path, st in found:
        if total <= limit:
            break
        path.unlink(missing_ok=True)
        total -= st.st_size
        removed += 1
    return removed


def clear() -> tuple[int, int]:
    """Empty the cache of parsed files: ``(entries, bytes)`` removed."""
    found = entries()
    for path, _ in found:
        path.unlink(missing_ok=True)
    return len(found), sum(st.st_size for _, st in found)
