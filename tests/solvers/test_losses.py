"""Every loss × every function a loss module must define (``dispatch.REQUIRED``), through the
jitted dispatchers the kernels call, generated from the registry: a new loss module is
tested without editing this file. φ' is the derivative of φ and β-Lipschitz, φ'' that of φ',
the increment is the difference of values without cancellation, the curvature growth
bounds φ'', φ* is the conjugate (Fenchel–Young equality at y = φ'(z), inequality elsewhere,
+inf exactly outside its domain), and the exact dual step maximizes its 1-D objective
whatever the warm start. The dispatch is exhaustive: an unknown code raises."""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from numba import njit
from scipy.optimize import minimize_scalar

from faceoff.solvers.losses import (
    EXACT_TOL,
    KERNEL_NAMES,
    LOSSES,
    Loss,
    LossModuleError,
    LossParams,
    curvature_growth,
    dispatch,
    dual_box_violation,
    dual_step,
    loss_conj,
    loss_conjs,
    loss_deriv,
    loss_deriv_lanes,
    loss_derivs,
    loss_derivs12,
    loss_dual_step,
    loss_increment,
    loss_value,
    loss_values,
    loss_values_derivs,
    make_loss,
    multinomial_conjs,
    multinomial_derivs,
    multinomial_row_increment,
    multinomial_values,
    multinomial_values_derivs,
    ovr_row_gradient,
    prefetch_warm,
    read_info,
    simplex_step,
    softmax_row,
    warm_starts,
)

GAMMAS = (1.0, 0.3)  # a smoothed loss's γ; the other losses ignore it
FAR = 1e9  # |z − b| where every loss's φ' has reached its range's edges (to rounding)


def _losses() -> list:
    """(name, γ) of every registered loss, each γ of GAMMAS for a smoothed one."""
    return [
        pytest.param(name, gamma, id=f"{name}-{gamma:g}" if info.smoothed else name)
        for name, info in LOSSES.items()
        for gamma in (GAMMAS if info.smoothed else GAMMAS[:1])
    ]


def _labels(loss: Loss, rng, size: int) -> np.ndarray:
    """Targets b: ±1 labels for the classification losses, reals for the others."""
    if loss.needs_binary_labels:
        return np.where(rng.random(size) < 0.5, -1.0, 1.0)
    return rng.normal(scale=3.0, size=size)


def _margins(rng, size: int) -> np.ndarray:
    """z over five decades of scale, of both signs."""
    return rng.normal(size=size) * 10.0 ** rng.uniform(-2, 1.5, size)


def _edges(p: LossParams, b: float) -> tuple[float, float]:
    """The closure of φ'(·, b)'s range, [φ'(−FAR), φ'(FAR)]: dom φ* (up to a boundary)."""
    return loss_deriv(p, b - FAR, b), loss_deriv(p, b + FAR, b)


