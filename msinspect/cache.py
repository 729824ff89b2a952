"""The user's cache folder, and the on-disk caches of parsed IR files and of analysed ranks.

One rule for where msinspect keeps things: ``$XDG_CACHE_HOME/msinspect`` when ``XDG_CACHE_HOME``
is an absolute path, else ``~/.cache/msinspect``. The dry-run environment, the MNIST subset and the
parsed files (``parsed/``, or ``$MSINSPECT_PARSE_CACHE_DIR``) live below it.

Parsed files are kept by what they hold, never by path or time: the key is the SHA-256 of the
file's text, of msinspect's version, of the grammar, of the parser's and the model's source, of
the Lark and lark-cython installed, of the reading (``MSINSPECT_PARSER``) and of the parse mode
(strict or lenient), so a changed file, a new msinspect, Lark or parser never meets an old entry. An entry that cannot be
read back (cut short, corrupt, from another Python) is removed and the file parsed again. The
cache is bounded (``MSINSPECT_PARSE_CACHE_MB``, 2048 MB by default): when a write takes it past
the bound, the entries used least recently go first. ``MSINSPECT_NO_CACHE=1`` (the CLI's
``--no-cache``) turns it off; ``msinspect cache clear`` empties it.

Analysed ranks (:class:`~msinspect.analysis.job.collect.RankResult`: the compact rows one rank's
file gives) are kept the same way in :data:`RESULTS` (``results/`` of the cache folder, or of
``$MSINSPECT_PARSE_CACHE_DIR``), under the same bound, switch and ``cache clear``: keyed by the
content of the file and of its reference file, their paths (rows name them), the rank, the
world and the mode, msinspect's version, the grammar and the source of every msinspect module
(:func:`result_key`).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import sys
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import BinaryIO, Callable

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


@lru_cache(maxsize=1)
def _code() -> bytes:
    """The digest of every module of msinspect (each file's path in the package and its bytes):
    whatever a parse or an analysis reads through, so an entry made by other code is never read."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for source in sorted(package.rglob("*.py")):
        digest.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes())
    return digest.digest()


def _salt() -> bytes:
    """What else an entry depends on: msinspect's version, the Lark and lark-cython installed, the
    grammar's text, msinspect's source (a checkout's version does not change with its code) and
    the reading in force (``MSINSPECT_PARSER``: a reference read is never answered by a fast one)."""
    from msinspect.parser_mode import current

    return _fixed_salt() + current().encode()


@lru_cache(maxsize=1)
def _fixed_salt() -> bytes:
    # msinspect's version is in its source (msinspect/__init__.py), which _code() covers: the
    # package itself is not imported here, since what it exports imports this module
    digest = hashlib.sha256(repr(parser_libraries()).encode())
    digest.update(resources.files("msinspect.grammars").joinpath("mindspore_ir.lark").read_bytes())
    digest.update(_code())
    return digest.digest()


def parser_libraries() -> tuple[str, ...]:
    """Which Lark and lark-cython are installed ("?" for one that is not): the SHA-256 of each
    package's ``__init__.py``, which states its version. Found without importing either (a run
    answered from the cache loads neither) and without ``importlib.metadata``, which imports the
    ``email`` package to read distributions with (its cost: ``bench/bench_cache.py``)."""
    found = []
    for module in ("lark", "lark_cython"):
        try:
            spec = importlib.util.find_spec(module)
            found.append(hashlib.sha256(Path(spec.origin).read_bytes()).hexdigest()[:16])
        except (ImportError, AttributeError, TypeError, ValueError, OSError):  # not installed, no file
            found.append("?")
    return tuple(found)


def hasher(lenient: bool):
    """The hash that names an entry, fed with what the entry depends on besides the text: fed the
    text's UTF-8 bytes next (at once or piece by piece), its ``hexdigest()`` is :func:`key`."""
    digest = hashlib.sha256(_salt())
    digest.update(b"lenient\0" if lenient else b"strict\0")
    return digest


