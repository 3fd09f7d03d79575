"""Traces of peer solvers: the library's callback, or refits with growing budgets.

**Callback** (``trace_mode="callback"``): the library calls :class:`Progress` during its fit.
The solver clock is stopped for the whole call; a point is recorded on the geometric epoch
grid of ``solvers.driver.run_chunked`` (``points_per_decade`` a decade from
``first_epoch``), every point certified through our Problem, and the stop rules are
applied; a stop makes the callback ask the library to stop. The points are held until an
untraced replay of the same fit has timed them (:func:`traced_fit`, :func:`replay`): the
stopped clock leaves out the evaluation, not what it costs the fit afterwards.

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
from faceoff.solvers.trace import CANCELLED, FINISHED, MAX_EPOCHS, MAX_SECONDS, Recorder

PEER_TOL = 1e-15  # the tolerance handed to a refitted peer: its budget decides when it stops
REFIT_RATIO = 2.0  # budgets grow by this factor (at least by one iteration)
MAX_BUDGET = 10**7
# A fit (or replay) shorter than this is timed REPEATS times, the fastest kept: a single
# timing of a fit of 0.05 s read up to 2.1× its best of 3 on the shared 2-core machine
# (cyanure, a9a with unit rows, squared loss: bench/results/peer_clock.md)
REPEAT_BELOW_S = 0.25
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
    It notes the call at which each point was recorded and what it answered each call, for
    :func:`replay`.

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
        self.marks: dict[int, int] = {}  # call → seq of the point recorded there
        self.answers: dict[int, Any] = {}  # call → what a subclass returned, when not None
        self.ended: int | None = None  # seq of the point recorded after the fit returned
        self.last_x: np.ndarray | None = None  # the last point's iterate

    def start(self, shape: tuple[int, ...]) -> str | None:
        """Record the starting point x = 0 of ``shape`` (before the fit)."""
        self.reason = self.recorder.checkpoint(0, 0.0, x=np.zeros(shape))
        return self.reason

    def __call__(self, estimator: Any) -> Any:
        """Record a point when one is due; raise :class:`StopFit` once a stop rule fires.
        Returns :meth:`answer`: None, the library goes on."""
        call = self.calls
        self._observe(estimator)
        answer = self.answer(estimator)
        if answer is not None:
            self.answers[call] = answer
        return answer

    def answer(self, estimator: Any) -> Any:
        """What the library is told after a call: None, go on (a subclass may return a
        value to end what the library does now, e.g. one class of lightning's one-vs-rest
        fit). Runs with the clock running; pause it for work that is not the peer's."""
        return None

    def _observe(self, estimator: Any) -> None:
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
            return
        self.next_epoch = max(epoch, self.next_epoch) * self.ratio
        self.last_x = self.iterate(estimator)
        self.reason = recorder.checkpoint(self.calls, epoch, x=self.last_x, final_reason=forced)
        self.marks[self.calls - 1] = len(recorder.points) - 1
        if self.reason is not None:
            raise StopFit

    def finish(self, estimator: Any) -> str:
        """The stop reason once the fit has returned: ours, or the final iterate recorded
        and FINISHED if the library ended by itself (its budget or its own test)."""
        if self.reason is not None:
            return self.reason
        epoch = self.epoch(self.calls)
        self.last_x = self.iterate(estimator)
        reason = self.recorder.checkpoint(self.calls, epoch, x=self.last_x)
        self.ended = len(self.recorder.points) - 1
        return reason or self.recorder.end(FINISHED)


# A replay may take this many times the traced fit's solver time (plus REPLAY_SLACK_S) before
# it is cut short; the points it has not reached keep their traced times.
REPLAY_FACTOR = 2.0
REPLAY_SLACK_S = 0.5


