"""An unpenalized intercept: P(x, c) = 1/n Σ φ(aᵢᵀx + c, bᵢ) + g(x), certified.

The dual gains Σᵢ yᵢ = 0; φ'(Ax + c) is moved onto it inside φ*'s domain
(``Problem.balanced``) before it certifies. These tests hold the certificate to a finite
D ≤ P* anywhere, and the solvers that fit an intercept to scipy's L-BFGS-B (c free,
x = u − v) and to scikit-learn's own intercept models, on dense and sparse data.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.solvers.catalogue import catalogue, get_spec
from faceoff.solvers.conformance import reference_optimum
from faceoff.solvers.problem import build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.spec import SupportError
from faceoff.solvers.trace import StopRules
from tests.solvers.test_peers import _require

LOSSES = ("squared", "logistic", "smooth_hinge")
INTERCEPT_SOLVERS = ("primal_cd", "agd", "lbfgs", "ws_cd")
WEIGHTS = {"lasso": (0.01, 0.0), "ridge": (0.0, 1e-2), "elastic_net": (0.01, 1e-3)}


def make(layout: str, loss: str, n: int = 80, d: int = 40, seed: int = 0):
    """Data whose labels need an offset: the targets are shifted by 2 (squared) and the
    classes unbalanced (3 of 4 positive)."""
    rng = np.random.default_rng(seed)
    if layout == "dense":
        A = rng.standard_normal((n, d)) + 1.0
    else:
        A = sp.random(n, d, density=0.2, random_state=seed, format="csr")
        A.data = rng.standard_normal(A.nnz)
    truth = np.zeros(d)
    truth[:4] = 1.0
    b = A @ truth + 2.0 + 0.1 * rng.standard_normal(n)
    if loss != "squared":
        b = np.where(b > np.quantile(b, 0.25), 1.0, -1.0)
    return A, b


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("weights", list(WEIGHTS))
def test_the_certificate_bounds_the_distance_to_the_optimum_anywhere(layout, loss, weights):
    A, b = make(layout, loss)
    l1, l2 = WEIGHTS[weights]
    problem = build_problem(A, b, loss, l1=l1, l2=l2, fit_intercept=True)
    assert problem.coef_shape == (problem.n_features + 1,)
    p_star, _ = reference_optimum(problem)
    rng = np.random.default_rng(1)
    for scale in (0.0, 0.1, 1.0, 5.0):
        x = scale * rng.standard_normal(problem.coef_shape)
        point = problem.evaluate(x=x)
        assert np.isfinite(point.dual) and point.dual <= p_star + 1e-12
        assert point.primal - p_star <= point.gap + 1e-12
        assert abs(point.y.sum()) <= 1e-9 * max(1.0, np.abs(point.y).sum())


@pytest.mark.parametrize("solver", INTERCEPT_SOLVERS)
@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("weights", list(WEIGHTS))
def test_intercept_solvers_reach_the_reference(solver, layout, loss, weights):
    A, b = make(layout, loss)
    l1, l2 = WEIGHTS[weights]
    problem = build_problem(A, b, loss, l1=l1, l2=l2, fit_intercept=True)
    p_star, x_star = reference_optimum(problem)
    result = solve(problem, solver, stop=StopRules(tol=1e-11, max_seconds=30, max_epochs=1e6))
    final = result.final
    assert final.primal == pytest.approx(p_star, rel=1e-8)
    assert final.primal - p_star <= final.gap + 1e-12
    assert result.x[-1] == pytest.approx(x_star[-1], rel=1e-4, abs=1e-6)
    if solver != "lbfgs":  # L-BFGS-B may end on its own criterion first
        assert result.stop_reason == "converged"


L2_PEERS = ("sklearn.lbfgs", "sklearn.newton_cholesky", "sklearn.sag", "sklearn.saga", "skglm")


@pytest.mark.parametrize("solver", L2_PEERS)
@pytest.mark.parametrize("layout", ["dense", "sparse"])
def test_l2_logistic_peers_with_an_intercept_reach_the_reference(solver, layout):
    """scikit-learn's LogisticRegression (and skglm) leave the intercept unpenalized: their
    (coef_, intercept_) is at scipy's optimum, c free, through our objective and gap."""
    _require(get_spec(solver))
    A, b = make(layout, "logistic")
    problem = build_problem(A, b, "logistic", l2=1e-2, fit_intercept=True)
    p_star, x_star = reference_optimum(problem)
    stop = StopRules(tol=1e-11, max_seconds=60, max_epochs=1e5)
    result = solve(problem, solver, stop=stop, seed=0)
    assert result.final.primal == pytest.approx(p_star, rel=1e-8)
    assert result.final.primal - p_star <= result.final.gap + 1e-12
    assert result.final.gap <= 1e-8
    assert result.x[-1] == pytest.approx(x_star[-1], rel=1e-4, abs=1e-6)


