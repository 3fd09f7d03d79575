"""Traces of peer solvers: the library's callback, or refits with growing budgets.

**Callback** (``trace_mode="callback"``): the library calls :class:`Progress` during its fit.
The solver clock is stopped for the whole call; a point is recorded on the geometric epoch
grid of ``solvers.driver.run_chunked`` (``points_per_decade`` a decade from
``first_epoch``), every point certified through our Problem, and the stop rules are
applied; a stop makes the callback ask the library to stop.

**Refit** (``trace_mode="refit"``, a library that reports no progress): :func:`refit` fits from
scratch with max_iter = 1, 2, 4, … (× ``REFIT_RATIO``), a fixed ``random_state`` and the
tolerance ``PEER_TOL``, so small that the budget decides. One trace point per fit; its
``time_s`` is that fit's own wall time (garbage collector off and warnings silenced, as in
``timeit``: it collects once before the run's first fit, not before each; the input already
in the peer's layout, made once per matrix by :func:`layout`), so times along such a trace
are not cumulative. A fit shorter than ``REPEAT_BELOW_S`` is repeated (``REPEATS`` in all,
same seed, same iterate) and its fastest time kept, and a point's time is at least the
previous point's: a larger budget runs through the smaller one's iterations, so a smaller
time is timer noise (the fit's own time is kept in the extras as ``fit_s``).
``max_seconds`` bounds the sum of the fits: a fit whose predicted time (the last one's,
scaled by the budget) would pass it is not started. Cancellation is checked between fits (a
fit runs to its end). The run stops when the gap is within ``tol``, at ``max_epochs``, or
once the budget stops changing the iterate (the peer stopped short of it, or returned the
same coefficients).
"""

from __future__ import annotations

import gc
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any
from weakref import WeakKeyDictionary

import numpy as np
import scipy.sparse as sp

from faceoff.solvers.problem import Data, Problem
from faceoff.solvers.trace import FINISHED, MAX_EPOCHS, MAX_SECONDS, Recorder

PEER_TOL = 1e-15  # the tolerance handed to a refitted peer: its budget decides when it stops
REFIT_RATIO = 2.0  # budgets grow by this factor (at least by one iteration)
MAX_BUDGET = 10**7
REPEAT_BELOW_S = 0.02  # a fit shorter than this is timed REPEATS times, the fastest kept
REPEATS = 3

_LAYOUTS: WeakKeyDictionary[Data, dict[str, Any]] = WeakKeyDictionary()


def layout(data: Data, kind: str) -> Any:
    """A in the layout a peer reads without converting: ``"rows"`` (CSR with int32 indices,
    or a C-ordered array for dense data) or ``"columns"`` (CSC, or Fortran-ordered). Made
    once per matrix and kept while the matrix lives."""
    cached = _LAYOUTS.setdefault(data, {})
    if kind not in cached:
        if kind not in ("rows", "columns"):
            raise ValueError(f"layout must be 'rows' or 'columns', got {kind!r}")
        if not data.is_sparse:
            dense = data.csr_matrix.toarray()
            cached[kind] = dense if kind == "rows" else np.asfortranarray(dense)
        else:
            mat = data.csr_matrix if kind == "rows" else data.csc_matrix
            cls = sp.csr_matrix if kind == "rows" else sp.csc_matrix
            cached[kind] = cls(
                (mat.data, mat.indices.astype(np.int32), mat.indptr.astype(np.int32)),
                shape=mat.shape,
            )
    return cached[kind]


def timed_fit(estimator: Any, A: Any, b: np.ndarray) -> float:
    """Wall seconds of ``estimator.fit(A, b)``, garbage collector off, warnings silenced
    (a budgeted fit warns that it did not converge). The caller collects garbage first: a
    collection costs ~0.1 s in a worker process, more than most small fits."""
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            started = time.perf_counter()
            estimator.fit(A, b)
            return time.perf_counter() - started
    finally:
        gc.enable()


