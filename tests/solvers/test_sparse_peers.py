"""The sparse-model peers (skglm, celer, scikit-learn's Lasso and l1-logistic) on the
Lasso, the elastic net and the l1-logistic problem: each peer × parameter variant × loss it
claims, on dense and sparse data, with l2 = 0 and with l2 > 0 where it takes them. Its final
P matches an independent reference (scipy's L-BFGS-B on the split x = u − v, u, v ≥ 0, with
its own numpy losses) to 1e-7 relative, its certified gap is small, and a mapping off by a
factor of 2 in α would fail that check. A penalty or loss a peer does not take is refused by
``SolverSpec.check`` (and by ``solve``) with a SupportError naming the field to change.

The weights are set from l1_max = ‖∇f(0)‖∞, the smallest l1 at which x* = 0, so that x* is
sparse but not zero (l1 = l1_max/10)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from scipy.optimize import minimize

from faceoff.data.synthetic import classification, regression
from faceoff.solvers.catalogue import catalogue
from faceoff.solvers.problem import Problem, build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.spec import SupportError
from faceoff.solvers.trace import CONVERGED, FINISHED, StopRules
from faceoff.solvers.vocabulary import LOSS_NAMES, PENALTY_NAMES
from tests.solvers.test_peers import _require

SPARSE_PEERS = (
    "skglm",
    "celer.lasso",
    "celer.logistic",
    "sklearn.elastic_net",
    "sklearn.saga",
    "sklearn.liblinear_l1",
)
PENALTIES = ("l1", "elastic_net")  # l2 = 0 and l2 > 0
LAYOUTS = {"dense": (300, 40, 1.0, 1), "sparse": (800, 500, 0.02, 2)}  # n, d, density, seed
TOL = 1e-10
STOP = StopRules(max_epochs=6000, max_seconds=90, tol=TOL)
RTOL = 1e-7  # final P against the reference


@cache
def _data(layout: str, loss: str):
    n, d, density, seed = LAYOUTS[layout]
    make = regression if loss == "squared" else classification
    return make(n_samples=n, n_features=d, density=density, seed=seed)


def _loss_parts(loss: str, z: np.ndarray, b: np.ndarray) -> tuple[float, np.ndarray]:
    """(Σ φ(zᵢ, bᵢ), φ'(z)) in plain numpy: logistic log(1 + exp(−bz)), squared (z − b)²/2."""
    if loss == "logistic":
        return float(np.logaddexp(0.0, -b * z).sum()), -b * np.exp(-np.logaddexp(0.0, b * z))
    return float(0.5 * ((z - b) ** 2).sum()), z - b


def _l1_max(layout: str, loss: str) -> float:
    """‖∇f(0)‖∞ with f = 1/n Σ φ: the smallest l1 whose optimum is x = 0 (l2 aside)."""
    A, b = _data(layout, loss)
    return float(np.abs(A.T @ _loss_parts(loss, np.zeros(A.shape[0]), b)[1]).max() / A.shape[0])


def weights(layout: str, loss: str, penalty: str) -> tuple[float, float]:
    """(l1, l2): l1 = l1_max/10; l2 = 0 for "l1", l1/2 for "elastic_net"."""
    l1 = _l1_max(layout, loss) / 10
    return l1, (0.0 if penalty == "l1" else l1 / 2)


def make(layout: str, loss: str, penalty: str, scale: float = 1.0) -> Problem:
    """The test problem; ``scale`` multiplies both weights (a mis-mapped peer's problem)."""
    A, b = _data(layout, loss)
    l1, l2 = weights(layout, loss, penalty)
    return build_problem(A, b, loss, l1=scale * l1, l2=scale * l2)


def objective(layout: str, loss: str, penalty: str, x: np.ndarray) -> float:
    """P(x) in plain numpy (independent of our Problem)."""
    A, b = _data(layout, loss)
    l1, l2 = weights(layout, loss, penalty)
    return _loss_parts(loss, A @ x, b)[0] / A.shape[0] + l1 * np.abs(x).sum() + l2 / 2 * x @ x


@cache
def reference(layout: str, loss: str, penalty: str) -> float:
    """P* by L-BFGS-B on x = u − v, u, v ≥ 0 (l1‖x‖₁ = l1·Σ(u + v) at the optimal split),
    restarted from its last point until it no longer improves."""
    A, b = _data(layout, loss)
    n, d = A.shape
    l1, l2 = weights(layout, loss, penalty)

    def fun(w):
        x = w[:d] - w[d:]
        value, deriv = _loss_parts(loss, A @ x, b)
        g = A.T @ deriv / n + l2 * x
        return value / n + l1 * w.sum() + l2 / 2 * x @ x, np.concatenate([g + l1, l1 - g])

    w, best = np.zeros(2 * d), np.inf
    for _ in range(8):
        res = minimize(
            fun,
            w,
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, None)] * (2 * d),
            options={"maxiter": 50000, "maxcor": 50, "ftol": 1e-17, "gtol": 1e-14},
        )
        if res.fun >= best - 1e-16 * abs(best):
            break
        best, w = res.fun, res.x
    x = w[:d] - w[d:]
    assert np.count_nonzero(x) < d, "l1 = l1_max/10 should give a sparse optimum"
    return objective(layout, loss, penalty, x)


