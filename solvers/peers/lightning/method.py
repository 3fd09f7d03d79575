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

K-class problems, **one-vs-rest** only: P(X) = Σₖ [1/n Σᵢ φ(aᵢᵀxₖ, bᵢₖ) + g(xₖ)] is K binary
problems of the form above (bᵢₖ = ±1), and lightning's estimators with ``multiclass=False``
(their default) fit exactly those: a classifier binarizes the class indices 0..K−1
(``LabelBinarizer(neg_label=-1)``, so ``coef_``'s rows are the classes in our order; two
classes make one row, class 1 against class 0, mapped back by ``refit.class_columns``), a
regressor fits the K columns of ``Problem.signs``; the weights map as above, class by class.
lightning fits the classes **one after another** (sdca.py, primal_cd.py, sag.py, svrg.py:
``for i in range(n_vectors)``), each to its own end, so a trace point holds the finished
classes, the one in progress and zeros; a trace epoch is a pass over A for every row of
``coef_``. A class ends when its own gap (through our Problem, on its column) is at most
``tol/K``: the first K − 1 gaps then leave the last class a share of our ``tol``, and the
run ends by our stop rules as a binary one does. CD, SAGA and SVRG end a class when their
callback returns a value (:class:`_OneVsRest` checks once a pass); SDCA's return value only
ends its epoch, so SDCA ends a class by its own test, its gap estimate of the epoch at most
its ``tol`` = our tol/K (sdca_fast.pyx). Each class's budget is ``max_iter``, so the classes
together have the run's ``max_epochs``.

No **multinomial** form: lightning's direct multiclass objectives (``multiclass=True``) are
Crammer–Singer-type ones — CD's multiclass squared hinge or log loss with the group penalty
l1/l2 only (primal_cd.py refuses them with another penalty); SDCA, SAGA and SVRG have none —
not the softmax cross-entropy with an l2 or elastic-net penalty.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from faceoff.solvers.peers.lightning import SvrgParams
from faceoff.solvers.peers.refit import (
    PEER_TOL,
    Fit,
    Progress,
    class_columns,
    layout,
    timed_fit,
    traced_fit,
)
from faceoff.solvers.problem import Problem
from faceoff.solvers.spec import NoParams
from faceoff.solvers.trace import Recorder
from faceoff.solvers.vocabulary import get_loss

_LOSSES = {"logistic": "log", "smooth_hinge": "smooth_hinge", "squared": "squared"}
CALLS_PER_PASS = 100  # SDCA and CD: callbacks per pass over the samples / features


class _Peer(NamedTuple):
    """A lightning estimator for a problem: ``make(max_iter, callback)`` (callback None:
    untraced), the ``progress(recorder)`` that traces it and the layout it reads."""

    make: Callable[[int, Any], Any]
    progress: Callable[[Recorder], Progress]
    kind: str = "rows"


def _fit(problem: Problem, recorder: Recorder, peer: _Peer) -> str:
    """Fit ``peer.make(max_iter, callback)`` once, the callback recording the trace, its
    points timed by an untraced replay of the same fit (``refit.traced_fit``)."""
    recorder.pause()  # the layout is made once per matrix, outside the clock
    A = layout(problem.data, peer.kind)
    recorder.resume()
    progress = peer.progress(recorder)
    if progress.start(problem.coef_shape) is not None:
        return progress.reason  # type: ignore[return-value]
    max_iter = math.ceil(recorder.stop.max_epochs) + 1

    def build(callback: Progress) -> Any:
        return peer.make(max_iter, callback)

    return traced_fit(progress, build, A, _targets(problem))


def untraced_fitter(
    name: str, problem: Problem, params: Any, seed: int = 0, tol: float = 0.0
) -> Callable[[int], Fit]:
    """``fit(max_iter) -> Fit`` of the peer ``name`` (``"sdca"``, ``"cd"``, ``"saga"``,
    ``"svrg"``) without a callback, timed as a refit peer's fit (``refit.timed_fit``): what
    its traced clock is checked against (``solvers.run.budget_fitter``). ``tol``: the
    run's, which a one-vs-rest SDCA fit divides among its classes."""
    peer = _PEERS[name](problem, params, seed, tol)
    A, b = layout(problem.data, peer.kind), _targets(problem)
    iterate = _iterate(problem)

    def fit(max_iter: int) -> Fit:
        estimator = peer.make(max_iter, None)
        seconds = timed_fit(estimator, A, b)
        return Fit(seconds, iterate(estimator), max_iter, False)

    return fit


def _targets(problem: Problem) -> np.ndarray:
    """b; on a K-class problem the class indices for a classifier, the one-vs-rest targets
    ``Problem.signs`` (shape (n, K)) for a regressor (the squared loss)."""
    if problem.multiclass is not None and problem.loss.name == "squared":
        return problem.signs
    return problem.b


