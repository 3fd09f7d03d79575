"""The vector loops over a row's K classes (solvers.class_rows): bitwise the scalar loops
for every K (a pass of BLOCK classes, its last vector masked), classes with a zero
coefficient never written, and the vectorizable exp within 2 ulp of libm's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from faceoff.solvers.class_rows import BLOCK, class_axpy, class_axpy_soft, class_dot, exp_lanes
from faceoff.solvers.penalties import soft_threshold

KS = sorted({1, 2, 3, 4, 5, 7, 8, 10, 20, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 3, 100})


@njit
def _scalar_dot(indices, values, start, end, X, out):
    for c in range(X.shape[1]):
        total = 0.0
        for k in range(start, end):
            total += values[k] * X[indices[k], c]
        out[c] = total


@njit
def _scalar_axpy_soft(indices, values, start, end, Z, X, coef, l1, l2):
    for c in range(X.shape[1]):
        if coef[c] != 0.0:
            for k in range(start, end):
                j = indices[k]
                Z[j, c] += coef[c] * values[k]
                X[j, c] = soft_threshold(Z[j, c], l1) * (1.0 / l2)


def _row(rng, d=60, nnz=19):
    indices = np.sort(rng.choice(d, nnz, replace=False)).astype(np.int32)
    return indices, rng.normal(size=nnz), 2, nnz - 3


@pytest.mark.parametrize("K", KS)
def test_class_dot_is_the_scalar_loop_bitwise(K):
    rng = np.random.default_rng(K)
    indices, values, start, end = _row(rng)
    X = rng.normal(size=(60, K)) * 10.0 ** rng.uniform(-8, 8, size=(60, K))
    out = np.full(K + 5, 7.0)
    expected = np.empty(K)
    class_dot(indices, values, start, end, X.reshape(-1), K, out)
    _scalar_dot(indices, values, start, end, X, expected)
    np.testing.assert_array_equal(out[:K], expected)
    assert np.all(out[K:] == 7.0)  # nothing written past the K classes


@pytest.mark.parametrize("K", KS)
def test_class_axpy_moves_only_the_classes_with_a_coefficient(K):
    rng = np.random.default_rng(K + 1)
    indices, values, start, end = _row(rng)
    coef = rng.normal(size=K)
    coef[rng.random(K) < 0.4] = 0.0
    X = rng.normal(size=(60, K))
    X[:, coef == 0.0] = -0.0  # + 0·v would make them +0.0
    expected = X.copy()
    for c in np.flatnonzero(coef):
        for k in range(start, end):
            expected[indices[k], c] += coef[c] * values[k]
    class_axpy(indices, values, start, end, X.reshape(-1), K, coef)
    np.testing.assert_array_equal(X, expected)
    assert np.all(np.signbit(X[:, coef == 0.0]))


@pytest.mark.parametrize("K", KS)
def test_class_axpy_soft_keeps_x_the_prox_of_z(K):
    rng = np.random.default_rng(K + 2)
    indices, values, start, end = _row(rng)
    coef = rng.normal(size=K)
    coef[rng.random(K) < 0.4] = 0.0
    Z, X = rng.normal(size=(60, K)), rng.normal(size=(60, K))
    X[:, coef == 0.0] = -0.0
    Z_expected, X_expected = Z.copy(), X.copy()
    _scalar_axpy_soft(indices, values, start, end, Z_expected, X_expected, coef, 0.3, 0.7)
    class_axpy_soft(indices, values, start, end, Z.reshape(-1), X.reshape(-1), K, coef, (0.3, 0.7))
    np.testing.assert_array_equal(Z, Z_expected)
    np.testing.assert_array_equal(X, X_expected)
    assert np.all(np.signbit(X[:, coef == 0.0]))


@njit
def _exps(x, out):
    for i in range(x.shape[0]):
        out[i] = exp_lanes(x[i])


def test_exp_lanes_is_within_two_ulp_of_libm():
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [rng.uniform(-708.0, 709.78, 200_000), rng.uniform(-1.0, 1.0, 100_000), [0.0, -0.0]]
    )
    out = np.empty_like(x)
    _exps(x, out)
    expected = np.array([math.exp(v) for v in x])
    assert np.max(np.abs(out - expected) / np.spacing(expected)) <= 2.0
    edges = np.array([-708.5, -1000.0, -np.inf, 709.8, 1000.0, np.inf, np.nan])
    out = np.empty_like(edges)
    _exps(edges, out)
    assert out[:3].tolist() == [0.0, 0.0, 0.0]
    assert out[3:6].tolist() == [np.inf] * 3 and np.isnan(out[6])
