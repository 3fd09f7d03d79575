"""Cyanure (Mairal 2019) as a peer, traced by refits.

Cyanure's ``optimization_info_`` holds objective values and times at its own checks, not
the iterates, so they cannot be certified through our Problem: the trace is made by refits
(``refit``), budget ``max_iter`` = passes over the data, ``tol`` = ``refit.PEER_TOL``, its
own gap checks off (``duality_gap_interval`` beyond the budget), one thread, and a seed
derived from the run's by :func:`cyanure_seed` (Cyanure seeds the C library's ``srand``, for
which seeds 0 and 1 are the same stream).

Weight mapping to P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l1‖x‖₁ + l2/2‖x‖²: Cyanure minimizes
1/n Σ L(bᵢ, aᵢᵀw) + ψ(w) without intercept, its ``logistic`` and ``square`` (½(b − z)²) losses
are ours, and **ψ = λ₁/2‖w‖² with penalty "l2", λ₁ = l2**; **penalty "elasticnet",
λ₁ = l1, λ₂ = l2** gives λ₁‖w‖₁ + λ₂/2‖w‖² for qning-ista and svrg, but the MISO solvers
(miso, catalyst-miso) use λ₁‖w‖₁ + λ₂‖w‖² (measured: their solution certifies P at 2·l2 to
1e-16), so for them **λ₂ = l2/2**.

K-class problems (labels: the class indices 0..K−1; ``coef_`` of shape (d, K), our X):
**multinomial** is ``Classifier(multi_class="multinomial")`` (its multiclass-logistic loss,
our softmax cross-entropy), **one-vs-rest** ``Classifier(multi_class="ovr")`` for the
logistic loss and ``Regression`` on the K targets bᵢₖ = ±1 (``Problem.signs``) for the
squared loss, with the weights above (measured: P* of dense, sparse and usps K-class problems
to 1e-15). Two classes make it binary, mapped back by ``refit.class_columns`` (multinomial:
fitted with l2/2, ``refit.binary_multinomial``). **svrg is refused on a sparse K-class
problem** (a SupportError naming the parameter, before the fit): Cyanure 1.2.2's SVRG kills
the process there — multinomial and squared-loss one-vs-rest: segfault (exit code 139) on the
800 × 500 test problem and an 8 × 5 one; logistic one-vs-rest with elastic net: SIGFPE on the
8 × 5 one (logistic one-vs-rest l2 was exact; dense input is) — and the worker with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from faceoff.solvers.peers.cyanure import Params
from faceoff.solvers.peers.refit import (
    PEER_TOL,
    Fit,
    RefitPeer,
    binary_multinomial,
    class_columns,
    layout,
    timed_fit,
)
from faceoff.solvers.problem import Problem
from faceoff.solvers.spec import SupportError

_MISO = ("miso", "catalyst-miso", "qning-miso")
_LOSSES = {"logistic": "logistic", "squared": "square"}


def cyanure_seed(seed: int) -> int:
    """Cyanure's ``random_state`` for the run's seed in [0, 2³¹ − 1]: seed + 1, and −1 for
    2³¹ − 1 (it takes a signed 32-bit int). glibc's ``srand(0)`` is ``srand(1)``, so seeds 0
    and 1 gave identical runs when passed as they are (measured: MISO, SVRG)."""
    return seed + 1 if seed < 2**31 - 1 else -1


def _fitter(problem: Problem, params: Params, seed: int) -> Callable[[int], Fit]:
    """One of Cyanure's solvers (``params.solver``) traced by refits."""
    # an optional peer library, imported only when this peer runs
    from cyanure.estimators import Classifier, Regression

    solver, l1, l2 = params.solver, problem.penalty.l1, problem.penalty.l2
    if solver == "svrg" and problem.multiclass is not None and problem.data.is_sparse:
        raise SupportError(
            "solver",
            "Cyanure's svrg crashes on sparse K-class problems (Cyanure 1.2.2: a segfault or "
            "a floating-point exception); use solver catalyst-miso, miso or qning-ista",
        )
    if binary_multinomial(problem):
        l2 = l2 / 2
    if l1 > 0:
        weights = {"penalty": "elasticnet", "lambda_1": l1}
        weights["lambda_2"] = l2 / 2 if solver in _MISO else l2
    else:
        weights = {"penalty": "l2", "lambda_1": l2}
    A, b = layout(problem.data, "rows"), problem.b
    loss = problem.loss.name
    if problem.multiclass is not None and loss == "squared":
        b = problem.signs

    def fit(budget: int) -> Fit:
        options: dict[str, Any] = dict(
            fit_intercept=False,
            tol=PEER_TOL,
            solver=solver,
            max_iter=budget,
            duality_gap_interval=budget + 1,
            verbose=False,
            n_threads=1,
            random_state=cyanure_seed(seed),
            **weights,
        )
        if loss == "squared":
            estimator = Regression(**options)
        elif problem.multiclass is not None:
            estimator = Classifier(loss=_LOSSES[loss], multi_class=problem.multiclass, **options)
        else:
            estimator = Classifier(loss=_LOSSES[loss], **options)
        seconds = timed_fit(estimator, A, b)
        return Fit(seconds, _coef(problem, estimator.coef_), budget, False)

    return fit


def _coef(problem: Problem, coef: np.ndarray) -> np.ndarray:
    """x, or X of shape (d, K), from Cyanure's ``coef_`` ((d,) or (d, K))."""
    if problem.multiclass is None:
        return np.asarray(coef, dtype=np.float64).ravel().copy()
    return class_columns(problem, np.asarray(coef).T)


solve = RefitPeer(_fitter)
