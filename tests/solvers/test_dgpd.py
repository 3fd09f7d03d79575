"""DGPD (Lei et al., ICML 2017; both variants certify the reference optimum in
test_reference): the active sets follow the supports, the greedy choices are the
argmax/argmin of eqs. (5) and (7), and the step size η is eq. (16) unless given."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from faceoff.solvers.algorithms.dgpd import _greedy_dual, _greedy_primal
from faceoff.solvers.catalogue import CATALOGUE, LOSSES
from faceoff.solvers.losses import loss_conj, make_loss
from faceoff.solvers.run import solve
from faceoff.solvers.trace import CONVERGED, StopRules
from tests.solvers.problems import make_problem


def test_supports_every_loss():
    assert CATALOGUE["dgpd"].losses == LOSSES


def test_active_sets_follow_the_supports():
    """l1 + l2 on rcv1 (d = 47236): the final |A_x| is nnz(x*) up to the coordinates that
    reached 0 since the last search, and |A_y| the support of y."""
    problem = make_problem("rcv1", "smooth_hinge", "elastic_net")
    result = solve(problem, "dgpd", {"variant": "active_set"}, StopRules(tol=1e-10), seed=0)
    extras = result.final.extras
    other = solve(problem, "dual_cd", {}, StopRules(tol=1e-12), seed=0)  # x* by another method
    nnz_ref = int(np.count_nonzero(other.x))
    assert result.stop_reason == other.stop_reason == CONVERGED
    assert abs(extras["active_x"] - nnz_ref) <= 0.02 * nnz_ref + 5, (extras, nnz_ref)
    assert extras["active_x"] < 0.1 * problem.n_features
    assert result.final.nnz_x <= extras["active_x"]
    assert abs(extras["active_y"] - extras["nnz_y"]) <= 0.02 * extras["nnz_y"] + 5


def test_variants_reach_the_same_optimum():
    problem = make_problem("small_sparse", "smooth_hinge", "elastic_net")
    stop = StopRules(max_epochs=20000, tol=1e-12)
    xs = []
    for variant in ("basic", "active_set"):
        result = solve(problem, "dgpd", {"variant": variant}, stop, seed=0)
        assert result.stop_reason == CONVERGED
        xs.append(result.x)
    # P is l2-strongly convex: ‖x − x*‖² ≤ 2·gap/l2 for each
    assert np.linalg.norm(xs[0] - xs[1]) <= 2 * np.sqrt(2e-12 / problem.penalty.l2)
    assert np.array_equal(xs[0] != 0, xs[1] != 0)


def _tiny(loss: str, seed: int):
    rng = np.random.default_rng(seed)
    n, d = 12, 7
    A = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.6)
    b = rng.normal(size=n) if loss == "squared" else np.where(rng.random(n) < 0.5, -1.0, 1.0)
    x = rng.normal(size=d) * (rng.random(d) < 0.5)
    if loss == "squared":
        y = rng.normal(size=n)
    else:  # t = −b·y in [0, 1], some on the edges of the domain
        t = rng.choice([0.0, 1.0, 0.3, 0.7, 0.05], size=n)
        y = -b * t
    return A, b, x, y


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("l1", [0.0, 0.05])
def test_greedy_primal_is_the_argmin_of_eq5(seed, l1):
    A, b, x, y = _tiny("squared", seed)
    n, l2 = A.shape[0], 0.1
    z = A.T @ y

    def g(v):
        return l1 * abs(v) + 0.5 * l2 * v * v

    def lagrangian_x(v):  # L(v, y) up to terms without x
        return sum(g(t) for t in v) + y @ (A @ v) / n

    changes, xbars = [], []
    for k in range(len(x)):
        xbar = minimize_scalar(lambda a, k=k: z[k] * a / n + g(a), tol=1e-12).x  # eq. (4)
        moved = x.copy()
        moved[k] = xbar
        changes.append(lagrangian_x(moved) - lagrangian_x(x))  # eq. (5)
        xbars.append(xbar)
    j, xbar_j, s = _greedy_primal(z, x, n, l1, l2)
    assert j == int(np.argmin(changes))
    assert xbar_j == pytest.approx(xbars[j], abs=1e-6)
    exact = -np.sign(z / n) * np.maximum(np.abs(z / n) - l1, 0) / l2
    assert s == np.count_nonzero(exact != x) - 1


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("loss", LOSSES)
def test_greedy_dual_follows_eq7(seed, loss):
    A, b, x, y = _tiny(loss, seed)
    n, eta = A.shape[0], 3.0
    code = make_loss(loss)
    w = A @ x
    i, beta, _ = _greedy_dual(w, y, b, np.full(n, np.nan), code.params, n / eta)
    if loss == "squared":  # eq. (7) as printed: |wₖ − φₖ*'(yₖ)|, φ*'(y) = y + b
        assert i == int(np.argmax(np.abs(w - (y + b))))
    # the step (8), maximized by brute force over dom φ*, and its length
    lengths = []
    for k in range(n):

        def neg(v, k=k):
            return -(w[k] * v / n - loss_conj(code.params, v, b[k]) / n
                     - (v - y[k]) ** 2 / (2 * eta))  # fmt: skip

        if loss == "squared":
            best = minimize_scalar(neg, tol=1e-12).x
        else:
            lo, hi = sorted((0.0, -b[k]))
            best = minimize_scalar(neg, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12}).x  # fmt: skip
        lengths.append(abs(best - y[k]))
    assert lengths[i] == pytest.approx(max(lengths), abs=1e-6)
    assert abs(beta - y[i]) == pytest.approx(lengths[i], abs=1e-6)


@pytest.mark.parametrize("variant", ["basic", "active_set"])
def test_eta_override_is_honoured(variant):
    problem = make_problem("dense", "smooth_hinge", "elastic_net")
    stop = StopRules(max_epochs=50, tol=0.0)
    given = solve(problem, "dgpd", {"variant": variant, "eta": 0.5}, stop, seed=0)
    assert all(p.extras["eta"] == 0.5 for p in given.trace)
    default = solve(problem, "dgpd", {"variant": variant}, stop, seed=0)
    n, mu = problem.n_samples, problem.penalty.l2
    r_sq = problem.data.row_sq_norms.max()
    gamma = 1.0 / problem.loss.smoothness
    for point in default.trace:  # eq. (16) with the s reported alongside
        s = max(point.extras["support_gap"], 1)
        assert point.extras["eta"] == pytest.approx(
            2 * n * n * mu / (s * (5 * r_sq + n * gamma * mu))
        )
    assert default.final.primal != given.final.primal
