"""Reading an IR file's bytes safely: ``.ir.gz`` decompressed as a stream with a cap on its size,
UTF-8 decoded, every failure an error of :mod:`msinspect.errors` naming the file.

What can go wrong and what the caller gets:

- a path holding a NUL character: :class:`~msinspect.errors.BadArgumentError`;
- no such file, or a folder: :class:`~msinspect.errors.DumpNotFoundError`;
- unreadable (permissions, I/O): :class:`~msinspect.errors.IRReadError`, in both modes;
- a corrupt ``.gz`` (bad header, bad CRC, truncated or garbled stream):
  :class:`~msinspect.errors.IRDecodeError` in strict mode; in lenient mode the text
  decompressed before the damage, with one diagnostic (the file then reads as incomplete);
- text larger than the cap (:data:`MAX_TEXT_BYTES`, 4 GiB unless the environment variable
  ``MSINSPECT_MAX_IR_BYTES`` or the ``max_bytes`` argument says otherwise), counted after
  decompression, so a small ``.gz`` cannot expand into gigabytes of memory:
  :class:`~msinspect.errors.IRTooLargeError`, in both modes;
- bytes that are not UTF-8: an :class:`~msinspect.errors.IRDecodeError` at their line and column
  (lenient: a diagnostic, the bytes replaced by U+FFFD).

:func:`text_pieces` reads a file that has none of these problems piece by piece, so a parse need
not hold its whole text; where it meets one it raises :class:`Unclean`, and :func:`read_text`
says what it is.
"""
from __future__ import annotations

import codecs
import errno
import gzip
import os
import stat
import zlib
from pathlib import Path
from typing import Iterator

from msinspect.errors import (ConfigError, DumpNotFoundError, IRDecodeError, IRReadError, IRTooLargeError,
                              check_path)
from msinspect.model import Diagnostic

#: Environment variable that sets the cap on an IR file's (decompressed) size, in bytes.
MAX_BYTES_VARIABLE = "MSINSPECT_MAX_IR_BYTES"
#: Default cap on an IR file's (decompressed) size: 4 GiB. MindSpore's largest dumps are a few
#: hundred MB; beyond the cap the file is refused rather than read into memory.
MAX_TEXT_BYTES = 4 << 30
_CHUNK = 1 << 20
#: Bytes read at a time by :func:`text_pieces`.
PIECE_BYTES = 1 << 18


def max_text_bytes() -> int:
    """The cap in force: ``MSINSPECT_MAX_IR_BYTES`` when set to a positive integer, else 4 GiB."""
    value = os.environ.get(MAX_BYTES_VARIABLE, "").strip()
    if value:
        try:
            cap = int(value)
        except ValueError:
            cap = 0
        if cap > 0:
            return cap
        raise ConfigError(f"{MAX_BYTES_VARIABLE} must be a positive number of bytes, not {value!r}")
    return MAX_TEXT_BYTES


def _too_big(path: str | Path, cap: int, what: str) -> IRTooLargeError:
    return IRTooLargeError(path=str(Path(path)), line=0, column=0,
                           message=f"{what} is larger than {cap:,} bytes, the most msinspect reads "
                                   f"(set {MAX_BYTES_VARIABLE} to raise the cap)")


def _read_capped(stream, path: str | Path, cap: int) -> bytes:
    """Read ``stream`` to its end in chunks (never one buffer of ``cap`` bytes); an
    IRTooLargeError past ``cap`` bytes."""
    out = bytearray()
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            return bytes(out)
        out += chunk
        if len(out) > cap:
            raise _too_big(path, cap, "its decompressed text" if str(path).endswith(".gz") else "the file")


