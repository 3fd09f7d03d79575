"""l2 = 0: the Lasso and l1-regularized losses, certified by a rescaled dual point.

With l2 = 0, g* is the indicator of the box ‖v‖∞ ≤ l1, so φ'(Ax) certifies only once scaled
into it (solvers.penalties). These tests hold the certificate to what it promises — a finite
D(y) ≤ P* at any x, a gap that bounds P(x) − P* and reaches 0 at the optimum — against
scipy's L-BFGS-B on the split x = u − v (solvers.conformance.reference_optimum), and check
that the solvers that need strong convexity refuse l2 = 0 by name.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.solvers import evaluation
from faceoff.solvers.catalogue import catalogue, get_spec
from faceoff.solvers.conformance import reference_optimum
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.problem import build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.spec import SupportError
from faceoff.solvers.trace import StopRules
from faceoff.solvers.vocabulary import penalty_name

LOSSES = ("squared", "logistic", "smooth_hinge")
L1_SOLVERS = ("primal_cd", "agd", "lbfgs")


def lambda_max(A, b, loss: str) -> float:
    """‖Aᵀφ'(0)‖∞/n: the smallest l1 at which x = 0 is optimal (l2 = 0)."""
    problem = build_problem(A, b, loss, l1=1.0, l2=0.0)
    n = problem.n_samples
    return float(np.abs(problem.data.rmatvec(problem.loss_derivs(np.zeros(n)))).max()) / n


def make(layout: str, loss: str, n: int = 60, d: int = 90, seed: int = 0):
    """A correlated design with 5 true features: dense or sparse, labels for ``loss``."""
    rng = np.random.default_rng(seed)
    if layout == "dense":
        A = rng.standard_normal((n, d)) + 0.5 * rng.standard_normal((n, 1))
    else:
        A = sp.random(n, d, density=0.15, random_state=seed, format="csr")
        A.data = rng.standard_normal(A.nnz)
    truth = np.zeros(d)
    truth[:5] = rng.standard_normal(5) * 2
    b = A @ truth + 0.1 * rng.standard_normal(n)
    if loss != "squared":
        b = np.where(b > 0, 1.0, -1.0)
    return A, b


