"""skglm (Bertrand et al. 2022) as a peer, traced by refits.

``GeneralizedLinearEstimator(datafit, penalty, solver)`` with ``fit_intercept`` =
``Problem.intercept``, ``tol`` = ``refit.PEER_TOL`` and the budget as the solver's
``max_iter``: its outer
iterations, each a full gradient (a pass over A), a working set built from it, and the
subproblem on the working set solved to a fraction of the outer criterion (AndersonCD: up
to ``max_epochs`` coordinate-descent epochs over the working set; ProxNewton: proximal
Newton steps). A trace epoch is one outer iteration, so it undercounts the work on the
working set; the time is each fit's own. skglm's solvers are deterministic.

Weight mapping to P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l1‖x‖₁ + l2/2‖x‖²: skglm's datafits are
1/n-scaled, ``Quadratic`` 1/(2n)‖b − Ax‖² and ``Logistic`` 1/n Σ log(1 + exp(−bᵢaᵢᵀx)), our
squared and logistic losses; ``L1_plus_L2(α, r)`` is αr‖x‖₁ + α(1 − r)/2‖x‖², so
**α = l1 + l2, r = l1_ratio = l1/(l1 + l2)** (r = 0: l2 alone), and with l2 = 0
**L1(α = l1)** (skglm's Lasso and SparseLogisticRegression). With an intercept its
solvers step on the unpenalized c once an epoch (``intercept_update_step``), and x is
(``coef_``, ``intercept_``). Checked against scipy's L-BFGS-B on the split x = u − v, c
free (tests/solvers/test_sparse_peers.py).

skglm compiles its kernels with Numba on first use, without an on-disk cache, for each
datafit, penalty and layout (dense or sparse): the fitter first makes untimed fits on a
tiny problem with the same datafit, penalty and solver, dense and sparse, once a process
(in the worker's warm-up), so that no timed fit pays for compilation, as for our kernels.
That compilation takes about a minute a process for skglm's 12 combinations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from faceoff.solvers.peers.refit import PEER_TOL, Fit, RefitPeer, layout, timed_fit
from faceoff.solvers.peers.skglm import Params
from faceoff.solvers.problem import Problem

_compiled: set[tuple[str, str, bool, bool]] = set()


def _estimator(
    loss: str, l1: float, l2: float, solver: str, budget: int, intercept: bool = False
) -> Any:
    """skglm's estimator of P with ``max_iter = budget`` (and an intercept)."""
    # an optional peer library, imported only when this peer runs
    from skglm import GeneralizedLinearEstimator
    from skglm.datafits import Logistic, Quadratic
    from skglm.penalties import L1, L1_plus_L2
    from skglm.solvers import AndersonCD, ProxNewton

    datafit = Logistic() if loss == "logistic" else Quadratic()
    penalty = L1(l1) if l2 == 0 else L1_plus_L2(l1 + l2, l1 / (l1 + l2))
    method = AndersonCD if solver == "anderson_cd" else ProxNewton
    options = dict(tol=PEER_TOL, max_iter=budget, fit_intercept=intercept, warm_start=False)
    return GeneralizedLinearEstimator(datafit, penalty, method(**options))


def _compile(loss: str, l2_zero: bool, solver: str, intercept: bool) -> None:
    """Untimed fits on a tiny dense and a tiny sparse problem: Numba compiles skglm's
    kernels for this datafit, penalty and solver in both layouts (the worker's warm-up runs
    sparse problems only), once a process."""
    key = (loss, solver, l2_zero, intercept)
    if key in _compiled:
        return
    rng = np.random.default_rng(0)
    A = np.asfortranarray(rng.standard_normal((6, 4)))
    b = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
    for layout_ in (A, sp.csc_matrix(A)):
        estimator = _estimator(loss, 0.01, 0.0 if l2_zero else 0.01, solver, 2, intercept)
        timed_fit(estimator, layout_, b)
    _compiled.add(key)


def _fitter(problem: Problem, params: Params, seed: int) -> Callable[[int], Fit]:
    """skglm's ``params.solver`` on our loss and penalty, traced by refits."""
    loss, l1, l2 = problem.loss.name, problem.penalty.l1, problem.penalty.l2
    A, b = layout(problem.data, "columns"), problem.b  # it reads CSC or Fortran order
    intercept = problem.intercept
    _compile(loss, l2 == 0, params.solver, intercept)

    def fit(budget: int) -> Fit:
        estimator = _estimator(loss, l1, l2, params.solver, budget, intercept)
        seconds = timed_fit(estimator, A, b)
        x = np.asarray(estimator.coef_, dtype=np.float64).ravel().copy()
        if intercept:  # x = (w, c)
            x = np.append(x, float(estimator.intercept_))
        done = int(estimator.n_iter_)
        return Fit(seconds, x, done, done < budget)

    return fit


solve = RefitPeer(_fitter)
