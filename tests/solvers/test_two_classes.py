"""A two-class problem posed as a K-class one has the optimal value of the binary problem it
reduces to, on dense and sparse data, by our solvers (certified) and by scipy's L-BFGS-B.

With labels yᵢ ∈ {0, 1} and bᵢ = +1 where yᵢ = 1, −1 elsewhere:

- **one-vs-rest** is separable, P(x₀, x₁) = P_b(x₁) + P_{−b}(x₀) (P_b the binary problem
  with labels b, same l1 and l2), so P* = P_b* + P_{−b}*; each loss here is even in (z, b)
  and g is even, so P_{−b}* = P_b* (at x₀ = −x₁*) and P* = 2·P_b*.
- **multinomial** logistic: log(e^{z₀} + e^{z₁}) − z_{yᵢ} = log(1 + exp(−bᵢ(z₁ − z₀))), the
  logistic loss of w = x₁ − x₀. For a given w, l2/2(‖x₀‖² + ‖x₁‖²) is least at x₁ = −x₀ =
  w/2, where it is l2/4‖w‖² = (l2/2)/2‖w‖², and l1(‖x₀‖₁ + ‖x₁‖₁) ≥ l1‖w‖₁ with equality
  at that same split. So P* is the binary logistic P* with weights **l1 and l2/2** in w,
  reached at X* = [−w*/2, w*/2]. (In u = x₁ = w/2 instead, the binary problem has margins
  2aᵢᵀu and l2‖u‖² = (2·l2)/2‖u‖²: doubling A is worth 4× the l2 weight, hence the same
  optimum as l2/2 in w.) The binary problem with l2 itself has another P*, which the
  test tells apart.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.synthetic import multiclass
from faceoff.solvers.problem import Data, Problem, build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import CONVERGED, StopRules
from tests.reference import reference_optimum

TOL = 1e-11
SHAPES = {"dense": (200, 30, 1.0, 21), "sparse": (400, 300, 0.03, 22)}
L1, L2 = 1e-3, 1e-2
LOSSES = ("logistic", "smooth_hinge", "squared")


def _two_classes(layout: str) -> tuple[Data, np.ndarray]:
    n, d, density, seed = SHAPES[layout]
    A, labels = multiclass(n, d, density, 2, seed=seed)
    assert sp.issparse(A) == (layout == "sparse")
    assert set(np.unique(labels)) == {0.0, 1.0}
    return Data(A), labels


def _certified(problem: Problem, solver: str) -> tuple[float, np.ndarray]:
    """(P, x) of ``solver`` run to a certified gap ≤ TOL·max(1, |P|)."""
    stop = StopRules(max_epochs=20000, max_seconds=60, tol=TOL)
    result = solve(problem, solver, None, stop, seed=1)
    assert result.stop_reason == CONVERGED, result.summary()
    assert result.final.gap <= TOL * max(1.0, abs(result.final.primal))
    return result.final.primal, result.x


def _optimum(problem: Problem, solver: str) -> tuple[float, np.ndarray]:
    """P* by ``solver`` (certified), checked against scipy's L-BFGS-B to 1e-8."""
    p_star, x = _certified(problem, solver)
    p_ref = reference_optimum(problem)[0]
    assert abs(p_star - p_ref) <= 1e-8 * abs(p_ref), (p_star, p_ref)
    return p_star, x


@pytest.mark.parametrize("layout", SHAPES)
@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
@pytest.mark.parametrize("loss", LOSSES)
def test_one_vs_rest_of_two_classes_is_the_sum_of_two_binary_problems(loss, penalty, layout):
    data, labels = _two_classes(layout)
    l1 = L1 if penalty == "elastic_net" else 0.0
    ovr = build_problem(data, labels, loss, l1=l1, l2=L2, multiclass="ovr")
    b = np.where(ovr.b == 1, 1.0, -1.0)  # class index 1 against class index 0
    p_ovr, X = _optimum(ovr, "lbfgs")
    p_pos, x_pos = _optimum(build_problem(data, b, loss, l1=l1, l2=L2), "lbfgs")
    p_neg, _ = _optimum(build_problem(data, -b, loss, l1=l1, l2=L2), "lbfgs")
    assert abs(p_ovr - (p_pos + p_neg)) <= 1e-8 * abs(p_ovr), (p_ovr, p_pos, p_neg)
    assert abs(p_neg - p_pos) <= 1e-8 * abs(p_pos), (p_neg, p_pos)  # even loss and penalty
    # l2-strong convexity: each column is within √(2·gap/l2) ≤ √(2·TOL·max(1, P)/l2) of x*
    radius = np.sqrt(2 * TOL * max(1.0, p_ovr) / L2)
    assert np.linalg.norm(X[:, 1] - x_pos) <= 2 * radius
    assert np.linalg.norm(X[:, 0] + x_pos) <= 2 * radius


@pytest.mark.parametrize("layout", SHAPES)
@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
@pytest.mark.parametrize("solver", ["lbfgs", "dual_cd"])
def test_multinomial_of_two_classes_is_binary_logistic_with_half_the_l2(solver, penalty, layout):
    data, labels = _two_classes(layout)
    l1 = L1 if penalty == "elastic_net" else 0.0
    multi = build_problem(data, labels, "logistic", l1=l1, l2=L2, multiclass="multinomial")
    b = np.where(multi.b == 1, 1.0, -1.0)
    p_multi, X = _optimum(multi, solver)
    p_bin, w = _optimum(build_problem(data, b, "logistic", l1=l1, l2=L2 / 2), solver)
    assert abs(p_multi - p_bin) <= 1e-8 * abs(p_bin), (p_multi, p_bin)
    radius = np.sqrt(2 * TOL * max(1.0, p_multi) / L2)  # P is l2-strongly convex in X
    assert np.linalg.norm(X[:, 1] - w / 2) <= radius + np.sqrt(2 * TOL / (L2 / 2)) / 2
    assert np.linalg.norm(X[:, 0] + X[:, 1]) <= 2 * radius
    # the mapping is not l2 itself: that problem's optimum is another one
    p_same_l2 = reference_optimum(build_problem(data, b, "logistic", l1=l1, l2=L2))[0]
    assert abs(p_same_l2 - p_multi) > 1e-4 * abs(p_multi), (p_same_l2, p_multi)
