"""Seeded synthetic problems for tests, demos and benchmarks."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from faceoff.data.transforms import Matrix, normalize_rows


def classification(
    n_samples: int = 500,
    n_features: int = 50,
    density: float = 1.0,
    noise: float = 0.5,
    seed: int = 0,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Labels b = sign(Ax* + noise) ∈ {−1, +1} for a planted Gaussian x*.

    ``density`` < 1 gives a CSR matrix with that fraction of non-zeros (Gaussian values,
    rows scaled to unit norm on average); 1 gives a dense Gaussian array.
    """
    A = _design(n_samples, n_features, density, seed)
    rng = np.random.default_rng(seed + 1)
    x_true = rng.normal(size=n_features)
    margin = A @ x_true
    margin = margin / (np.std(margin) or 1.0) + noise * rng.normal(size=n_samples)
    return A, np.where(margin >= 0, 1.0, -1.0)


def multiclass(
    n_samples: int = 500,
    n_features: int = 50,
    density: float = 1.0,
    n_classes: int = 4,
    noise: float = 0.5,
    seed: int = 0,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Class labels 0..K−1, yᵢ = argmaxₖ (AX*)ᵢₖ/std + noise·N(0, 1), for a planted Gaussian
    X* of shape (n_features, K): K linear classes, overlapping as ``noise`` grows. The design
    is :func:`classification`'s (dense Gaussian, or CSR with a fraction ``density`` of
    non-zeros); every class occurs when n_samples ≥ K (the first K samples are moved to the
    K classes if one is missing)."""
    if not 2 <= n_classes <= n_samples:
        raise ValueError(f"n_classes must be in [2, n_samples={n_samples}], got {n_classes!r}")
    A = _design(n_samples, n_features, density, seed)
    rng = np.random.default_rng(seed + 1)
    scores = A @ rng.normal(size=(n_features, n_classes))
    scores = scores / (np.std(scores) or 1.0) + noise * rng.normal(size=scores.shape)
    labels = np.argmax(scores, axis=1)
    if len(np.unique(labels)) < n_classes:  # tiny or degenerate designs: every class once
        labels[:n_classes] = np.arange(n_classes)
    return A, labels.astype(np.float64)


def clusters(
    n_samples: int = 1000,
    n_features: int = 50,
    density: float = 1.0,
    n_classes: int = 100,
    spread: float = 1.0,
    seed: int = 0,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Many classes with few samples each, as Aloi (1,000 objects, 108 images each): class
    labels 0..K−1, each given to ⌊n/K⌋ or ⌈n/K⌉ samples in a random order, and
    aᵢ = μ_{yᵢ} + ``spread``·εᵢ with a Gaussian centroid μₖ per class. The noise εᵢ is
    :func:`classification`'s design (dense Gaussian, or CSR with a fraction ``density`` of
    non-zeros); on sparse data the centroid is added on the noise's pattern only, so the
    matrix keeps its density. Every class occurs (n_samples ≥ K)."""
    if not 2 <= n_classes <= n_samples:
        raise ValueError(f"n_classes must be in [2, n_samples={n_samples}], got {n_classes!r}")
    A = _design(n_samples, n_features, density, seed)
    rng = np.random.default_rng(seed + 1)
    labels = rng.permutation(np.arange(n_samples) % n_classes)
    centroids = rng.normal(size=(n_classes, n_features)) / np.sqrt(n_features)
    if isinstance(A, np.ndarray):
        A *= spread
        A += centroids[labels]
    else:  # CSR
        rows = np.repeat(np.arange(n_samples), np.diff(A.indptr))
        A.data *= spread
        A.data += centroids[labels[rows], A.indices]  # μ_{yᵢ} on aᵢ's pattern
    return A, labels.astype(np.float64)


def regression(
    n_samples: int = 500,
    n_features: int = 50,
    density: float = 1.0,
    noise: float = 0.1,
    seed: int = 0,
) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray]:
    """Targets b = Ax* + noise for a planted Gaussian x*."""
    A = _design(n_samples, n_features, density, seed)
    rng = np.random.default_rng(seed + 1)
    x_true = rng.normal(size=n_features)
    return A, A @ x_true + noise * rng.normal(size=n_samples)


