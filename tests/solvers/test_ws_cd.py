"""ws_cd against independent references: P* by scipy's L-BFGS-B on the split x = u − v
(tests/reference.py), the certified duality gap, empty and all-zero columns, x = 0 above
λ_max, and a path that does not depend on how the driver chunks the run."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.synthetic import classification, regression
from faceoff.solvers import conformance
from faceoff.solvers.algorithms.ws_cd.method import WsCD
from faceoff.solvers.gap import relative_gap
from faceoff.solvers.problem import Data, Problem, build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import CONVERGED, StopRules
from tests.reference import reference_optimum

EMPTY, ZEROS = 3, 7  # an empty column (no stored entry) and a column of stored zeros
# penalty -> (l1 as a fraction of λ_max, l2)
PENALTIES = {"l1": (0.05, 0.0), "elastic_net": (0.05, 1e-2), "l2": (0.0, 1e-2)}


@cache
def _matrix(layout: str, regression_targets: bool):
    """A small dense (n > d) or sparse (d > n) design whose column EMPTY is empty and whose
    column ZEROS holds explicit zeros (sparse) or zeros (dense)."""
    make = regression if regression_targets else classification
    if layout == "dense":
        A, b = make(n_samples=80, n_features=30, density=1.0, seed=4)
        A[:, [EMPTY, ZEROS]] = 0.0
        return A, b
    A, b = make(n_samples=60, n_features=150, density=0.15, seed=5)
    A = sp.lil_matrix(A)
    A[:, EMPTY] = 0.0
    A = sp.csr_matrix(A)
    A.eliminate_zeros()
    rows = np.arange(0, A.shape[0], 3)
    A = A + sp.csr_matrix((np.ones(rows.size), (rows, np.full(rows.size, ZEROS))), A.shape)
    A = sp.csr_matrix(A)
    A.data[A.indices == ZEROS] = 0.0  # stored, and zero
    return A, b


def lambda_max(problem: Problem) -> float:
    """‖Aᵀφ'(0)‖∞/n: x = 0 is optimal for every l1 at least this."""
    derivs = problem.loss_derivs(np.zeros(problem.n_samples))
    return float(np.abs(problem.data.rmatvec(derivs)).max()) / problem.n_samples


def _problem(layout: str, loss: str, penalty: str) -> Problem:
    A, b = _matrix(layout, loss == "squared")
    fraction, l2 = PENALTIES[penalty]
    probe = build_problem(A, b, loss, l1=0.0, l2=1.0)
    return build_problem(A, b, loss, l1=fraction * lambda_max(probe), l2=l2)


@pytest.mark.parametrize("penalty", list(PENALTIES))
@pytest.mark.parametrize("loss", ["squared", "logistic", "smooth_hinge"])
@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_ws_cd_reaches_the_reference_optimum_with_a_certified_gap(layout, loss, penalty):
    """P(x) within 1e-8 (relative) of L-BFGS-B's P*, the run stopped by a certified relative
    gap of 1e-10, and the empty and all-zero columns' coefficients are 0."""
    problem = _problem(layout, loss, penalty)
    if layout == "sparse":
        assert problem.data.col_nnz[EMPTY] == 0 and problem.data.col_nnz[ZEROS] > 0
    result = solve(problem, "ws_cd", None, StopRules(tol=1e-10, max_epochs=1e5))
    assert result.stop_reason == CONVERGED
    final = result.final
    assert relative_gap(final.gap, final.primal) <= 1e-10
    p_star, _ = reference_optimum(problem)
    assert abs(final.primal - p_star) <= 1e-8 * max(1.0, abs(p_star))
    assert result.x[EMPTY] == 0.0 and result.x[ZEROS] == 0.0
    if penalty != "l2":
        assert 0 < final.nnz_x < problem.n_features  # a sparse solution, not a trivial one


@pytest.mark.parametrize("anderson", [0, 1, 5])
def test_every_extrapolation_length_converges(anderson):
    problem = _problem("sparse", "logistic", "l1")
    stop = StopRules(tol=1e-10, max_epochs=1e5)
    result = solve(problem, "ws_cd", {"anderson": anderson}, stop)
    assert result.stop_reason == CONVERGED


@pytest.mark.parametrize("l2", [0.0, 1e-2])
@pytest.mark.parametrize("loss", ["squared", "logistic"])
@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_x_is_zero_from_lambda_max_on(layout, loss, l2):
    """For l1 ≥ λ_max = ‖Aᵀφ'(0)‖∞/n, x = 0 is optimal: the run stays there, certified."""
    A, b = _matrix(layout, loss == "squared")
    probe = build_problem(A, b, loss, l1=0.0, l2=1.0)
    for factor in (1.0, 3.0):
        problem = build_problem(A, b, loss, l1=factor * lambda_max(probe), l2=l2)
        result = solve(problem, "ws_cd", None, StopRules(tol=1e-12, max_epochs=50.0))
        assert result.stop_reason == CONVERGED
        assert not result.x.any()
        assert result.final.gap <= 1e-12 * max(1.0, abs(result.final.primal))


