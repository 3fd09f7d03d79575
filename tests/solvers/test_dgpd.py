"""DGPD (Lei et al., ICML 2017; both variants certify the reference optimum in
test_reference): the active sets follow the supports, the greedy choices are the
argmax/argmin of eqs. (5) and (7), the step size η is eq. (16) with ``step=theorem``, and
Algorithm 1's default adaptive step certifies problems the theorem's η crawls on; on
one-vs-rest K-class problems the active sets are the union of the classes' supports, each
class takes its own η of eq. (16), Algorithm 1 is the K binary runs, the optimum is the sum
of the K binary optima, and the multinomial form is refused naming the supported mode."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from sklearn.datasets import load_breast_cancer

from faceoff.data.svmlight import read_svmlight
from faceoff.data.synthetic import classification
from faceoff.solvers.algorithms.dgpd.method import (
    DGPD,
    _greedy_dual,
    _greedy_primal,
    _potential,
    _test_period,
)
from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.losses import loss_conj, make_loss
from faceoff.solvers.problem import Data, Problem, build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.spec import ParamError, SupportError
from faceoff.solvers.trace import CONVERGED, StopRules
from faceoff.solvers.vocabulary import LOSS_NAMES
from tests.datasets import dataset_file
from tests.reference import reference_optimum
from tests.solvers.problems import make_k_problem, make_problem


def test_supports_every_loss():
    assert get_spec("dgpd").losses == LOSS_NAMES


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
@pytest.mark.parametrize("loss", LOSS_NAMES)
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
    default = solve(problem, "dgpd", {"variant": variant, "step": "theorem"}, stop, seed=0)
    n, mu = problem.n_samples, problem.penalty.l2
    r_sq = problem.data.row_sq_norms.max()
    gamma = 1.0 / problem.loss.smoothness
    for point in default.trace:  # eq. (16) with the s reported alongside
        s = max(point.extras["support_gap"], 1)
        assert point.extras["eta"] == pytest.approx(
            2 * n * n * mu / (s * (5 * r_sq + n * gamma * mu))
        )
    assert default.final.primal != given.final.primal


def _eq16(problem: Problem, s: int) -> float:
    n, mu = problem.n_samples, problem.penalty.l2
    r_sq = problem.data.row_sq_norms.max()
    return 2 * n * n * mu / (max(s, 1) * (5 * r_sq + n * mu / problem.loss.smoothness))


def _breast_cancer() -> Problem:
    """Issue 14's case: standardized breast_cancer, smoothed hinge, l2 = 1e-3."""
    A, b = load_breast_cancer(return_X_y=True)
    A = (A - A.mean(axis=0)) / A.std(axis=0)
    return build_problem(Data(A), np.where(b == 1, 1.0, -1.0), "smooth_hinge", 1.0, 0.0, 1e-3)


def _a1a() -> Problem:  # sparse LIBSVM, not used to design the step
    A, b = read_svmlight(dataset_file("a1a"), n_features=123)
    return build_problem(Data(A), b, "smooth_hinge", 1.0, 0.0, 1e-3)


def _synthetic_logistic() -> Problem:  # sparse synthetic, l1 + l2, not used either
    A, b = classification(n_samples=500, n_features=150, density=0.05, seed=11)
    return build_problem(Data(A), b, "logistic", 1.0, 1e-3, 1e-3)


@pytest.mark.parametrize("make", [_breast_cancer, _a1a, _synthetic_logistic])
def test_basic_certifies_by_default(make):
    """The default step of Algorithm 1 certifies gap ≤ 1e-9 within 2000 epochs (measured:
    1087, 1169 and 41; the theorem's η leaves gaps of 1e3, 6e2 and 2e-4 after 3000) at
    the scipy reference's optimum."""
    problem = make()
    stop = StopRules(max_epochs=2000, max_seconds=60, tol=1e-9)
    result = solve(problem, "dgpd", {"variant": "basic"}, stop, seed=0)
    assert result.stop_reason == CONVERGED, result.summary()
    last = result.final
    assert 0 <= last.gap <= 1e-9 * max(1.0, abs(last.primal))
    p_ref = reference_optimum(problem)[0]
    assert abs(last.primal - p_ref) <= 1e-8 * abs(p_ref), (last.primal, p_ref)
    factor = last.extras["eta_factor"]  # η = m·η₁₆, m a power of two
    assert factor >= 1 and np.log2(factor) == int(np.log2(factor))
    assert last.extras["eta"] == pytest.approx(factor * _eq16(problem, last.extras["support_gap"]))


def test_adaptive_step_backs_off_and_is_deterministic():
    """On the issue's case a fixed η = 7 diverges (η = 5 converges): periods at m·η₁₆ ≈ 10.8
    are rejected, and the back-off makes such trials rare (without it every other period
    would be one); two runs are bitwise equal."""
    problem = _breast_cancer()
    stop = StopRules(max_epochs=300, tol=0.0)
    runs = [solve(problem, "dgpd", {"variant": "basic"}, stop, seed=seed) for seed in (0, 1)]
    assert np.array_equal(runs[0].x, runs[1].x)
    assert [p.gap for p in runs[0].trace] == [p.gap for p in runs[1].trace]
    extras = runs[0].final.extras
    assert 1 <= extras["rejected_periods"] <= extras["accepted_periods"] / 10, extras