def test_the_l1_penalty_is_named_and_bounded():
    penalty = ElasticNet(0.5, 0.0)
    assert penalty.name == "l1" == penalty_name(0.5, 0.0)
    assert not penalty.strongly_convex
    assert penalty.conjugate(np.array([0.5, -0.2])) == 0.0
    assert penalty.conjugate(np.array([0.6, 0.0])) == np.inf
    assert penalty.dual_scale(np.array([1.0, -0.25])) == 0.5
    assert penalty.dual_scale(np.array([0.1])) == 1.0
    assert np.array_equal(penalty.dual_scale(np.array([[1.0, 0.1]]), columns=True), [0.5, 1.0])
    with pytest.raises(ValueError, match="both 0"):
        ElasticNet(0.0, 0.0)
    with pytest.raises(ValueError, match="indicator"):
        penalty.conjugate_grad(np.zeros(2))
    assert ElasticNet(0.5, 1e-3).dual_scale(np.array([9.0])) == 1.0


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("loss", LOSSES)
def test_the_certificate_bounds_the_distance_to_the_optimum_anywhere(layout, loss):
    """At random points and at 0: D(y) is finite, P(x) − P* ≤ gap, and both evaluations
    (the problem's and the one-pass one the trace uses) agree."""
    A, b = make(layout, loss)
    problem = build_problem(A, b, loss, l1=lambda_max(A, b, loss) / 10, l2=0.0)
    p_star, _ = reference_optimum(problem)
    rng = np.random.default_rng(1)
    for scale in (0.0, 0.1, 1.0, 10.0):
        x = scale * rng.standard_normal(problem.n_features)
        mine = problem.evaluate(x=x)
        fast = evaluation.evaluate(problem, x=x)
        assert np.isfinite(mine.dual) and mine.dual <= p_star + 1e-12
        assert mine.primal - p_star <= mine.gap + 1e-12
        assert fast.primal == pytest.approx(mine.primal, rel=1e-12)
        assert fast.dual == pytest.approx(mine.dual, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_zero_is_certified_optimal_from_lambda_max(loss):
    A, b = make("sparse", loss)
    problem = build_problem(A, b, loss, l1=lambda_max(A, b, loss), l2=0.0)
    point = problem.evaluate(x=np.zeros(problem.n_features))
    assert point.gap == pytest.approx(0.0, abs=1e-14)
    below = build_problem(A, b, loss, l1=0.9 * lambda_max(A, b, loss), l2=0.0)
    assert below.evaluate(x=np.zeros(below.n_features)).gap > 1e-6


@pytest.mark.parametrize("solver", L1_SOLVERS)
@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("loss", LOSSES)
def test_l1_solvers_reach_the_reference_with_a_certified_gap(solver, layout, loss):
    A, b = make(layout, loss)
    problem = build_problem(A, b, loss, l1=lambda_max(A, b, loss) / 20, l2=0.0)
    p_star, x_star = reference_optimum(problem)
    result = solve(problem, solver, stop=StopRules(tol=1e-11, max_seconds=30, max_epochs=1e6))
    final = result.final
    assert final.primal == pytest.approx(p_star, rel=1e-8)
    assert final.gap >= -1e-12 and final.primal - p_star <= final.gap + 1e-12
    if solver != "lbfgs":  # L-BFGS-B stops on its own criterion, short of 1e-11
        assert result.stop_reason == "converged" and final.gap <= 1e-11 * max(1, p_star)
    assert np.count_nonzero(np.abs(x_star) > 1e-6) <= final.nnz_x < problem.n_features


def test_an_empty_column_and_a_column_of_stored_zeros_do_not_break_coordinate_descent():
    A, b = make("sparse", "squared")
    A = sp.lil_matrix(A)
    A[:, 3] = 0.0  # empty
    A = sp.csr_matrix(A)
    A[0, 7] = 0.0  # ... and stored zeros in a column otherwise emptied
    A = A.tolil()
    A[1:, 7] = 0.0
    A = sp.csr_matrix(A)
    for step in ("fixed", "newton"):
        problem = build_problem(A, b, "squared", l1=lambda_max(A, b, "squared") / 20, l2=0.0)
        result = solve(problem, "primal_cd", {"step": step}, StopRules(tol=1e-10))
        assert result.stop_reason == "converged" and result.x[3] == 0.0 == result.x[7]


@pytest.mark.parametrize("form", ["ovr", "multinomial"])
def test_k_class_problems_are_certified_with_l2_zero(form):
    rng = np.random.default_rng(3)
    A = rng.standard_normal((90, 12))
    b = np.argmax(A[:, :3] + 0.3 * rng.standard_normal((90, 3)), axis=1)
    problem = build_problem(A, b, "logistic", l1=0.02, l2=0.0, multiclass=form)
    p_star, _ = reference_optimum(problem)
    point = problem.evaluate(x=np.zeros(problem.coef_shape))
    assert np.isfinite(point.dual) and point.dual <= p_star and point.gap > 0
    result = solve(problem, "primal_cd", stop=StopRules(tol=1e-10, max_seconds=30, max_epochs=1e4))
    assert result.final.primal == pytest.approx(p_star, rel=1e-8)
    assert result.stop_reason == "converged"


def test_solvers_that_need_strong_convexity_refuse_l2_zero_by_name():
    takers = [name for name, spec in catalogue().items() if "l1" in spec.penalties]
    assert set(L1_SOLVERS) <= set(takers)
    for name in ("dual_cd", "spdc", "dgpd", "saga"):
        spec = get_spec(name)
        with pytest.raises(SupportError) as caught:
            spec.check("logistic", "l1")
        assert caught.value.field == "l2"
        message = str(caught.value)
        assert f"solver {name!r} needs l2 > 0" in message and "strong convexity" in message
        assert "primal_cd" in message  # where to go instead
