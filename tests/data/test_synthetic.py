"""faceoff.data.synthetic: the papers' seeded problems (SPDC §7.1 ridge, text-like, norm spread)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.labels import summarize
from faceoff.data.synthetic import clusters, gaussian_spread, spdc_ridge, text_like
from faceoff.data.transforms import row_norms


def _same(first, second) -> None:
    for x, y in zip(first, second, strict=True):
        if sp.issparse(x):
            assert (x != y).nnz == 0
        else:
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize(
    "make",
    [
        lambda seed: spdc_ridge(seed=seed, n=50, d=20),
        lambda seed: text_like(n_samples=80, n_features=300, avg_nnz=10, seed=seed),
        lambda seed: gaussian_spread(n_samples=80, n_features=10, norm_spread=5, seed=seed),
        lambda seed: clusters(n_samples=60, n_features=8, n_classes=20, seed=seed),
        lambda seed: clusters(60, 200, density=0.05, n_classes=20, seed=seed),
    ],
    ids=["spdc_ridge", "text_like", "gaussian_spread", "clusters", "clusters_sparse"],
)
def test_deterministic_by_seed(make):
    _same(make(3), make(3))
    A, _ = make(3)
    B, _ = make(4)
    assert not np.allclose(
        A.toarray() if sp.issparse(A) else A, B.toarray() if sp.issparse(B) else B
    )


def test_spdc_ridge_shapes_and_covariance():
    A, b = spdc_ridge()
    assert A.shape == (500, 500) and b.shape == (500,)
    # column j has variance Σ_jj = j⁻²
    A, _ = spdc_ridge(seed=1, n=20_000, d=5)
    np.testing.assert_allclose(A.var(axis=0), np.arange(1, 6) ** -2.0, rtol=0.05)


def test_spdc_ridge_least_squares_recovers_all_ones():
    A, b = spdc_ridge(seed=2, n=5000, d=8)
    x, *_ = np.linalg.lstsq(A, b, rcond=None)
    # the error on xⱼ has standard deviation ≈ j / √n ≤ 0.12
    np.testing.assert_allclose(x, 1.0, atol=0.5)
    # residual = the N(0, 1) noise
    assert np.std(b - A @ x) == pytest.approx(1.0, abs=0.05)


def test_text_like_sparsity_power_law_and_unit_rows():
    n_samples, n_features = 2000, 3000
    A, b = text_like(n_samples, n_features, avg_nnz=30, zipf_exponent=1.0, seed=0)
    assert sp.isspmatrix_csr(A) and A.shape == (n_samples, n_features)
    assert A.nnz / n_samples == pytest.approx(30, rel=0.05)
    assert (A.data > 0).all()
    np.testing.assert_allclose(row_norms(A), 1.0)
    frequency = np.bincount(A.indices, minlength=n_features)
    assert frequency.max() > 20 * max(np.median(frequency), 1)
    # frequencies fall with the column index
    assert frequency[:10].mean() > frequency[100:200].mean() > frequency[-1000:].mean()
    assert set(np.unique(b)) == {-1.0, 1.0}


def test_text_like_labels_follow_the_planted_model():
    # without noise, a linear separator exists: least squares on ±1 labels fits most of them
    A, b = text_like(1000, 400, avg_nnz=20, n_informative=5, noise=0.0, seed=1)
    x, *_ = np.linalg.lstsq(A.toarray(), b, rcond=None)
    assert np.mean(np.sign(A @ x) == b) > 0.9


@pytest.mark.parametrize("norm_spread", [1.0, 3.0, 10.0, 50.0])
def test_gaussian_spread_ratio(norm_spread):
    A, b = gaussian_spread(n_samples=500, n_features=20, norm_spread=norm_spread, seed=0)
    norms = row_norms(A)
    assert norms.max() / norms.mean() == pytest.approx(norm_spread, rel=0.05)
    assert norms.mean() == pytest.approx(1.0)
    assert set(np.unique(b)) == {-1.0, 1.0}


def test_gaussian_spread_out_of_range():
    with pytest.raises(ValueError, match=r"norm_spread must be in \[1, n_samples=10\), got 20"):
        gaussian_spread(n_samples=10, norm_spread=20)


@pytest.mark.parametrize("density", [1.0, 0.1])
def test_clusters_are_aloi_like_many_balanced_classes_few_samples_each(density):
    """1,000 classes of 3 samples each; a sparse design keeps its density."""
    A, b = clusters(3000, 64, density=density, n_classes=1000, spread=0.3, seed=1)
    assert summarize(b) == {
        "kind": "classes",
        "n_classes": 1000,
        "counts": {str(k): 3 for k in range(1000)},
    }
    if density < 1:
        assert sp.isspmatrix_csr(A) and abs(A.nnz / (3000 * 64) - density) < 0.01


def test_the_samples_of_a_cluster_are_closest_to_its_centroid():
    """A nearest-centroid rule recovers the labels of dense clusters (spread 0.3)."""
    A, b = clusters(2000, 64, n_classes=200, spread=0.3, seed=2)
    means = np.stack([A[b == k].mean(axis=0) for k in range(200)])
    # ‖aᵢ − μₖ‖² up to the term ‖aᵢ‖² that every k shares
    distances = (means**2).sum(axis=1)[None, :] - 2 * A @ means.T
    assert np.mean(np.argmin(distances, axis=1) == b) > 0.95


def test_clusters_need_a_sample_per_class():
    with pytest.raises(ValueError, match="n_classes must be in"):
        clusters(10, 5, n_classes=11)