def correlated(
    n_samples: int = 500,
    n_features: int = 5000,
    rho: float = 0.6,
    support: float = 0.05,
    snr: float = 3.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """The sparse-regression benchmark design (celer's and benchopt's): rows drawn from
    N(0, Σ), Σⱼₖ = ρ^|j−k| (an AR(1) process along the features), a planted x* with
    ``support``·d non-zero N(0, 1) entries at random, and b = Ax* + noise at the signal-to-
    noise ratio ``snr`` (‖Ax*‖/‖noise‖)."""
    if not (0 <= rho < 1 and 0 < support <= 1 and snr > 0):
        raise ValueError(
            f"need 0 <= rho < 1, 0 < support <= 1, snr > 0; got {rho}, {support}, {snr}"
        )
    rng = np.random.default_rng(seed)
    A = np.empty((n_samples, n_features))
    A[:, 0] = rng.standard_normal(n_samples)
    scale = np.sqrt(1.0 - rho * rho)
    for j in range(1, n_features):
        A[:, j] = rho * A[:, j - 1] + scale * rng.standard_normal(n_samples)
    x_true = np.zeros(n_features)
    chosen = rng.choice(n_features, max(1, int(round(support * n_features))), replace=False)
    x_true[chosen] = rng.standard_normal(chosen.size)
    signal = A @ x_true
    noise = rng.standard_normal(n_samples)
    noise *= np.linalg.norm(signal) / (snr * max(np.linalg.norm(noise), np.finfo(float).tiny))
    return A, signal + noise


def _design(n_samples: int, n_features: int, density: float, seed: int) -> Matrix:
    if not 0 < density <= 1:
        raise ValueError(f"density must be in (0, 1], got {density!r}")
    rng = np.random.default_rng(seed)
    if density == 1:
        A = rng.normal(size=(n_samples, n_features))
        A /= np.sqrt(n_features)  # in place: a fresh array of this size costs its page faults
        return A
    A = sp.random(
        n_samples,
        n_features,
        density=density,
        format="csr",
        random_state=rng,
        data_rvs=rng.standard_normal,
    )
    A.data *= 1 / np.sqrt(max(n_features * density, 1.0))  # as A / √…, without a copy
    return A


def spdc_ridge(seed: int = 0, n: int = 500, d: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """The ridge-regression problem of SPDC §7.1 (Zhang & Xiao), ill-conditioned by design.

    b = ⟨a, x*⟩ + ε with a ~ N(0, Σ), Σ diagonal with Σ_jj = j⁻² (j = 1, …, d),
    ε ~ N(0, 1) and x* the all-ones vector; the paper uses n = d = 500.

    Returns
    -------
    A : array, shape (n, d)
    b : array, shape (n,)
    """
    if n < 1 or d < 1:
        raise ValueError(f"n and d must be at least 1, got n={n!r}, d={d!r}")
    rng = np.random.default_rng(seed)
    # aᵢⱼ = zᵢⱼ · √Σ_jj = zᵢⱼ / j
    A = rng.standard_normal(size=(n, d)) / np.arange(1, d + 1)
    # b = A x* + ε with x* = 1
    b = A.sum(axis=1) + rng.standard_normal(size=n)
    return A, b


def text_like(
    n_samples: int = 1000,
    n_features: int = 5000,
    avg_nnz: float = 50.0,
    zipf_exponent: float = 1.1,
    n_informative: int = 20,
    seed: int = 0,
    noise: float = 0.1,
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Sparse bag-of-words-like classification, in the spirit of RCV1 and News20.

    Column j appears in a row with probability πⱼ = min(1, c (j+1)^−s), s = ``zipf_exponent``,
    c chosen so that Σⱼ πⱼ = ``avg_nnz``: a power law of feature frequencies. Values are
    tf-idf-like, (1 + log tf) · idf with tf ~ 1 + Geometric and idf = log(n / df) + 1 from the
    observed document frequencies; rows are scaled to unit l2 norm (an empty row gets one
    feature drawn from π). Labels b = sign(Ax* / std(Ax*) + noise · N(0, 1)) with x* having
    ``n_informative`` Gaussian non-zeros on columns drawn in proportion to π (so that they
    occur in the data).

    Returns
    -------
    A : csr_matrix, shape (n_samples, n_features), every row of unit norm
    b : array, shape (n_samples,), values in {−1, +1}
    """
    if not 0 < avg_nnz <= n_features:
        raise ValueError(f"avg_nnz must be in (0, n_features={n_features}], got {avg_nnz!r}")
    if zipf_exponent < 0:
        raise ValueError(f"zipf_exponent must be >= 0, got {zipf_exponent!r}")
    if not 0 < n_informative <= n_features:
        raise ValueError(
            f"n_informative must be in [1, n_features={n_features}], got {n_informative!r}"
        )
    rng = np.random.default_rng(seed)
    weights = np.arange(1, n_features + 1, dtype=np.float64) ** -zipf_exponent
    probs = _inclusion_probabilities(weights, avg_nnz)

    # Bernoulli(πⱼ) per entry, a block of rows at a time to bound memory
    row_blocks, col_blocks = [], []
    block = max(1, 4_000_000 // n_features)
    for start in range(0, n_samples, block):
        hit = rng.random((min(block, n_samples - start), n_features)) < probs
        r, c = np.nonzero(hit)
        row_blocks.append(r + start)
        col_blocks.append(c)
    rows, cols = np.concatenate(row_blocks), np.concatenate(col_blocks)
    empty = np.setdiff1d(np.arange(n_samples), rows)
    rows = np.concatenate([rows, empty])
    cols = np.concatenate(
        [cols, rng.choice(n_features, size=empty.size, p=weights / weights.sum())]
    )

    # (1 + log tf) · idf, idf = log(n / df) + 1
    tf = rng.geometric(0.5, size=rows.size)
    df = np.bincount(cols, minlength=n_features)
    idf = np.log(n_samples / np.maximum(df, 1)) + 1.0
    values = (1.0 + np.log(tf)) * idf[cols]
    A = normalize_rows(sp.csr_matrix((values, (rows, cols)), shape=(n_samples, n_features)))

    x_true = np.zeros(n_features)
    support = rng.choice(n_features, size=n_informative, replace=False, p=probs / probs.sum())
    x_true[support] = rng.standard_normal(size=n_informative)
    return A, _planted_labels(A @ x_true, noise, rng)


def gaussian_spread(
    n_samples: int = 500,
    n_features: int = 50,
    norm_spread: float = 10.0,
    seed: int = 0,
    noise: float = 0.1,
) -> tuple[np.ndarray, np.ndarray]:
    """Dense Gaussian classification whose row norms spread as R / R̄ = ``norm_spread``.

    R = maxᵢ ‖aᵢ‖ and R̄ = mean ‖aᵢ‖ (SPDC §7.3: non-uniform sampling gains when R/R̄ is
    large). Directions are Gaussian; norms are log-normal, exp(σ zᵢ) with zᵢ ~ N(0, 1) and σ
    found by bisection so that R / R̄ matches the request (a few rows much longer than the
    rest), then scaled so that R̄ = 1. Labels b = sign(⟨aᵢ/‖aᵢ‖, x*⟩ / std + noise · N(0, 1)).

    Returns
    -------
    A : array, shape (n_samples, n_features)
    b : array, shape (n_samples,), values in {−1, +1}
    """
    if not 1 <= norm_spread < n_samples:
        raise ValueError(
            f"norm_spread must be in [1, n_samples={n_samples}), got {norm_spread!r} "
            "(R/R̄ cannot exceed the number of rows)"
        )
    rng = np.random.default_rng(seed)
    G = rng.standard_normal(size=(n_samples, n_features))
    directions = G / np.linalg.norm(G, axis=1, keepdims=True)
    z = rng.standard_normal(size=n_samples)
    norms = np.exp(_spread_scale(z, norm_spread) * z)
    norms /= norms.mean()
    x_true = rng.standard_normal(size=n_features)
    b = _planted_labels(directions @ x_true, noise, rng)
    return directions * norms[:, None], b


def _planted_labels(margin: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    # sign(margin / std(margin) + noise · ε)
    margin = margin / (np.std(margin) or 1.0) + noise * rng.standard_normal(size=margin.size)
    return np.where(margin >= 0, 1.0, -1.0)


def _inclusion_probabilities(weights: np.ndarray, total: float) -> np.ndarray:
    """π = min(1, c · weights) with c found by bisection so that Σ π = total."""
    low, high = 0.0, total / weights.min()
    for _ in range(100):
        c = 0.5 * (low + high)
        if np.minimum(1.0, c * weights).sum() < total:
            low = c
        else:
            high = c
    return np.minimum(1.0, high * weights)


def _spread_scale(z: np.ndarray, ratio: float) -> float:
    """σ with max(exp(σz)) / mean(exp(σz)) = ratio, by bisection (the ratio grows with σ)."""

    def spread(sigma: float) -> float:
        r = np.exp(sigma * (z - z.max()))  # scaled by exp(−σ max z) to avoid overflow
        return 1.0 / r.mean()

    low, high = 0.0, 1.0
    while spread(high) < ratio:
        high *= 2.0
    for _ in range(100):
        mid = 0.5 * (low + high)
        if spread(mid) < ratio:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)
