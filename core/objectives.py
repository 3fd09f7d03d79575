"""An objective's identity by the content of its data, which keys the reference optima P*.

A job's spec names a dataset, but a name says nothing certain about the matrix behind it.
The worker therefore hashes the data it actually solves on (:func:`data_digest`: the CSR
matrix and the labels after the spec's transforms and label mapping) and keys the objective
by that digest and the loss and penalty weights (:func:`content_objective_hash`). Two jobs
share a P* exactly when they minimize the same function of the same numbers, whatever their
datasets are called, and no registration can make two different matrices share one.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import scipy.sparse as sp

from faceoff.solvers.vocabulary import get_loss

DIGEST_VERSION = b"faceoff-data-v1"
_CHUNK = 1 << 20  # elements cast at a time, so hashing never copies a whole index array


def _update(h: Any, values: np.ndarray, dtype: type) -> None:
    """Feed ``values`` as little-endian ``dtype`` to ``h``, preceded by their count."""
    values = np.asarray(values).ravel()
    h.update(np.int64(values.size).tobytes())
    target = np.dtype(dtype).newbyteorder("<")
    if values.dtype == target and values.flags.c_contiguous:
        h.update(memoryview(values.data).cast("B"))
        return
    for start in range(0, values.size, _CHUNK):
        h.update(np.ascontiguousarray(values[start : start + _CHUNK], dtype=target).tobytes())


def data_digest(A: sp.csr_matrix, b: np.ndarray) -> str:
    """sha256 of a problem's data: shape, CSR structure and values of ``A`` and labels ``b``.

    Equal matrices stored in canonical CSR (sorted indices, no duplicates; a non-canonical
    matrix is canonicalized first) and equal labels give equal digests, whatever their
    index dtypes; any different value, position or shape gives a different one.
    """
    A = sp.csr_matrix(A, dtype=np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    h = hashlib.sha256(DIGEST_VERSION)
    _update(h, np.asarray(A.shape), np.int64)
    _update(h, A.indptr, np.int64)
    _update(h, A.indices, np.int64)
    _update(h, A.data, np.float64)
    _update(h, b, np.float64)
    return h.hexdigest()


def content_objective(
    data_hash: str, loss: str, gamma: float, l1: float, l2: float
) -> dict[str, Any]:
    """What identifies the objective: the data's digest, the loss and the penalty weights
    (γ only for a loss that γ changes, the smoothed hinge)."""
    return {
        "data_hash": data_hash,
        "loss": loss,
        "gamma": float(gamma) if get_loss(loss).smoothed else None,
        "l1": float(l1),
        "l2": float(l2),
    }


def objective_key(objective: dict[str, Any]) -> str:
    """sha256 of a :func:`content_objective`."""
    text = json.dumps(objective, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def content_objective_hash(data_hash: str, loss: str, gamma: float, l1: float, l2: float) -> str:
    """The key of the objective's reference P* (and of a job's ``objective_hash`` once a
    worker has built its problem)."""
    return objective_key(content_objective(data_hash, loss, gamma, l1, l2))