def _variants(name: str) -> list[dict]:
    return [{}, *catalogue()[name].choice_variants()[1:]]


CASES = [
    pytest.param(
        name, params, loss, penalty, layout, id=f"{name}-{variant}-{loss}-{penalty}-{layout}"
    )
    for name in SPARSE_PEERS
    for params in _variants(name)
    for variant in [",".join(f"{k}={v}" for k, v in params.items()) or "default"]
    for loss in catalogue()[name].losses
    for penalty in PENALTIES
    if penalty in catalogue()[name].penalties
    for layout in LAYOUTS
]


@pytest.mark.parametrize("solver,params,loss,penalty,layout", CASES)
def test_sparse_peer_matches_the_split_reference(solver, params, loss, penalty, layout):
    """Final P at the reference P* to 1e-7 relative, the gap certified small, the run
    ended by our tolerance or by the library, and the optimum sparse."""
    _require(catalogue()[solver])
    problem = make(layout, loss, penalty)
    result = solve(problem, solver, params, STOP, seed=3)
    last, p_ref = result.final, reference(layout, loss, penalty)
    assert result.stop_reason in (CONVERGED, FINISHED), result.summary()
    assert abs(last.primal - objective(layout, loss, penalty, result.x)) <= 1e-12 * p_ref
    assert abs(last.primal - p_ref) <= RTOL * p_ref, (last.primal, p_ref)
    assert -1e-12 * p_ref <= last.gap <= 1e-8 * max(1.0, p_ref), last.gap
    assert 0 < np.count_nonzero(result.x) < problem.n_features


MAPPING_CASES = [
    pytest.param(name, loss, id=f"{name}-{loss}")
    for name in SPARSE_PEERS
    for loss in catalogue()[name].losses
]


@pytest.mark.parametrize("solver,loss", MAPPING_CASES)
def test_a_mapping_off_by_two_would_fail(solver, loss):
    """The peer's solution of the problem with both weights doubled (a mapping that lost a
    ½ or gained a factor 2 in α solves that one) is far from P* of ours: the tolerance of
    the reference check tells the right mapping from a wrong one."""
    spec = catalogue()[solver]
    _require(spec)
    penalty = spec.penalties[-1]
    wrong = solve(make("dense", loss, penalty, scale=2.0), solver, None, STOP, seed=3)
    p_wrong = objective("dense", loss, penalty, wrong.x)
    assert p_wrong - reference("dense", loss, penalty) > 1e3 * RTOL * p_wrong


