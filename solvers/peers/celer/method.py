"""celer (Massias, Gramfort & Salmon 2018) as peers, traced by refits.

celer's estimators report no progress, so the traces are refits (``refit``) with the
budget as ``max_iter``: celer's outer iterations, each a pass over A for the gap and the
working set, then the subproblem on the working set solved to a fraction of the outer gap
(up to ``max_epochs`` epochs of coordinate descent, or prox-Newton steps for celer-pn). A
trace epoch is one outer iteration, so it undercounts the work on the working set; the time
is each fit's own. ``tol`` = ``refit.PEER_TOL``; deterministic.

Weight mappings to P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l1‖x‖₁ + l2/2‖x‖² (checked against scipy's
L-BFGS-B on the split x = u − v, tests/solvers/test_sparse_peers.py):

- ``Lasso`` minimizes 1/(2n)‖b − Aw‖² + α‖w‖₁ = P with **α = l1** (l2 = 0).
- ``ElasticNet`` minimizes 1/(2n)‖b − Aw‖² + αρ‖w‖₁ + α(1 − ρ)/2‖w‖² = P with
  **α = l1 + l2, ρ = l1_ratio = l1/(l1 + l2)** (scikit-learn's form; ρ = 0 is refused, so
  no l2 penalty alone).
- ``LogisticRegression(penalty="l1")`` minimizes Σ log(1 + exp(−bᵢaᵢᵀw)) + 1/C‖w‖₁ = n·P
  with **C = 1/(n·l1)** (l2 = 0; it has no l2 term). It keeps no ``n_iter_``: a fit is taken
  to have run its whole budget, and the trace ends when a larger budget returns the same
  coefficients.

With an intercept (``Problem.intercept``) the Lasso and ElasticNet fit the unpenalized c
as scikit-learn's do (centering A and b; sparse A through its column means), and x is
(``coef_``, ``intercept_``). celer 0.7's LogisticRegression refuses ``fit_intercept``, so
celer.logistic takes none.

A subproblem runs at most ``MAX_EPOCHS`` epochs (celer's default is 50000): with ``tol`` =
1e-15 celer cannot meet its inner target (0.3× the outer gap) once the gap is near
rounding, and then ran all 50000 epochs a subproblem: on a9a's Lasso (l1 = 1e-3) budget 16
took 1.15 s to a gap of 2.9e-10 and budget 32 had not returned after 6 minutes. Capped, an
outer iteration near rounding costs ``MAX_EPOCHS`` epochs on the working set: budget 32
took 1.9 s at 100 epochs, 11.9 s at 1000, and budget 16 already reached P* to 1e-14
relative at 100. A capped subproblem ends at a point the next outer iteration starts
from: the cap changes no fit whose subproblems need fewer epochs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from faceoff.solvers.peers.celer import LogisticParams
from faceoff.solvers.peers.refit import PEER_TOL, Fit, RefitPeer, layout, timed_fit
from faceoff.solvers.problem import Problem
from faceoff.solvers.spec import NoParams

MAX_EPOCHS = 100  # epochs of a Lasso's subproblem (module docstring)


def _fitter(
    problem: Problem, make: Callable[[int], Any], kind: str, counted: bool
) -> Callable[[int], Fit]:
    """fit(budget) of ``make(max_iter)`` on A in layout ``kind``; ``counted``: whether the
    estimator reports the iterations it did (``n_iter_``)."""
    A, b = layout(problem.data, kind), problem.b

    def fit(budget: int) -> Fit:
        estimator = make(budget)
        seconds = timed_fit(estimator, A, b)
        x = np.asarray(estimator.coef_, dtype=np.float64).ravel().copy()
        if problem.intercept:  # x = (w, c)
            x = np.append(x, float(estimator.intercept_))
        done = int(np.max(estimator.n_iter_)) if counted else budget
        return Fit(seconds, x, done, done < budget)

    return fit


def _lasso(problem: Problem, params: NoParams, seed: int) -> Callable[[int], Fit]:
    """celer's Lasso (l2 = 0) or ElasticNet, traced by refits."""
    # an optional peer library, imported only when this peer runs
    from celer import ElasticNet, Lasso

    l1, l2 = problem.penalty.l1, problem.penalty.l2

    def make(budget: int) -> Any:
        options = dict(
            tol=PEER_TOL,
            max_iter=budget,
            max_epochs=MAX_EPOCHS,
            fit_intercept=problem.intercept,
            warm_start=False,
        )
        if l2 == 0:
            return Lasso(alpha=l1, **options)
        return ElasticNet(alpha=l1 + l2, l1_ratio=l1 / (l1 + l2), **options)

    # scikit-learn's Lasso.fit, which celer's estimators inherit, reads CSC or Fortran order
    return _fitter(problem, make, "columns", counted=True)


def _logistic(problem: Problem, params: LogisticParams, seed: int) -> Callable[[int], Fit]:
    """celer's LogisticRegression(penalty="l1", solver=params.solver), traced by refits."""
    # an optional peer library, imported only when this peer runs
    from celer import LogisticRegression

    C = 1.0 / (problem.n_samples * problem.penalty.l1)

    def make(budget: int) -> Any:
        return LogisticRegression(
            C=C,
            penalty="l1",
            solver=params.solver,
            tol=PEER_TOL,
            max_iter=budget,
            fit_intercept=False,
            warm_start=False,
        )

    return _fitter(problem, make, "rows", counted=False)  # check_X_y(accept_sparse="csr")


lasso = RefitPeer(_lasso)
logistic = RefitPeer(_logistic)
