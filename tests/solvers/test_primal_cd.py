"""primal_cd ``step=newton``: the bound that skips Armijo's pass accepts only what the test
accepts (its correctness against the reference is in test_reference)."""

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
from faceoff.solvers.problem import Data, Problem


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
