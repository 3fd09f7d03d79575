"""Seeded synthetic problems for tests, demos and benchmarks."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


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


def _design(n_samples: int, n_features: int, density: float, seed: int):
    if not 0 < density <= 1:
        raise ValueError(f"density must be in (0, 1], got {density!r}")
    rng = np.random.default_rng(seed)
    if density == 1:
        return rng.normal(size=(n_samples, n_features)) / np.sqrt(n_features)
    A = sp.random(
        n_samples,
        n_features,
        density=density,
        format="csr",
        random_state=rng,
        data_rvs=rng.standard_normal,
    )
    return A / np.sqrt(max(n_features * density, 1.0))