@pytest.mark.parametrize("solver", SPARSE_PEERS)
def test_what_a_sparse_peer_does_not_take_is_refused(solver):
    """Each penalty and loss outside the peer's spec: SolverSpec.check and solve() refuse
    it with a SupportError naming the field to change (the penalty is set by l1 and l2)."""
    spec = catalogue()[solver]
    for penalty in (p for p in PENALTY_NAMES if p not in spec.penalties):
        with pytest.raises(SupportError) as refused:
            spec.check(spec.losses[0], penalty)
        # the field to change: l2 for the l1 penalty (l2 = 0), l1 for the others
        assert refused.value.field == ("l2" if penalty == "l1" else "l1"), refused.value
        assert repr(penalty) in str(refused.value)
        problem = make("dense", spec.losses[0], "elastic_net")
        problem = build_problem(
            problem.data,
            problem.b,
            spec.losses[0],
            l1=problem.penalty.l1 if penalty != "l2" else 0.0,
            l2=problem.penalty.l2 if penalty != "l1" else 0.0,
        )
        assert problem.penalty.name == penalty
        with pytest.raises(SupportError):
            solve(problem, solver, None, StopRules(max_epochs=2))
    for loss in (loss for loss in LOSS_NAMES if loss not in spec.losses):
        with pytest.raises(SupportError) as refused:
            spec.check(loss, spec.penalties[0])
        assert refused.value.field == "loss"


def test_the_sparse_peers_claim_the_lasso_problems():
    """Which peer takes which sparse problem, as documented (README "Peers")."""
    specs = catalogue()
    assert {"l1", "elastic_net", "l2"} <= set(specs["skglm"].penalties)
    assert set(specs["skglm"].losses) == {"logistic", "squared"}
    assert set(specs["celer.lasso"].penalties) == {"l1", "elastic_net"}
    assert set(specs["celer.logistic"].penalties) == {"l1"}
    assert "l1" in specs["sklearn.elastic_net"].penalties
    assert "l1" in specs["sklearn.saga"].penalties
    assert set(specs["sklearn.liblinear_l1"].penalties) == {"l1"}
    takers = {name for name, spec in specs.items() if spec.intercept}
    assert set(INTERCEPT_PEERS) == {"skglm", "celer.lasso", "sklearn.elastic_net", "sklearn.saga"}
    assert {"ws_cd", "sklearn.lbfgs", "sklearn.newton_cholesky", "sklearn.sag"} <= takers
    assert not {"sklearn.liblinear", "sklearn.liblinear_l1", "celer.logistic"} & takers


# ---------------------------------------------------------------- with an intercept

INTERCEPT_PEERS = tuple(name for name in SPARSE_PEERS if catalogue()[name].intercept)


@cache
def _offset_data(layout: str, loss: str):
    """The test data with labels that need an offset: targets shifted by 2 (squared), one
    negative label in three made positive (logistic)."""
    A, b = _data(layout, loss)
    if loss == "squared":
        return A, b + 2.0
    b = b.copy()
    b[np.flatnonzero(b < 0)[::3]] = 1.0
    return A, b


def _intercept_only(loss: str, b: np.ndarray) -> float:
    """argmin_c 1/n Σ φ(c, bᵢ): the mean (squared), the log-odds (logistic)."""
    if loss == "squared":
        return float(b.mean())
    p = float((b > 0).mean())
    return float(np.log(p / (1 - p)))


def intercept_weights(layout: str, loss: str, penalty: str) -> tuple[float, float]:
    """(l1, l2) as :func:`weights`, l1_max = ‖Aᵀφ'(c₀)‖∞/n at the intercept-only optimum."""
    A, b = _offset_data(layout, loss)
    c0 = np.full(A.shape[0], _intercept_only(loss, b))
    l1 = float(np.abs(A.T @ _loss_parts(loss, c0, b)[1]).max() / A.shape[0]) / 10
    return l1, (0.0 if penalty == "l1" else l1 / 2)


def intercept_objective(layout: str, loss: str, penalty: str, x: np.ndarray) -> float:
    """P(w, c) in plain numpy, x = (w, c), c unpenalized."""
    A, b = _offset_data(layout, loss)
    l1, l2 = intercept_weights(layout, loss, penalty)
    w, c = x[:-1], x[-1]
    value = _loss_parts(loss, A @ w + c, b)[0] / A.shape[0]
    return value + l1 * np.abs(w).sum() + l2 / 2 * w @ w