class _Replay:
    """The callback of an untraced replay of a traced fit: stamps the time at the calls
    where the traced fit recorded a point, answers every call as the traced fit did, and
    ends the fit at its last recorded call (or once past ``deadline``, or when ``cut()``)."""

    def __init__(self, progress: Progress, deadline: float, cut: Callable[[], bool]) -> None:
        self.marks, self.answers = progress.marks, progress.answers
        self.last = max(progress.marks) if progress.ended is None and progress.marks else -1
        self.expected, self.iterate = progress.last_x, progress.iterate
        self.deadline, self.cut = deadline, cut
        self.calls = 0
        self.stamps: dict[int, float] = {}
        self.same: bool | None = None  # whether the replay reached the traced fit's iterate

    def reached(self, estimator: Any) -> bool:
        """Whether the estimator holds the traced fit's last iterate, exactly."""
        return self.expected is not None and np.array_equal(self.iterate(estimator), self.expected)

    def __call__(self, estimator: Any) -> Any:
        now = time.perf_counter()
        call = self.calls
        self.calls = call + 1
        if call in self.marks:
            self.stamps[call] = now
            if call == self.last:
                self.same = self.reached(estimator)
                raise StopFit
        if now > self.deadline or (call & 63 == 0 and self.cut()):
            raise StopFit
        return self.answers.get(call)


def traced_fit(progress: Progress, build: Callable[[Any], Any], A: Any, b: np.ndarray) -> str:
    """Fit ``build(callback)`` (a fresh estimator, the same seed each call) on (A, b) once
    with ``progress`` as its callback, holding the points it records; then time them by
    :func:`replay` and release them. Returns the stop reason. A fit that raises releases
    its points as they are (traced clock) before the error goes on."""
    recorder = progress.recorder
    recorder.hold()
    set_up_s = recorder.elapsed()
    try:
        estimator = build(progress)
        try:
            estimator.fit(A, b)
        except StopFit:  # a stop rule fired: its point is recorded
            pass
        reason = progress.finish(estimator)
    except BaseException:  # the library failed: its points go on, on the traced clock
        recorder.release({})
        raise
    replay(progress, build, A, b, set_up_s)
    return reason


def replay(
    progress: Progress, build: Callable[[Any], Any], A: Any, b: np.ndarray, set_up_s: float
) -> None:
    """Retime a callback trace by replaying its fit untraced and release its points.

    A trace point's evaluation runs with the clock stopped, but the fit pays for it after
    the clock restarts (caches the evaluation evicted, the callback's own calls): lightning's
    SDCA on a9a with unit rows reached 1e-6 at 0.035–0.045 s on the traced clock, where its
    untraced fit took 0.023–0.030 s (measured for issue 41, which had 1.6–3.4×). Peers are
    deterministic for a seed, so ``build(callback)`` fitted from scratch passes through the
    same iterates: each held point gets the replay's time at the call where it was recorded
    (the set-up before the traced fit, ``set_up_s``, added), the point recorded after the
    fit returned the whole fit's time. A replay is trusted only if it
    reaches the traced fit's last iterate exactly; otherwise, or if it is cut short
    (``REPLAY_FACTOR``, a cancel), the points keep their traced times, marked
    ``"replayed": False``. A replay shorter than ``REPEAT_BELOW_S`` is repeated (``REPEATS``
    in all), each point's fastest time kept. Replays run outside the solver clock and the
    run's budget (:meth:`Recorder.off_clock`); a cancelled run is not replayed.
    """
    recorder = progress.recorder
    times: dict[int, float] = {}
    should_stop = recorder.stop.should_stop or (lambda: False)
    budget = REPLAY_FACTOR * recorder.solver_time + REPLAY_SLACK_S
    if recorder.stop_reason == CANCELLED or (not progress.marks and progress.ended is None):
        recorder.release(times)
        return
    gc.collect()
    with recorder.off_clock():
        for _ in range(REPEATS):
            began = time.perf_counter()
            callback = _Replay(progress, began + budget, should_stop)
            estimator = build(callback)
            gc.disable()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    estimator.fit(A, b)
            except StopFit:
                pass
            finally:
                gc.enable()
            ended = time.perf_counter()
            if progress.ended is not None:
                callback.same = callback.reached(estimator)
            if not callback.same:
                break
            run = {progress.marks[c]: set_up_s + s - began for c, s in callback.stamps.items()}
            if progress.ended is not None:
                run[progress.ended] = set_up_s + ended - began
            times = {seq: min(t, times.get(seq, math.inf)) for seq, t in run.items()}
            if ended - began >= REPEAT_BELOW_S:
                break
    recorder.release(times)
