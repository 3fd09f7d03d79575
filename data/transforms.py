"""Preprocessing of a data matrix A, shape (n_samples, n_features), as in the papers.

- ``rows``: every row aᵢ scaled to unit l2 norm, so R = max‖aᵢ‖ = 1 (SPDC §7.2).
- ``mean``: every entry divided by R̄ = mean ‖aᵢ‖, the average example norm (Faceoff §7,
  "normalized all the entries of X by the average column norm" — Faceoff's X is d × n, so
  its columns are our rows; the same scaling as SPDC §7.3, "the average l2-norm R̄ is
  equal to one"). It keeps the ratio R/R̄ that importance sampling exploits.
- :func:`standardize`: every column to mean 0 and standard deviation 1 (dense data only).

Functions return new matrices of the input's kind (dense array or CSR) in float64.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

import numpy as np
import scipy.sparse as sp

# A data matrix: a dense array or a scipy sparse matrix (scipy has no type information, so
# for mypy this is about the intent)
Matrix: TypeAlias = "np.ndarray | sp.spmatrix | sp.sparray"


def full_pattern_csr(dense: np.ndarray) -> sp.csr_matrix:
    """A 2-D array as float64 CSR with every entry stored (zeros too), its values a view of
    ``dense`` when it is C-contiguous float64: only the column indices (4 bytes an entry)
    are new, where ``sp.csr_matrix(dense)`` goes through COO (28 bytes an entry)."""
    dense = np.ascontiguousarray(dense, dtype=np.float64)
    n, d = dense.shape
    return sp.csr_matrix(
        (
            dense.ravel(),
            np.tile(np.arange(d, dtype=np.int32), n),
            np.arange(0, n * d + 1, d, dtype=np.int64),
        ),
        shape=(n, d),
    )


def as_csr(A: Matrix) -> sp.csr_matrix:
    """A as float64 CSR without explicit zeros (``sp.csr_matrix(A, dtype=np.float64)``),
    built without COO temporaries from a dense array that has no zero."""
    if sp.issparse(A):
        return sp.csr_matrix(A, dtype=np.float64)
    dense = np.asarray(A)
    if dense.ndim == 2 and dense.all():
        return full_pattern_csr(dense)
    return sp.csr_matrix(dense, dtype=np.float64)


def row_norms(A: Matrix) -> np.ndarray:
    """‖aᵢ‖₂ for every row, array of shape (n_samples,)."""
    if sp.issparse(A):
        csr = sp.csr_matrix(A)
        # the sums of A.multiply(A) (which drops zero products and adds up duplicate
        # entries before squaring them), with one temporary array
        squares = np.square(csr.data)
        if not csr.has_canonical_format or (squares == 0).any():
            return np.sqrt(np.asarray(csr.multiply(csr).sum(axis=1)).ravel())
        sq = sp.csr_matrix((squares, csr.indices, csr.indptr), shape=csr.shape)
        return np.sqrt(np.asarray(sq.sum(axis=1)).ravel())
    return np.linalg.norm(np.asarray(A, dtype=np.float64), axis=1)


def normalize_rows(A: Matrix) -> Matrix:
    """aᵢ ← aᵢ / ‖aᵢ‖₂ (SPDC §7.2); rows that are all zero stay zero."""
    norms = row_norms(A)
    # inv = 1/‖aᵢ‖, 0 for empty rows
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    if sp.issparse(A):  # new values, A's index arrays shared (a product would copy them)
        csr = _sorted_csr(A)
        data = np.repeat(inv, np.diff(csr.indptr))
        data *= csr.data
        return sp.csr_matrix((data, csr.indices, csr.indptr), shape=csr.shape)
    return np.asarray(A, dtype=np.float64) * inv[:, None]


def scale_by_mean_row_norm(A: Matrix) -> Matrix:
    """A ← A / R̄ with R̄ = 1/n Σᵢ ‖aᵢ‖₂ (Faceoff §7, SPDC §7.3); A stays as is if R̄ = 0."""
    return _scaled(A, _inverse_mean_row_norm(A))


def _inverse_mean_row_norm(A: Matrix) -> float:
    """1/R̄ of A's rows (1 when R̄ = 0)."""
    mean_norm = float(row_norms(A).mean()) if A.shape[0] else 0.0
    return 1.0 / mean_norm if mean_norm > 0 else 1.0


def _scaled(A: Matrix, scale: float) -> Matrix:
    """scale·A, as float64 of A's kind."""
    if sp.issparse(A):  # new values, A's index arrays shared
        csr = _sorted_csr(A)
        return sp.csr_matrix((csr.data * scale, csr.indices, csr.indptr), shape=csr.shape)
    return np.asarray(A, dtype=np.float64) * scale


def _sorted_csr(A: Matrix) -> sp.csr_matrix:
    """A as float64 CSR with sorted indices, copied only if it needs sorting: a matrix that
    shares A's index arrays must never sort them in place (A's values would not follow)."""
    csr = sp.csr_matrix(A, dtype=np.float64)
    return csr if csr.has_sorted_indices else csr.sorted_indices()


def standardize(A: Matrix) -> np.ndarray:
    """Columns to mean 0 and standard deviation 1; constant columns become 0.

    Parameters
    ----------
    A : array, shape (n_samples, n_features)
        Dense data. Sparse input is refused: centering would make every entry non-zero.
    """
    if sp.issparse(A):
        raise TypeError(
            f"standardize needs dense data, got a sparse {A.shape[0]}×{A.shape[1]} matrix: "
            "centering the columns would make it dense. Use normalize_rows or "
            "scale_by_mean_row_norm for sparse data, or pass A.toarray() if it fits in memory."
        )
    A = np.asarray(A, dtype=np.float64)
    std = A.std(axis=0)
    # (A − mean) / std, with 1/std = 0 for constant columns (exactly, despite rounding in std)
    inv = np.divide(1.0, std, out=np.zeros_like(std), where=np.ptp(A, axis=0) > 0)
    return (A - A.mean(axis=0)) * inv


def _unchanged(A: Matrix) -> Matrix:
    return A


NORMALIZATIONS: dict[str, Callable[[Matrix], Matrix]] = {
    "none": _unchanged,
    "rows": normalize_rows,
    "mean": scale_by_mean_row_norm,
}


def normalize(A: Matrix, how: str) -> Matrix:
    """Apply the normalization named ``how`` (a key of :data:`NORMALIZATIONS`)."""
    if how not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization {how!r}; accepted: {', '.join(NORMALIZATIONS)}")
    return NORMALIZATIONS[how](A)


def normalize_like(A: Matrix, how: str, reference: Matrix) -> Matrix:
    """``A`` (test rows) under the normalization named ``how`` as it was fitted on
    ``reference`` (the training rows, as read): ``rows`` scales each row of A to unit
    norm, ``mean`` divides A by the training rows' R̄, not by its own."""
    if how == "mean":
        return _scaled(A, _inverse_mean_row_norm(reference))
    return normalize(A, how)
