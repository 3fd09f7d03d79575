"""SAGA on K-class problems (its convergence to the reference optimum, every form × loss ×
penalty, is in test_reference): the K-column lazy updates (elastic-net catch-up, l2 scaled
form) give the dense steps' X, one-vs-rest is the K binary runs, the multinomial step takes
β = 1/2, one run per seed."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from faceoff.solvers.algorithms.saga.method import SAGA
from faceoff.solvers.losses import loss_derivs
from faceoff.solvers.problem import Problem
from faceoff.solvers.run import solve
from faceoff.solvers.sampling import Sampler, next_coordinate
from faceoff.solvers.trace import StopRules
from faceoff.solvers.vocabulary import STRONGLY_CONVEX
from tests.solvers.problems import make_k_problem

FORMS = [
    ("ovr", "logistic"),
    ("ovr", "smooth_hinge"),
    ("ovr", "squared"),
    ("multinomial", "logistic"),
]


@njit
def _draws(sampler, count):
    """The next ``count`` rows a kernel would draw from ``sampler``."""
    rows = np.empty(count, np.int64)
    step = sampler.ring[0]
    for t in range(count):
        rows[t] = next_coordinate(sampler, step)[0]
        step += 1
    sampler.ring[0] = step
    return rows


def _row_derivs(problem: Problem, z: np.ndarray, label: int) -> np.ndarray:
    """∇φ at a row's scores: OvR φ'(zₖ, ±1), multinomial softmax(z) − e_label."""
    if problem.multiclass == "multinomial":
        p = np.exp(z - z.max())
        p /= p.sum()
        p[label] -= 1.0
        return p
    signs = np.where(np.arange(z.size) == label, 1.0, -1.0)
    return loss_derivs(problem.loss.params, z, signs, np.empty(z.size))


def _dense_saga(problem: Problem, step: float, rows: np.ndarray) -> np.ndarray:
    """SAGA's steps with O(d·K) updates: X ← prox_{ηg}(X − η(aᵢδᵀ + Ḡ)), Ḡ += aᵢδᵀ/n."""
    A = problem.data.csr_matrix.toarray()
    n, K = problem.n_samples, problem.n_classes
    l1, l2 = problem.penalty.l1, problem.penalty.l2
    X = np.zeros(problem.coef_shape)
    G = np.zeros(problem.coef_shape)
    alpha = np.zeros((n, K))
    for i in rows:
        a = A[i]
        deriv = _row_derivs(problem, a @ X, problem.b[i])
        delta = deriv - alpha[i]
        alpha[i] = deriv
        V = X - step * (np.outer(a, delta) + G)
        X = np.sign(V) * np.maximum(np.abs(V) - step * l1, 0.0) / (1.0 + step * l2)
        G += np.outer(a, delta) / n
    return X


@pytest.mark.parametrize("penalty", STRONGLY_CONVEX)
@pytest.mark.parametrize("form,loss", FORMS)
def test_k_class_lazy_updates_match_dense_steps(form, loss, penalty):
    """Elastic net: one `last` a feature, each coefficient caught up with its own ḡ; l2: the
    scaled form on K columns writing only the classes that moved. Both equal the dense
    steps on the same draws to 1e-10, across chunks (each ends with every coordinate up to
    date, or S folded into v)."""
    problem = make_k_problem("sparse_k", loss, penalty, form)
    method = SAGA(problem, 1.0, seed=7)
    assert method.scaled == (penalty == "l2")
    replay = Sampler(problem.n_samples, "uniform", 7)
    rows = np.concatenate([_draws(replay.state, chunk) for chunk in (1, 50, 700, 800)])
    for chunk in (1, 50, 700, 800):
        method.run(chunk)
    expected = _dense_saga(problem, method.prox.step, rows)
    np.testing.assert_allclose(method.x, expected, rtol=0, atol=1e-10)
    if penalty == "elastic_net":
        assert 0 < np.count_nonzero(method.x) < method.x.size


@pytest.mark.parametrize("penalty", STRONGLY_CONVEX)
def test_ovr_run_is_the_k_binary_runs(penalty):
    """One-vs-rest SAGA is K binary SAGA runs on the same draws: column k of X is the binary
    run on class k against the rest, and P(X) = Σₖ Pₖ(xₖ), to rounding."""
    problem = make_k_problem("sparse_k", "smooth_hinge", penalty, "ovr")
    ovr = SAGA(problem, 1.0, seed=2)
    ovr.run(30 * problem.n_samples)
    total = 0.0
    for k in range(problem.n_classes):
        labels = np.where(problem.b == k, 1.0, -1.0)
        binary = Problem(problem.data, labels, problem.loss, problem.penalty)
        run = SAGA(binary, 1.0, seed=2)
        run.run(30 * problem.n_samples)
        np.testing.assert_allclose(ovr.x[:, k], run.x, rtol=1e-9, atol=1e-13)
        total += binary.primal_value(run.x)
    assert problem.primal_value(ovr.x) == pytest.approx(total, rel=1e-10)


def test_step_takes_the_forms_smoothness():
    """η = step_scale/(3·L_max), L_max = β·maxᵢ‖aᵢ‖² + l2 with β = 1/2 for multinomial."""
    for form, beta in (("ovr", 0.25), ("multinomial", 0.5)):
        problem = make_k_problem("dense_k", "logistic", "l2", form)
        l_max = beta * problem.data.row_sq_norms.max() + problem.penalty.l2
        assert SAGA(problem, 2.0, seed=0).prox.step == pytest.approx(2.0 / (3.0 * l_max))


@pytest.mark.parametrize("form", ["ovr", "multinomial"])
def test_k_class_runs_are_deterministic_per_seed(form):
    problem = make_k_problem("sparse_k", "logistic", "elastic_net", form)
    stop = StopRules(max_epochs=5, tol=0.0)
    first, again = (solve(problem, "saga", {}, stop, seed=4) for _ in range(2))
    other = solve(problem, "saga", {}, stop, seed=5)
    assert first.x.shape == problem.coef_shape
    assert np.array_equal(first.x, again.x)
    assert [p.primal for p in first.trace] == [p.primal for p in again.trace]
    assert not np.array_equal(first.x, other.x)
