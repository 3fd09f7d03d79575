"""L-BFGS-B (scipy) on the smooth objective, as the quasi-Newton baseline of SPDC §7.

P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l2/2‖x‖² is minimized by ``scipy.optimize.minimize(method=
"L-BFGS-B")`` with ``maxcor = memory`` and its own tolerances switched off (ftol = gtol = 0),
so that our stop rules decide. An l1 term is handled by the usual bound-constrained
reformulation: x = x⁺ − x⁻ with x± ≥ 0 and l1·Σ(x⁺ + x⁻). An intercept c is one more
variable, unbounded and unpenalized, last: ∂P/∂c = 1/n Σᵢ φ'(aᵢᵀx + c).

One evaluation of P and ∇P (A·x, then Aᵀ·φ'(Ax)) is one pass over the data. Trace points
are taken in the iteration callback, at every iteration up to 10 and then on a geometric
grid of 30 points per decade; a point at the objective's last evaluation reuses its Ax and
Aᵀφ'(Ax) (``Recorder.checkpoint``). ``max_epochs`` is checked at every iteration, the time budget
and ``should_stop()`` at most every 0.25 s (a trace point is then taken to stop on), also
inside a line search: one whose evaluations overrun the budget ends the run at the last
accepted iterate.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import minimize

from faceoff.solvers.algorithms.lbfgs import Params
from faceoff.solvers.problem import Problem
from faceoff.solvers.trace import FINISHED, Recorder

_POINTS_PER_DECADE = 30
_EVERY_ITERATION_UP_TO = 10
_CHECK_SECONDS = 0.25  # how often the callback asks Recorder.interrupted()


class _Interrupted(Exception):
    """Raised from an evaluation once Recorder.interrupted() gives a reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Objective:
    """P and ∇P in the variables L-BFGS-B sees (x, or (x⁺, x⁻) when l1 > 0; vec(X) of a
    K-class problem's X; then the intercept c, if any); counts passes."""

    def __init__(self, problem: Problem, recorder: Recorder) -> None:
        self.problem = problem
        self.recorder = recorder
        self.checked = time.perf_counter()  # last call of Recorder.interrupted()
        self.shape = problem.coef_shape
        self.intercept = int(problem.intercept)  # one more variable, c, last
        self.d = int(np.prod(self.shape)) - self.intercept  # the penalized ones
        self.split = problem.penalty.l1 > 0
        self.deriv = np.empty(problem.dual_shape)
        self.work = np.empty((3, self.deriv.size))  # the loss sums' scratch
        self.passes = 0
        # (w, Ax, Aᵀφ'(Ax)) of the last evaluation: a trace point at that w needs no product
        self.last: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def size(self) -> int:
        return (2 * self.d if self.split else self.d) + self.intercept

    def bounds(self) -> list | None:
        """x± ≥ 0 for the split, c free."""
        if not self.split:
            return None
        return [(0.0, None)] * (2 * self.d) + [(None, None)] * self.intercept

    def variables(self, x: np.ndarray) -> np.ndarray:
        """The variables of x (the inverse of :meth:`primal`): x⁺ = max(x, 0) and
        x⁻ = max(−x, 0) for the split, then c."""
        flat = np.asarray(x, dtype=np.float64).reshape(-1)
        weights, rest = flat[: self.d], flat[self.d :]
        if self.split:
            weights = np.concatenate([np.maximum(weights, 0.0), np.maximum(-weights, 0.0)])
        return np.concatenate([weights, rest])

    def primal(self, w: np.ndarray) -> np.ndarray:
        """x (X of a K-class problem; (x, c) with an intercept) from the variables."""
        x = w[: self.d] - w[self.d : 2 * self.d] if self.split else w[: self.d]
        if self.intercept:
            x = np.append(x, w[-1])
        return x.reshape(self.shape)

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        now = time.perf_counter()
        if now - self.checked >= _CHECK_SECONDS:  # a long line search stops in time too
            self.checked = now
            if (reason := self.recorder.interrupted()) is not None:
                raise _Interrupted(reason)
        problem = self.problem
        n = problem.n_samples
        l1, l2 = problem.penalty.l1, problem.penalty.l2
        x = self.primal(w)
        weights = problem.weights(x)
        Ax = problem.margins(x)
        # P = 1/n Σ φ(Ax) + l2/2‖x‖², ∇ = Aᵀφ'(Ax)/n + l2·x: φ and φ' together
        losses = problem.loss_sum_derivs(Ax, self.deriv, self.work)
        ATd = problem.data.rmatvec(self.deriv)
        self.last = (np.array(w, copy=True), Ax, ATd)
        grad = (ATd / n + l2 * weights).reshape(-1)
        flat = weights.reshape(-1)
        value = losses / n + 0.5 * l2 * float(flat @ flat)
        self.passes += 1
        parts = [grad + l1, l1 - grad] if self.split else [grad]
        if self.intercept:
            parts.append(np.array([self.deriv.sum() / n]))
        if self.split:
            value += l1 * float(w[: 2 * self.d].sum())
        return value, np.concatenate(parts) if len(parts) > 1 else grad


