"""The baselines agd, lbfgs and saga (their convergence to the reference optimum is in
test_reference): stop rules, epoch accounting, and SAGA's lazy updates against a dense
O(d)-per-step implementation."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.solvers.algorithms.lbfgs import method as lbfgs
from faceoff.solvers.algorithms.saga.method import SAGA
from faceoff.solvers.lazy_prox import RESCALE_BELOW, catch_up, contraction_table
from faceoff.solvers.losses import loss_deriv, make_loss
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.problem import Data, Problem
from faceoff.solvers.run import solve
from faceoff.solvers.sampling import Sampler, next_coordinate
from faceoff.solvers.trace import CANCELLED, CONVERGED, FINISHED, MAX_EPOCHS, StopRules
from tests.solvers.problems import make_problem

TOL = 1e-10


def test_agd_counts_half_a_pass_per_product():
    """One Aᵀ product per iteration plus one A product per line-search trial."""
    problem = make_problem("sparse", "logistic", "elastic_net")
    result = solve(problem, "agd", None, StopRules(max_epochs=50.0, tol=TOL))
    for point in result.trace[1:]:
        assert point.epoch * 2 == int(point.epoch * 2)
        assert point.epoch >= point.iteration


def test_agd_line_search_is_not_fooled_by_rounding_near_the_optimum():
    """Far below a 1e-10 gap, f(x⁺) − f(y) drowns in rounding; the second-order form of
    the test keeps L_loss near the curvature instead of doubling it to the global bound."""
    problem = make_problem("sparse", "smooth_hinge", "l2")
    result = solve(problem, "agd", None, StopRules(max_epochs=500.0, tol=1e-15))
    assert result.stop_reason == CONVERGED
    bound = problem.loss.smoothness * problem.data.row_sq_norms.sum() / problem.n_samples
    assert max(p.extras["lipschitz"] for p in result.trace[10:]) < 0.1 * bound


def test_lbfgs_counts_one_pass_per_evaluation_and_stops_at_max_epochs():
    problem = make_problem("dense", "logistic", "l2")
    result = solve(problem, "lbfgs", {"memory": 5}, StopRules(max_epochs=4.0, tol=TOL))
    assert result.stop_reason == MAX_EPOCHS
    assert [p.epoch for p in result.trace] == [float(int(p.epoch)) for p in result.trace]
    assert 4.0 <= result.final.epoch <= 6.0


def test_lbfgs_finishing_by_itself_keeps_a_satisfied_stop_rule():
    """With tol = 0 only L-BFGS-B can end the run: at its limiting accuracy, with "finished"
    (or "converged" if the computed gap reaches 0 there)."""
    problem = make_problem("dense", "squared", "l2")
    result = solve(problem, "lbfgs", None, StopRules(max_epochs=1e5, tol=0.0))
    assert result.stop_reason in (FINISHED, CONVERGED)
    assert result.final.gap <= 1e-13 * max(1.0, abs(result.final.primal))
    loose = solve(problem, "lbfgs", None, StopRules(max_epochs=1e5, tol=1e-12))
    assert loose.stop_reason == CONVERGED


@pytest.mark.parametrize("solver", ["agd", "lbfgs", "saga"])
def test_should_stop_cancels(solver):
    problem = make_problem("dense", "logistic", "l2")
    result = solve(problem, solver, None, StopRules(tol=TOL, should_stop=lambda: True))
    assert result.stop_reason == CANCELLED


def test_lbfgs_checks_should_stop_between_trace_points(monkeypatch):
    monkeypatch.setattr(lbfgs, "_CHECK_SECONDS", 0.0)
    monkeypatch.setattr(lbfgs, "_EVERY_ITERATION_UP_TO", 1)
    monkeypatch.setattr(lbfgs, "_POINTS_PER_DECADE", 1)  # points at iterations 1, 10, 100
    calls = []

    def should_stop() -> bool:
        calls.append(None)
        return len(calls) >= 6

    problem = make_problem("sparse", "squared", "l2")
    result = solve(problem, "lbfgs", None, StopRules(tol=TOL, should_stop=should_stop))
    assert result.stop_reason == CANCELLED
    # the sixth look comes before the grid's next point (iteration 10): the run ends at
    # the last accepted iterate, already a point
    assert [p.iteration for p in result.trace] == [0, 1]


class _Counted(lbfgs._Interrupted):
    raised = 0

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        _Counted.raised += 1


@pytest.mark.parametrize("after", range(2, 14))
def test_lbfgs_stops_inside_a_line_search_at_its_last_accepted_iterate(monkeypatch, after):
    """A line search whose evaluations overrun the budget (here a cancel, asked at the
    `after`-th look) ends the run at once, at the last iterate L-BFGS-B accepted: the final
    point's P is no higher than the point before it (accepted iterates descend)."""
    monkeypatch.setattr(lbfgs, "_CHECK_SECONDS", 0.0)
    monkeypatch.setattr(lbfgs, "_Interrupted", _Counted)
    _Counted.raised = 0
    calls = []

    def should_stop() -> bool:
        calls.append(None)
        return len(calls) >= after

    problem = make_problem("sparse", "logistic", "l2")
    result = solve(problem, "lbfgs", None, StopRules(tol=TOL, should_stop=should_stop))
    assert result.stop_reason == CANCELLED and len(calls) == after
    primal = [p.primal for p in result.trace]
    assert all(b <= a + 1e-15 for a, b in zip(primal[:-1], primal[1:], strict=True)), primal
    epochs = [p.epoch for p in result.trace]
    assert epochs == sorted(epochs)