def _search_after_one_period(factor: float, potential: float):
    """A basic DGPD run of one period (100 iterations), then _test_period called with the
    accepted point's potential set to ``potential``."""
    method = DGPD(make_problem("dense", "squared", "l2"), "basic", None, 5, 0, period=10**9)
    method.search.fstate[0] = factor
    method.run(100)
    method.search.fstate[1] = potential
    method.search.fstate[2] = 0.0
    it = method.state
    before = it.x.copy(), it.y.copy(), it.w.copy(), it.z.copy()
    problem = method.problem
    _test_period(problem.loss.params, problem.penalty.params, problem.b, it, method.search)
    return method, before


def test_a_failing_period_is_undone_and_halves_the_step():
    method, _ = _search_after_one_period(factor=4.0, potential=-np.inf)
    it, search = method.state, method.search
    for a in (it.x, it.y, it.w, it.z):
        assert not a.any()  # back to the start, x = y = 0
    assert search.fstate[0] == 2.0 and search.istate[4] == 1  # m halved, one rejection


@pytest.mark.parametrize("potential", [np.inf, -np.inf])
def test_a_period_at_the_theorems_step_is_kept(potential):
    """m = 1 is the theorem's η: its periods are kept whatever the test says; a kept
    period doubles m (no rejection yet, so no back-off)."""
    method, before = _search_after_one_period(factor=1.0, potential=potential)
    it, search = method.state, method.search
    for kept, now in zip(before, (it.x, it.y, it.w, it.z), strict=True):
        assert np.array_equal(kept, now) and kept.any()
    assert np.array_equal(search.x, it.x) and np.array_equal(search.y, it.y)
    assert search.fstate[0] == 2.0 and search.istate[3] == 1


def test_potential_is_the_theorems_gap_up_to_d_star():
    """Δ_p = L(x, y) − D(y) and Φ = Δ_p − D(y), from the problem's own P, D and L."""
    problem = make_problem("small_sparse", "logistic", "elastic_net")
    rng = np.random.default_rng(0)
    x = rng.normal(size=problem.n_features) * (rng.random(problem.n_features) < 0.5)
    y = -problem.b * rng.uniform(0.05, 0.95, problem.n_samples)
    w, z = problem.data.matvec(x), problem.data.rmatvec(y)
    primal_gap, potential = _potential(
        problem.loss.params, problem.penalty.params, problem.b, x, y, w, z
    )
    dual = problem.dual_value(y)
    conj = sum(loss_conj(problem.loss.params, yi, bi) for yi, bi in zip(y, problem.b, strict=True))
    lagrangian = problem.penalty.value(x) + y @ w / problem.n_samples - conj / problem.n_samples
    assert primal_gap == pytest.approx(lagrangian - dual, rel=1e-10)
    assert potential == pytest.approx(lagrangian - 2 * dual, rel=1e-10)


def test_theorem_step_is_selectable_and_certifies():
    """``step=theorem`` is eq. (16) at every iteration, certifies (slowly: 1932 epochs here,
    the default 35) and its gap falls: each decade of the run ends lower."""
    problem = make_problem("small_sparse", "smooth_hinge", "elastic_net")
    stop = StopRules(max_epochs=20000, max_seconds=60, tol=1e-9)
    theorem = solve(problem, "dgpd", {"variant": "basic", "step": "theorem"}, stop, seed=0)
    assert theorem.stop_reason == CONVERGED, theorem.summary()
    for point in theorem.trace:
        assert point.extras["eta"] == pytest.approx(_eq16(problem, point.extras["support_gap"]))
        assert "eta_factor" not in point.extras
    epochs = np.array([p.epoch for p in theorem.trace])
    gaps = np.array([p.gap for p in theorem.trace])
    ends = [gaps[epochs <= e][-1] for e in (10, 100, 1000, epochs[-1])]
    assert all(a > b for a, b in zip(ends, ends[1:], strict=False)), ends
    default = solve(problem, "dgpd", {"variant": "basic"}, stop, seed=0)
    assert default.stop_reason == CONVERGED
    assert default.final.epoch < theorem.final.epoch
    assert abs(default.final.primal - theorem.final.primal) <= 2e-9


def test_step_is_a_catalogue_parameter():
    spec = get_spec("dgpd")
    assert spec.parse_params({}).step == "adaptive"
    assert spec.parse_params({"step": "theorem"}).step == "theorem"
    with pytest.raises(ParamError, match="adaptive, theorem") as caught:
        spec.parse_params({"step": "fast"})
    assert caught.value.param == "step"


# ------------------------------------------------------------------------ one-vs-rest


