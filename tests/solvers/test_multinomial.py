"""The multinomial logistic loss (the logistic's K-class form): values, gradient, conjugate
and the exact dual step of a row, checked against brute force and optimality conditions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp, softmax

from faceoff.solvers.losses import (
    make_loss,
    multinomial_conjs,
    multinomial_derivs,
    multinomial_row_increment,
    multinomial_values,
    multinomial_values_derivs,
    simplex_step,
    softmax_row,
)
from faceoff.solvers.vocabulary import LOSS_NAMES, get_loss

LOGISTIC = make_loss("logistic").params


def _rows(rng, n=200, K=5, scale=3.0):
    return scale * rng.normal(size=(n, K)), rng.integers(0, K, n)


def test_only_the_logistic_has_a_multinomial_form():
    takes = {name: get_loss(name).multiclass for name in LOSS_NAMES}
    assert takes["logistic"] == ("ovr", "multinomial")
    assert all(forms == ("ovr",) for name, forms in takes.items() if name != "logistic")
    with pytest.raises(ValueError, match="no multinomial form"):
        multinomial_values(make_loss("squared").params, np.ones((2, 2)), np.zeros(2, int))


def test_values_and_gradient_are_the_softmax_cross_entropy():
    rng = np.random.default_rng(0)
    Z, y = _rows(rng)
    Z[0] = [800.0, -800.0, 0.0, 1.0, 2.0]  # no overflow
    rows = np.arange(len(y))
    expected = float((logsumexp(Z, axis=1) - Z[rows, y]).sum())
    assert multinomial_values(LOGISTIC, Z, y) == pytest.approx(expected, rel=1e-14)
    G = softmax(Z, axis=1)
    G[rows, y] -= 1.0
    np.testing.assert_allclose(multinomial_derivs(LOGISTIC, Z, y), G, atol=1e-15)
    value, derivs = multinomial_values_derivs(LOGISTIC, Z, y)
    assert value == pytest.approx(expected, rel=1e-14)
    np.testing.assert_allclose(derivs, G, atol=1e-15)
    # finite differences of one row's value along a random direction
    z, d, h = Z[1:2], rng.normal(size=(1, 5)), 1e-6
    slope = (
        multinomial_values(LOGISTIC, z + h * d, y[1:2])
        - multinomial_values(LOGISTIC, z - h * d, y[1:2])
    ) / (2 * h)
    assert slope == pytest.approx(float((G[1:2] * d).sum()), rel=1e-7)


def test_fenchel_young_equality_at_the_gradient_and_inequality_elsewhere():
    """φ(z) + φ*(v) = ⟨z, v⟩ at v = ∇φ(z); ≥ at an unrelated v in the domain; +∞ off the
    shifted simplex."""
    rng = np.random.default_rng(1)
    Z, y = _rows(rng)
    rows = np.arange(len(y))
    V = multinomial_derivs(LOGISTIC, Z, y)
    total = multinomial_values(LOGISTIC, Z, y) + multinomial_conjs(LOGISTIC, V, y)
    assert total == pytest.approx(float((Z * V).sum()), rel=1e-12, abs=1e-10)
    W = rng.dirichlet(np.ones(5), size=len(y))
    W[rows, y] -= 1.0
    assert multinomial_values(LOGISTIC, Z, y) + multinomial_conjs(LOGISTIC, W, y) >= float(
        (Z * W).sum()
    )
    off = V.copy()
    off[0, 0] += 1e-6  # the row no longer sums to 0
    assert multinomial_conjs(LOGISTIC, off, y) == np.inf
    assert multinomial_conjs(LOGISTIC, np.zeros_like(V), y) == 0.0  # p = e_y: 0 log 0 = 0


@pytest.mark.parametrize("seed", range(40))
def test_the_row_step_maximizes_its_objective(seed):
    """simplex_step's p maximizes h(p) = −Σ p log p + ⟨p, z⟩ − s/2‖p − p₀‖² over the simplex
    (SLSQP from many starts does no better), including from a vertex p₀ = e_y."""
    rng = np.random.default_rng(seed)
    K = int(rng.integers(2, 12))
    s = 10 ** rng.uniform(-3, 3)
    z = rng.normal(scale=10 ** rng.uniform(-1, 1.5), size=K)
    p0 = rng.dirichlet(np.ones(K)) if seed % 2 else np.eye(K)[rng.integers(K)]
    p = p0.copy()
    simplex_step(LOGISTIC, z, p, s, np.empty(K), 1e-14)
    assert p.min() >= 0.0 and p.sum() == pytest.approx(1.0, abs=1e-14)

    def h(q):
        q = np.maximum(q, 1e-300)
        return -(q * np.log(q)).sum() + q @ z - s / 2 * ((q - p0) ** 2).sum()

    best = -np.inf
    for start in (p, np.full(K, 1.0 / K), softmax(z)):
        found = minimize(
            lambda q: -h(q),
            start,
            method="SLSQP",
            bounds=[(0.0, 1.0)] * K,
            constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1.0}],
            options={"ftol": 1e-15, "maxiter": 500},
        )
        best = max(best, h(found.x))
    assert h(p) >= best - 1e-9 * (1.0 + abs(best))


def test_the_row_functions_kernels_use_agree_with_the_sums():
    """softmax_row is the gradient plus e_y, and multinomial_row_increment the change of a
    row's loss, as the vector sums compute them (to rounding)."""
    rng = np.random.default_rng(3)
    Z, y = _rows(rng, n=20, K=6)
    G = multinomial_derivs(LOGISTIC, Z, y)
    p = np.empty(6)
    for i in range(20):
        softmax_row(LOGISTIC, Z, i, p)
        expected = G[i].copy()
        expected[y[i]] += 1.0
        np.testing.assert_allclose(p, expected, atol=1e-14)
        d, v = rng.normal(size=6), rng.normal()
        moved = Z[i : i + 1] + v * d
        change = multinomial_values(LOGISTIC, moved, y[i : i + 1]) - multinomial_values(
            LOGISTIC, Z[i : i + 1], y[i : i + 1]
        )
        got = multinomial_row_increment(LOGISTIC, Z, i, v, d, y[i], p)
        assert got == pytest.approx(change, rel=1e-12, abs=1e-13)