class _Trace:
    """Trace points from L-BFGS-B's iteration callback; raises StopIteration on a stop rule."""

    def __init__(self, objective: _Objective, recorder: Recorder) -> None:
        self.objective = objective
        self.recorder = recorder
        self.ratio = 10.0 ** (1.0 / _POINTS_PER_DECADE)
        self.iteration = 0
        self.next_point = 1.0  # iteration of the next trace point
        self.recorded = -1  # iteration of the last trace point
        self.accepted: np.ndarray | None = None  # the last iterate L-BFGS-B accepted

    def record(self, w: np.ndarray) -> str | None:
        self.recorded = self.iteration
        x = self.objective.primal(w)
        epoch = float(self.objective.passes)
        last = self.objective.last
        if last is not None and np.array_equal(last[0], w):  # the line search's last point
            return self.recorder.checkpoint(self.iteration, epoch, x=x, Ax=last[1], ATy=last[2])
        return self.recorder.checkpoint(self.iteration, epoch, x=x)

    def __call__(self, intermediate_result) -> None:
        self.iteration += 1
        self.accepted = np.array(intermediate_result.x, copy=True)
        passes = self.objective.passes
        due = (
            self.iteration >= self.next_point and not self.recorder.quiet(passes)
        ) or passes >= self.recorder.stop.max_epochs
        now = time.perf_counter()
        if not due and now - self.objective.checked >= _CHECK_SECONDS:
            self.objective.checked = now
            due = self.recorder.interrupted() is not None
        if not due:
            return
        self.next_point = self.iteration + 1.0
        if self.iteration >= _EVERY_ITERATION_UP_TO:
            self.next_point = max(self.next_point, self.iteration * self.ratio)
        if self.record(intermediate_result.x) is not None:
            raise StopIteration


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    objective = _Objective(problem, recorder)
    trace = _Trace(objective, recorder)
    w0 = np.zeros(objective.size())
    if recorder.warm_start is not None:  # a path's previous solution
        w0 = objective.variables(recorder.warm_start)
    if (reason := trace.record(w0)) is not None:  # the first checkpoint starts the clock
        return reason
    bounds = objective.bounds()
    options = {
        "maxcor": params.memory,
        "ftol": 0.0,
        "gtol": 0.0,
        "maxiter": 2**31 - 1,
        "maxfun": 2**31 - 1,
    }
    # the callback takes ``intermediate_result``: scipy then stops on StopIteration
    try:
        result = minimize(
            objective,
            w0,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            callback=trace,
            options=options,
        )
    except _Interrupted as stop:  # in a line search: the run ends where it last stood
        if trace.recorded == trace.iteration:  # that iterate is the last trace point
            return recorder.end(stop.reason)
        at = w0 if trace.accepted is None else trace.accepted
        x = objective.primal(at)
        return (
            recorder.checkpoint(
                trace.iteration, float(objective.passes), x=x, final_reason=stop.reason
            )
            or stop.reason
        )
    if recorder.stop_reason is not None:  # a stop rule ended it through the callback
        return recorder.stop_reason
    # L-BFGS-B ended by itself (no further progress possible): record where it ended unless
    # that point is recorded, and keep a stop rule's reason (e.g. converged) if one holds there
    reason = trace.record(result.x) if trace.recorded != trace.iteration else None
    if reason is None:
        recorder.pause()
        recorder.stop_reason = reason = FINISHED
    return reason
