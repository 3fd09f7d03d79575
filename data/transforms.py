"""Preprocessing of a data matrix A, shape (n_samples, n_features), as in the papers.

- ``rows``: every row aᵢ scaled to unit l2 norm, so R = max‖aᵢ‖ = 1 (SPDC §7.2).
- ``mean``: every entry divided by R̄ = mean ‖aᵢ‖, the average example norm (Faceoff §7,
  "normalized all the entries of X by the average column norm" — Faceoff's X is d × n, so
  its columns are our rows; the same scaling as SPDC §7.3, "the average l2-norm R̄ is
  equal to one"). It keeps the ratio R/R̄ that importance sampling exploits.

Functions return new matrices of the input's kind (dense array or CSR) in float64.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp


def row_norms(A) -> np.ndarray:
    """‖aᵢ‖₂ for every row, array of shape (n_samples,)."""
    if sp.issparse(A):
        return np.sqrt(np.asarray(sp.csr_matrix(A).multiply(A).sum(axis=1)).ravel())
    return np.linalg.norm(np.asarray(A, dtype=np.float64), axis=1)


def normalize_rows(A):
    """aᵢ ← aᵢ / ‖aᵢ‖₂ (SPDC §7.2); rows that are all zero stay zero."""
    norms = row_norms(A)
    # inv = 1/‖aᵢ‖, 0 for empty rows
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    if sp.issparse(A):
        return sp.csr_matrix(sp.diags(inv) @ sp.csr_matrix(A, dtype=np.float64))
    return np.asarray(A, dtype=np.float64) * inv[:, None]


def scale_by_mean_row_norm(A):
    """A ← A / R̄ with R̄ = 1/n Σᵢ ‖aᵢ‖₂ (Faceoff §7, SPDC §7.3); A stays as is if R̄ = 0."""
    mean_norm = float(row_norms(A).mean()) if A.shape[0] else 0.0
    scale = 1.0 / mean_norm if mean_norm > 0 else 1.0
    if sp.issparse(A):
        return sp.csr_matrix(A, dtype=np.float64) * scale
    return np.asarray(A, dtype=np.float64) * scale


def _unchanged(A):
    return A


NORMALIZATIONS: dict[str, Callable] = {
    "none": _unchanged,
    "rows": normalize_rows,
    "mean": scale_by_mean_row_norm,
}


def normalize(A, how: str):
    """Apply the normalization named ``how`` (a key of :data:`NORMALIZATIONS`)."""
    if how not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization {how!r}; accepted: {', '.join(NORMALIZATIONS)}")
    return NORMALIZATIONS[how](A)