def _vectors(problem: Problem) -> int:
    """The rows of lightning's ``coef_``: 1 for a binary problem and a two-class classifier,
    K for a regressor's K targets or a classifier's K ≥ 3 classes."""
    if problem.multiclass is None:
        return 1
    K = problem.n_classes
    return K if K > 2 or problem.loss.name == "squared" else 1


def _rows(estimator: Any) -> np.ndarray:
    """``coef_`` · ``coef_scale_`` (SAGA and SVRG keep a lazy scale a row), a copy."""
    W = np.array(estimator.coef_, dtype=np.float64)
    scale = getattr(estimator, "coef_scale_", None)
    return W if scale is None else W * np.asarray(scale)[:, None]


def _iterate(problem: Problem) -> Callable[[Any], np.ndarray]:
    """x, or X of shape (d, K), from the estimator during or after its fit."""
    if problem.multiclass is None:
        return lambda estimator: _rows(estimator)[0]
    return lambda estimator: class_columns(problem, _rows(estimator))


class _OneVsRest(Progress):
    """:class:`Progress` that also ends lightning's class in progress, by returning a value,
    once that class's gap is at most ``tol/K`` (checked every ``check_every`` calls). Row k
    of ``coef_`` is the binary problem of ``Problem.signs[:, k]``; the last row (the only
    one of a two-class classifier) is ended by the run's own stop rules."""

    def __init__(
        self,
        recorder: Recorder,
        problem: Problem,
        epoch: Callable[[int], float],
        check_every: int = 1,
    ) -> None:
        super().__init__(recorder, _iterate(problem), epoch)
        self.problem, self.check_every = problem, check_every
        self.n_vectors = _vectors(problem)
        self.share = recorder.stop.tol / problem.n_classes
        self.current = 0  # the row lightning fits now
        self.binary: dict[int, Problem] = {}

    def answer(self, estimator: Any) -> bool | None:
        if self.calls % self.check_every or self.current + 1 >= self.n_vectors:
            return None
        self.recorder.pause()
        done = self._class_done(_rows(estimator))
        self.recorder.resume()
        return True if done else None

    def _class_done(self, W: np.ndarray) -> bool:
        """Whether the row in progress is within its share (then the next one is)."""
        while self.current + 1 < self.n_vectors and np.any(W[self.current + 1]):
            self.current += 1  # lightning ended the row by its own test or budget
        k = self.current
        if k + 1 >= self.n_vectors:
            return False
        if k not in self.binary:
            b = np.ascontiguousarray(self.problem.signs[:, k])
            self.binary[k] = Problem(self.problem.data, b, self.problem.loss, self.problem.penalty)
        if self.binary[k].evaluate(W[k]).gap > self.share:
            return False
        self.current += 1
        return True


def _progress(
    problem: Problem,
    recorder: Recorder,
    passes: Callable[[int], float],
    check_every: int = 1,
    ends_classes: bool = True,
) -> Progress:
    """The callback of a fit; ``passes(calls)``: passes over A of one row of ``coef_`` at
    the ``calls``-th call (a trace epoch is one pass for every row). A one-vs-rest fit
    whose library ends a class on a return value gets :class:`_OneVsRest`."""
    vectors = _vectors(problem)
    epoch = passes if vectors == 1 else (lambda c: passes(c) / vectors)
    if problem.multiclass is None or not ends_classes:
        return Progress(recorder, _iterate(problem), epoch)
    return _OneVsRest(recorder, problem, epoch, check_every)


def _options(problem: Problem, max_iter: int, callback: Any, seed: int) -> dict[str, Any]:
    """What every estimator here takes: budget, tolerance, callback, seed and the loss
    (``gamma`` for the smoothed hinge)."""
    options: dict[str, Any] = dict(
        max_iter=max_iter, tol=PEER_TOL, callback=callback, random_state=seed
    )
    options["loss"] = _LOSSES[problem.loss.name]
    if problem.loss.name == "smooth_hinge":
        options["gamma"] = problem.loss.gamma
    return options