def _dual_points(loss: Loss, rng, b: np.ndarray) -> np.ndarray:
    """y in dom φ*: φ'(z) for margins of every scale, one in seven at the domain's edges."""
    p = loss.params
    y = np.array([loss_deriv(p, zi, bi) for zi, bi in zip(_margins(rng, b.size), b, strict=True)])
    for k in range(0, b.size, 7):
        y[k] = _edges(p, b[k])[k // 7 % 2]
    return y


def _sup(p: LossParams, y: float, b: float, start: float) -> float:
    """sup_z {y·z − φ(z, b)} by Brent's method, bracketed around ``start``."""
    found = minimize_scalar(
        lambda z: -(y * z - loss_value(p, z, b)), bracket=(start - 1.0, start + 1.0), tol=1e-12
    )
    return -found.fun


CHECKS: dict[str, Callable[[Loss], None]] = {}


def check(function: str):
    """Register the test of the loss modules' function ``function``."""

    def register(test: Callable[[Loss], None]) -> Callable[[Loss], None]:
        CHECKS[function] = test
        return test

    return register


@pytest.mark.parametrize("function", dispatch.REQUIRED)
@pytest.mark.parametrize("name,gamma", _losses())
def test_every_function_of_every_loss(name, gamma, function):
    CHECKS[function](make_loss(name, gamma))


def test_every_required_function_has_its_test():
    assert set(CHECKS) == set(dispatch.REQUIRED)


@check("value")
def _value(loss: Loss) -> None:
    """φ is finite for margins of every scale (no overflow up to ±1e150) and convex in z."""
    rng, p = np.random.default_rng(0), loss.params
    b = _labels(loss, rng, 400)
    z1, z2 = 40 * _margins(rng, 400), 40 * _margins(rng, 400)
    for zi, wi, bi in zip(z1, z2, b, strict=True):
        middle = loss_value(p, 0.5 * (zi + wi), bi)
        ends = 0.5 * (loss_value(p, zi, bi) + loss_value(p, wi, bi))
        assert middle <= ends + 1e-13 * max(1.0, ends), (zi, wi, bi)
    for zi in (1e3, -1e3, 1e150, -1e150):
        assert np.isfinite(loss_value(p, zi, 1.0)) and np.isfinite(loss_deriv(p, zi, 1.0))


@check("deriv")
def _deriv(loss: Loss) -> None:
    """φ' matches central differences of φ, and |φ'(z) − φ'(z')| ≤ β|z − z'| with β the
    loss's smoothness, attained up to 1% (so β is not just an upper bound)."""
    rng, p = np.random.default_rng(0), loss.params
    b, z = _labels(loss, rng, 400), _margins(rng, 400)
    h = 1e-6
    for zi, bi in zip(z, b, strict=True):
        numeric = (loss_value(p, zi + h, bi) - loss_value(p, zi - h, bi)) / (2 * h)
        assert loss_deriv(p, zi, bi) == pytest.approx(numeric, abs=1e-6), (zi, bi)
    grid = np.linspace(-4.0, 4.0, 8001)  # covers every piece of every loss for b = ±1
    for bi in (1.0, -1.0):
        slopes = np.array([loss_deriv(p, zi, bi) for zi in grid])
        ratios = np.abs(np.diff(slopes)) / np.diff(grid)
        assert ratios.max() <= loss.smoothness * (1 + 1e-9)
        assert ratios.max() >= 0.99 * loss.smoothness


@check("derivs12")
def _derivs12(loss: Loss) -> None:
    """(φ', φ''): φ' as loss_deriv, φ'' in [0, β] and the derivative of φ' wherever φ' is
    differentiable (its one-sided differences agree)."""
    rng, p = np.random.default_rng(1), loss.params
    b, z = _labels(loss, rng, 400), _margins(rng, 400)
    h = 1e-5
    for zi, bi in zip(z, b, strict=True):
        first, second = loss_derivs12(p, zi, bi)
        assert first == pytest.approx(loss_deriv(p, zi, bi), rel=1e-15, abs=1e-300)
        assert 0.0 <= second <= loss.smoothness * (1 + 1e-12)
        mid = loss_deriv(p, zi, bi)
        right = (loss_deriv(p, zi + h, bi) - mid) / h
        left = (mid - loss_deriv(p, zi - h, bi)) / h
        if abs(right - left) <= 1e-4 * loss.smoothness:
            assert second == pytest.approx((right + left) / 2, abs=1e-5 * loss.smoothness)


@check("increment")
def _increment(loss: Loss) -> None:
    """loss_increment(z, b, t) = φ(z + t) − φ(z): equal to the difference where it is
    accurate, and, for a loss with a curvature bound (C²: not the piecewise smoothed hinge),
    equal to t·φ'(z) to 1e-9 relative for tiny t, where the difference of two losses keeps
    no correct digit."""
    rng, p = np.random.default_rng(6), loss.params
    b, z = _labels(loss, rng, 200), _margins(rng, 200)
    for zi, bi, t in zip(z, b, rng.normal(scale=2.0, size=200), strict=True):
        exact = loss_value(p, zi + t, bi) - loss_value(p, zi, bi)
        assert loss_increment(p, zi, bi, t) == pytest.approx(exact, rel=1e-9, abs=1e-12)
    if math.isfinite(curvature_growth(p, 1.0)):
        for zi, bi in zip(z, b, strict=True):
            t = 1e-13 * max(1.0, abs(zi))
            assert loss_increment(p, zi, bi, t) == pytest.approx(
                t * loss_deriv(p, zi, bi), rel=1e-9, abs=1e-300
            )


@check("curvature_growth")
def _curvature_growth(loss: Loss) -> None:
    """φ''(z + s) ≤ curvature_growth(t)·φ''(z) for |s| ≤ t (+inf: no such bound), the bound
    is at least 1 and grows with t."""
    rng, p = np.random.default_rng(7), loss.params
    bounds = [curvature_growth(p, t) for t in (0.0, 0.1, 1.0, 5.0)]
    assert bounds[0] >= 1.0 and bounds == sorted(bounds)
    b, z = _labels(loss, rng, 500), _margins(rng, 500)
    for zi, bi, t in zip(z, b, rng.uniform(0.0, 5.0, 500), strict=True):
        bound = curvature_growth(p, t)
        if bound == math.inf:
            continue
        here = loss_derivs12(p, zi, bi)[1]
        for s in (-t, -t / 2, t / 3, t):
            there = loss_derivs12(p, zi + s, bi)[1]
            assert there <= bound * here * (1 + 1e-12) + 1e-300, (zi, bi, s)


@check("conj")
def _conj(loss: Loss) -> None:
    """Fenchel–Young: φ(z) + φ*(y) = z·y at y = φ'(z) (the domain's edges included) and ≥
    elsewhere; φ* is the brute-force supremum; and φ* = +inf exactly where the supremum is
    unbounded, beyond the domain's tolerance."""
    rng, p = np.random.default_rng(1), loss.params
    b, z = _labels(loss, rng, 2000), _margins(rng, 2000)
    z[:4] = [FAR, -FAR, 1.0, 1.0 - loss.gamma]  # the edges; the smoothed hinge's kinks
    b[2:4] = 1.0 if loss.needs_binary_labels else b[2:4]
    for zi, bi in zip(z, b, strict=True):
        y = loss_deriv(p, zi, bi)
        phi, conj = loss_value(p, zi, bi), loss_conj(p, y, bi)
        scale = max(1.0, abs(zi * y), phi)
        assert abs(phi + conj - zi * y) <= 1e-12 * scale, (zi, bi, y)
    b, z = b[:300], z[4:304]
    y = _dual_points(loss, rng, b)
    for yi, bi, zi, z0 in zip(y, b, _margins(rng, 300), z, strict=True):
        conj = loss_conj(p, yi, bi)
        assert np.isfinite(conj)
        assert loss_value(p, zi, bi) + conj >= zi * yi - 1e-12 * max(1, abs(zi))
        if abs(z0 - bi) < 5.0:  # its supremum at z0, where Brent finds it
            y0 = loss_deriv(p, z0, bi)
            assert loss_conj(p, y0, bi) == pytest.approx(_sup(p, y0, bi, z0), abs=1e-9)
    for bi in (1.0, -1.0) if loss.needs_binary_labels else (1.0, -1.0, 2.5):
        for edge in _edges(p, bi):
            assert np.isfinite(loss_conj(p, edge * (1 + 1e-13), bi))  # within the tolerance
            for factor in (1.01, 2.0):
                y_out = edge * factor
                far = [y_out * s - loss_value(p, s, bi) for s in (-1e6, 1e6)]
                if loss_conj(p, y_out, bi) == np.inf:
                    assert max(far) > 1e3, (y_out, bi)
                else:  # still in the domain (the squared loss's is ℝ)
                    assert max(far) <= loss_conj(p, y_out, bi) + 1e-6


def _dual_objective(p: LossParams, y: float, z: float, b: float, inv_s: float):
    """h(β) = β·z − φ*(β) − inv_s·(β − y)²/2, the 1-D dual step's objective."""
    return lambda beta: beta * z - loss_conj(p, beta, b) - inv_s * (beta - y) ** 2 / 2


@check("dual_step")
def _dual_step(loss: Loss) -> None:
    """β = loss_dual_step(y, z, inv_s) maximizes h(β) = β·z − φ*(β) − inv_s·(β − y)²/2 over
    dom φ* (SDCA's coordinate step, Faceoff Algorithm 2), compared with a bounded brute
    force; it does not depend on the warm start (the one it keeps, or none); a loss without
    warm starts ignores the one it is given and returns it as it is."""
    rng, p = np.random.default_rng(3), loss.params
    b = _labels(loss, rng, 300)
    y = _dual_points(loss, rng, b)
    z = _margins(rng, 300)
    inv_s = 10.0 ** rng.uniform(-4, 4, 300)
    for yi, zi, bi, si in zip(y, z, b, inv_s, strict=True):
        h = _dual_objective(p, yi, zi, bi, si)
        beta, warm, _ = loss_dual_step(p, yi, zi, bi, si, np.nan, EXACT_TOL)
        lo, hi = _edges(p, bi)
        found = minimize_scalar(
            lambda v, h=h: -h(v), bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}
        )
        best = max(-found.fun, h(lo), h(hi))
        assert np.isfinite(h(beta)), (yi, zi, bi, si, beta)
        assert h(beta) >= best - 1e-12 * max(1.0, abs(best)), (yi, zi, bi, si)
        assert beta == pytest.approx(found.x, abs=1e-6 * max(1.0, abs(beta)))
        # the next step on this coordinate, from the warm start kept or from none: the same
        z_next = zi + rng.normal()
        kept = loss_dual_step(p, beta, z_next, bi, si, warm, EXACT_TOL)[0]
        fresh = loss_dual_step(p, beta, z_next, bi, si, np.nan, EXACT_TOL)[0]
        assert kept == pytest.approx(fresh, abs=2e-12 * max(1.0, abs(fresh)))
        if not LOSSES[loss.name].warm_start:
            for other in (0.0, 5.0):
                again = loss_dual_step(p, yi, zi, bi, si, other, EXACT_TOL)
                assert again == (beta, other, again[2])