def key(text: str, lenient: bool) -> str:
    """The entry's name for this text read in this mode."""
    digest = hasher(lenient)
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def write_whole(path: Path, write: Callable[[BinaryIO], None], failures: tuple = (OSError,)) -> bool:
    """Write ``path`` by ``write(file)`` whole or not at all: into a private file of its folder,
    then renamed over it (a reader never meets half an entry). False, and nothing left behind,
    where the folder cannot be written or ``write`` raises one of ``failures``: a cache that
    cannot be written is no cache, never an error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except failures:
        Path(tmp).unlink(missing_ok=True)
        return False
    return True


class Store:
    """One on-disk cache: entries ``<folder>/<2 hex>/<name>.pickle``, each written whole or not at
    all, read back or dropped when damaged, the least recently used removed past the bound."""

    def __init__(self, folder):
        """``folder``: a path, or a function giving it (read at each use, e.g. from the environment)."""
        self._folder = folder

    @property
    def folder(self) -> Path:
        """Where the entries are."""
        return Path(self._folder() if callable(self._folder) else self._folder)

    def _entry(self, name: str) -> Path:
        return self.folder / name[:2] / f"{name}.pickle"

    def load(self, name: str):
        """The value kept under ``name``, or None (absent, or unreadable and now removed)."""
        path = self._entry(name)
        try:
            with open(path, "rb") as f:
                value = pickle.load(f)
        except FileNotFoundError:
            return None
        except Exception:  # noqa: BLE001 - any damage to an entry means: compute again
            path.unlink(missing_ok=True)
            return None
        try:
            os.utime(path)  # recently used: kept longest when the cache is trimmed
        except OSError:
            pass
        return value

    def store(self, name: str, value) -> None:
        """Keep ``value`` under ``name`` (written whole or not at all), then trim the cache. A
        cache that cannot be written is no cache, never an error."""
        if write_whole(self._entry(name), lambda f: pickle.dump(value, f, protocol=_PICKLE_PROTOCOL),
                       (OSError, pickle.PicklingError, RecursionError, TypeError, AttributeError)):
            self.trim()

    def entries(self) -> list[tuple[Path, os.stat_result]]:
        """Every entry with its stat, least recently used first."""
        return _oldest_first(self.folder.glob("*/*.pickle"))

    def trim(self, limit: int | None = None) -> int:
        """Remove the least recently used entries until the cache is within ``limit`` bytes; the
        number of entries removed."""
        limit = limit_bytes() if limit is None else limit
        found = self.entries()
        total = sum(st.st_size for _, st in found)
        removed = 0
        for path, st in found:
            if total <= limit:
                break
            path.unlink(missing_ok=True)
            total -= st.st_size
            removed += 1
        return removed

    def clear(self) -> tuple[int, int]:
        """Empty the cache: ``(entries, bytes)`` removed."""
        return _remove(self.entries())


def _oldest_first(paths) -> list[tuple[Path, os.stat_result]]:
    """``paths`` with their stats, the least recently written (or used) first; a file gone
    meanwhile left out."""
    found = []
    for path in paths:
        try:
            found.append((path, path.stat()))
        except OSError:
            continue
    return sorted(found, key=lambda item: item[1].st_mtime)


def _remove(found: list[tuple[Path, os.stat_result]]) -> tuple[int, int]:
    """Remove each of ``found``: ``(files, bytes)`` removed."""
    for path, _ in found:
        path.unlink(missing_ok=True)
    return len(found), sum(st.st_size for _, st in found)


def _beside_parsed(name: str) -> Path:
    """The folder ``name`` beside the parsed files' folders: of ``$MSINSPECT_PARSE_CACHE_DIR``
    when set, else of the cache folder."""
    own = os.environ.get("MSINSPECT_PARSE_CACHE_DIR", "")
    return (Path(own) if own else cache_root()) / name


def results_dir() -> Path:
    """The folder of analysed ranks: ``results/`` beside the parsed files' folders."""
    return _beside_parsed("results")


#: The parsed IR files.
PARSED = Store(parsed_dir)
#: The analysed ranks (see the module's docstring).
RESULTS = Store(results_dir)


def limit_bytes() -> int:
    """The bound of each cache, in bytes (``MSINSPECT_PARSE_CACHE_MB``)."""
    try:
        return max(0, int(os.environ.get("MSINSPECT_PARSE_CACHE_MB", DEFAULT_LIMIT_MB))) << 20
    except ValueError:
        return DEFAULT_LIMIT_MB << 20


# the parsed files' cache, as functions (what the parser and `msinspect cache` call)
load, store, entries, trim = PARSED.load, PARSED.store, PARSED.entries, PARSED.trim


def clear() -> tuple[int, int]:
    """Empty the cache of parsed files, of analysed ranks and of built grammars: ``(entries, bytes)`` removed."""
    removed = [PARSED.clear(), RESULTS.clear(), clear_grammars()]
    return sum(r[0] for r in removed), sum(r[1] for r in removed)


#: Built grammars kept (one per msinspect version that ran here recently is plenty).
GRAMMARS_KEPT = 4
#: Lark options that are objects given at each load, not part of what is built.
GIVEN_AT_LOAD = ("transformer", "_plugins", "postlex", "lexer_callbacks", "tree_class")


def grammar_dir() -> Path:
    """The folder of built grammars: ``grammar/`` beside the parsed files' folders."""
    return _beside_parsed("grammar")


def grammar_entry(grammar: str, options: dict) -> Path:
    """The file that keeps the parser Lark builds from ``grammar`` with ``options``."""
    digest = hashlib.sha256(grammar.encode("utf-8"))
    built = sorted((k, repr(v)) for k, v in options.items() if k not in GIVEN_AT_LOAD)
    digest.update(repr((built, parser_libraries(), sys.version_info[:2])).encode())
    return grammar_dir() / f"{digest.hexdigest()}.lark"


def grammar_files() -> list[tuple[Path, os.stat_result]]:
    """Every built grammar kept, with its stat, the oldest first."""
    return _oldest_first(grammar_dir().glob("*.lark"))


def trim_grammars() -> None:
    """Keep the :data:`GRAMMARS_KEPT` newest built grammars."""
    _remove(grammar_files()[:-GRAMMARS_KEPT])


def clear_grammars() -> tuple[int, int]:
    """Remove every built grammar: ``(files, bytes)`` removed."""
    return _remove(grammar_files())


def file_digest(path: str | os.PathLike) -> bytes:
    """SHA-256 of a file's bytes as stored (a ``.ir.gz`` by its compressed bytes)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.digest()


def result_key(path: str, reference: str | None, options: tuple) -> str:
    """The name of one rank's analysed result: the content (and path) of its file and reference
    file, and ``options`` (rank, world, mode: anything the rows depend on), salted with the code
    (see the module's docstring). OSError when a file cannot be read."""
    digest = hashlib.sha256(_salt())
    for item in (path, reference):
        digest.update(repr(item).encode("utf-8", "surrogatepass") + b"\0")
        if item is not None:
            digest.update(file_digest(item))
    digest.update(repr(options).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()