def test_some_cancel_lands_inside_an_evaluation(monkeypatch):
    monkeypatch.setattr(lbfgs, "_CHECK_SECONDS", 0.0)
    monkeypatch.setattr(lbfgs, "_Interrupted", _Counted)
    _Counted.raised = 0
    problem = make_problem("sparse", "logistic", "l2")
    for after in range(2, 14):
        calls = []

        def should_stop(calls=calls, after=after) -> bool:
            calls.append(None)
            return len(calls) >= after

        solve(problem, "lbfgs", None, StopRules(tol=TOL, should_stop=should_stop))
    assert _Counted.raised >= 3  # the looks in evaluations outnumber those between iterations


def test_saga_is_deterministic_for_a_seed():
    problem = make_problem("sparse", "logistic", "elastic_net")
    stop = StopRules(max_epochs=3.0, tol=TOL)
    runs = [solve(problem, "saga", None, stop, seed=seed) for seed in (7, 7, 8)]
    assert [p.primal for p in runs[0].trace] == [p.primal for p in runs[1].trace]
    assert not np.array_equal(runs[0].x, runs[2].x)


# --- SAGA lazy updates ----------------------------------------------------------------------


def _prox_steps(x, gbar, m, step, l1, l2):
    """m plain steps of x ← soft(x − η·ḡ, η·l1)/(1 + η·l2)."""
    for _ in range(m):
        v = x - step * gbar
        x = np.sign(v) * max(abs(v) - step * l1, 0.0) / (1.0 + step * l2)
    return x


def test_catch_up_matches_repeated_prox_steps():
    rng = np.random.default_rng(0)
    for _ in range(1500):
        x0, gbar = rng.normal(scale=rng.choice([0.01, 1.0, 100.0])), rng.normal()
        step, l2 = rng.uniform(0.01, 1.0), 10.0 ** rng.uniform(-4, 0)
        l1 = 0.0 if rng.random() < 0.2 else abs(gbar) * rng.uniform(0.0, 2.0)
        u = rng.random()  # short gaps, the two-level table, and the expm1 path beyond it
        m = int(rng.integers(1, 300) if u < 0.9 else rng.integers(4000, 6000))
        if u > 0.97:
            m = int(rng.integers(66_000, 70_000))
        expected = _prox_steps(x0, gbar, m, step, l1, l2)
        log_r = -math.log1p(step * l2)  # tabulated below 65536 steps, expm1 beyond
        found = catch_up(x0, gbar, m, step, l1, l2, log_r, contraction_table(log_r))
        scale = max(1.0, abs(x0), abs(gbar) / l2)
        # the reference loop itself rounds at each of its m steps
        tol = max(1e-12, 4 * m * np.finfo(float).eps)
        assert abs(found - expected) <= tol * scale, (x0, gbar, m, step, l1, l2)