@check("dual_box_violation")
def _dual_box_violation(loss: Loss) -> None:
    """For a loss whose dual lives in the box t = −b·y ∈ [0, 1]: g is the derivative in t of
    the coordinate's dual objective −φ*(−b·t) − t·b·z (central differences) and side −1 at
    t = 0, +1 at t = 1, 0 inside; (0, 0) for a loss without a box."""
    rng, p = np.random.default_rng(8), loss.params
    b, z = _labels(loss, rng, 200), _margins(rng, 200)
    t = rng.uniform(0.0, 1.0, 200)
    t[::5], t[1::5] = 0.0, 1.0
    for ti, bi, zi in zip(t, b, z, strict=True):
        g, side = dual_box_violation(p, -bi * ti, zi, bi)
        if not loss.dual_box:
            assert (g, side) == (0.0, 0)
            continue
        assert side == (-1 if ti == 0.0 else (1 if ti == 1.0 else 0))
        if 1e-3 < ti < 1 - 1e-3:
            h = 1e-6

            def dual(s, bi=bi, zi=zi):
                return -loss_conj(p, -bi * s, bi) - s * bi * zi

            assert g == pytest.approx((dual(ti + h) - dual(ti - h)) / (2 * h), abs=1e-6)


@pytest.mark.parametrize("name,gamma", _losses())
def test_dual_step_keeps_the_warm_starts_of_the_losses_that_declare_them(name, gamma):
    """dual_step (what kernels call) is loss_dual_step for coordinate i, its warm start read
    from and stored in warm[i] for a loss with ``warm_start``, left alone otherwise."""
    loss, rng = make_loss(name, gamma), np.random.default_rng(9)
    p = loss.params
    b = _labels(loss, rng, 50)
    y, z = _dual_points(loss, rng, b), _margins(rng, 50)
    warm = warm_starts(50)
    for i in range(50):
        prefetch_warm(p, warm, i)
        expected, kept, iterations = loss_dual_step(p, y[i], z[i], b[i], 2.0, np.nan, 1e-9)
        assert dual_step(p, warm, i, y[i], z[i], b[i], 2.0, 1e-9) == (expected, iterations)
        assert warm[i] == kept if LOSSES[name].warm_start else np.isnan(warm[i])