def _sdca(problem: Problem, params: NoParams, seed: int, tol: float) -> _Peer:
    """SDCAClassifier / SDCARegressor with a callback every n/CALLS_PER_PASS samples."""
    # an optional peer library, imported only when this peer runs
    from lightning.classification import SDCAClassifier
    from lightning.regression import SDCARegressor

    n = problem.n_samples
    n_calls = max(1, n // CALLS_PER_PASS)
    l1, l2 = problem.penalty.l1, problem.penalty.l2
    cls = SDCARegressor if problem.loss.name == "squared" else SDCAClassifier

    def make(max_iter: int, callback: Any) -> Any:
        options = _options(problem, max_iter, callback, seed)
        if _vectors(problem) > 1:
            options["tol"] = tol / problem.n_classes
        return cls(alpha=l1 + l2, l1_ratio=l1 / (l1 + l2), n_calls=n_calls, **options)

    def progress(recorder: Recorder) -> Progress:
        # its return value only ends an epoch: it ends a one-vs-rest class by its own test
        return _progress(problem, recorder, lambda c: (c * n_calls + 1) / n, ends_classes=False)

    return _Peer(make, progress)


def _cd(problem: Problem, params: NoParams, seed: int, tol: float) -> _Peer:
    """CDClassifier / CDRegressor with a callback every d/CALLS_PER_PASS updates."""
    # as in _sdca
    from lightning.classification import CDClassifier
    from lightning.regression import CDRegressor

    n, d = problem.n_samples, problem.n_features
    n_calls = max(1, d // CALLS_PER_PASS)
    squared = problem.loss.name == "squared"
    cls = CDRegressor if squared else CDClassifier

    def make(max_iter: int, callback: Any) -> Any:
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
        # given in violation_init_ (primal_cd.py passes it as vinit, one a row of coef_;
        # computed only when 0) keeps the garbage out of it. Its test is then
        # max_j |∂P/∂w_j| ≤ PEER_TOL (C·L + α/2‖w‖² is P here): our stop rules decide.
        estimator = cls(
            penalty="l2",
            C=C,
            alpha=problem.penalty.l2,
            n_calls=n_calls,
            termination="violation_max",
            **options,
        )
        estimator.violation_init_ = dict.fromkeys(range(_vectors(problem)), 1.0)
        return estimator

    def progress(recorder: Recorder) -> Progress:
        return _progress(problem, recorder, lambda c: (c * n_calls + 1) / d, CALLS_PER_PASS)

    return _Peer(make, progress, "columns")


def _saga(problem: Problem, params: NoParams, seed: int, tol: float) -> _Peer:
    """SAGAClassifier (logistic, smoothed hinge), a callback after each pass."""
    # as in _sdca
    from lightning.classification import SAGAClassifier

    l1 = problem.penalty.l1

    def make(max_iter: int, callback: Any) -> Any:
        penalty = "l1" if l1 > 0 else None
        options = _options(problem, max_iter, callback, seed)
        return SAGAClassifier(
            eta="auto", alpha=problem.penalty.l2, beta=l1, penalty=penalty, **options
        )

    return _Peer(make, lambda recorder: _progress(problem, recorder, lambda c: float(c + 1)))


def _svrg(problem: Problem, params: SvrgParams, seed: int, tol: float) -> _Peer:
    """SVRGClassifier / SVRGRegressor, a callback after each outer iteration (a full
    gradient and n inner steps: two passes)."""
    # as in _sdca
    from lightning.classification import SVRGClassifier
    from lightning.regression import SVRGRegressor

    cls = SVRGRegressor if problem.loss.name == "squared" else SVRGClassifier
    beta = get_loss(problem.loss.name).smoothness(problem.loss.gamma)
    lmax = beta * float(np.max(problem.data.row_sq_norms)) + problem.penalty.l2

    def make(max_iter: int, callback: Any) -> Any:
        options = _options(problem, max(1, max_iter // 2), callback, seed)
        return cls(eta=params.step_scale / lmax, alpha=problem.penalty.l2, **options)

    return _Peer(make, lambda recorder: _progress(problem, recorder, lambda c: 2.0 * (c + 1)))


_PEERS: dict[str, Callable[[Problem, Any, int, float], _Peer]] = {
    "sdca": _sdca,
    "cd": _cd,
    "saga": _saga,
    "svrg": _svrg,
}


def sdca(problem: Problem, params: NoParams, recorder: Recorder, seed: int) -> str:
    """SDCAClassifier / SDCARegressor with a callback every n/CALLS_PER_PASS samples."""
    return _fit(problem, recorder, _sdca(problem, params, seed, recorder.stop.tol))


def cd(problem: Problem, params: NoParams, recorder: Recorder, seed: int) -> str:
    """CDClassifier / CDRegressor with a callback every d/CALLS_PER_PASS updates."""
    return _fit(problem, recorder, _cd(problem, params, seed, recorder.stop.tol))


def saga(problem: Problem, params: NoParams, recorder: Recorder, seed: int) -> str:
    """SAGAClassifier (logistic, smoothed hinge), a callback after each pass."""
    return _fit(problem, recorder, _saga(problem, params, seed, recorder.stop.tol))


def svrg(problem: Problem, params: SvrgParams, recorder: Recorder, seed: int) -> str:
    """SVRGClassifier / SVRGRegressor, a callback after each outer iteration (a full
    gradient and n inner steps: two passes)."""
    return _fit(problem, recorder, _svrg(problem, params, seed, recorder.stop.tol))
