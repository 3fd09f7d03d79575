"""lightning (sklearn-contrib-lightning) as peers, traced through its ``callback``.

Each estimator calls ``callback(estimator)`` during its fit (SDCA every ``n_calls`` samples,
CD every ``n_calls`` coordinate updates, SAGA and SVRG after each outer iteration); our
``refit.Progress`` records and certifies points there with the solver clock stopped, and
stops the fit by returning a value. ``tol`` = ``refit.PEER_TOL`` and ``max_iter`` beyond
``max_epochs``, so our stop rules decide. Classifiers for ±1 labels, regressors for the
squared loss ½(b − z)²; ``smooth_hinge`` takes our γ; ``log`` is our logistic loss.

Weight mappings to P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l1‖x‖₁ + l2/2‖x‖²:

- SDCA: 1/n Σ loss + α·r‖w‖₁ + α(1 − r)/2‖w‖², so **α = l1 + l2, r = l1_ratio = l1/(l1 + l2)**.
- CD: C Σ loss + α/2‖w‖² (``penalty="l2"``), so **C = 1/n, α = l2**; its squared loss is
  (b − z)² without the ½, so **C = 1/(2n)** there; its smoothed hinge has γ = 1 only (the
  catalogue refuses other γ).
- SAGA: 1/n Σ loss + α/2‖w‖² + β‖w‖₁ (``penalty="l1"`` when l1 > 0), so
  **α = l2, β = l1**; step ``eta="auto"`` (lightning's 1/L; too long for the smoothed
  hinge with γ < 1, which the catalogue refuses).
- SVRG: 1/n Σ loss + α/2‖w‖², so **α = l2**; step η = step_scale / L_max with
  L_max = β·max‖aᵢ‖² + l2 (it has no automatic step).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from faceoff.solvers.peers.lightning import SvrgParams
from faceoff.solvers.peers.refit import PEER_TOL, Progress, StopFit, layout
from faceoff.solvers.problem import Problem
from faceoff.solvers.spec import NoParams
from faceoff.solvers.trace import Recorder
from faceoff.solvers.vocabulary import get_loss

_LOSSES = {"logistic": "log", "smooth_hinge": "smooth_hinge", "squared": "squared"}
CALLS_PER_PASS = 100  # SDCA and CD: callbacks per pass over the samples / features


def _fit(
    problem: Problem,
    recorder: Recorder,
    make: Callable[[int, Progress], Any],
    progress: Progress,
    kind: str = "rows",
) -> str:
    """Fit ``make(max_iter, callback)`` once, the callback recording the trace."""
    recorder.pause()  # the layout is made once per matrix, outside the clock
    A = layout(problem.data, kind)
    recorder.resume()
    if progress.start(problem.n_features) is not None:
        return progress.reason  # type: ignore[return-value]
    max_iter = math.ceil(recorder.stop.max_epochs) + 1
    estimator = make(max_iter, progress)
    try:
        estimator.fit(A, problem.b)
    except StopFit:  # a stop rule fired: its point is recorded
        pass
    return progress.finish(estimator)


def _scaled(estimator: Any) -> np.ndarray:
    """w = coef_ · coef_scale_ (SAGA and SVRG keep a lazy scale)."""
    return np.asarray(estimator.coef_[0] * estimator.coef_scale_[0], dtype=np.float64)


def _options(problem: Problem, max_iter: int, callback: Progress, seed: int) -> dict[str, Any]:
    """What every estimator here takes: budget, tolerance, callback, seed and the loss
    (``gamma`` for the smoothed hinge)."""
    options: dict[str, Any] = dict(
        max_iter=max_iter, tol=PEER_TOL, callback=callback, random_state=seed
    )
    options["loss"] = _LOSSES[problem.loss.name]
    if problem.loss.name == "smooth_hinge":
        options["gamma"] = problem.loss.gamma
    return options


def sdca(problem: Problem, params: NoParams, recorder: Recorder, seed: int) -> str:
    """SDCAClassifier / SDCARegressor with a callback every n/CALLS_PER_PASS samples."""
    # an optional peer library, imported only when this peer runs
    from lightning.classification import SDCAClassifier
    from lightning.regression import SDCARegressor

    n = problem.n_samples
    n_calls = max(1, n // CALLS_PER_PASS)
    l1, l2 = problem.penalty.l1, problem.penalty.l2
    cls = SDCARegressor if problem.loss.name == "squared" else SDCAClassifier
    progress = Progress(recorder, lambda e: e.coef_[0].copy(), lambda c: (c * n_calls + 1) / n)

    def make(max_iter: int, callback: Progress) -> Any:
        options = _options(problem, max_iter, callback, seed)
        return cls(alpha=l1 + l2, l1_ratio=l1 / (l1 + l2), n_calls=n_calls, **options)

    return _fit(problem, recorder, make, progress)


def cd(problem: Problem, params: NoParams, recorder: Recorder, seed: int) -> str:
    """CDClassifier / CDRegressor with a callback every d/CALLS_PER_PASS updates."""
    # as in sdca
    from lightning.classification import CDClassifier
    from lightning.regression import CDRegressor

    n, d = problem.n_samples, problem.n_features
    n_calls = max(1, d // CALLS_PER_PASS)
    progress = Progress(recorder, lambda e: e.coef_[0].copy(), lambda c: (c * n_calls + 1) / d)

    squared = problem.loss.name == "squared"
    cls = CDRegressor if squared else CDClassifier

    def make(max_iter: int, callback: Progress) -> Any:
        options = _options(problem, max_iter, callback, seed)
        options.pop("gamma", None)  # γ = 1: the catalogue's loss_params
        C = 1.0 / (2 * n if squared else n)
        # lightning 0.6.2's _primal_cd (lightning/impl/primal_cd_fast.pyx) declares
        # `cdef double violation` without a value (line 1251), and solve_l2 returns without
        # setting it when |Dp/Dpp| <= 1e-12 (line 68): an empty column (80% of rcv1's) or one
        # whose gradient cancels at w = 0. If the first pass starts on such columns, it adds
        # whatever the C stack held (line 1344), and with termination="violation_sum" that sum
        # becomes the reference of the relative test (line 1360, test at 1377). Garbage of
        # ±1e300 or inf left by earlier calls in the process ended fits after one or two
        # passes (rcv1, logistic: P − P* = 4.7e-2·P*, measured). violation_max starts at 0,
        # so a negative value is dropped and a positive one only delays the test; a reference
        # given in violation_init_ (primal_cd.py passes it as vinit; computed only when 0)
        # keeps the garbage out of it. Its test is then max_j |∂P/∂w_j| ≤ PEER_TOL (C·L +
        # α/2‖w‖² is P here): our stop rules decide.
        estimator = cls(
            penalty="l2",
            C=C,
            alpha=problem.penalty.l2,
            n_calls=n_calls,
            termination="violation_max",
            **options,
        )
        estimator.violation_init_ = {0: 1.0}
        return estimator

    return _fit(problem, recorder, make, progress, kind="columns")


def saga(problem: Problem, params: NoParams, recorder: Recorder, seed: int) -> str:
    """SAGAClassifier (logistic, smoothed hinge), a callback after each pass."""
    # as in sdca
    from lightning.classification import SAGAClassifier

    progress = Progress(recorder, _scaled, lambda c: float(c + 1))
    l1 = problem.penalty.l1

    def make(max_iter: int, callback: Progress) -> Any:
        penalty = "l1" if l1 > 0 else None
        options = _options(problem, max_iter, callback, seed)
        return SAGAClassifier(
            eta="auto", alpha=problem.penalty.l2, beta=l1, penalty=penalty, **options
        )

    return _fit(problem, recorder, make, progress)


def svrg(problem: Problem, params: SvrgParams, recorder: Recorder, seed: int) -> str:
    """SVRGClassifier / SVRGRegressor, a callback after each outer iteration (a full
    gradient and n inner steps: two passes)."""
    # as in sdca
    from lightning.classification import SVRGClassifier
    from lightning.regression import SVRGRegressor

    cls = SVRGRegressor if problem.loss.name == "squared" else SVRGClassifier
    beta = get_loss(problem.loss.name).smoothness(problem.loss.gamma)
    lmax = beta * float(np.max(problem.data.row_sq_norms)) + problem.penalty.l2
    progress = Progress(recorder, _scaled, lambda c: 2.0 * (c + 1))

    def make(max_iter: int, callback: Progress) -> Any:
        options = _options(problem, max(1, max_iter // 2), callback, seed)
        return cls(eta=params.step_scale / lmax, alpha=problem.penalty.l2, **options)

    return _fit(problem, recorder, make, progress)
