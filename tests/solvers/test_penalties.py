"""The elastic net g(x) = l1·‖x‖₁ + l2/2·‖x‖²: its conjugate g*(v) = Σⱼ (|vⱼ| − l1)₊²/(2·l2)
is the supremum, ∇g*(v) = soft(v, l1)/l2 (the README's map from a dual to a primal point),
the Fenchel–Young equality holds there, and the prox is the minimizer of its objective."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from faceoff.solvers.penalties import ElasticNet, soft_threshold
from faceoff.solvers.vocabulary import PENALTY_NAMES

WEIGHTS = [(0.0, 1e-3), (0.0, 2.0), (1e-2, 1e-2), (0.3, 1.0), (2.0, 5.0)]  # (l1, l2)


def _points(rng, size: int, l1: float) -> np.ndarray:
    """Coordinates over four decades of scale, some exactly at ±l1 and at 0."""
    v = rng.normal(size=size) * 10.0 ** rng.uniform(-2, 2, size)
    v[:3] = [l1, -l1, 0.0]
    return v


def _argmin(f, scale: float) -> tuple[float, float]:
    """(argmin, min) of a convex 1-D function by bounded Brent on [−scale, scale], endpoints
    and 0 (the kink of |·|) included."""
    found = minimize_scalar(f, bounds=(-scale, scale), method="bounded", options={"xatol": 1e-13})
    return min([(found.x, found.fun), (0.0, f(0.0))], key=lambda pair: pair[1])


@pytest.mark.parametrize(("l1", "l2"), WEIGHTS)
def test_conjugate_is_the_supremum_and_its_gradient_the_maximizer(l1, l2):
    """g*(vⱼ) = sup_x {vⱼ·x − g(x)} coordinate by coordinate (g is separable), attained at
    ∇g*(v)ⱼ = sign(vⱼ)·(|vⱼ| − l1)₊/l2, which is also soft_threshold(vⱼ, l1)/l2."""
    penalty, rng = ElasticNet(l1, l2), np.random.default_rng(0)
    v = _points(rng, 200, l1)
    grad = penalty.conjugate_grad(v)
    np.testing.assert_array_equal(grad, np.sign(v) * np.maximum(np.abs(v) - l1, 0.0) / l2)
    kernel = np.array([soft_threshold(vj, l1) for vj in v]) / l2
    np.testing.assert_allclose(kernel, grad, rtol=1e-15, atol=0)
    total = 0.0
    for vj, gj in zip(v, grad, strict=True):
        x, neg_sup = _argmin(
            lambda x, vj=vj: penalty.value(np.array([x])) - vj * x, abs(vj) / l2 + 1
        )
        total -= neg_sup
        assert x == pytest.approx(gj, abs=1e-7 * max(1.0, abs(gj))), (vj, l1, l2)
        # g* is C¹ with a 1/l2-Lipschitz gradient: a central difference is within h/(2·l2)
        h = 1e-6 * max(1.0, abs(vj))
        up, down = penalty.conjugate(np.array([vj + h])), penalty.conjugate(np.array([vj - h]))
        slack = h / (2 * l2) + 1e-6 * max(1.0, abs(gj))
        assert (up - down) / (2 * h) == pytest.approx(gj, abs=slack)
    assert penalty.conjugate(v) == pytest.approx(total, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize(("l1", "l2"), WEIGHTS)
def test_fenchel_young(l1, l2):
    """g(x) + g*(v) = v·x at x = ∇g*(v), and ≥ v·x at unrelated x."""
    penalty, rng = ElasticNet(l1, l2), np.random.default_rng(1)
    for _ in range(50):
        v = _points(rng, 30, l1)
        x = penalty.conjugate_grad(v)
        scale = max(1.0, float(np.abs(v) @ np.abs(x)))
        assert abs(penalty.value(x) + penalty.conjugate(v) - v @ x) <= 1e-13 * scale
        other = _points(rng, 30, l1)
        assert penalty.value(other) + penalty.conjugate(v) >= v @ other - 1e-13 * scale


@pytest.mark.parametrize("step", [1e-3, 1.0, 50.0])
@pytest.mark.parametrize(("l1", "l2"), WEIGHTS)
def test_prox_minimizes_its_objective(l1, l2, step):
    """prox_{step·g}(v) = argmin_u {step·g(u) + ‖u − v‖²/2} = soft(v, step·l1)/(1 + step·l2),
    against a brute-force minimization coordinate by coordinate."""
    penalty, rng = ElasticNet(l1, l2), np.random.default_rng(2)
    v = _points(rng, 100, step * l1)
    prox = penalty.prox(v, step)
    kernel = np.array([soft_threshold(vj, step * l1) for vj in v]) / (1.0 + step * l2)
    np.testing.assert_allclose(kernel, prox, rtol=1e-15, atol=0)
    for vj, pj in zip(v, prox, strict=True):

        def objective(u, vj=vj):
            return step * penalty.value(np.array([u])) + 0.5 * (u - vj) ** 2

        u, best = _argmin(objective, abs(vj) + 1.0)
        assert objective(pj) <= best + 1e-14 * max(1.0, abs(best)), (vj, l1, l2, step)
        assert pj == pytest.approx(u, abs=1e-7 * max(1.0, abs(u)))


def test_names_and_weights():
    names = {ElasticNet(0.0, 1.0).name, ElasticNet(0.1, 1.0).name, ElasticNet(0.1, 0.0).name}
    assert names == set(PENALTY_NAMES)
    assert ElasticNet(0, 1).l2 == 1.0 and isinstance(ElasticNet(0, 1).l1, float)
    with pytest.raises(ValueError, match="l2 weight must be a number >= 0, got -0.1"):
        ElasticNet(0.1, -0.1)
    with pytest.raises(ValueError, match="l1 and l2 are both 0"):
        ElasticNet(0.0, 0.0)
    with pytest.raises(ValueError, match="l1 weight must be a number >= 0, got -0.1"):
        ElasticNet(-0.1, 1.0)
    with pytest.raises(ValueError, match="l2 weight must be a number >= 0, got nan"):
        ElasticNet(0.0, float("nan"))
