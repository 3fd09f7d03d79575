"""Every loss, through the jitted scalar functions the kernels call: φ' is the derivative of
φ and β-Lipschitz, φ* is the conjugate (Fenchel–Young equality at y = φ'(z), inequality
elsewhere, +inf exactly outside its domain), and the exact dual step maximizes its 1-D
objective whatever the warm start."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from faceoff.solvers.losses import (
    EXACT_TOL,
    loss_conj,
    loss_conjs,
    loss_deriv,
    loss_derivs,
    loss_dual_step,
    loss_increment,
    loss_value,
    loss_values,
    loss_values_derivs,
    make_loss,
)
from faceoff.solvers.vocabulary import LOSS_NAMES

GAMMAS = (1.0, 0.3)  # the smoothed hinge's γ; the other losses ignore it


def _labels(loss, rng, size: int) -> np.ndarray:
    """Targets b: ±1 labels for the classification losses, reals for the squared loss."""
    if loss.needs_binary_labels:
        return np.where(rng.random(size) < 0.5, -1.0, 1.0)
    return rng.normal(scale=3.0, size=size)


def _margins(rng, size: int) -> np.ndarray:
    """z over five decades of scale, of both signs."""
    return rng.normal(size=size) * 10.0 ** rng.uniform(-2, 1.5, size)


def _dual_points(loss, rng, b: np.ndarray) -> np.ndarray:
    """y in dom φ*: t = −b·y ∈ [0, 1] with the edges t = 0 and t = 1 for classification."""
    if not loss.needs_binary_labels:
        return rng.normal(scale=3.0, size=b.size)
    t = rng.uniform(0.0, 1.0, b.size)
    t[::7], t[1::7] = 0.0, 1.0
    return -b * t


def _sup(loss, y: float, b: float) -> float:
    """sup_z {y·z − φ(z, b)} by Brent's method (y in the interior of dom φ*)."""
    found = minimize_scalar(lambda z: -(y * z - loss_value(loss.params, z, b)), tol=1e-12)
    return -found.fun


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("name", LOSS_NAMES)
def test_derivative_and_smoothness(name, gamma):
    """φ' matches central differences of φ, and |φ'(z) − φ'(z')| ≤ β|z − z'| with β the
    loss's smoothness, attained up to 1% (so β is not just an upper bound)."""
    loss, rng = make_loss(name, gamma), np.random.default_rng(0)
    b, z = _labels(loss, rng, 400), _margins(rng, 400)
    h = 1e-6
    for zi, bi in zip(z, b, strict=True):
        numeric = (loss_value(loss.params, zi + h, bi) - loss_value(loss.params, zi - h, bi)) / (
            2 * h
        )
        assert loss_deriv(loss.params, zi, bi) == pytest.approx(numeric, abs=1e-6), (zi, bi)
    grid = np.linspace(-4.0, 4.0, 8001)  # covers every piece of every loss for b = ±1
    for bi in (1.0, -1.0):
        slopes = np.array([loss_deriv(loss.params, zi, bi) for zi in grid])
        ratios = np.abs(np.diff(slopes)) / np.diff(grid)
        assert ratios.max() <= loss.smoothness * (1 + 1e-9)
        assert ratios.max() >= 0.99 * loss.smoothness


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("name", LOSS_NAMES)
def test_fenchel_young_equality_at_the_derivative(name, gamma):
    """φ(z) + φ*(y) = z·y at y = φ'(z) (and y is in dom φ*)."""
    loss, rng = make_loss(name, gamma), np.random.default_rng(1)
    b, z = _labels(loss, rng, 2000), _margins(rng, 2000)
    if name == "smooth_hinge":  # the ends of the quadratic piece, b·z = 1 and b·z = 1 − γ
        z[:2], b[:2] = [1.0, 1.0 - gamma], 1.0
    for zi, bi in zip(z, b, strict=True):
        y = loss_deriv(loss.params, zi, bi)
        phi, conj = loss_value(loss.params, zi, bi), loss_conj(loss.params, y, bi)
        scale = max(1.0, abs(zi * y), phi)
        assert abs(phi + conj - zi * y) <= 1e-12 * scale, (zi, bi, y)


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("name", LOSS_NAMES)
def test_conjugate_is_the_supremum(name, gamma):
    """φ*(y) = sup_z {y·z − φ(z)} (brute force, interior of the domain), the Fenchel–Young
    inequality φ(z) + φ*(y) ≥ z·y at unrelated points, and φ* = +inf exactly where the
    supremum is unbounded."""
    loss, rng = make_loss(name, gamma), np.random.default_rng(2)
    b = _labels(loss, rng, 300)
    y = _dual_points(loss, rng, b)
    z = _margins(rng, 300)
    for yi, bi, zi in zip(y, b, z, strict=True):
        conj = loss_conj(loss.params, yi, bi)
        assert np.isfinite(conj)
        assert loss_value(loss.params, zi, bi) + conj >= zi * yi - 1e-12 * max(1, abs(zi))
        if not loss.needs_binary_labels or 1e-3 < -bi * yi < 1 - 1e-3:
            assert conj == pytest.approx(_sup(loss, yi, bi), abs=1e-9), (yi, bi)
    if loss.needs_binary_labels:
        big = 1e6
        for bi in (1.0, -1.0):
            for t, z_far in ((1.01, -bi * big), (-0.01, bi * big)):  # just outside [0, 1]
                assert loss_conj(loss.params, -bi * t, bi) == np.inf
                assert -bi * t * z_far - loss_value(loss.params, z_far, bi) > 1e3


