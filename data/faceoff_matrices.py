"""The extremal matrices of the Faceoff paper (Csiba & Richtárik, "Coordinate Descent Faceoff:
Primal or Dual?"): Theorem 3's X(a, b, c) and the binary worst cases of Theorem 9.

The paper's X has shape (d, n) with examples as columns; every function here returns our
A = Xᵀ, shape (n_samples, n_features) = (n, d), rows = examples. In our notation (see
:mod:`faceoff.data.stats`) C_P = Σ_features nnz(A_{:j})‖A_{:j}‖² and C_D = Σ_examples nnz(aᵢ)‖aᵢ‖²
(eq. (16)); for binary matrices C_P = Σ nnz(column)² and C_D = Σ nnz(row)².
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

SIDES = ("primal", "dual")


def theorem3_matrix(d: int, n: int, a: float, b: float, c: float) -> sp.csr_matrix:
    """Our A = X(a, b, c)ᵀ, the matrix showing that Theorem 3's bounds are tight.

    The paper's X(a, b, c) ∈ R^{d×n} has X₁₁ = c, X_{i1} = a for i ≠ 1 (first example,
    all other features) and X_{1j} = b for j ≠ 1 (first feature, all other examples). So
    in A, row 0 (the first example) is (c, a, …, a) and column 0 (the first feature) is
    (c, b, …, b)ᵀ. Then C_P = (d−1)a² + n(n−1)b² + nc² and C_D = d(d−1)a² + (n−1)b² + dc²;
    C_P/C_D → 1/d as b, c → 0 and → n as a, c → 0.

    Returns
    -------
    csr_matrix, shape (n, d)
    """
    if d < 1 or n < 1:
        raise ValueError(f"d and n must be >= 1, got d={d}, n={n}")
    if a == 0 or b == 0 or c == 0:
        raise ValueError(f"a, b, c must be non-zero (no zero rows/columns), got {a}, {b}, {c}")
    rows = np.concatenate([np.zeros(d, dtype=np.int64), np.arange(1, n)])
    cols = np.concatenate([np.arange(d), np.zeros(n - 1, dtype=np.int64)])
    vals = np.concatenate([[c], np.full(d - 1, a), np.full(n - 1, b)]).astype(np.float64)
    return sp.csr_matrix((vals, (rows, cols)), shape=(n, d))


def _round_down(a: int, b: int) -> int:
    """ā_b = b⌊a/b⌋, a rounded down to a multiple of b (Faceoff §6.2)."""
    return b * (a // b)


def binary_min_c(alpha: int, k: int) -> int:
    """L(α, k) = (ᾱ_k² + (α − ᾱ_k)(2ᾱ_k + k))/k, Lemma 10 (19)–(20): the least Σ nnz² over
    k lines (rows or columns) holding α non-zeros in total, reached when their counts differ
    by at most one. min C_D = L(α, n) (n examples), min C_P = L(α, d) (d features)."""
    q = _round_down(alpha, k)
    return (q * q + (alpha - q) * (2 * q + k)) // k


def binary_max_c(alpha: int, k: int, m: int) -> int:
    """U(α, k, m) = (m+1)·(α−k)‾_{m−1} + k − 1 + [α − k + 1 − (α−k)‾_{m−1}]², Lemma 10
    (21)–(22): the largest Σ nnz² over k non-empty lines of length m holding α non-zeros.
    max C_D = U(α, n, d) (n examples of length d), max C_P = U(α, d, n)."""
    if m == 1:
        return alpha  # every line holds exactly one non-zero
    q = _round_down(alpha - k, m - 1)
    return (m + 1) * q + k - 1 + (alpha - k + 1 - q) ** 2


def theorem9_ratio_bounds(d: int, n: int, nnz: int) -> tuple[float, float]:
    """(1/R(α, n, d), R(α, d, n)), Theorem 9: the least and largest C_P/C_D over binary
    matrices with d features, n examples and α = ``nnz`` non-zeros, none of its rows or
    columns empty; R(α, d, n) = U(α, d, n)/L(α, n) = max C_P / min C_D."""
    _check_sizes(d, n, nnz)
    low = binary_min_c(nnz, d) / binary_max_c(nnz, n, d)  # min C_P / max C_D
    high = binary_max_c(nnz, d, n) / binary_min_c(nnz, n)  # max C_P / min C_D
    return low, high


def _check_sizes(d: int, n: int, nnz: int) -> None:
    if d < 1 or n < 1:
        raise ValueError(f"d and n must be >= 1, got d={d}, n={n}")
    if not (max(d, n) <= nnz <= d * n):
        raise ValueError(
            f"nnz={nnz} cannot fill a {n}×{d} matrix without zero rows or columns; "
            f"need max(d, n) = {max(d, n)} <= nnz <= d·n = {d * n}"
        )


def _unequal_rows(n_rows: int, n_cols: int, nnz: int) -> sp.csr_matrix:
    """Binary (n_rows, n_cols) matrix with ``nnz`` ones: row counts as unequal as possible
    (maximal Σ row_nnz²), column counts as equal as possible (minimal Σ col_nnz²).

    Construction of the proof of Lemma 10 (iii) and Theorem 9: ``full`` = ⌊(α − k)/(m − 1)⌋
    rows are full (m ones, m = n_cols, k = n_rows), one row holds the remainder
    r = α − k + 1 − full·(m − 1) ∈ [1, m − 1], and every other row holds a single one. The
    full rows add one to every column; the partial row takes columns 0, …, r − 1 and the
    single ones continue cyclically from column r, so the remaining non-zeros are dealt
    round-robin and column counts differ by at most one — the minimizer of Lemma 10 (i).
    """
    if n_cols == 1:
        return sp.csr_matrix(np.ones((n_rows, 1)))
    full = min((nnz - n_rows) // (n_cols - 1), n_rows)
    rows: list[np.ndarray] = [np.repeat(np.arange(full), n_cols)]
    cols: list[np.ndarray] = [np.tile(np.arange(n_cols), full)]
    if full < n_rows:
        partial = nnz - n_rows + 1 - full * (n_cols - 1)
        singles = n_rows - full - 1
        rows += [np.full(partial, full), np.arange(full + 1, n_rows)]
        cols += [np.arange(partial), (partial + np.arange(singles)) % n_cols]
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_matrix((np.ones(r.size), (r, c)), shape=(n_rows, n_cols))


def worst_case_binary(d: int, n: int, nnz: int, side: str) -> sp.csr_matrix:
    """A binary matrix with d features, n examples and ``nnz`` non-zeros (no zero rows or
    columns) that is as bad as possible for one side, attaining Theorem 9's bound.

    ``side="dual"`` (bad for dual CD): examples' nnz as unequal as possible (max C_D
    = U(α, n, d)), features' nnz as equal as possible (min C_P = L(α, d)), so
    C_P/C_D = 1/R(α, n, d). ``side="primal"``: the transpose construction,
    C_P/C_D = R(α, d, n). See :func:`_unequal_rows` for the construction.

    Returns
    -------
    csr_matrix, shape (n, d), entries 0/1
    """
    if side not in SIDES:
        raise ValueError(f"side must be one of {', '.join(SIDES)}, got {side!r}")
    _check_sizes(d, n, nnz)
    if side == "dual":
        return _unequal_rows(n, d, nnz)
    return _unequal_rows(d, n, nnz).T.tocsr()
