"""primal_cd ``step=newton``: the bound that skips Armijo's pass accepts only what the test
accepts (its correctness against the reference is in test_reference). K-class problems:
one-vs-rest is K binary runs in one, the multinomial block step descends."""

from __future__ import annotations

import numpy as np
import pytest

from faceoff.data.synthetic import classification
from faceoff.solvers.algorithms.primal_cd.method import (
    PrimalCD,
    _col_max_abs,
    _newton_accepted,
    _surely_accepted,
)
from faceoff.solvers.losses import curvature_growth, loss_derivs12, make_loss
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.problem import Data, Problem, build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import CONVERGED, StopRules
from tests.solvers.problems import make_k_problem


def _problem(loss: str, l1: float, density: float = 0.2, seed: int = 3) -> Problem:
    A, b = classification(n_samples=300, n_features=40, density=density, seed=seed)
    if loss == "squared":
        b = b + np.random.default_rng(seed).normal(size=b.size)
    return Problem(Data(A), b, make_loss(loss), ElasticNet(l1, 1e-3))


@pytest.mark.parametrize("name", ["logistic", "squared"])
def test_curvature_growth_bounds_the_curvature_along_a_step(name):
    """φ''(z + s) ≤ φ''(z)·ρ(|s|) for z over five decades and steps of both signs."""
    p = make_loss(name).params
    rng = np.random.default_rng(0)
    for z, b, s in zip(
        rng.normal(size=2000) * 10.0 ** rng.uniform(-2, 1.5, 2000),
        np.where(rng.random(2000) < 0.5, -1.0, 1.0),
        rng.normal(scale=3.0, size=2000),
        strict=True,
    ):
        here, there = loss_derivs12(p, z, b)[1], loss_derivs12(p, z + s, b)[1]
        assert there <= here * curvature_growth(p, abs(s)) * (1 + 1e-12) + 1e-300


def test_the_smoothed_hinge_has_no_curvature_growth_bound():
    assert curvature_growth(make_loss("smooth_hinge").params, 1e-9) == np.inf


def _column_step(problem: Problem, j: int, x: np.ndarray, scale: float):
    """(grad, curvature without l2, Newton step × scale) of coordinate j at x."""
    data, n = problem.arrays, problem.n_samples
    indptr, indices, values = data.csc
    Ax = problem.data.matvec(x)
    rows, vals = indices[indptr[j] : indptr[j + 1]], values[indptr[j] : indptr[j + 1]]
    d1, d2 = np.array([loss_derivs12(problem.loss.params, Ax[i], data.b[i]) for i in rows]).T
    grad = float(d1 @ vals) / n + problem.penalty.l2 * x[j]
    curvature = float(d2 @ vals**2) / n
    return Ax, grad, curvature, -scale * grad / (curvature + problem.penalty.l2)


@pytest.mark.parametrize("l1", [0.0, 1e-3])
@pytest.mark.parametrize("name", ["logistic", "squared", "smooth_hinge"])
def test_the_bound_accepts_only_steps_that_pass_armijos_test(name, l1):
    """Over random iterates, columns and step lengths from 1e-3 to 30 Newton steps: every
    step the bound accepts passes the exact test; for the logistic and squared losses the
    bound accepts short steps (it is not vacuous), and long logistic steps go to the test."""
    problem = _problem(name, l1)
    data = problem.arrays
    loss_bound = problem.loss.smoothness * problem.data.col_sq_norms / problem.n_samples
    col_max = _col_max_abs(data.csc)
    rng = np.random.default_rng(1)
    surely = tested = 0
    for _ in range(60):
        x = rng.normal(scale=rng.choice([0.1, 1.0, 5.0]), size=problem.n_features)
        j = int(rng.integers(problem.n_features))
        for scale in (1e-3, 0.1, 1.0, 3.0, 30.0):
            Ax, grad, curvature, d = _column_step(problem, j, x, scale)
            start, end = data.csc[0][j], data.csc[0][j + 1]
            args = (x[j], d, grad)
            accepted = _newton_accepted(data, problem.loss.params, problem.penalty.params, Ax,
                                        start, end, *args)  # fmt: skip
            sure = _surely_accepted(problem.loss.params, problem.penalty.params, *args,
                                    curvature, loss_bound[j], col_max[j])  # fmt: skip
            assert accepted or not sure, (name, l1, j, scale)
            surely += sure
            tested += not sure
    if name != "smooth_hinge":
        assert surely > 20
    assert tested > 20


def test_col_max_abs_with_empty_columns():
    A = np.array([[0.0, -3.0, 0.0, 1.0], [0.0, 2.0, 0.0, -4.0]])
    assert _col_max_abs(Data(A).csc).tolist() == [0.0, 3.0, 0.0, 4.0]
    assert _col_max_abs(Data(np.zeros((2, 3))).csc).tolist() == [0.0, 0.0, 0.0]


def test_settled_logistic_sweeps_skip_the_test():
    """Once the iterate settles, a sweep of Newton steps on the logistic loss visits each
    non-zero once (the update), not twice (the test and the update)."""
    problem = _problem("logistic", 0.0, density=0.1)
    method = PrimalCD(problem, "permutation", seed=0, step="newton")
    d, nnz = problem.n_features, problem.data.nnz
    visits = [method.run(d) for _ in range(30)]
    assert sum(visits) > 30 * nnz  # on the way, some long steps went to the test
    assert visits[-5:] == [nnz] * 5


