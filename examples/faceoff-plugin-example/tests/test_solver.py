"""example.sparsa through Faceoff's own entry point: the optimum of scipy's L-BFGS-B on
smooth problems, soft-thresholding optimality on elastic-net ones, certified duality gaps."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

from faceoff.solvers.catalogue import broken_plugins, catalogue
from faceoff.solvers.problem import build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import CONVERGED, StopRules

NAME = "example.sparsa"


def problem(loss: str, l1: float, sparse: bool):
    rng = np.random.default_rng(4)
    A = rng.standard_normal((120, 30)) / np.sqrt(30)
    if sparse:
        A = sp.random(120, 30, density=0.2, random_state=rng, format="csr")
    b = np.where(rng.random(120) < 0.5, -1.0, 1.0)
    return build_problem(A, b, loss, l1=l1, l2=1e-2)


def scipy_optimum(prob) -> float:
    """min P by L-BFGS-B at tight tolerance (smooth objectives only)."""
    x0 = np.zeros(prob.n_features)

    def f(x):
        y = prob.dual_from_primal(x)
        return prob.primal_value(x), prob.data.rmatvec(y) / prob.n_samples + prob.penalty.l2 * x

    res = scipy.optimize.minimize(
        f,
        x0,
        jac=True,
        method="L-BFGS-B",
        tol=1e-14,
        options={"maxiter": 10000, "ftol": 1e-15, "gtol": 1e-12},
    )
    return float(res.fun)


def test_the_plugin_is_in_the_catalogue():
    assert NAME in catalogue()
    assert not [b for b in broken_plugins() if b.name == NAME]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["logistic", "smooth_hinge", "squared"])
def test_matches_scipy_and_certifies(loss, sparse):
    prob = problem(loss, 0.0, sparse)
    result = solve(prob, NAME, stop=StopRules(max_epochs=20000, max_seconds=60, tol=1e-11))
    assert result.stop_reason == CONVERGED, result.summary()
    assert result.final.gap <= 1e-11 * max(1.0, abs(result.final.primal))
    assert abs(result.final.primal - scipy_optimum(prob)) <= 1e-8 * abs(result.final.primal)


@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_elastic_net_is_certified_and_sparse(loss):
    prob = problem(loss, 2e-2, sparse=True)
    result = solve(prob, NAME, stop=StopRules(max_epochs=20000, max_seconds=60, tol=1e-11))
    assert result.stop_reason == CONVERGED, result.summary()
    x = result.x
    grad = prob.data.rmatvec(prob.dual_from_primal(x)) / prob.n_samples + prob.penalty.l2 * x
    # optimality of the l1 part: |∇f| ≤ l1 where x = 0, ∇f = −l1·sign(x) elsewhere
    zero = x == 0
    assert zero.any() and np.all(np.abs(grad[zero]) <= prob.penalty.l1 + 1e-6)
    assert np.allclose(grad[~zero], -prob.penalty.l1 * np.sign(x[~zero]), atol=1e-6)
