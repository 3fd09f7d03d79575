"""Random feature maps of Rahimi & Recht (2007), as used by DGPD §5 for Mnist and Aloi.

- Random Fourier features (dense) approximate the RBF kernel k(x, y) = exp(−γ‖x − y‖²):
  z(x) = √(2/D) cos(Wᵀx + b), W ~ N(0, 2γ I), b ~ U[0, 2π], so E[z(x)ᵀz(y)] = k(x, y).
- Random binning features (sparse) approximate the Laplacian kernel k(x, y) = exp(−‖x − y‖₁/σ):
  each of P grids has, per input dimension, a width δ ~ Gamma(2, σ) and an offset u ~ U[0, δ];
  x falls in the bin (⌊(x_d − u_d)/δ_d⌋)_d, and z(x) has the value 1/√P in the column of that
  bin for every grid, so z(x)ᵀz(y) is the fraction of grids in which x and y share a bin.

Both are seeded transform objects with ``fit`` / ``transform`` / ``fit_transform``; the
functions :func:`random_fourier_features` and :func:`random_binning_features` fit on A and
return (features of A, fitted map) so that the same map can be applied to test data.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from faceoff.data.transforms import Matrix


class RandomFourierFeatures:
    """z(x) = √(2/D) cos(Wᵀx + b) for the RBF kernel exp(−γ‖x − y‖²).

    Parameters
    ----------
    n_components : int
        D, the number of features.
    gamma : float
        γ > 0 of the kernel.
    seed : int
        Seed of W and b.

    Attributes (after ``fit``)
    ----------
    weights_ : array, shape (n_features, n_components)
        W, entries N(0, 2γ).
    offsets_ : array, shape (n_components,)
        b, entries U[0, 2π].
    """

    def __init__(self, n_components: int = 1000, gamma: float = 1.0, seed: int = 0):
        if n_components < 1:
            raise ValueError(f"n_components must be at least 1, got {n_components!r}")
        if not gamma > 0:
            raise ValueError(f"gamma must be > 0, got {gamma!r}")
        self.n_components = n_components
        self.gamma = gamma
        self.seed = seed

    def fit(self, A: Matrix) -> RandomFourierFeatures:
        """Draw W and b for the n_features of A (dense array or sparse matrix)."""
        rng = np.random.default_rng(self.seed)
        n_features = A.shape[1]
        self.weights_ = rng.normal(
            scale=np.sqrt(2.0 * self.gamma), size=(n_features, self.n_components)
        )
        self.offsets_ = rng.uniform(0.0, 2.0 * np.pi, size=self.n_components)
        return self

    def transform(self, A: Matrix) -> np.ndarray:
        """Features of A, array of shape (n_samples, n_components)."""
        _check_n_features(A, self.weights_.shape[0])
        # √(2/D) cos(A W + b); A @ W is dense for dense or sparse A
        projection = np.asarray(A @ self.weights_) + self.offsets_
        return np.sqrt(2.0 / self.n_components) * np.cos(projection)

    def fit_transform(self, A: Matrix) -> np.ndarray:
        return self.fit(A).transform(A)


class RandomBinningFeatures:
    """Random binning for the Laplacian kernel exp(−‖x − y‖₁/σ); sparse CSR features.

    The bins are those occupied by the data given to ``fit``; each gets one column, grid after
    grid. ``transform`` puts a sample falling into a bin never seen in ``fit`` in no column,
    so its row has fewer than ``n_grids`` non-zeros.

    Parameters
    ----------
    n_grids : int
        P, the number of random grids (non-zeros per row).
    sigma : float
        σ > 0 of the kernel (γ = 1/σ in exp(−γ‖x − y‖₁)).
    seed : int
        Seed of the widths and offsets.

    Attributes (after ``fit``)
    ----------
    widths_, shifts_ : arrays, shape (n_grids, n_features)
        δ ~ Gamma(2, σ) and u ~ U[0, δ] per grid and dimension.
    bins_ : list of n_grids int arrays, shape (n_bins_g, n_features)
        The occupied bins of grid g, in the order of their byte keys; bin k of grid g is
        column ``offsets_[g] + k``.
    offsets_ : array, shape (n_grids + 1,)
        First column of every grid; ``offsets_[-1]`` is the number of features.
    """

    def __init__(self, n_grids: int = 100, sigma: float = 1.0, seed: int = 0):
        if n_grids < 1:
            raise ValueError(f"n_grids must be at least 1, got {n_grids!r}")
        if not sigma > 0:
            raise ValueError(f"sigma must be > 0, got {sigma!r}")
        self.n_grids = n_grids
        self.sigma = sigma
        self.seed = seed

    def fit(self, A: Matrix) -> RandomBinningFeatures:
        """Draw the grids and index the bins occupied by the rows of A."""
        self._fit_transform(A)
        return self

    def fit_transform(self, A: Matrix) -> sp.csr_matrix:
        """Fit on A and return its features, CSR of shape (n_samples, offsets_[-1])."""
        return self._fit_transform(A)

    def transform(self, A: Matrix) -> sp.csr_matrix:
        """Features of A in the fitted bins, CSR of shape (n_samples, offsets_[-1])."""
        _check_n_features(A, self.widths_.shape[1])
        X = _dense(A)
        rows, cols = [], []
        for g, known in enumerate(self.bins_):
            keys, known_keys = _keys(self._bins(X, g)), _keys(known)
            # position of each sample's bin among the sorted known bins, if it is there
            column = np.minimum(np.searchsorted(known_keys, keys), len(known_keys) - 1)
            seen = known_keys[column] == keys
            rows.append(np.flatnonzero(seen))
            cols.append(self.offsets_[g] + column[seen])
        return self._matrix(np.concatenate(rows), np.concatenate(cols), X.shape[0])

    def _fit_transform(self, A: Matrix) -> sp.csr_matrix:
        X = _dense(A)
        n_samples, n_features = X.shape
        rng = np.random.default_rng(self.seed)
        self.widths_ = rng.gamma(shape=2.0, scale=self.sigma, size=(self.n_grids, n_features))
        self.shifts_ = rng.uniform(0.0, self.widths_)
        self.bins_ = []
        cols = np.empty((self.n_grids, n_samples), dtype=np.int64)
        offset = 0
        offsets = [0]
        for g in range(self.n_grids):
            bins = self._bins(X, g)
            _, first, column = np.unique(_keys(bins), return_index=True, return_inverse=True)
            self.bins_.append(bins[first])
            cols[g] = offset + column.ravel()
            offset += len(first)
            offsets.append(offset)
        self.offsets_ = np.array(offsets)
        rows = np.tile(np.arange(n_samples), self.n_grids)
        return self._matrix(rows, cols.ravel(), n_samples)

    def _bins(self, X: np.ndarray, g: int) -> np.ndarray:
        # ⌊(x_d − u_d) / δ_d⌋ for every sample and dimension
        return np.floor((X - self.shifts_[g]) / self.widths_[g]).astype(np.int64)

    def _matrix(self, rows: np.ndarray, cols: np.ndarray, n_samples: int) -> sp.csr_matrix:
        values = np.full(rows.size, 1.0 / np.sqrt(self.n_grids))
        return sp.csr_matrix((values, (rows, cols)), shape=(n_samples, self.offsets_[-1]))


def random_fourier_features(
    A: Matrix, n_components: int = 1000, gamma: float = 1.0, seed: int = 0
) -> tuple[np.ndarray, RandomFourierFeatures]:
    """Random Fourier features of A for exp(−γ‖x − y‖²) and the fitted map (for test data)."""
    features = RandomFourierFeatures(n_components, gamma, seed)
    return features.fit_transform(A), features


def random_binning_features(
    A: Matrix, n_grids: int = 100, sigma: float = 1.0, seed: int = 0
) -> tuple[sp.csr_matrix, RandomBinningFeatures]:
    """Random binning features of A for exp(−‖x − y‖₁/σ) and the fitted map (for test data)."""
    features = RandomBinningFeatures(n_grids, sigma, seed)
    return features.fit_transform(A), features


def _dense(A: Matrix) -> np.ndarray:
    # binning needs every coordinate, zeros included: a sparse input is densified
    if sp.issparse(A):  # in float64 too (an integer matrix stayed integer)
        return sp.csr_matrix(A, dtype=np.float64).toarray()
    return np.asarray(A, dtype=np.float64)


def _keys(bins: np.ndarray) -> np.ndarray:
    """Each row of an int array as one opaque (void) value: sortable and comparable as a
    whole, an order of magnitude faster than ``np.unique(bins, axis=0)``."""
    bins = np.ascontiguousarray(bins)
    return bins.view(np.dtype((np.void, bins.itemsize * bins.shape[1]))).ravel()


def _check_n_features(A: Matrix, n_features: int) -> None:
    if A.shape[1] != n_features:
        raise ValueError(f"A has {A.shape[1]} features, the map was fitted on {n_features}")