# ----------------------------------------------------------------------------- K classes


def _binary_of_class(problem, c: int):
    """The binary problem of class c of a one-vs-rest problem: its labels ±1."""
    labels = np.where(problem.b == c, 1.0, -1.0)
    l1, l2 = problem.penalty.params
    return build_problem(problem.data, labels, problem.loss.name, problem.loss.gamma, l1=l1, l2=l2)


@pytest.mark.parametrize("step", ["fixed", "newton"])
@pytest.mark.parametrize("sampling", ["uniform", "importance", "permutation"])
@pytest.mark.parametrize(
    "loss,penalty",
    [("smooth_hinge", "l2"), ("squared", "elastic_net"), ("logistic", "elastic_net")],
)
def test_one_vs_rest_is_k_binary_runs(loss, penalty, sampling, step):
    """A column's draw serves the K classes: with the same seed, each column of X and A·X is
    the binary kernel's run on that class's ±1 labels, to the last bit where the kernels
    take the loss module's φ' (all but the logistic's fixed step, whose vectorized exp is
    within 2 ulp of libm's)."""
    problem = make_k_problem("sparse_k", loss, penalty, "ovr")
    steps = 9 * problem.n_features + 7
    method = PrimalCD(problem, sampling, seed=4, step=step)
    method.run(steps)
    for c in range(problem.n_classes):
        binary = PrimalCD(_binary_of_class(problem, c), sampling, seed=4, step=step)
        binary.run(steps)
        if loss == "logistic" and step == "fixed":
            np.testing.assert_allclose(method.x[:, c], binary.x, rtol=1e-10, atol=1e-14)
            continue
        np.testing.assert_array_equal(method.x[:, c], binary.x)
        np.testing.assert_array_equal(method.state.Ax[:, c], binary.state.Ax)


def test_one_vs_rest_optimum_is_the_sum_of_the_binary_optima():
    problem = make_k_problem("dense_k", "logistic", "elastic_net", "ovr")
    stop = StopRules(max_epochs=3000.0, tol=1e-11)
    params = {"sampling": "permutation"}
    result = solve(problem, "primal_cd", params, stop, seed=1)
    assert result.stop_reason == CONVERGED
    parts = [
        solve(_binary_of_class(problem, c), "primal_cd", params, stop, seed=1)
        for c in range(problem.n_classes)
    ]
    assert all(part.stop_reason == CONVERGED for part in parts)
    assert result.final.primal == pytest.approx(sum(p.final.primal for p in parts), rel=1e-10)
    # P is l2-strongly convex: ‖x − x*‖² ≤ 2·gap/l2, for the K-class run and each binary one
    gaps = result.final.gap + sum(p.final.gap for p in parts)
    distance = np.linalg.norm(result.x - np.stack([p.x for p in parts], axis=1))
    assert distance <= 2.0 * np.sqrt(2.0 * gaps / problem.penalty.l2)


@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
def test_multinomial_block_steps_never_increase_the_objective(penalty):
    """Each block step minimizes a quadratic model that lies above P along the block (the
    softmax Hessian ≼ I/2): P never increases, step after step."""
    problem = make_k_problem("dense_k", "logistic", penalty, "multinomial")
    method = PrimalCD(problem, "uniform", seed=0)
    values = [problem.primal_value(method.x)]
    for _ in range(300):
        method.run(1)
        values.append(problem.primal_value(method.x))
    assert np.all(np.diff(values) <= 1e-15 * np.abs(values[1:]))
    assert values[-1] < values[0]


@pytest.mark.parametrize(
    "form,loss,params",
    [
        ("ovr", "logistic", {"sampling": "importance"}),
        ("ovr", "smooth_hinge", {"step": "newton"}),
        ("multinomial", "logistic", {}),
        ("multinomial", "logistic", {"step": "newton", "sampling": "permutation"}),
    ],
)
def test_k_class_runs_are_deterministic_for_a_seed(form, loss, params):
    problem = make_k_problem("sparse_k", loss, "elastic_net", form)
    stop = StopRules(max_epochs=20.0)
    first, again, other = (solve(problem, "primal_cd", params, stop, seed=s) for s in (5, 5, 6))
    np.testing.assert_array_equal(first.x, again.x)
    assert [p.primal for p in first.trace] == [p.primal for p in again.trace]
    assert not np.array_equal(first.x, other.x)


def test_k_class_runs_are_the_same_however_they_are_chunked():
    problem = make_k_problem("sparse_k", "logistic", "l2", "multinomial")
    d = problem.n_features
    whole, chunked = (PrimalCD(problem, "permutation", seed=2, step="newton") for _ in range(2))
    visited = whole.run(10 * d + 3)
    assert sum(chunked.run(k) for k in (1, d - 1, 3 * d, 3, 6 * d)) == visited
    np.testing.assert_array_equal(whole.x, chunked.x)
    np.testing.assert_array_equal(whole.state.Ax, chunked.state.Ax)
