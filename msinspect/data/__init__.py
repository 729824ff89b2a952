"""Training data for the jobs in ``train_jobs/``: MNIST in MindSpore's IDX layout."""
from msinspect.data.mnist import (
    DataError,
    IdxInfo,
    default_cache_dir,
    ensure_mnist5k,
    resolve_data,
    validate_idx_dir,
)

__all__ = [
    "DataError",
    "IdxInfo",
    "default_cache_dir",
    "ensure_mnist5k",
    "resolve_data",
    "validate_idx_dir",
]
