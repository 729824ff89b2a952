"""Writing a picture: the ``.dot`` source always, the SVG or PNG when Graphviz's ``dot`` program
is installed; never over an existing file unless asked."""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from msinspect.errors import EXIT_MISSING_TOOL, MsInspectError

if TYPE_CHECKING:  # graphviz loads where a picture is written
    import graphviz

#: Picture formats :func:`write` asks ``dot`` for; ``dot`` alone writes only the source.
FORMATS = ("svg", "png", "dot")

INSTALL_HINT = (
    "install Graphviz, which provides it:\n"
    "  Debian/Ubuntu:  sudo apt-get install graphviz\n"
    "  macOS:          brew install graphviz\n"
    "  conda:          conda install graphviz\n"
    "(the Python package 'graphviz' alone is not enough: it calls the 'dot' program)"
)


class DotNotFoundError(MsInspectError):
    """Graphviz's ``dot`` program is not installed: the ``.dot`` source was written, no picture."""

    exit_code = EXIT_MISSING_TOOL

    def __init__(self, dot_path: Path, fmt: str):
        self.dot_path = Path(dot_path)
        """Where the ``.dot`` source was written."""
        self.format = fmt
        """The picture format that could not be made."""
        super().__init__(
            f"the Graphviz program 'dot' was not found on PATH, so no {fmt.upper()} picture was made; "
            f"{INSTALL_HINT}\n"
            f"The graph source was written to {self.dot_path}; once 'dot' is installed, draw it with:\n"
            f"  dot -T{fmt} {self.dot_path} -o {self.dot_path.with_suffix('.' + fmt)}")


class OutputExistsError(MsInspectError):
    """An output file exists already and overwriting was not asked for."""


def dot_path_for(out_path: str | Path, fmt: str) -> Path:
    """Where the ``.dot`` source of a picture goes: beside it, same name, ``.dot`` suffix."""
    out_path = Path(out_path)
    return out_path if fmt == "dot" else out_path.with_suffix(".dot")


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program is on PATH."""
    return shutil.which("dot") is not None


def write(digraph: graphviz.Digraph, out_path: str | Path, fmt: str = "svg", *, overwrite: bool = False) -> Path:
    """Write ``digraph``'s ``.dot`` source (always) and, for ``svg`` / ``png``, the picture at
    ``out_path`` made by Graphviz's ``dot``. Returns the picture's path (the ``.dot`` for ``dot``).

    Raises :class:`OutputExistsError` when an output file exists and ``overwrite`` is False, before
    writing anything (a ``.dot`` holding the same source, as when drawing both SVG and PNG, is
    fine), and :class:`DotNotFoundError`, after writing the ``.dot``, when ``dot`` is not installed.
    """
    if fmt not in FORMATS:
        raise MsInspectError(f"unknown picture format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out_path = Path(out_path)
    source_path = dot_path_for(out_path, fmt)
    targets = [source_path] if fmt == "dot" else [source_path, out_path]
    # a .dot holding this very source (the SVG drawn, now the PNG) is no loss to rewrite
    folders = [str(p) for p in targets if p.is_dir()]
    if folders:  # --overwrite replaces files, never folders
        raise OutputExistsError(f"{', '.join(folders)}: is a folder, not a file; --overwrite replaces files "
                                f"only: name a picture file (e.g. -o {Path(folders[0]) / ('graph.' + fmt)})")
    existing = [str(p) for p in targets if p.exists() and not (p == source_path and _holds(p, digraph.source))]
    if existing and not overwrite:
        raise OutputExistsError(f"{', '.join(existing)}: exists already; not overwritten "
                                "(choose another output name, or overwrite=True / --overwrite)")
    if out_path.parent and not out_path.parent.is_dir():
        raise MsInspectError(f"{out_path.parent}: no such folder")
    _write_file(source_path, digraph.source.encode("utf-8"))
    if fmt == "dot":
        return source_path
    if not dot_available():
        raise DotNotFoundError(source_path, fmt)
    import graphviz

    try:
        picture = graphviz.pipe("dot", fmt, digraph.source.encode("utf-8"))
    except graphviz.ExecutableNotFound as error:
        raise DotNotFoundError(source_path, fmt) from error
    except graphviz.CalledProcessError as error:
        stderr = error.stderr
        message = stderr.decode("utf-8", "replace").strip() if isinstance(stderr, bytes) else str(stderr or error)
        raise MsInspectError(f"dot failed on {source_path}: {message}") from error
    _write_file(out_path, picture)
    return out_path


def _write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``; an OS refusal (permissions, a full disk) is a
    :class:`MsInspectError` naming the path."""
    try:
        path.write_bytes(data)
    except OSError as error:
        raise MsInspectError(f"{path}: cannot be written: {error.strerror or error}") from None


def _holds(path: Path, text: str) -> bool:
    try:
        return path.is_file() and path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False