def test_logistic_step_keeps_the_logit_of_t():
    """The logistic's warm start is the logit of the new t, exactly; started from the logit
    of y (as kernels keep it) or recovering it from y, the step is the same."""
    p, rng = make_loss("logistic").params, np.random.default_rng(3)
    for _ in range(300):
        bi = rng.choice((-1.0, 1.0))
        yi, zi = -bi * rng.uniform(0.0, 1.0), rng.normal(scale=5.0)
        si = 10.0 ** rng.uniform(-4, 4)
        beta, warm, _ = loss_dual_step(p, yi, zi, bi, si, np.nan, EXACT_TOL)
        t = -bi * beta
        assert 1.0 / (1.0 + np.exp(-warm)) == pytest.approx(t, rel=1e-15, abs=1e-300)
        kept = np.log(-bi * yi) - np.log1p(bi * yi) if 0 < -bi * yi < 1 else np.nan
        again = loss_dual_step(p, yi, zi, bi, si, kept, EXACT_TOL)[0]
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


@pytest.mark.parametrize("name,gamma", _losses())
def test_vector_forms_match_the_scalar_ones(name, gamma):
    loss, rng = make_loss(name, gamma), np.random.default_rng(4)
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


@pytest.mark.parametrize("name,gamma", _losses())
def test_vector_sums_match_the_scalar_ones_to_an_ulp(name, gamma):
    """loss_values and loss_conjs (for the logistic, numpy's vector exp, log and log1p)
    against the sums of the scalar φ and φ* over many points: margins of both signs, zero,
    ±1e3 and beyond ±745; dual points on the domain's edges and within its tolerance; a point
    outside the domain gives +∞, a NaN stays NaN."""
    loss, rng = make_loss(name, gamma), np.random.default_rng(5)
    params = loss.params
    z = np.concatenate([40 * _margins(rng, 3000), [0.0, -0.0, 1e3, -1e3, 800.0, -800.0]])
    b = _labels(loss, rng, z.size)
    expected = sum(loss_value(params, zi, bi) for zi, bi in zip(z, b, strict=True))
    assert loss_values(params, z, b) == pytest.approx(expected, rel=1e-14)
    work = np.empty((3, z.size))
    assert loss_values(params, z, b, work) == loss_values(params, z, b)
    y = _dual_points(loss, rng, b)
    y[2], y[3] = (edge * (1.0 + 1e-13) for edge in _edges(params, b[2]))  # within tolerance
    b[3] = b[2]
    expected = sum(loss_conj(params, yi, bi) for yi, bi in zip(y, b, strict=True))
    assert loss_conjs(params, y, b) == pytest.approx(expected, rel=1e-14, abs=1e-12)
    assert loss_conjs(params, y, b, work) == loss_conjs(params, y, b)
    assert np.isnan(loss_values(params, np.append(z, np.nan), np.append(b, b[0])))
    outside = y.copy()
    outside[5] = 1.01 * _edges(params, b[5])[1]
    if loss_conj(params, outside[5], b[5]) == np.inf:  # a loss whose dual domain is bounded
        assert loss_conjs(params, outside, b) == np.inf
        assert np.isnan(loss_conjs(params, np.append(y, np.nan), np.append(b, b[0])))


