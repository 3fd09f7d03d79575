"""faceoff.data.random_features: random Fourier and random binning features (DGPD §5)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.random_features import (
    RandomBinningFeatures,
    RandomFourierFeatures,
    random_binning_features,
    random_fourier_features,
)

X = np.random.default_rng(0).normal(scale=0.5, size=(60, 5))


def _rbf(X, gamma):
    # exp(−γ‖x − y‖²)
    return np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1))


def _laplacian(X, sigma):
    # exp(−‖x − y‖₁ / σ)
    return np.exp(-np.abs(X[:, None, :] - X[None, :, :]).sum(axis=-1) / sigma)


def test_fourier_shape_and_seed():
    Z, features = random_fourier_features(X, n_components=40, gamma=0.5, seed=1)
    assert Z.shape == (60, 40) and isinstance(features, RandomFourierFeatures)
    np.testing.assert_array_equal(Z, random_fourier_features(X, 40, 0.5, seed=1)[0])
    assert not np.allclose(Z, random_fourier_features(X, 40, 0.5, seed=2)[0])
    # |z| ≤ √(2/D)
    assert np.abs(Z).max() <= np.sqrt(2 / 40)


def test_fourier_error_falls_with_n_components():
    gamma = 0.5
    K = _rbf(X, gamma)
    errors = []
    for n_components in (50, 500, 5000):
        Z, _ = random_fourier_features(X, n_components, gamma, seed=0)
        errors.append(np.abs(Z @ Z.T - K).mean())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.03


def test_fourier_sparse_input_and_transform_of_new_data():
    features = RandomFourierFeatures(n_components=30, gamma=0.5, seed=0).fit(X[:40])
    np.testing.assert_allclose(features.transform(sp.csr_matrix(X)), features.transform(X))
    np.testing.assert_array_equal(features.transform(X)[:40], features.fit_transform(X[:40]))
    with pytest.raises(ValueError, match="A has 4 features, the map was fitted on 5"):
        features.transform(X[:, :4])


def _grid_blocks(Z, features):
    offsets = features.offsets_
    return [Z[:, offsets[g] : offsets[g + 1]] for g in range(features.n_grids)]


@pytest.mark.parametrize("sparse_input", [False, True])
def test_binning_one_bin_per_grid(sparse_input):
    A = sp.csr_matrix(X) if sparse_input else X
    Z, features = random_binning_features(A, n_grids=20, sigma=1.0, seed=0)
    assert sp.isspmatrix_csr(Z) and isinstance(features, RandomBinningFeatures)
    assert Z.shape == (60, features.offsets_[-1])
    np.testing.assert_array_equal(np.diff(Z.indptr), 20)
    for block in _grid_blocks(Z, features):
        np.testing.assert_array_equal(np.diff(block.tocsr().indptr), 1)
    np.testing.assert_allclose(Z.data, 1 / np.sqrt(20))
    # z(x)ᵀz(x) = 1 = k(x, x)
    np.testing.assert_allclose((Z @ Z.T).diagonal(), 1.0)


def test_binning_seed():
    Z, _ = random_binning_features(X, n_grids=10, sigma=1.0, seed=3)
    same, _ = random_binning_features(X, n_grids=10, sigma=1.0, seed=3)
    other, _ = random_binning_features(X, n_grids=10, sigma=1.0, seed=4)
    assert (Z != same).nnz == 0
    assert Z.shape != other.shape or (Z != other).nnz > 0


def test_binning_error_falls_with_n_grids():
    sigma = 2.0
    K = _laplacian(X, sigma)
    errors = []
    for n_grids in (10, 100, 1000):
        Z, _ = random_binning_features(X, n_grids, sigma, seed=0)
        errors.append(np.abs((Z @ Z.T).toarray() - K).mean())
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.03


def test_binning_transform_of_new_data():
    features = RandomBinningFeatures(n_grids=15, sigma=1.0, seed=0).fit(X[:40])
    Z = features.transform(X)
    # the fitted rows get the same features as in fit_transform
    assert (Z[:40] != features.fit_transform(X[:40])).nnz == 0
    assert Z.shape == (60, features.offsets_[-1])
    # a new sample has at most one non-zero per grid, and only in bins seen in fit
    counts = np.diff(Z.indptr)
    assert (counts <= 15).all()
    for block in _grid_blocks(Z, features):
        assert (np.diff(block.tocsr().indptr) <= 1).all()
    # a sample far from the data falls in no fitted bin
    far = features.transform(np.full((1, 5), 100.0))
    assert far.shape == (1, features.offsets_[-1]) and far.nnz == 0
    with pytest.raises(ValueError, match="A has 4 features, the map was fitted on 5"):
        features.transform(X[:, :4])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RandomFourierFeatures(n_components=0), "n_components must be at least 1, got 0"),
        (lambda: RandomFourierFeatures(gamma=-1.0), "gamma must be > 0, got -1.0"),
        (lambda: RandomBinningFeatures(n_grids=0), "n_grids must be at least 1, got 0"),
        (lambda: RandomBinningFeatures(sigma=0.0), "sigma must be > 0, got 0.0"),
    ],
)
def test_invalid_parameters(make, message):
    with pytest.raises(ValueError, match=message):
        make()