def _saga_dense(A, b, loss, l1, l2, step, seed, n_updates):
    """Reference SAGA: every coordinate takes its prox step at every update (O(d) a step),
    with the kernel's random stream."""
    n, d = A.shape
    sampler = Sampler(n, "uniform", seed)
    x, alpha, gbar = np.zeros(d), np.zeros(n), np.zeros(d)
    visited = 0
    for draw in range(n_updates):
        i = next_coordinate(sampler.state, draw)[0]
        visited += np.count_nonzero(A[i])
        deriv = loss_deriv(loss.params, float(A[i] @ x), b[i])
        delta, alpha[i] = deriv - alpha[i], deriv
        v = x - step * (delta * A[i] + gbar)
        x = np.sign(v) * np.maximum(np.abs(v) - step * l1, 0.0) / (1.0 + step * l2)
        gbar += delta * A[i] / n
    return x, visited


@pytest.mark.parametrize(
    ("loss_name", "l1", "l2"),
    [
        ("logistic", 0.0, 1e-2),
        ("logistic", 3e-3, 1e-3),
        ("squared", 0.0, 1e-3),
        ("squared", 1e-2, 1e-2),
    ],
)
def test_saga_lazy_updates_match_dense_steps(loss_name, l1, l2):
    rng = np.random.default_rng(3)
    n, d = 60, 90
    A = sp.random(n, d, density=0.06, format="csr", random_state=rng, data_rvs=rng.standard_normal)
    b = rng.normal(size=n) if loss_name == "squared" else np.where(rng.random(n) < 0.5, -1.0, 1.0)
    problem = Problem(Data(A), b, make_loss(loss_name), ElasticNet(l1, l2))
    method = SAGA(problem, step_scale=1.0, seed=5)
    done = visited = 0
    for chunk in (1, 7, 100, 333, 1000, 2000):  # state must carry across chunks
        visited += method.run(chunk)
        done += chunk
        expected, expected_visits = _saga_dense(
            A.toarray(), b, problem.loss, l1, l2, method.prox.step, 5, done
        )
        assert visited == expected_visits  # a step on row i visits nnz(aᵢ)
        np.testing.assert_allclose(
            method.iterate()["x"], expected, rtol=0, atol=1e-10 * max(1.0, np.abs(expected).max())
        )
    if l1 > 0:  # the comparison covered sparse iterates
        assert 0 < np.count_nonzero(expected) < d


def test_saga_scaled_form_rescales_and_matches_dense_steps():
    """With l2 alone x = S·v − ḡ/l2, S = rᵗ; a large l2 makes r = 1/(1 + η·l2) small, so S
    passes RESCALE_BELOW many times within a run and v is rescaled: the iterate still
    equals the dense reference's."""
    rng = np.random.default_rng(4)
    n, d = 2000, 90  # many rows: SAGA's rate 1 − 1/(4n) keeps δ ≠ 0 over the whole test
    A = sp.random(n, d, density=0.06, format="csr", random_state=rng, data_rvs=rng.standard_normal)
    b = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    problem = Problem(Data(A), b, make_loss("logistic"), ElasticNet(0.0, 1e3))
    method = SAGA(problem, step_scale=1.0, seed=2)
    assert method.scaled
    step = method.prox.step
    assert 5000 * math.log1p(step * 1e3) > 5 * -math.log(RESCALE_BELOW)  # ≥ 5 rescales
    done = 0
    for chunk in (5000, 3, 5000):
        method.run(chunk)
        done += chunk
        expected, _ = _saga_dense(A.toarray(), b, problem.loss, 0.0, 1e3, step, 2, done)
        np.testing.assert_allclose(method.x, expected, rtol=1e-9, atol=1e-300)
    assert np.all(np.isfinite(method.state.primal)) and np.count_nonzero(method.x) > 0


def test_saga_step_cost_does_not_grow_with_the_dimension():
    """2·10⁶ features, 5 non-zeros a row: 20 000 lazy steps are ~10⁵ coordinate updates
    (plus one O(d) catch-up); dense steps would be 4·10¹⁰."""
    rng = np.random.default_rng(0)
    n, d, per_row = 100, 2_000_000, 5
    cols = rng.choice(d, size=n * per_row, replace=False)
    A = sp.csr_matrix(
        (rng.normal(size=n * per_row), cols, np.arange(0, n * per_row + 1, per_row)), shape=(n, d)
    )
    problem = Problem(
        Data(A),
        np.where(rng.random(n) < 0.5, -1.0, 1.0),
        make_loss("logistic"),
        ElasticNet(1e-3, 1e-3),
    )
    method = SAGA(problem, step_scale=1.0, seed=0)
    method.run(10)
    started = time.perf_counter()
    assert method.run(20_000) == 20_000 * per_row
    assert time.perf_counter() - started < 1.0