@cache
def intercept_reference(layout: str, loss: str, penalty: str) -> tuple[float, float]:
    """(P*, c*) by L-BFGS-B on w = u − v, u, v ≥ 0, c free, restarted until it no longer
    improves."""
    A, b = _offset_data(layout, loss)
    n, d = A.shape
    l1, l2 = intercept_weights(layout, loss, penalty)

    def fun(z):
        w, c = z[:d] - z[d : 2 * d], z[-1]
        value, deriv = _loss_parts(loss, A @ w + c, b)
        g = A.T @ deriv / n + l2 * w
        p = value / n + l1 * z[: 2 * d].sum() + l2 / 2 * w @ w
        return p, np.concatenate([g + l1, l1 - g, [deriv.sum() / n]])

    z, best = np.append(np.zeros(2 * d), _intercept_only(loss, b)), np.inf
    for _ in range(8):
        res = minimize(
            fun,
            z,
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, None)] * (2 * d) + [(None, None)],
            options={"maxiter": 50000, "maxcor": 50, "ftol": 1e-17, "gtol": 1e-14},
        )
        if res.fun >= best - 1e-16 * abs(best):
            break
        best, z = res.fun, res.x
    x = np.append(z[:d] - z[d : 2 * d], z[-1])
    assert 0 < np.count_nonzero(x[:d]) < d, "l1 = l1_max/10 should give a sparse optimum"
    return intercept_objective(layout, loss, penalty, x), float(x[-1])


INTERCEPT_CASES = [
    pytest.param(
        name, params, loss, penalty, layout, id=f"{name}-{variant}-{loss}-{penalty}-{layout}"
    )
    for name in INTERCEPT_PEERS
    for params in _variants(name)
    for variant in [",".join(f"{k}={v}" for k, v in params.items()) or "default"]
    for loss in catalogue()[name].losses
    for penalty in PENALTIES
    if penalty in catalogue()[name].penalties
    for layout in LAYOUTS
]


@pytest.mark.parametrize("solver,params,loss,penalty,layout", INTERCEPT_CASES)
def test_sparse_peer_with_an_intercept_matches_the_split_reference(
    solver, params, loss, penalty, layout
):
    """fit_intercept: the peer's x = (w, c) evaluated through our objective is at the
    reference P* (c free) to 1e-7 relative, its c at c*, and our gap certifies it."""
    _require(catalogue()[solver])
    A, b = _offset_data(layout, loss)
    l1, l2 = intercept_weights(layout, loss, penalty)
    problem = build_problem(A, b, loss, l1=l1, l2=l2, fit_intercept=True)
    result = solve(problem, solver, params, STOP, seed=3)
    last = result.final
    p_ref, c_ref = intercept_reference(layout, loss, penalty)
    assert result.stop_reason in (CONVERGED, FINISHED), result.summary()
    assert result.x.shape == (problem.n_features + 1,)
    assert abs(last.primal - intercept_objective(layout, loss, penalty, result.x)) <= 1e-12 * p_ref
    assert abs(last.primal - p_ref) <= RTOL * p_ref, (last.primal, p_ref)
    assert result.x[-1] == pytest.approx(c_ref, rel=1e-3, abs=1e-5)
    assert -1e-12 * p_ref <= last.gap <= 1e-8 * max(1.0, p_ref), last.gap


@pytest.mark.parametrize("solver", ["sklearn.liblinear", "sklearn.liblinear_l1", "celer.logistic"])
def test_peers_that_penalize_or_lack_an_intercept_refuse_it(solver):
    """liblinear penalizes its intercept and celer's LogisticRegression has none: a request
    with fit_intercept is refused at that field, as our dual methods are."""
    spec = catalogue()[solver]
    with pytest.raises(SupportError) as refused:
        spec.check("logistic", spec.penalties[0], intercept=True)
    assert refused.value.field == "fit_intercept"
    assert f"solver {solver!r} does not fit an intercept" in str(refused.value)