@pytest.mark.parametrize("gamma", GAMMAS)
@pytest.mark.parametrize("name", LOSS_NAMES)
def test_dual_step_maximizes_its_objective(name, gamma):
    """β = loss_dual_step(y, z, inv_s) maximizes h(β) = β·z − φ*(β) − inv_s·(β − y)²/2 over
    dom φ* (SDCA's coordinate step, Faceoff Algorithm 2), compared with a bounded brute
    force, and does not depend on the warm start it is given."""
    loss, rng = make_loss(name, gamma), np.random.default_rng(3)
    b = _labels(loss, rng, 300)
    y = _dual_points(loss, rng, b)
    z = _margins(rng, 300)
    inv_s = 10.0 ** rng.uniform(-4, 4, 300)
    for yi, zi, bi, si in zip(y, z, b, inv_s, strict=True):

        def h(beta, yi=yi, zi=zi, bi=bi, si=si):
            return beta * zi - loss_conj(loss.params, beta, bi) - si * (beta - yi) ** 2 / 2

        beta, warm, _ = loss_dual_step(loss.params, yi, zi, bi, si, np.nan, EXACT_TOL)
        if loss.needs_binary_labels:
            lo, hi = sorted((0.0, -bi))
            found = minimize_scalar(
                lambda v: -h(v), bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}
            )
            best = max(-found.fun, h(lo), h(hi))
        else:
            found = minimize_scalar(lambda v: -h(v), tol=1e-12)
            best = -found.fun
        assert np.isfinite(h(beta)), (yi, zi, bi, si, beta)
        assert h(beta) >= best - 1e-12 * max(1.0, abs(best)), (yi, zi, bi, si)
        assert beta == pytest.approx(found.x, abs=1e-6 * max(1.0, abs(beta)))
        if name == "logistic":  # the warm start kept is the logit of the new t, exactly
            t = -bi * beta
            assert 1.0 / (1.0 + np.exp(-warm)) == pytest.approx(t, rel=1e-15, abs=1e-300)
            # started from the kept logit of y (as kernels do) or recovering it: the same
            kept = np.log(-bi * yi) - np.log1p(bi * yi) if 0 < -bi * yi < 1 else np.nan
            again = loss_dual_step(loss.params, yi, zi, bi, si, kept, EXACT_TOL)[0]
            assert again == pytest.approx(beta, abs=2e-12 * max(1.0, abs(beta)))


def _logistic_violation(u, y, z, b, inv_s):
    """g(u) = u + inv_s·σ(u) − K with K = −b·z + inv_s·t₀: the logistic step's optimality
    violation at u = logit(t), t = −b·β."""
    return u + inv_s / (1.0 + np.exp(-u)) - (-b * z + inv_s * -b * y)


