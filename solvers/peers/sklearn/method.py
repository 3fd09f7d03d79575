"""scikit-learn's solvers as peers, traced by refits (they report no progress).

Weight mappings to P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l1‖x‖₁ + l2/2‖x‖², always
``fit_intercept=False``, ``random_state`` = the run's seed, ``tol`` = ``refit.PEER_TOL``:

- ``LogisticRegression`` minimizes C Σ log(1 + exp(−bᵢaᵢᵀw)) + r‖w‖₁ + (1 − r)/2‖w‖²; P times
  1/(l1 + l2) is that with **C = 1/(n·(l1 + l2)), r = l1_ratio = l1/(l1 + l2)** (l2 alone:
  C = 1/(n·l2), l1_ratio = 0; ``penalty`` is deprecated since scikit-learn 1.8). Budget
  ``max_iter``: liblinear's outer iterations (dual: passes over the samples; primal: Newton
  steps), lbfgs's and newton-cholesky's iterations, sag's and saga's epochs.
- ``Ridge`` minimizes ‖b − Aw‖² + α‖w‖² = 2n·P with **α = n·l2**. Budget: lsqr's
  iterations, sag's and saga's epochs; cholesky is direct (one fit).
- ``ElasticNet`` minimizes 1/(2n)‖b − Aw‖² + αρ‖w‖₁ + α(1 − ρ)/2‖w‖² = P with
  **α = l1 + l2, ρ = l1_ratio = l1/(l1 + l2)**. Budget: coordinate-descent epochs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from faceoff.solvers.peers.refit import PEER_TOL, Fit, RefitPeer, layout, timed_fit
from faceoff.solvers.peers.sklearn import LiblinearParams, RidgeParams
from faceoff.solvers.problem import Problem
from faceoff.solvers.spec import NoParams


def _fitter(
    problem: Problem, make: Callable[[int], Any], kind: str = "rows"
) -> Callable[[int], Fit]:
    """fit(budget) of ``make(max_iter)`` on A in layout ``kind``; iterations done: n_iter_."""
    A, b = layout(problem.data, kind), problem.b

    def fit(budget: int) -> Fit:
        estimator = make(budget)
        seconds = timed_fit(estimator, A, b)
        n_iter = getattr(estimator, "n_iter_", None)
        if n_iter is None:  # a direct solver: the budget plays no part
            return Fit(seconds, _coef(estimator), 1, True)
        done = int(np.max(n_iter))
        return Fit(seconds, _coef(estimator), done, done < budget)

    return fit


def _coef(estimator: Any) -> np.ndarray:
    return np.asarray(estimator.coef_, dtype=np.float64).ravel().copy()


def _logistic(solver: str) -> RefitPeer:
    """The peer ``LogisticRegression(solver=solver)``."""

    def fitter(
        problem: Problem, params: LiblinearParams | NoParams, seed: int
    ) -> Callable[[int], Fit]:
        # scikit-learn's estimators (a second to import) only when this peer runs
        from sklearn.linear_model import LogisticRegression

        l1, l2, n = problem.penalty.l1, problem.penalty.l2, problem.n_samples
        options = {}
        if isinstance(params, LiblinearParams):
            options["dual"] = params.formulation == "dual"

        def make(budget: int) -> Any:
            return LogisticRegression(
                solver=solver,
                C=1.0 / (n * (l1 + l2)),
                l1_ratio=l1 / (l1 + l2),
                fit_intercept=False,
                tol=PEER_TOL,
                max_iter=budget,
                random_state=seed,
                **options,
            )

        return _fitter(problem, make)

    fitter.__doc__ = f"LogisticRegression(solver={solver!r}) traced by refits."
    return RefitPeer(fitter)


liblinear = _logistic("liblinear")
lbfgs = _logistic("lbfgs")
newton_cholesky = _logistic("newton-cholesky")
sag = _logistic("sag")
saga = _logistic("saga")


def _ridge(problem: Problem, params: RidgeParams, seed: int) -> Callable[[int], Fit]:
    """Ridge(solver=params.solver) traced by refits."""
    # only when this peer runs (a second to import)
    from sklearn.linear_model import Ridge

    def make(budget: int) -> Any:
        return Ridge(
            alpha=problem.n_samples * problem.penalty.l2,
            fit_intercept=False,
            solver=params.solver,
            tol=PEER_TOL,
            max_iter=budget,
            random_state=seed,
        )

    return _fitter(problem, make)


def _elastic_net(problem: Problem, params: NoParams, seed: int) -> Callable[[int], Fit]:
    """ElasticNet (cyclic coordinate descent on columns) traced by refits."""
    # only when this peer runs (a second to import)
    from sklearn.linear_model import ElasticNet

    l1, l2 = problem.penalty.l1, problem.penalty.l2

    def make(budget: int) -> Any:
        return ElasticNet(
            alpha=l1 + l2,
            l1_ratio=l1 / (l1 + l2),
            fit_intercept=False,
            tol=PEER_TOL,
            max_iter=budget,
            random_state=seed,
        )

    return _fitter(problem, make, kind="columns")


ridge = RefitPeer(_ridge)
elastic_net = RefitPeer(_elastic_net)