UNKNOWN = LossParams(max(info.code for info in LOSSES.values()) + 1, 1.0)
SCALAR_CALLS = {  # every jitted dispatcher, with arguments of the right types
    "loss_value": (loss_value, (UNKNOWN, 0.5, 1.0)),
    "loss_deriv": (loss_deriv, (UNKNOWN, 0.5, 1.0)),
    "loss_derivs12": (loss_derivs12, (UNKNOWN, 0.5, 1.0)),
    "loss_increment": (loss_increment, (UNKNOWN, 0.5, 1.0, 0.1)),
    "curvature_growth": (curvature_growth, (UNKNOWN, 0.1)),
    "loss_conj": (loss_conj, (UNKNOWN, -0.5, 1.0)),
    "loss_dual_step": (loss_dual_step, (UNKNOWN, -0.5, 0.5, 1.0, 2.0, np.nan, 1e-9)),
    "dual_box_violation": (dual_box_violation, (UNKNOWN, -0.5, 0.5, 1.0)),
    "dual_step": (dual_step, (UNKNOWN, np.full(3, np.nan), 1, -0.5, 0.5, 1.0, 2.0, 1e-9)),
    "prefetch_warm": (prefetch_warm, (UNKNOWN, np.full(3, np.nan), 1)),
    "loss_values": (loss_values, (UNKNOWN, np.ones(3), np.ones(3))),
    "loss_derivs": (loss_derivs, (UNKNOWN, np.ones(3), np.ones(3), np.empty(3))),
    "loss_values_derivs": (loss_values_derivs, (UNKNOWN, np.ones(3), np.ones(3), np.empty(3))),
    "loss_conjs": (loss_conjs, (UNKNOWN, -0.5 * np.ones(3), np.ones(3))),
    "multinomial_values": (multinomial_values, (UNKNOWN, np.ones((3, 2)), np.zeros(3, int))),
    "multinomial_derivs": (multinomial_derivs, (UNKNOWN, np.ones((3, 2)), np.zeros(3, int))),
    "multinomial_values_derivs": (
        multinomial_values_derivs,
        (UNKNOWN, np.ones((3, 2)), np.zeros(3, int)),
    ),
    "multinomial_conjs": (multinomial_conjs, (UNKNOWN, np.zeros((3, 2)), np.zeros(3, int))),
    "simplex_step": (
        simplex_step,
        (UNKNOWN, np.ones(3), np.full(3, 1 / 3), 1.0, np.empty(3), 1e-12),
    ),
    "softmax_row": (softmax_row, (UNKNOWN, np.ones((2, 3)), 1, np.empty(3))),
    "multinomial_row_increment": (
        multinomial_row_increment,
        (UNKNOWN, np.ones((2, 3)), 1, 0.5, np.ones(3), 0, np.empty(3)),
    ),
    "loss_deriv_lanes": (loss_deriv_lanes, (UNKNOWN, 0.5, 1.0)),
    "ovr_row_gradient": (ovr_row_gradient, (UNKNOWN, np.ones((2, 3)), 1, 0, 0.5, np.zeros(3))),
}