def test_logistic_step_stops_within_its_tolerance():
    """An inexact logistic step (liblinear's inner solve) ends with |g(u)| ≤ tol, so a looser
    tolerance never needs more Newton iterations; a coordinate already within tol is left
    unchanged with none."""
    loss, rng = make_loss("logistic").params, np.random.default_rng(5)
    for _ in range(300):
        b = rng.choice((-1.0, 1.0))
        y, z = -b * rng.uniform(0.01, 0.99), rng.normal(scale=3.0)
        inv_s = 10.0 ** rng.uniform(-4, 4)
        warm = np.log(-b * y) - np.log1p(b * y)
        counts = []
        for tol in (1e-1, 1e-2, 1e-6, EXACT_TOL):
            beta, u, iterations = loss_dual_step(loss, y, z, b, inv_s, warm, tol)
            violation = abs(_logistic_violation(u, y, z, b, inv_s))
            assert violation <= max(tol, 1e-12 * (1 + inv_s + abs(z))), (tol, violation)
            assert 1.0 / (1.0 + np.exp(-u)) == pytest.approx(-b * beta, rel=1e-15, abs=1e-300)
            counts.append(iterations)
        assert counts == sorted(counts)
    # a coordinate at its optimum for this z: no iteration, y returned as it is
    u_star, b, inv_s = 0.3, 1.0, 2.0
    y_star = -b / (1.0 + np.exp(-u_star))
    z = -u_star / b
    assert loss_dual_step(loss, y_star, z, b, inv_s, u_star, 1e-9) == (y_star, u_star, 0)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_increment_is_the_difference_of_losses_without_cancellation(name):
    """loss_increment(z, b, t) = φ(z + t) − φ(z): equal to the difference where it is
    accurate, and for tiny t equal to t·φ'(z) to 1e-9 relative, where the difference of two
    losses keeps no correct digit."""
    loss, rng = make_loss(name, 0.5), np.random.default_rng(6)
    b, z = _labels(loss, rng, 200), _margins(rng, 200)
    p = loss.params
    for zi, bi, t in zip(z, b, rng.normal(scale=2.0, size=200), strict=True):
        exact = loss_value(p, zi + t, bi) - loss_value(p, zi, bi)
        assert loss_increment(p, zi, bi, t) == pytest.approx(exact, rel=1e-9, abs=1e-12)
    if name != "smooth_hinge":  # smooth: first order for tiny steps
        for zi, bi in zip(z, b, strict=True):
            t = 1e-13 * max(1.0, abs(zi))
            assert loss_increment(p, zi, bi, t) == pytest.approx(
                t * loss_deriv(p, zi, bi), rel=1e-9, abs=1e-300
            )


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_vector_forms_match_the_scalar_ones(name):
    loss, rng = make_loss(name, 0.5), np.random.default_rng(4)
    b, z = _labels(loss, rng, 50), _margins(rng, 50)
    y = _dual_points(loss, rng, b)
    params = loss.params
    assert loss_values(params, z, b) == pytest.approx(
        sum(loss_value(params, zi, bi) for zi, bi in zip(z, b, strict=True)), rel=1e-14
    )
    assert loss_conjs(params, y, b) == pytest.approx(
        sum(loss_conj(params, yi, bi) for yi, bi in zip(y, b, strict=True)),
        rel=1e-14,
        abs=1e-14,
    )
    derivs = loss_derivs(params, z, b, np.empty(50))
    assert derivs.tolist() == [loss_deriv(params, zi, bi) for zi, bi in zip(z, b, strict=True)]
    # what L-BFGS takes (for the logistic, exp and log1p as numpy's vector loops): the two
    # separate passes to an ulp or so, margins of both signs, zero, ±1e3 (exp underflows),
    # beyond ±745 and NaN included, with and without scratch
    z = np.concatenate([z, 40 * _margins(rng, 2000), [0.0, -0.0, 1e3, -1e3, 800.0, np.nan]])
    b = np.concatenate([b, _labels(loss, rng, 2006)])
    out = np.empty(z.size)
    total = loss_values_derivs(params, z, b, out)
    expected = loss_values(params, z[:-1], b[:-1])
    work = np.empty((3, z.size - 1))
    assert loss_values_derivs(params, z[:-1], b[:-1], np.empty(z.size - 1), work) == (
        pytest.approx(expected, rel=1e-14)
    )
    assert np.isnan(total)
    derivs = loss_derivs(params, z, b, np.empty(z.size))
    np.testing.assert_allclose(out, derivs, rtol=4e-16, atol=1e-300)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_vector_sums_match_the_scalar_ones_to_an_ulp(name):
    """loss_values and loss_conjs (for the logistic, numpy's vector exp, log and log1p)
    against the sums of the scalar φ and φ* over many points: margins of both signs, zero,
    ±1e3 and beyond ±745; dual points on the domain's edges and within its tolerance; a point
    outside the domain gives +∞, a NaN stays NaN."""
    loss, rng = make_loss(name, 0.5), np.random.default_rng(5)
    params = loss.params
    z = np.concatenate([40 * _margins(rng, 3000), [0.0, -0.0, 1e3, -1e3, 800.0, -800.0]])
    b = _labels(loss, rng, z.size)
    expected = sum(loss_value(params, zi, bi) for zi, bi in zip(z, b, strict=True))
    assert loss_values(params, z, b) == pytest.approx(expected, rel=1e-14)
    work = np.empty((3, z.size))
    assert loss_values(params, z, b, work) == loss_values(params, z, b)
    y = _dual_points(loss, rng, b)
    if loss.needs_binary_labels:  # t = −b·y just outside [0, 1], within the tolerance
        y[2], y[3] = b[2] * 1e-13, -b[3] * (1.0 + 1e-13)
    expected = sum(loss_conj(params, yi, bi) for yi, bi in zip(y, b, strict=True))
    assert loss_conjs(params, y, b) == pytest.approx(expected, rel=1e-14, abs=1e-12)
    assert loss_conjs(params, y, b, work) == loss_conjs(params, y, b)
    assert np.isnan(loss_values(params, np.append(z, np.nan), np.append(b, b[0])))
    if loss.needs_binary_labels:
        outside = y.copy()
        outside[5] = -b[5] * 1.01
        assert loss_conjs(params, outside, b) == np.inf
        assert np.isnan(loss_conjs(params, np.append(y, np.nan), np.append(b, b[0])))


def test_unknown_loss_and_bad_gamma_are_refused():
    with pytest.raises(ValueError, match="unknown loss 'hinge'; accepted: "):
        make_loss("hinge")
    with pytest.raises(ValueError, match="smoothing gamma must be a positive number, got 0"):
        make_loss("smooth_hinge", 0)
    assert {make_loss(name).name for name in LOSS_NAMES} == set(LOSS_NAMES)