def test_the_lasso_with_an_intercept_is_scikit_learns():
    """scikit-learn's Lasso(fit_intercept=True) minimizes 1/(2n)‖b − Ax − c‖² + α‖x‖₁:
    ours with l1 = α, an independent reference for the value and for c."""
    from sklearn.linear_model import Lasso

    A, b = make("dense", "squared")
    alpha = 0.05
    fitted = Lasso(alpha=alpha, fit_intercept=True, tol=1e-14, max_iter=100_000).fit(A, b)
    problem = build_problem(A, b, "squared", l1=alpha, l2=0.0, fit_intercept=True)
    theirs = problem.evaluate(x=np.append(fitted.coef_, fitted.intercept_))
    result = solve(problem, "primal_cd", stop=StopRules(tol=1e-12, max_epochs=1e6))
    assert result.final.primal == pytest.approx(theirs.primal, rel=1e-9)
    assert result.x[-1] == pytest.approx(fitted.intercept_, rel=1e-6)


def test_l1_logistic_with_an_intercept_is_scikit_learns():
    """LogisticRegression(l1, saga, C) minimizes C·Σ log(1 + e^(−b(aᵀx + c))) + ‖x‖₁, i.e.
    ours with l1 = 1/(nC), the intercept unpenalized."""
    from sklearn.linear_model import LogisticRegression

    A, b = make("dense", "logistic")
    n, l1 = A.shape[0], 0.01
    model = LogisticRegression(
        penalty="l1", C=1.0 / (n * l1), solver="saga", tol=1e-12, max_iter=200_000
    )
    fitted = model.fit(A, b)
    problem = build_problem(A, b, "logistic", l1=l1, l2=0.0, fit_intercept=True)
    theirs = problem.evaluate(x=np.append(fitted.coef_.ravel(), fitted.intercept_))
    result = solve(problem, "agd", stop=StopRules(tol=1e-12, max_epochs=1e6))
    assert result.final.primal == pytest.approx(theirs.primal, rel=1e-7)
    assert result.x[-1] == pytest.approx(fitted.intercept_[0], rel=1e-4)


def test_an_intercept_changes_the_optimum_and_zero_intercept_data_keeps_it():
    A, b = make("dense", "squared")
    with_c = build_problem(A, b, "squared", l1=0.0, l2=1e-2, fit_intercept=True)
    without = build_problem(A, b, "squared", l1=0.0, l2=1e-2)
    assert reference_optimum(with_c)[0] < reference_optimum(without)[0] - 1e-3
    centered = b - b.mean()
    A_centered = A - A.mean(axis=0)
    problem = build_problem(A_centered, centered, "squared", l1=0.0, l2=1e-2, fit_intercept=True)
    result = solve(problem, "lbfgs", stop=StopRules(tol=1e-12))
    assert abs(result.x[-1]) < 1e-8


def test_solvers_without_an_intercept_refuse_it_by_name():
    takers = {name for name, spec in catalogue().items() if spec.intercept}
    assert set(INTERCEPT_SOLVERS) <= takers
    for name in ("dual_cd", "spdc", "dgpd", "saga"):
        with pytest.raises(SupportError) as caught:
            get_spec(name).check("logistic", "l2", intercept=True)
        assert caught.value.field == "fit_intercept"
        assert f"solver {name!r} does not fit an intercept" in str(caught.value)
        assert "primal_cd" in str(caught.value)
    with pytest.raises(SupportError, match="not multiclass 'ovr'"):
        get_spec("primal_cd").check("logistic", "l2", multiclass="ovr", intercept=True)
    with pytest.raises(ValueError, match="binary and regression"):
        build_problem(
            np.eye(4), np.arange(4), "logistic", l2=1.0, multiclass="ovr", fit_intercept=True
        )


def test_primal_cd_steps_on_the_intercept_once_every_d_steps_whatever_the_chunks():
    """The intercept's step comes after every d coordinate steps, however the driver cuts
    the run into chunks: two runs chunked differently end at the same iterate."""
    from faceoff.solvers.algorithms.primal_cd.method import PrimalCD

    A, b = make("sparse", "logistic")
    problem = build_problem(A, b, "logistic", l1=0.01, l2=0.0, fit_intercept=True)
    one, other = (PrimalCD(problem, "permutation", 3, "newton") for _ in range(2))
    one.run(7 * problem.n_features)
    for chunk in (1, 5, 13, problem.n_features, 7 * problem.n_features - 19 - problem.n_features):
        other.run(chunk)
    assert np.array_equal(one.x, other.x) and one.x[-1] != 0.0