@pytest.mark.parametrize("name", LOSSES)
def test_the_lane_derivative_is_the_derivative(name):
    """loss_deriv_lanes (a loss's vectorizable φ', or its φ') agrees with loss_deriv to a
    few ulps over margins of both signs, zero, ±800 and the smoothed hinge's kinks."""
    params, rng = make_loss(name, 0.5).params, np.random.default_rng(7)
    z = np.concatenate([30 * rng.standard_normal(500), [0.0, 1.0, 0.5, -800.0, 800.0]])
    for b in (1.0, -1.0):
        for zi in z:
            got, want = loss_deriv_lanes(params, zi, b), loss_deriv(params, zi, b)
            assert got == pytest.approx(want, rel=4e-16 * 8, abs=1e-300)


def test_every_dispatcher_is_tested_for_an_unknown_code():
    assert set(SCALAR_CALLS) == set(KERNEL_NAMES) - {"warm_starts"}


@pytest.mark.parametrize("name", SCALAR_CALLS)
def test_an_unknown_code_raises(name):
    """No fall-through to some loss's maths: a code no loss has raises, naming the codes."""
    function, args = SCALAR_CALLS[name]
    with pytest.raises(ValueError, match=r"unknown loss code: .*0 \(squared\)"):
        function(*args)


@njit
def _kernel_like(loss, z, b, y, warm):
    """A kernel's use of the dispatchers: a loop over the coordinates."""
    total = 0.0
    for i in range(z.shape[0]):
        total += loss_value(loss, z[i], b[i]) + dual_step(loss, warm, i, y[i], z[i], b[i], 1.0)[0]
    return total


def test_an_unknown_code_raises_in_a_jitted_caller():
    z, b, y, warm = np.ones(4), np.ones(4), np.full(4, -0.5), warm_starts(4)
    for name in LOSSES:  # the same compiled kernel serves every loss
        assert np.isfinite(_kernel_like(make_loss(name).params, z, b, y, warm))
    with pytest.raises(ValueError, match="unknown loss code"):
        _kernel_like(UNKNOWN, z, b, y, warm)


def test_the_source_read_info_is_the_imported_one():
    """What the light side reads from each module's source (ast) is the module's INFO."""
    for module in dispatch.MODULES:
        assert read_info(Path(module.__file__)) == module.INFO
        assert LOSSES[module.INFO.name] == module.INFO
    assert [m.INFO.name for m in dispatch.MODULES] == list(LOSSES)


@pytest.mark.parametrize("missing", dispatch.REQUIRED)
def test_a_module_missing_a_function_fails_naming_it(monkeypatch, missing):
    """A loss module without one of the required functions is refused at dispatch's import,
    with the loss's and the function's names."""
    source = dispatch.MODULES[0]
    info = type(source.INFO)(**{**vars(source.INFO), "name": "broken", "code": 99})
    broken = types.ModuleType(f"{dispatch.__package__}.broken")
    broken.__file__ = "broken.py"
    broken.INFO = info
    for function in dispatch.REQUIRED:
        if function != missing:
            setattr(broken, function, getattr(source, function))
    monkeypatch.setitem(sys.modules, broken.__name__, broken)
    monkeypatch.setitem(LOSSES, "broken", info)
    with pytest.raises(LossModuleError, match=rf"loss 'broken' .* no jitted function '{missing}'"):
        dispatch._load("broken")
    broken.INFO = type(info)(**{**vars(info), "beta": 2.0})  # INFO computed, not literal
    setattr(broken, missing, getattr(source, missing))
    with pytest.raises(LossModuleError, match="not the one read from its source"):
        dispatch._load("broken")


def test_unknown_loss_and_bad_gamma_are_refused():
    with pytest.raises(ValueError, match="unknown loss 'hinge'; accepted: "):
        make_loss("hinge")
    with pytest.raises(ValueError, match="smoothing gamma must be a positive number, got 0"):
        make_loss("smooth_hinge", 0)
    assert {make_loss(name).name for name in LOSSES} == set(LOSSES)
    assert {make_loss(name).code for name in LOSSES} == {info.code for info in LOSSES.values()}
