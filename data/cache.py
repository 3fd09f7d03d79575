"""``load_dataset(name)``: a registered dataset as (A, b, spec), parsed once per machine.

The svmlight text is parsed with :func:`faceoff.data.svmlight.read_svmlight` (with the registry's
``n_features``, so train and test splits align) and the CSR matrix is stored as a compressed
``.npz`` in ``CACHE/parsed/``, keyed by the sha256 of the file and ``n_features``; later loads
read the ``.npz``. The last :data:`MEMORY_SIZE` datasets are also kept in memory, the older
ones only within :data:`MEMORY_BYTES` (a worker does not hold several large ones). Every
parse is checked against the registry's shape (n_samples, n_features and nnz when known).
"""

from __future__ import annotations

import os
import tempfile
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from faceoff.data.fetch import cache_dir, locate
from faceoff.data.registry import DatasetError, DatasetSpec, get_spec
from faceoff.data.svmlight import compact_indices, read_svmlight

MEMORY_SIZE = 4  # datasets kept in memory, at most, ...
MEMORY_BYTES = 256 * 1024**2  # ... and their bytes beyond the newest (a worker's budget)
_memory: OrderedDict[tuple, tuple[sp.csr_matrix, np.ndarray]] = OrderedDict()


def load_dataset(
    name: str,
    *,
    registry: Mapping[str, DatasetSpec] | None = None,
    mirror: Path | None = None,
    cache: Path | None = None,
    progress: bool = True,
) -> tuple[sp.csr_matrix, np.ndarray, DatasetSpec]:
    """The dataset ``name`` of the registry.

    Returns
    -------
    A : csr_matrix, shape (n_samples, n_features), float64
    b : array, shape (n_samples,)
        Labels as in the file.
    spec : DatasetSpec

    Raises
    ------
    DatasetError
        Unknown name, file not available, checksum mismatch, or a parse or shape that
        differs from the registry.
    """
    spec = get_spec(name, registry)
    cache = cache_dir() if cache is None else cache
    found = locate(spec, mirror=mirror, cache=cache, progress=progress)
    key = (found.sha256, spec.n_features)
    if key in _memory:
        _memory.move_to_end(key)
        A, b = _memory[key]
        return A, b, spec
    parsed = cache / "parsed" / f"{found.sha256}-{spec.n_features}.npz"
    if parsed.is_file():
        A, b = _read_npz(parsed)
        check_shape(spec, A, b)
    else:
        A, b = _parse(found.path, spec)
        check_shape(spec, A, b)  # before caching: a wrong parse is never stored
        _write_npz(parsed, A, b)
    _memory[key] = (A, b)
    while len(_memory) > MEMORY_SIZE or (len(_memory) > 1 and _memory_bytes() > MEMORY_BYTES):
        _memory.popitem(last=False)
    return A, b, spec


def _memory_bytes() -> int:
    """Bytes of the datasets kept in memory, the newest excepted."""
    kept = list(_memory.values())[:-1]
    return sum(A.data.nbytes + A.indices.nbytes + A.indptr.nbytes + b.nbytes for A, b in kept)


def clear_memory() -> None:
    """Forget the in-memory datasets (the ``.npz`` files stay)."""
    _memory.clear()


def check_shape(spec: DatasetSpec, A: sp.csr_matrix, b: np.ndarray) -> None:
    """DatasetError unless A and b have the registry's shape and nnz."""
    expected = (spec.n_samples, spec.n_features)
    if A.shape != expected or b.shape != (spec.n_samples,):
        raise DatasetError(
            f"dataset {spec.name!r} parsed to {A.shape[0]} x {A.shape[1]} with "
            f"{b.shape[0]} labels, expected {expected[0]} x {expected[1]} (registry)"
        )
    if spec.nnz is not None and A.nnz != spec.nnz:
        raise DatasetError(
            f"dataset {spec.name!r} parsed to {A.nnz} non-zeros, expected {spec.nnz} (registry)"
        )


def _parse(path: Path, spec: DatasetSpec) -> tuple[sp.csr_matrix, np.ndarray]:
    try:
        return read_svmlight(path, n_features=spec.n_features)
    except ValueError as err:
        raise DatasetError(f"dataset {spec.name!r}: {err}") from None


def _read_npz(path: Path) -> tuple[sp.csr_matrix, np.ndarray]:
    with np.load(path) as z:
        A = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
        return compact_indices(A), z["b"]


def _write_npz(path: Path, A: sp.csr_matrix, b: np.ndarray) -> None:
    """Written to a temporary file, then renamed: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(
                f, data=A.data, indices=A.indices, indptr=A.indptr, shape=A.shape, b=b
            )
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
