"""scikit-learn's solvers as peers, traced by refits (they report no progress).

Weight mappings to P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l1‖x‖₁ + l2/2‖x‖², always
``fit_intercept=False``, ``random_state`` = the run's seed, ``tol`` = ``refit.PEER_TOL``:

- ``LogisticRegression`` minimizes C Σ log(1 + exp(−bᵢaᵢᵀw)) + r‖w‖₁ + (1 − r)/2‖w‖²; P times
  1/(l1 + l2) is that with **C = 1/(n·(l1 + l2)), r = l1_ratio = l1/(l1 + l2)** (l2 alone:
  C = 1/(n·l2), l1_ratio = 0; l1 alone, l2 = 0: C = 1/(n·l1), l1_ratio = 1; ``penalty`` is
  deprecated since scikit-learn 1.8). liblinear's l1 form is its primal newGLMNET
  (``dual=False``, sklearn.liblinear_l1), its l2 form dual CD or TRON. Budget
  ``max_iter``: liblinear's outer iterations (dual: passes over the samples; primal: Newton
  steps), lbfgs's and newton-cholesky's iterations, sag's and saga's epochs.
- ``Ridge`` minimizes ‖b − Aw‖² + α‖w‖² = 2n·P with **α = n·l2**. Budget: lsqr's
  iterations, sag's and saga's epochs; cholesky is direct (one fit).
- ``ElasticNet`` minimizes 1/(2n)‖b − Aw‖² + αρ‖w‖₁ + α(1 − ρ)/2‖w‖² = P with
  **α = l1 + l2, ρ = l1_ratio = l1/(l1 + l2)**; l2 = 0 makes it scikit-learn's ``Lasso``
  (ρ = 1, α = l1: ``Lasso`` is ``ElasticNet`` with l1_ratio = 1). Budget: coordinate-descent
  epochs.

With an intercept (``Problem.intercept``, binary and regression problems) the same
mappings hold for P(w, c) = 1/n Σ φ(aᵢᵀw + c, bᵢ) + g(w): ``LogisticRegression`` (lbfgs,
newton-cholesky, sag, saga) and ``ElasticNet`` leave ``intercept_`` unpenalized, and x is
(``coef_``, ``intercept_``) (checked against scipy's L-BFGS-B, c free,
tests/solvers/test_sparse_peers.py). liblinear penalizes its intercept (a column of ones
in A), and ``Ridge``'s cholesky and saga refuse sparse data with one: those take none.

K-class problems (X of shape (d, K), ``Problem.coef_shape``; the labels handed over are the
class indices 0..K−1, so ``coef_``'s rows are the classes in our order):

- **multinomial**: ``LogisticRegression`` on K ≥ 3 classes minimizes
  C Σᵢ [log Σₖ exp(aᵢᵀwₖ) − aᵢᵀw_{yᵢ}] + r‖W‖₁ + (1 − r)/2‖W‖²_F, ours times
  1/(l1 + l2) with the same C and r (checked to 1e-15 for lbfgs, newton-cholesky, sag and
  saga). Two classes make it binary: fitted with l2/2 (``refit.binary_multinomial``).
  liblinear has no multinomial form (it refuses K ≥ 3).
- **one-vs-rest**: ``OneVsRestClassifier(LogisticRegression(...))``, one binary fit a class
  with the mapping above (its labels 1 for class k, 0 for the rest: the logistic loss with
  bᵢₖ = ±1); ``Ridge`` and ``ElasticNet`` fit the K targets bᵢₖ = ±1 (``Problem.signs``)
  at once, each target its own problem with the mappings above. A budget is every class's
  ``max_iter``; a trace epoch is one iteration of every class (K passes over A).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from faceoff.solvers.peers.refit import (
    PEER_TOL,
    Fit,
    RefitPeer,
    binary_multinomial,
    class_columns,
    layout,
    timed_fit,
)
from faceoff.solvers.peers.sklearn import LiblinearParams, RidgeParams
from faceoff.solvers.problem import Problem
from faceoff.solvers.spec import NoParams


def _fitter(
    problem: Problem, make: Callable[[int], Any], kind: str = "rows", targets: str = "b"
) -> Callable[[int], Fit]:
    """fit(budget) of ``make(max_iter)`` on A in layout ``kind`` and ``problem.b`` (or, with
    ``targets="signs"`` on a K-class problem, the one-vs-rest targets ``problem.signs``);
    iterations done: the largest n_iter_ of its classes."""
    A = layout(problem.data, kind)
    b = problem.signs if targets == "signs" and problem.multiclass is not None else problem.b

    def fit(budget: int) -> Fit:
        estimator = make(budget)
        seconds = timed_fit(estimator, A, b)
        parts = getattr(estimator, "estimators_", [estimator])  # OneVsRestClassifier's
        n_iter = [k for part in parts if (k := getattr(part, "n_iter_", None)) is not None]
        if not n_iter:  # a direct solver: the budget plays no part
            return Fit(seconds, _coef(problem, estimator), 1, True)
        done = max(int(np.max(k)) for k in n_iter)
        return Fit(seconds, _coef(problem, estimator), done, done < budget)

    return fit


def _coef(problem: Problem, estimator: Any) -> np.ndarray:
    """x (w, c with an intercept), or X of shape (d, K), from the fitted ``estimator``."""
    if problem.multiclass is None:
        w = np.asarray(estimator.coef_, dtype=np.float64).ravel()
        if problem.intercept:
            return np.append(w, np.asarray(estimator.intercept_, dtype=np.float64).ravel())
        return w.copy()
    if hasattr(estimator, "estimators_"):
        return class_columns(problem, np.vstack([e.coef_ for e in estimator.estimators_]))
    return class_columns(problem, estimator.coef_)


def _logistic(solver: str) -> RefitPeer:
    """The peer ``LogisticRegression(solver=solver)``."""

    def fitter(
        problem: Problem, params: LiblinearParams | NoParams, seed: int
    ) -> Callable[[int], Fit]:
        # scikit-learn's estimators (a second to import) only when this peer runs
        from sklearn.linear_model import LogisticRegression
        from sklearn.multiclass import OneVsRestClassifier

        l1, l2, n = problem.penalty.l1, problem.penalty.l2, problem.n_samples
        if binary_multinomial(problem):
            l2 = l2 / 2
        options = {}
        if isinstance(params, LiblinearParams):
            options["dual"] = params.formulation == "dual"
        elif solver == "liblinear":  # l1: liblinear's primal newGLMNET, its only l1 form
            options["dual"] = False

        def make(budget: int) -> Any:
            estimator = LogisticRegression(
                solver=solver,
                C=1.0 / (n * (l1 + l2)),
                l1_ratio=l1 / (l1 + l2),
                fit_intercept=problem.intercept,
                tol=PEER_TOL,
                max_iter=budget,
                random_state=seed,
                **options,
            )
            return OneVsRestClassifier(estimator) if problem.multiclass == "ovr" else estimator

        return _fitter(problem, make)

    fitter.__doc__ = f"LogisticRegression(solver={solver!r}) traced by refits."
    return RefitPeer(fitter)


liblinear = _logistic("liblinear")
liblinear_l1 = _logistic("liblinear")
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

    return _fitter(problem, make, targets="signs")


def _elastic_net(problem: Problem, params: NoParams, seed: int) -> Callable[[int], Fit]:
    """ElasticNet (cyclic coordinate descent on columns) traced by refits."""
    # only when this peer runs (a second to import)
    from sklearn.linear_model import ElasticNet

    l1, l2 = problem.penalty.l1, problem.penalty.l2

    def make(budget: int) -> Any:
        return ElasticNet(
            alpha=l1 + l2,
            l1_ratio=l1 / (l1 + l2),
            fit_intercept=problem.intercept,
            tol=PEER_TOL,
            max_iter=budget,
            random_state=seed,
        )

    return _fitter(problem, make, kind="columns", targets="signs")


ridge = RefitPeer(_ridge)
elastic_net = RefitPeer(_elastic_net)
