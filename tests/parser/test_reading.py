"""Reading files safely: corrupt .gz streams, a cap on decompressed size, odd paths."""
from __future__ import annotations

import gzip

import pytest

from msinspect import parse_file
from msinspect.errors import DumpNotFoundError, IRDecodeError, IRParseError, IRTooLargeError
from msinspect.errors import ConfigError
from msinspect.parser.reading import MAX_BYTES_VARIABLE, MAX_TEXT_BYTES, read_text
from tests.conftest import FIXTURES

GOOD = FIXTURES / "sharding_propagation_dryrun_8rank" / "rank_0" / "step_parallel_end_0133.ir.gz"


def _damaged(how: str) -> bytes:
    data = bytearray(GOOD.read_bytes())
    if how == "header":
        data[0] ^= 0xFF                      # not the gzip magic
    elif how == "crc":
        data[-8] ^= 0xFF                     # CRC32 of the trailer no longer matches
    elif how == "truncated":
        data = data[: len(data) // 2]        # stream ends in the middle
    elif how == "body":
        data[len(data) // 2] ^= 0x55         # a garbled deflate block
    return bytes(data)


@pytest.mark.parametrize("how", ["header", "crc", "truncated", "body"])
def test_corrupt_gzip_is_a_decode_error_naming_the_file(tmp_path, how):
    path = tmp_path / "rank_3" / "step_parallel_end_0133.ir.gz"
    path.parent.mkdir()
    path.write_bytes(_damaged(how))
    for lenient in (False, True):
        try:
            ir = parse_file(path, lenient=lenient)
        except IRDecodeError as err:
            assert err.path == str(path) and str(err).startswith(str(path) + ":")
        else:
            assert lenient and not ir.complete and ir.diagnostics  # lenient: what was read, flagged


def test_truncated_gzip_lenient_keeps_the_text_before_the_cut(tmp_path):
    path = tmp_path / "x_validate_0001.ir.gz"
    path.write_bytes(_damaged("truncated"))
    with pytest.raises(IRDecodeError, match="truncated") as info:
        read_text(path)
    assert info.value.lenient_helps  # the text before the cut is there to read
    text, diagnostics = read_text(path, lenient=True)
    whole = gzip.decompress(GOOD.read_bytes()).decode()
    assert text and whole.startswith(text) and len(text) < len(whole)
    assert [d.line for d in diagnostics] == [text.count("\n") + 1]


def test_gzip_members_and_padding_read_as_gzip_reads_them(tmp_path):
    """A .gz of several members (``cat a.gz b.gz``) is their texts one after the other; zero
    padding after the last member (tape archives) is skipped; bytes that are no member after
    one are an error. What Python's gzip module says of each (it is the reference)."""
    first, second = b"%1 = A()\n", b"%2 = B()\n"
    cases = {"members": gzip.compress(first) + gzip.compress(second),
             "padded": gzip.compress(first) + b"\0" * 16,
             "garbage": gzip.compress(first) + b"not a member"}
    for name, data in cases.items():
        path = tmp_path / f"{name}_validate_0001.ir.gz"
        path.write_bytes(data)
        try:
            expected = gzip.decompress(data).decode()
        except (OSError, EOFError):
            with pytest.raises(IRDecodeError):
                read_text(path)
        else:
            assert read_text(path) == (expected, [])
    assert read_text(tmp_path / "members_validate_0001.ir.gz")[0] == (first + second).decode()


def test_reading_a_gz_asks_for_what_it_reads_not_the_cap():
    """The cap (4 GiB) bounds what is read; it is never asked of the allocator up front (a
    read(cap + 1) of each rank's file did: 4 GiB reserved for a 0.4 MB text)."""
    import tracemalloc

    tracemalloc.start()
    try:
        text, _ = read_text(GOOD)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 * len(text.encode()) + (1 << 20)


def test_decompressed_size_is_capped(tmp_path, monkeypatch):
    path = tmp_path / "flood_validate_0001.ir.gz"
    path.write_bytes(gzip.compress(b"\n" * (4 << 20)))          # 4 KB on disk, 4 MiB of blank lines
    assert path.stat().st_size < 64 << 10
    with pytest.raises(IRTooLargeError, match="larger than 1,048,576 bytes") as info:
        read_text(path, max_bytes=1 << 20)
    assert info.value.path == str(path)
    monkeypatch.setenv(MAX_BYTES_VARIABLE, str(1 << 20))
    for lenient in (False, True):
        with pytest.raises(IRTooLargeError, match=MAX_BYTES_VARIABLE):
            parse_file(path, lenient=lenient)
    plain = tmp_path / "big.ir"
    plain.write_bytes(b"\n" * ((1 << 20) + 1))
    with pytest.raises(IRTooLargeError, match="the file is larger"):
        read_text(plain)
    monkeypatch.setenv(MAX_BYTES_VARIABLE, "lots")  # a setting, not the file, is wrong: exit 2, no hint
    with pytest.raises(ConfigError, match="MSINSPECT_MAX_IR_BYTES must be a positive number of bytes, not 'lots'"):
        read_text(plain)


def test_default_cap_is_four_gib(monkeypatch):
    monkeypatch.delenv(MAX_BYTES_VARIABLE, raising=False)
    from msinspect.parser.reading import max_text_bytes
    assert max_text_bytes() == MAX_TEXT_BYTES == 4 * 1024 ** 3


def test_path_with_a_newline(tmp_path):
    folder = tmp_path / "a\nb"
    folder.mkdir()
    good = folder / "step_parallel_end_0133.ir.gz"
    good.write_bytes(GOOD.read_bytes())
    assert parse_file(good).complete
    bad = folder / "x_validate_0001.ir"
    bad.write_text("garbage here\n")
    with pytest.raises(IRParseError) as info:
        parse_file(bad)
    assert info.value.path == str(bad)
    assert "a\\nb" in str(info.value).splitlines()[0]          # the message stays on its line
    assert not parse_file(bad, lenient=True).complete            # no IndexError in lenient mode


def test_folder_and_missing_file(tmp_path):
    with pytest.raises(DumpNotFoundError, match="is a folder"):
        parse_file(tmp_path)
    with pytest.raises(DumpNotFoundError, match="no such file"):
        parse_file(tmp_path / "missing.ir")
    with pytest.raises(DumpNotFoundError, match="no such file"):
        parse_file(tmp_path / "missing.ir.gz", lenient=True)