@dataclass
class Fit:
    """One fit from scratch: its wall ``seconds``, coefficients ``x``, the iterations the
    peer reports (``n_iter``) and whether it stopped before its budget (``ended``)."""

    seconds: float
    x: np.ndarray
    n_iter: int
    ended: bool


def refit(
    problem: Problem,
    recorder: Recorder,
    fit: Callable[[int], Fit],
    passes: float = 1.0,
    max_budget: int = MAX_BUDGET,
) -> str:
    """Trace a peer by fits from scratch with budgets 1, 2, 4, …; returns the stop reason.

    Parameters
    ----------
    fit : callable
        ``fit(k)`` fits with budget k (max_iter) and returns a :class:`Fit`.
    passes : float
        Passes over the data one unit of budget makes (the trace's epochs are
        ``n_iter · passes``).
    """
    stop = recorder.stop
    cap = max(1, min(max_budget, math.floor(stop.max_epochs / passes * (1 + 1e-12))))
    reason = recorder.record_fit(
        0, 0.0, np.zeros(problem.coef_shape), 0.0, {"max_iter": 0, "wall_s": 0.0}
    )
    budget, last, previous, shown = 1, None, None, 0.0
    gc.collect()
    while reason is None:
        if last is not None and recorder.solver_time + last.seconds * budget / max(
            last.n_iter, 1
        ) > stop.max_seconds * (1 + 1e-12):
            return recorder.end(MAX_SECONDS)
        interrupted = recorder.interrupted()
        if interrupted is not None:
            return recorder.end(interrupted)
        result = fit(budget)
        if result.seconds < REPEAT_BELOW_S:
            fastest = min([result.seconds] + [fit(budget).seconds for _ in range(REPEATS - 1)])
            result = replace(result, seconds=fastest)
        shown = max(shown, result.seconds)
        extras = {"max_iter": budget, "fit_s": result.seconds, "wall_s": recorder.wall_seconds()}
        reason = recorder.record_fit(
            result.n_iter, result.n_iter * passes, result.x, result.seconds, extras, shown
        )
        if reason is not None:
            break
        if result.ended or (previous is not None and np.array_equal(result.x, previous)):
            return recorder.end(FINISHED)
        if budget >= cap:
            return recorder.end(MAX_EPOCHS)
        last, previous = result, result.x
        budget = min(cap, max(budget + 1, round(budget * REFIT_RATIO)))
    return reason


def class_columns(problem: Problem, coef: Any) -> np.ndarray:
    """X of shape ``problem.coef_shape`` from a library's ``coef_`` (one row a class, in
    the order of the class indices 0..K−1): its transpose, C-ordered. A two-class fit gives
    one row w, for class 1 against class 0: one-vs-rest then has X = [−w, w] (bᵢ₀ = −bᵢ₁ and
    each loss is even in (z, b)), and a multinomial fit made as the binary problem of
    :func:`binary_multinomial` has X = [−w/2, w/2]."""
    W = np.asarray(coef, dtype=np.float64).reshape(-1, problem.n_features)
    if problem.n_classes == 2 and W.shape[0] == 1:
        w = W[0] if problem.multiclass == "ovr" else W[0] / 2
        W = np.stack([-w, w])
    return np.ascontiguousarray(W.T)


def binary_multinomial(problem: Problem) -> bool:
    """Whether a library fits ``problem`` as its binary problem: a two-class multinomial one,
    which libraries solve as the logistic problem of w = x₁ − x₀. Its optimum has x₀ = −x₁
    (the objective is invariant under (x₀, x₁) → (−x₁, −x₀) and strictly convex), so
    l1(‖x₀‖₁ + ‖x₁‖₁) + l2/2(‖x₀‖² + ‖x₁‖²) = l1‖w‖₁ + (l2/2)/2‖w‖²: the binary problem has
    weights **l1 and l2/2**, and X = [−w/2, w/2] (:func:`class_columns`)."""
    return problem.multiclass == "multinomial" and problem.n_classes == 2


