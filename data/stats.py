"""Dataset statistics and the Faceoff advisor: primal or dual coordinate descent?

Notation. Our data matrix A has shape (n_samples, n_features): rows are examples, columns
are features. The Faceoff paper (Csiba & Richtárik, "Coordinate Descent Faceoff: Primal or
Dual?") writes X = Aᵀ of shape (d, n), so the paper's rows X_{i:} are our columns A_{:i}
and the paper's columns X_{:j} are our rows a_j. With uⱼ = ‖A_{:j}‖² (feature squared norms) and
vᵢ = ‖aᵢ‖² (example squared norms), eq. (7), and λ = l2, the paper's quantities read

    T_P(p) = maxⱼ (β uⱼ + λ n) / (pⱼ λ n) · Σⱼ pⱼ nnz(A_{:j})          (12)
    T_D(q) = maxᵢ (β vᵢ + λ n) / (qᵢ λ n) · Σᵢ qᵢ nnz(aᵢ)               (13)
    C_P = Σⱼ nnz(A_{:j}) uⱼ,   C_D = Σᵢ nnz(aᵢ) vᵢ                      (16)

and with the importance samplings p*, q* of eq. (14) T = nnz(A) + β/(λ n) · C, eq. (15).

K-class objectives. One-vs-rest sums K binary problems on the same A, each with the same
β and λ: C_P, C_D, κ and T_P/T_D are those of every class (:func:`advise` per class), and a
pass over A serves the K classes, so the predicted ratio holds for the whole objective
while each side's work is K times a binary problem's. The multinomial loss couples the
classes of a sample (a row's K margins are (1/2)-smooth together, not one by one); the
paper's analysis is for separable losses, so its numbers are only a guide there (the
dataset page says which applies: ``faceoff.core.labels.advice_scope``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from faceoff.data.transforms import Matrix


def _csr(A: Matrix) -> sp.csr_matrix:
    """A as float64 CSR without explicit zeros (the paper's ‖·‖₀ counts true non-zeros)."""
    if sp.issparse(A):
        csr = sp.csr_matrix(A, dtype=np.float64, copy=True)
    else:
        dense = np.asarray(A, dtype=np.float64)
        if dense.ndim != 2:
            raise ValueError(f"A must be 2-D, got shape {dense.shape}")
        csr = sp.csr_matrix(dense)
    csr.eliminate_zeros()
    if not np.all(np.isfinite(csr.data)):
        raise ValueError("A contains NaN or infinite values")
    return csr


def _profile(A: Matrix) -> dict:
    """nnz and squared norms of the rows and of the non-empty columns of A.

    Memory is O(nnz + n) whatever the number of columns d: the d − k empty columns (nnz 0,
    norm 0) are counted in ``empty_cols``, never stored.
    """
    csr = _csr(A)
    # A∘A with the same structure (multiply() would drop squares that underflow to 0)
    sq = sp.csr_matrix((csr.data**2, csr.indices, csr.indptr), shape=csr.shape)
    col_nnz, col_sq = _column_sums(sq.indices, sq.data, sq.shape[1])
    return {
        "csr": csr,
        "row_nnz": np.diff(csr.indptr),
        "row_sq": np.asarray(sq.sum(axis=1)).ravel(),  # v = Diag(AAᵀ), eq. (7)
        "col_nnz": col_nnz,  # of the k non-empty columns
        "col_sq": col_sq,  # u = Diag(AᵀA), eq. (7), of the non-empty columns
        "empty_cols": csr.shape[1] - col_nnz.size,
    }


def _column_sums(indices: np.ndarray, values: np.ndarray, d: int) -> tuple[np.ndarray, ...]:
    """(count, sum of ``values``) of each column index that occurs in ``indices``, in order."""
    if d <= indices.size:  # arrays of length d are then no larger than the matrix itself
        counts = np.bincount(indices, minlength=d)
        sums = np.bincount(indices, weights=values, minlength=d)
        used = counts > 0
        return counts[used], sums[used]
    _, inverse, counts = np.unique(indices, return_inverse=True, return_counts=True)
    return counts, np.bincount(inverse, weights=values, minlength=counts.size)


def _distribution(values: np.ndarray, zeros: int = 0) -> dict:
    """min, median, mean and max of ``values`` and ``zeros`` more zeros (never stored)."""
    size = values.size + zeros
    if size == 0:
        return {"min": 0.0, "median": 0.0, "mean": 0.0, "max": 0.0}
    ordered = np.sort(values)
    negative = int(np.searchsorted(ordered, 0.0))

    def kth(k: int) -> float:  # the k-th smallest, the zeros sorted in after the negatives
        if k < negative:
            return float(ordered[k])
        return 0.0 if k < negative + zeros else float(ordered[k - zeros])

    return {
        "min": kth(0),
        "median": (kth((size - 1) // 2) + kth(size // 2)) / 2,
        "mean": float(np.sum(values)) / size,
        "max": kth(size - 1),
    }


def dataset_stats(A: Matrix, b: np.ndarray | None = None) -> dict:
    """Size, sparsity, norm and label statistics of a data set (JSON-serializable).

    Parameters
    ----------
    A : ndarray or scipy sparse matrix, shape (n_samples, n_features)
    b : array, shape (n_samples,), optional
        Labels; when given, ``label_counts`` maps each distinct value (as a string) to its
        count.

    Returns
    -------
    dict
        ``n``, ``d``, ``nnz``, ``density``, ``row_nnz`` and ``col_nnz`` (min, median, mean,
        max), ``R`` = maxᵢ ‖aᵢ‖, ``R_mean`` = meanᵢ ‖aᵢ‖, ``R_ratio`` = R / R_mean, and
        ``label_counts`` when ``b`` is given.
    """
    prof = _profile(A)
    n, d = prof["csr"].shape
    nnz = int(prof["csr"].nnz)
    row_norms = np.sqrt(prof["row_sq"])
    R = float(row_norms.max()) if n else 0.0
    R_mean = float(row_norms.mean()) if n else 0.0
    out = {
        "n": int(n),
        "d": int(d),
        "nnz": nnz,
        "density": nnz / (n * d) if n * d else 0.0,
        "row_nnz": _distribution(prof["row_nnz"]),
        "col_nnz": _distribution(prof["col_nnz"], prof["empty_cols"]),
        "R": R,
        "R_mean": R_mean,
        "R_ratio": R / R_mean if R_mean > 0 else float("nan"),
    }
    if b is not None:
        b = np.asarray(b).ravel()
        if b.shape != (n,):
            raise ValueError(f"labels have shape {b.shape}, expected ({n},)")
        values, counts = np.unique(b, return_counts=True)
        out["label_counts"] = {f"{v:g}": int(c) for v, c in zip(values, counts, strict=True)}
    return out


def total_complexity(
    weights: np.ndarray, nnz: np.ndarray, probabilities: np.ndarray, l2n: float
) -> float:
    """T(p) = maxₖ wₖ / (pₖ λ n) · Σₖ pₖ nnzₖ, Faceoff eqs. (12)–(13).

    Parameters
    ----------
    weights : array, shape (n_coords,)
        wₖ = β uₖ + λ n (primal, eq. (12)) or β vₖ + λ n (dual, eq. (13)).
    nnz : array, shape (n_coords,)
        Non-zeros of each coordinate's column (primal) or row (dual) of A.
    probabilities : array, shape (n_coords,)
        A proper serial sampling (all pₖ > 0, Σ pₖ = 1).
    l2n : float
        λ n.
    """
    return float(np.max(weights / (probabilities * l2n)) * (probabilities @ nnz))


def advise(A: Matrix, smoothness: float, l2: float) -> dict:
    """The Faceoff advisor: predicted total work of primal and dual coordinate descent.

    Parameters
    ----------
    A : ndarray or scipy sparse matrix, shape (n_samples, n_features)
        At least one non-zero. No zero rows or columns expected (the paper's assumption);
        zero ones only add the λ n term of a coordinate that is never useful. Memory is
        O(nnz + n): empty columns are counted, not stored.
    smoothness : float
        β, the loss is β-smooth (γ = 1/β strong convexity of φ*): 1 squared, 1/4 logistic.
    l2 : float
        λ > 0, the l2 regularization strength.

    Returns
    -------
    dict
        ``kappa`` = R²/(λγ) with γ = 1/β; ``C_P``, ``C_D`` (eq. (16)); ``T_P_uniform``,
        ``T_D_uniform`` (eqs. (12)–(13) with p = 1/d, q = 1/n, §5.1); ``T_P``, ``T_D``
        (importance sampling p*, q* of eq. (14), i.e. eq. (15)); ``ratio`` = T_P/T_D
        (importance) and ``winner``: ``"primal_cd"`` if T_P < T_D else ``"dual_cd"``.
        T counts non-zeros of A visited (divide by nnz for passes), up to the log factor.
    """
    if not (smoothness > 0 and np.isfinite(smoothness)):
        raise ValueError(f"smoothness β must be a positive number, got {smoothness!r}")
    if not (l2 > 0 and np.isfinite(l2)):
        raise ValueError(f"l2 must be a positive number (the analysis needs it), got {l2!r}")
    prof = _profile(A)
    n, d = prof["csr"].shape
    if n == 0 or d == 0:
        raise ValueError(f"A must have at least one row and one column, got shape {(n, d)}")
    if prof["csr"].nnz == 0:
        raise ValueError("A has no non-zero entries: primal and dual have no work to compare")
    beta = float(smoothness)
    l2n = l2 * n
    nnz = float(prof["csr"].nnz)
    u, v = prof["col_sq"], prof["row_sq"]
    col_nnz, row_nnz = prof["col_nnz"].astype(float), prof["row_nnz"].astype(float)
    # eq. (16): C_P = Σ_features nnz·‖column‖², C_D = Σ_examples nnz·‖row‖²
    C_P = float(col_nnz @ u)
    C_D = float(row_nnz @ v)
    w_P = beta * u + l2n  # numerators of eq. (12), of the non-empty columns
    w_D = beta * v + l2n  # numerators of eq. (13)
    w_P_total = float(w_P.sum()) + prof["empty_cols"] * l2n  # an empty column has w = λn
    if prof["empty_cols"]:
        # one entry stands for all empty columns (w = λn, nnz 0, each with the same
        # probability): eq. (12)'s max and sum are those over all d columns
        w_P, col_nnz = np.append(w_P, l2n), np.append(col_nnz, 0.0)
    T_P_uniform = total_complexity(w_P, col_nnz, np.full(w_P.size, 1.0 / d), l2n)
    T_D_uniform = total_complexity(w_D, row_nnz, np.full(n, 1.0 / n), l2n)
    # eq. (14) importance sampling; eq. (15): T = nnz(A) + β/(λn)·C
    T_P = total_complexity(w_P, col_nnz, w_P / w_P_total, l2n)
    T_D = total_complexity(w_D, row_nnz, w_D / w_D.sum(), l2n)
    R2 = float(v.max())
    return {
        "n": int(n),
        "d": int(d),
        "nnz": int(nnz),
        "smoothness": beta,
        "l2": float(l2),
        "kappa": R2 * beta / l2,  # R²/(λγ), γ = 1/β
        "C_P": C_P,
        "C_D": C_D,
        "T_P_uniform": T_P_uniform,
        "T_D_uniform": T_D_uniform,
        "T_P": T_P,
        "T_D": T_D,
        "ratio": T_P / T_D,
        "winner": "primal_cd" if T_P < T_D else "dual_cd",
    }