def _gunzip(path: str | Path, cap: int) -> bytes | None:
    """The text of a ``.gz`` file that decompresses cleanly, each gzip member in one call of
    zlib (four times faster than :mod:`gzip`'s buffered reading of a 0.4 MB rank); None where it
    does not (damaged, cut, or more than ``cap`` bytes compressed): :func:`_read_gzip` reads it
    as a stream then, says why and keeps what it can."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size > cap:  # not read(cap + 1): that asks for cap bytes up front
            return None
        data = handle.read()
    out, size = [], 0
    while data:
        stream = zlib.decompressobj(wbits=31)  # a gzip member: header, deflate, CRC and size checked
        try:
            piece = stream.decompress(data, cap + 1 - size)
        except zlib.error:
            return None
        out.append(piece)
        size += len(piece)
        if size > cap:
            raise _too_big(path, cap, "its decompressed text")
        if not stream.eof:
            return None
        data = stream.unused_data
    return out[0] if len(out) == 1 else b"".join(out)  # one member (the usual): not copied


def _read_gzip(path: str | Path, cap: int, lenient: bool) -> tuple[bytes, list[Diagnostic]]:
    whole = _gunzip(path, cap)
    if whole is not None:
        return whole, []
    out = bytearray()
    try:
        with gzip.open(path, "rb") as stream:
            while True:
                chunk = stream.read1(_CHUNK)  # what is there: keeps the text before a cut
                if not chunk:
                    return bytes(out), []
                out += chunk
                if len(out) > cap:
                    raise _too_big(path, cap, "its decompressed text")
    except (OSError, EOFError, zlib.error) as err:
        if isinstance(err, OSError) and not isinstance(err, gzip.BadGzipFile):
            raise  # the file, not its stream: a read error (read_bytes)
        reason = "ends early (truncated .gz)" if isinstance(err, EOFError) else f"is not a valid .gz ({err})"
        message = f"compressed stream {reason}"
        if not lenient or not out:
            raise IRDecodeError(path=str(Path(path)), line=0, column=0, message=f"cannot decompress: {message}",
                                lenient_helps=bool(out)) from None
        # Keep what decompressed cleanly up to the last whole line; say where the damage starts.
        text = bytes(out[:out.rfind(b"\n") + 1])
        return text, [Diagnostic(text.count(b"\n") + 1, 1, f"{message}; text read up to here")]


#: What a stat that fails says of a file that is not there (as :meth:`pathlib.Path.exists` reads it).
_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def read_bytes(path: str | os.PathLike, *, lenient: bool = False,
               max_bytes: int | None = None) -> tuple[bytes, list[Diagnostic]]:
    """The file's bytes, ``.gz`` decompressed, at most ``max_bytes`` (default
    :func:`max_text_bytes`); see the module's docstring for the errors."""
    check_path(path)
    # the path's text, a Path only to say what is wrong: pathlib interns the name of every
    # folder of every path it parses, for good (10,000 ranks' folders: a table of 1.9 MB)
    where = os.fspath(path)
    cap = max_bytes if max_bytes is not None else max_text_bytes()
    try:
        try:
            is_dir = stat.S_ISDIR(os.stat(where).st_mode)
        except OSError as err:
            if err.errno not in _NOT_THERE:
                raise
            raise DumpNotFoundError(f"{Path(where)}: no such file") from None
        if is_dir:
            raise DumpNotFoundError(f"{Path(where)}: is a folder, not an IR file")
        if where.endswith(".gz"):
            return _read_gzip(where, cap, lenient)
        with open(where, "rb") as handle:
            raw = _read_capped(handle, where, cap)
    except OSError as err:
        raise IRReadError(path=str(Path(where)), line=0, column=0,
                          message=f"cannot read: {err.strerror or err}") from None
    return raw, []


def read_text(path: str | os.PathLike, *, lenient: bool = False,
              max_bytes: int | None = None) -> tuple[str, list[Diagnostic]]:
    """The file's text (``.ir.gz`` decompressed), with reading and decoding problems as
    diagnostics in lenient mode where text can still be read, and as errors otherwise
    (:class:`~msinspect.errors.IRDecodeError`, :class:`~msinspect.errors.IRReadError`, ...)."""
    raw, diagnostics = read_bytes(path, lenient=lenient, max_bytes=max_bytes)
    try:
        return raw.decode("utf-8"), diagnostics
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        line_start = raw.rfind(b"\n", 0, err.start) + 1
        column = err.start - line_start + 1
        message = f"invalid UTF-8 byte {raw[err.start]:#04x}"
        if not lenient:
            line_end = raw.find(b"\n", err.start)
            shown = raw[line_start:line_end if line_end >= 0 else len(raw)].decode("utf-8", "replace")
            raise IRDecodeError(path=str(Path(path)), line=line, column=column, message=message,
                                source_line=shown) from None
        return raw.decode("utf-8", "replace"), diagnostics + [Diagnostic(line, column, message)]


class Unclean(Exception):
    """The file has a problem :func:`read_text` reports (it cannot be read, its ``.gz`` is bad, it
    is over the cap, it is not UTF-8): read it with :func:`read_text` to say what."""


def text_pieces(path: str | os.PathLike, digest=None, max_bytes: int | None = None) -> Iterator[str]:
    """The file's text (``.ir.gz`` decompressed) in pieces of about :data:`PIECE_BYTES`, decoded
    as they are read: what the pieces join to is what :func:`read_text` returns. ``digest`` (a
    hashlib object), when given, is fed each piece's bytes. :class:`Unclean` where
    :func:`read_text` would report a problem, once that problem is met (pieces before it may
    have been given)."""
    path = Path(path)
    cap = max_bytes if max_bytes is not None else max_text_bytes()
    decoder = codecs.getincrementaldecoder("utf-8")()
    total = 0
    try:
        with (gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")) as stream:
            while True:
                raw = stream.read(PIECE_BYTES)
                total += len(raw)
                if total > cap:
                    raise Unclean
                if digest is not None:
                    digest.update(raw)
                piece = decoder.decode(raw, final=not raw)
                if piece:
                    yield piece
                if not raw:
                    return
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, ValueError):  # ValueError: a NUL in the path
        raise Unclean from None