class RefitPeer:
    """A peer traced by refits: its ``solve(problem, params, recorder, seed)``.

    ``fitter(problem, params, seed)`` (``params``: the peer's typed parameters) prepares
    what does not depend on the budget (the input's layout, the weight mapping) and returns
    ``fit(budget) -> Fit``; the benchmarks call it directly to time one budget
    (``solvers.run.budget_fitter``).
    """

    def __init__(
        self, fitter: Callable[[Problem, Any, int], Callable[[int], Fit]], passes: float = 1.0
    ) -> None:
        self.fitter, self.passes = fitter, passes
        self.__doc__ = fitter.__doc__

    def __call__(self, problem: Problem, params: Any, recorder: Recorder, seed: int) -> str:
        return refit(problem, recorder, self.fitter(problem, params, seed), self.passes)


class StopFit(Exception):
    """Raised by :class:`Progress` to end a library's fit once a stop rule has fired."""


class Progress:
    """The callback a library calls during its fit (``callback(estimator)``).

    Once a stop rule fires it raises :class:`StopFit`, which the adapter catches around
    ``fit()``: a return value only ends lightning's SDCA's current epoch, so the fit
    went on calling back once an epoch until its ``max_iter``, minutes at a large epoch cap.

    Parameters
    ----------
    recorder : Recorder
        Its clock runs during the fit; it is stopped for the whole callback.
    iterate : callable
        ``iterate(estimator)``: the current coefficients x.
    epoch : callable
        ``epoch(calls)``: passes over the data done at the ``calls``-th call (from 0).
    """

    def __init__(
        self,
        recorder: Recorder,
        iterate: Callable[[Any], np.ndarray],
        epoch: Callable[[int], float],
        points_per_decade: int = 30,
        first_epoch: float = 0.01,
        check_seconds: float = 0.25,
    ) -> None:
        self.recorder, self.iterate, self.epoch = recorder, iterate, epoch
        self.ratio = 10.0 ** (1.0 / points_per_decade)
        self.next_epoch = first_epoch
        self.check_seconds = check_seconds
        self.checked = 0.0
        self.calls = 0
        self.reason: str | None = None

    def start(self, shape: tuple[int, ...]) -> str | None:
        """Record the starting point x = 0 of ``shape`` (before the fit)."""
        self.reason = self.recorder.checkpoint(0, 0.0, x=np.zeros(shape))
        return self.reason

    def __call__(self, estimator: Any) -> bool | None:
        """Record a point when one is due; raise :class:`StopFit` once a stop rule fires.
        None: the library goes on (a subclass may return a value to end what the library
        does now, e.g. one class of lightning's one-vs-rest fit)."""
        if self.reason is not None:
            raise StopFit
        recorder = self.recorder
        recorder.pause()
        epoch = self.epoch(self.calls)
        self.calls += 1
        forced = None
        if recorder.solver_time - self.checked >= self.check_seconds:
            self.checked = recorder.solver_time
            forced = recorder.interrupted()
        early = epoch < self.next_epoch or recorder.quiet(epoch)
        if forced is None and early and epoch < recorder.stop.max_epochs:
            recorder.resume()
            return None
        self.next_epoch = max(epoch, self.next_epoch) * self.ratio
        self.reason = recorder.checkpoint(
            self.calls, epoch, x=self.iterate(estimator), final_reason=forced
        )
        if self.reason is not None:
            raise StopFit
        return None

    def finish(self, estimator: Any) -> str:
        """The stop reason once the fit has returned: ours, or the final iterate recorded
        and FINISHED if the library ended by itself (its budget or its own test)."""
        if self.reason is not None:
            return self.reason
        epoch = self.epoch(self.calls)
        reason = self.recorder.checkpoint(self.calls, epoch, x=self.iterate(estimator))
        return reason or self.recorder.end(FINISHED)
