"""``load_dataset(name)``: a registered dataset as (A, b, spec), parsed once per machine.

The svmlight text is parsed with :func:`faceoff.data.svmlight.read_svmlight` (with the registry's
``n_features``, so train and test splits align) and the CSR matrix is stored as a compressed
``.npz`` in ``CACHE/parsed/``, keyed by the sha256 of the file and ``n_features``; later loads
read the ``.npz``. The last :data:`MEMORY_SIZE` datasets are also kept in memory, the older
ones only within :data:`MEMORY_BYTES` (a worker does not hold several large ones). Every
parse is checked against the registry's shape (n_samples, n_features and nnz when known).

Matrices built from datasets (random features: :mod:`faceoff.core.features`) are cached the
same way by :func:`built_matrix`, in ``CACHE/built/`` under a key that names everything the
matrix depends on: built once per machine, read back (checked) by every later job.
"""

from __future__ import annotations

import logging
import os
import tempfile
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from faceoff.data.fetch import cache_dir, locate
from faceoff.data.registry import DatasetError, DatasetSpec, get_spec
from faceoff.data.svmlight import compact_indices, read_svmlight

log = logging.getLogger(__name__)

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
    _write_arrays(
        path, compressed=True, data=A.data, indices=A.indices, indptr=A.indptr, shape=A.shape, b=b
    )


def _write_arrays(path: Path, *, compressed: bool, **arrays: Any) -> None:
    """``arrays`` as an ``.npz`` at ``path``, written to a temporary file of the same folder,
    then renamed: a reader never sees half a file, and of two writers the last wins whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".npz")
    save = np.savez_compressed if compressed else np.savez
    try:
        with os.fdopen(fd, "wb") as f:
            save(f, **arrays)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


# ------------------------------------------------------------------ built matrices

BUILT = "built"  # the folder of built matrices in the cache folder
# what reading a damaged or foreign file raises: numpy's, zipfile's (a bad CRC-32: each
# member is checked as it is read to its end), zlib's
_UNREADABLE = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error)


def built_matrix(
    key: str,
    build: Callable[[], tuple[sp.csr_matrix, np.ndarray]],
    *,
    cache: Path | None = None,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """(A, b) that ``build`` makes, built once per machine: stored in ``CACHE/built/KEY.npz``
    (uncompressed: a read costs a copy, not a decompression) and read from there by later
    calls with the same ``key``, which must name everything the result depends on (the
    caller digests its inputs and the code that builds it into a plain file name).

    A file that cannot be read back whole and consistent (truncated, corrupted: every
    member's CRC-32 is checked, then the key and the CSR structure) is rebuilt, never
    trusted. Concurrent callers on one machine build once: the others wait on a lock file
    beside it, then read; a writer renames a complete temporary file into place, so even
    without the lock no reader sees a partial file. Nothing is kept in memory here."""
    if not key or not all(ch.isalnum() or ch in "-_." for ch in key) or key.startswith("."):
        raise ValueError(f"a built matrix's key must be a plain file name, got {key!r}")
    folder = (cache_dir() if cache is None else cache) / BUILT
    path = folder / f"{key}.npz"
    found = _read_built(path, key)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    with _exclusive(folder / f".{key}.lock"):
        found = _read_built(path, key)  # built by another process while we waited
        if found is not None:
            return found
        A, b = build()
        A = sp.csr_matrix(A)
        _write_arrays(
            path,
            compressed=False,
            key=np.array(key),
            data=A.data,
            indices=A.indices,
            indptr=A.indptr,
            shape=np.array(A.shape),
            b=np.asarray(b),
        )
        return A, b


def _read_built(path: Path, key: str) -> tuple[sp.csr_matrix, np.ndarray] | None:
    """(A, b) stored at ``path`` under ``key``; None when absent or not readable whole and
    consistent (a warning then says why: the caller rebuilds it)."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            stored = str(z["key"])
            n, d = (int(v) for v in z["shape"])
            data, indices, indptr, b = z["data"], z["indices"], z["indptr"], z["b"]
        if stored != key:
            raise ValueError(f"it holds key {stored!r}")
        if (
            indptr.shape != (n + 1,)
            or indptr[0] != 0
            or indptr[-1] != data.shape[0]
            or indices.shape != data.shape
            or b.shape[0] != n
            or np.any(np.diff(indptr) < 0)
            or (indices.size and (indices.min() < 0 or indices.max() >= d))
        ):
            raise ValueError("its CSR arrays are not consistent with its shape")
        A = sp.csr_matrix((data, indices, indptr), shape=(n, d))
    except _UNREADABLE as err:
        log.warning("rebuilding %s: the cached file is unreadable (%s)", path, err)
        return None
    return A, b


@contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """An exclusive lock on the file ``lock`` of this machine (released by the system when
    its holder dies); no lock where the system has no ``fcntl`` (atomic renames still keep
    the cache whole)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