def test_ovr_active_sets_are_the_union_of_the_supports():
    """Shared active sets: at the certified optimum |A_x| is the number of features with a
    non-zero coefficient in some class, |A_y| the number of rows with a non-zero dual
    variable in some class (up to those that reached 0 since the last search)."""
    problem = make_k_problem("usps_k", "smooth_hinge", "elastic_net", "ovr")
    result = solve(problem, "dgpd", {}, StopRules(tol=1e-10, max_seconds=60), seed=0)
    assert result.stop_reason == CONVERGED, result.summary()
    extras = result.final.extras
    features = int(np.count_nonzero(np.any(result.x != 0, axis=1)))
    rows = int(np.count_nonzero(np.any(result.y != 0, axis=1)))
    assert 0 < features <= extras["active_x"] <= features + 0.02 * features + 5, extras
    assert 0 < rows <= extras["active_y"] <= rows + 0.02 * rows + 5, extras
    assert extras["nnz_y"] == np.count_nonzero(result.y) < result.y.size


def test_ovr_steps_are_eq16_per_class():
    """After a search each class k has η₁₆ with its own sₖ = #{j ∉ A_x : x̄ⱼₖ ≠ 0}, x̄ from
    Z = AᵀY (exact after a search)."""
    problem = make_k_problem("sparse_k", "smooth_hinge", "elastic_net", "ovr")
    method = DGPD(problem, "active_set", None, 5, seed=0)
    method.run(20 * problem.n_samples)
    searches = method.istate[4]
    while method.istate[4] == searches:  # stop right after a search
        method.run(1)
    z = problem.data.rmatvec(method.y) / problem.n_samples
    x_bar = np.abs(z) > problem.penalty.l1  # x̄ = −soft(Z/n, l1)/l2 ≠ 0
    outside = np.ones(problem.n_features, dtype=bool)
    outside[method.act_x[: method.istate[0]]] = False
    gaps = np.count_nonzero(x_bar[outside], axis=0)
    np.testing.assert_array_equal(method.fstate[2], gaps)
    assert gaps.min() != gaps.max()  # the classes differ, and so do their steps
    for k in range(problem.n_classes):
        assert method.fstate[0, k] == pytest.approx(_eq16(problem, gaps[k]))


def test_ovr_basic_is_the_k_binary_runs():
    """Algorithm 1's greedy choices are per class: a one-vs-rest run is the K binary runs."""
    problem = make_k_problem("sparse_k", "logistic", "elastic_net", "ovr")
    stop = StopRules(max_epochs=20, tol=0.0)
    ovr = solve(problem, "dgpd", {"variant": "basic"}, stop, seed=0)
    for k in range(problem.n_classes):
        labels = np.where(problem.b == k, 1.0, -1.0)
        binary = Problem(problem.data, labels, problem.loss, problem.penalty)
        method = DGPD(binary, "basic", None, 5, seed=0)
        method.run(ovr.final.iteration)
        assert np.array_equal(ovr.x[:, k], method.x)


def test_ovr_optimum_is_the_sum_of_the_binary_optima():
    """The one-vs-rest objective is the sum of the K binary ones: the certified P of an OvR
    run equals the sum of the K binary runs' certified P."""
    problem = make_k_problem("sparse_k", "smooth_hinge", "elastic_net", "ovr")
    stop = StopRules(tol=1e-11, max_epochs=20000, max_seconds=60)
    ovr = solve(problem, "dgpd", {}, stop, seed=1)
    assert ovr.stop_reason == CONVERGED
    total = 0.0
    for k in range(problem.n_classes):
        labels = np.where(problem.b == k, 1.0, -1.0)
        binary = Problem(problem.data, labels, problem.loss, problem.penalty)
        run = solve(binary, "dgpd", {}, stop, seed=1)
        assert run.stop_reason == CONVERGED
        total += run.final.primal
    assert ovr.final.primal == pytest.approx(total, rel=1e-9)


def test_ovr_runs_are_deterministic_per_seed():
    problem = make_k_problem("sparse_k", "logistic", "elastic_net", "ovr")
    stop = StopRules(max_epochs=10, tol=0.0)
    first, again = (solve(problem, "dgpd", {}, stop, seed=4) for _ in range(2))
    other = solve(problem, "dgpd", {}, stop, seed=5)
    assert np.array_equal(first.x, again.x)
    assert [p.gap for p in first.trace] == [p.gap for p in again.trace]
    assert not np.array_equal(first.x, other.x)


def test_multinomial_is_refused_naming_the_supported_mode():
    """No scalar greedy dual coordinate on the simplex: the catalogue declares ovr only, so
    the API answers 422 naming it, and solve() refuses a multinomial problem before it runs
    (the one check of the form; the method does not check it again)."""
    spec = get_spec("dgpd")
    assert spec.multiclass == ("ovr",)
    with pytest.raises(SupportError, match="multiclass modes it supports: ovr") as caught:
        spec.check("logistic", "l2", multiclass="multinomial")
    assert caught.value.field == "multiclass"
    problem = make_k_problem("dense_k", "logistic", "l2", "multinomial")
    with pytest.raises(SupportError, match="multiclass modes it supports: ovr"):
        solve(problem, "dgpd")