def test_the_path_does_not_depend_on_the_chunks():
    """The working sets and the extrapolation carry across run() calls: one update at a
    time or a million at once, the same iterate after the same work, bit for bit."""
    problem = _problem("sparse", "logistic", "l1")
    one, many = WsCD(problem, 10, 5), WsCD(problem, 10, 5)
    total = many.run(20 * problem.n_features)  # a few outer iterations, many epochs
    visited = 0
    while visited < total:  # a step each call: the driver's smallest chunk
        visited += one.run(1)
    assert visited == total
    np.testing.assert_array_equal(one.x, many.x)
    np.testing.assert_array_equal(one.state.Ax, many.state.Ax)
    assert np.count_nonzero(one.x) > 0


def test_data_shared_with_another_problem_is_left_as_it_was():
    A, b = _matrix("sparse", False)
    data = Data(A)
    before = data.csc.data.copy()
    problem = build_problem(data, b, "logistic", l1=1e-3, l2=0.0)
    solve(problem, "ws_cd", None, StopRules(tol=1e-8))
    np.testing.assert_array_equal(data.csc.data, before)


def _intercept_problem(layout: str, loss: str) -> Problem:
    """The l1 problem (l2 = 0) with an intercept, on labels that need one: targets shifted
    by 2 (squared), one negative label in three made positive (logistic)."""
    A, b = _matrix(layout, loss == "squared")
    if loss == "squared":
        b = b + 2.0
    else:
        b = b.copy()
        b[np.flatnonzero(b < 0)[::3]] = 1.0
    probe = build_problem(A, b, loss, l1=0.0, l2=1.0)
    return build_problem(A, b, loss, l1=0.05 * lambda_max(probe), l2=0.0, fit_intercept=True)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_ws_cd_fits_an_unpenalized_intercept(layout, loss):
    """The Lasso and l1-logistic with an intercept: P within 1e-8 of L-BFGS-B's (c free),
    c at its c*, the run stopped by the certified gap, and a warm start of length d + 1 at
    the solution certifies at once."""
    problem = _intercept_problem(layout, loss)
    result = solve(problem, "ws_cd", None, StopRules(tol=1e-10, max_epochs=1e5))
    assert result.stop_reason == CONVERGED
    final = result.final
    assert relative_gap(final.gap, final.primal) <= 1e-10
    p_star, x_star = conformance.reference_optimum(problem)  # L-BFGS-B, c free
    assert abs(final.primal - p_star) <= 1e-8 * max(1.0, abs(p_star))
    assert result.x.shape == (problem.n_features + 1,)
    assert result.x[-1] == pytest.approx(x_star[-1], rel=1e-5, abs=1e-7)
    assert abs(result.x[-1]) > 0.1 and 0 < final.nnz_x < problem.n_features
    warm = solve(problem, "ws_cd", None, StopRules(tol=1e-10), warm_start=result.x)
    assert warm.stop_reason == CONVERGED and warm.final.epoch <= 1.0


def test_the_path_with_an_intercept_does_not_depend_on_the_chunks():
    problem = _intercept_problem("sparse", "logistic")
    one, many = WsCD(problem, 10, 5), WsCD(problem, 10, 5)
    total = many.run(20 * problem.n_features)
    visited = 0
    while visited < total:
        visited += one.run(1)
    assert visited == total
    np.testing.assert_array_equal(one.x, many.x)
    np.testing.assert_array_equal(one.state.Ax, many.state.Ax)
    assert one.x[-1] != 0.0


@pytest.mark.parametrize("loss", ["squared", "logistic", "smooth_hinge"])
def test_only_the_logistic_takes_proximal_newton_steps(loss):
    """Newton steps need a curvature that varies with a bounded growth: not the squared
    loss's constant one, not the smoothed hinge's jumps."""
    problem = _problem("sparse", loss, "l1")
    assert WsCD(problem, 10, 5).state.newton == (loss == "logistic")


def _primal(problem: Problem, x: np.ndarray) -> float:
    return problem.evaluate(x=x.copy()).primal


@pytest.mark.parametrize("case", ["l1", "elastic_net", "intercept"])
@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_proximal_newton_steps_never_raise_the_objective(layout, case):
    """One outer iteration or one Newton step (line search included) per run(1): P along
    the iterates never rises (to rounding), and the run ends at L-BFGS-B's P*."""
    if case == "intercept":
        problem = _intercept_problem(layout, "logistic")
    else:
        problem = _problem(layout, "logistic", case)
    method = WsCD(problem, 10, 5)
    assert method.state.newton
    before = _primal(problem, method.x)
    for _ in range(300):
        method.run(1)
        after = _primal(problem, method.x)
        assert after <= before + 1e-15 * abs(before)
        before = after
    p_star, _ = conformance.reference_optimum(problem)
    assert abs(before - p_star) <= 1e-8 * max(1.0, abs(p_star))
    np.testing.assert_allclose(method.state.Ax, problem.margins(method.x), rtol=0, atol=1e-10)
