"""Convergence traces with honest timing, and the stop rules.

The :class:`Recorder` owns the solver clock. A solver calls :meth:`Recorder.checkpoint`
between chunks of work; the clock is stopped on entry and restarted on exit, so the
evaluation of P, D, the gap and nnz(x) (and anything a ``on_point`` callback does, such as
writing to a database) never counts as solver time. JIT compilation happens in warm-up
before :meth:`Recorder.start`.

A peer that reports no progress is refitted from scratch with growing budgets
(``solvers.peers.refit``): each fit is timed by the peer adapter and recorded with
:meth:`Recorder.record_fit`, so a point's ``time_s`` is that fit's own wall time and the
stop rule on ``max_seconds`` applies to the sum of the fits. A peer traced through its
library's callback holds its points (:meth:`Recorder.hold`) until an untraced replay of the
same fit has timed them (:meth:`Recorder.release`): a stopped clock does not stop the cost a
trace point leaves behind (caches the evaluation evicted, the callback's own calls).
:meth:`Recorder.wall_seconds` is what the whole run cost, evaluation, refits and replays
included.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import numpy as np

from faceoff.solvers.evaluation import evaluate, passes
from faceoff.solvers.gap import relative_gap
from faceoff.solvers.problem import Objective, Problem

# A method's grid of trace points has a coarse sub-grid (solvers.driver: 10 points a decade
# of epochs), always evaluated; any other point of the grid only while the passes over the
# data that evaluation has taken, this point's included, stay within EVALUATION_SHARE of the
# epochs the method has run. Counted in passes, not seconds, so that which points a run
# records does not depend on the machine's load (runs are deterministic for a seed); an
# evaluation pass (sequential, on every core) costs well under an epoch of any method
# here, so the share of the time is smaller still (bench/README.md, "Sweep cost").
EVALUATION_SHARE = 0.5

CONVERGED = "converged"
MAX_EPOCHS = "max_epochs"
MAX_SECONDS = "max_seconds"
CANCELLED = "cancelled"
DIVERGED = "diverged"
FINISHED = "finished"  # the method itself ended (e.g. L-BFGS met its own tolerance)


@dataclass
class TracePoint:
    """One point of a convergence trace.

    ``epoch`` counts effective passes over the data: non-zeros of A visited / nnz(A), where
    one visit reads an entry and applies it (a coordinate step on row i visits row i once; a
    full gradient, A·x then Aᵀ·r, is one pass). ``time_s`` is solver time only.
    """

    seq: int
    iteration: int
    epoch: float
    time_s: float
    primal: float
    dual: float
    gap: float
    nnz_x: int
    extras: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class StopRules:
    """When to stop: ``max_epochs``, ``max_seconds`` (solver time), relative gap ``tol``
    (gap ≤ tol·max(1, |P|): :func:`~faceoff.solvers.gap.relative_gap` ≤ tol) and a
    caller-supplied ``should_stop()`` (e.g. cancellation).

    ``quiet_until``: no trace point but the first is evaluated before this epoch. With
    ``max_epochs`` equal to it, a run to a known epoch is timed without the interruptions of
    its trace, as a fit of a peer traced by refits is (the benchmarks' time to target:
    after each evaluation the solver's next stretch runs on cold caches, 0.3 ms a point on
    news20)."""

    max_epochs: float = 100.0
    max_seconds: float = 60.0
    tol: float = 1e-10
    should_stop: Callable[[], bool] | None = None
    quiet_until: float = 0.0

    def __post_init__(self) -> None:
        for name in ("max_epochs", "max_seconds"):
            value = getattr(self, name)
            if not (value > 0):
                raise ValueError(f"{name} must be > 0, got {value!r}")
        if not (self.tol >= 0 and math.isfinite(self.tol)):
            raise ValueError(f"tol must be a number >= 0, got {self.tol!r}")
        if not (self.quiet_until >= 0 and math.isfinite(self.quiet_until)):
            raise ValueError(f"quiet_until must be a number >= 0, got {self.quiet_until!r}")


class Recorder:
    """Measures solver time, evaluates and records trace points, applies the stop rules.

    The service starts the clock (:meth:`start`) just before it calls a method's ``solve``:
    set-up is solver time. A method calls :meth:`checkpoint` with its iterate (the first
    call at epoch 0, then as often as it likes: each pauses the clock while the point is
    evaluated) and stops as soon as it returns a reason, returning that reason; between
    points, :meth:`interrupted` says whether the time budget is spent or a cancel was
    asked for, without evaluating. ``stop`` holds the rules, ``points`` the trace,
    ``last`` the last evaluated pair. ``solvers.driver.run_chunked`` does all of this for
    a method that runs in chunks (docs/plugins.md).

    Parameters
    ----------
    problem : Problem
    stop : StopRules
    on_point : callable, optional
        Called with each new :class:`TracePoint` (outside the solver clock).
    observe : callable, optional
        ``observe(x) -> dict``, called with each point's primal iterate (outside the solver
        clock, after the point is evaluated); its items join the point's extras (held-out
        metrics: :class:`~faceoff.solvers.heldout.HeldOut`).

    ``warm_start``, set by ``solvers.run.solve`` for a solver whose spec has
    ``warm_start``, is the point to start from (shape ``problem.coef_shape``; a
    regularization path's previous solution), or None: start from 0.
    """

    warm_start: np.ndarray | None = None

    def __init__(
        self,
        problem: Problem,
        stop: StopRules,
        on_point: Callable[[TracePoint], None] | None = None,
        observe: Callable[[np.ndarray], Mapping[str, object]] | None = None,
    ) -> None:
        self.problem = problem
        self.stop = stop
        self.on_point = on_point
        self.observe = observe
        self.points: list[TracePoint] = []
        self.solver_time = 0.0
        self.stop_reason: str | None = None
        self.last: Objective | None = None
        self.evaluation_seconds = 0.0  # outside the solver clock: evaluation, on_point, replay
        self.evaluation_passes = 0  # passes over the data the evaluations took
        self._last_passes = 1
        self._resumed_at: float | None = None
        self._created_at = time.perf_counter()
        self._shared: np.ndarray | None = None
        self._evaluated_before = 0.0  # an earlier recorder's evaluation seconds (share)
        self._held: int | None = None  # points from this index on wait for release()

    def share(self, record: np.ndarray) -> None:
        """Publish to ``record`` (shared memory a supervisor reads: worker.runner) when
        the recorder was made, the seconds spent evaluating points, and the start of an
        evaluation under way (NaN: none), in slots 1 to 3. A record an earlier recorder of
        the same run published to (a path's λs before) keeps its creation time and adds to
        its seconds: the run has one budget."""
        if math.isnan(record[1]):
            record[1] = self._created_at
        else:
            self._evaluated_before = float(record[2])
        record[2:4] = (self._evaluated_before, math.nan)
        self._shared = record

    def wall_seconds(self) -> float:
        """Wall time since the recorder was made: everything the run cost."""
        return time.perf_counter() - self._created_at

    def start(self) -> None:
        """Start the solver clock (after warm-up and set-up that is not the solver's)."""
        self._resumed_at = time.perf_counter()

    def pause(self) -> None:
        """Stop the clock (the recorder does it on every checkpoint)."""
        if self._resumed_at is not None:
            self.solver_time += time.perf_counter() - self._resumed_at
            self._resumed_at = None

    def resume(self) -> None:
        """Restart the clock after :meth:`pause`."""
        self._resumed_at = time.perf_counter()

    def elapsed(self) -> float:
        """Solver time so far, including the running stretch."""
        running = 0.0 if self._resumed_at is None else time.perf_counter() - self._resumed_at
        return self.solver_time + running

    def due(self, epoch: float, coarse: bool = True) -> bool:
        """Whether a point the method's grid asks for at ``epoch`` should be evaluated: yes
        on the ``coarse`` grid, else only while the evaluation passes, this point's included
        (as many as the last one took), stay within EVALUATION_SHARE of ``epoch``. The point
        a stop rule needs (``max_epochs``, :meth:`interrupted`) is the method's to take.
        None is due while :meth:`quiet`."""
        if self.quiet(epoch):
            return False
        if coarse:
            return True
        return self.evaluation_passes + self._last_passes <= EVALUATION_SHARE * epoch

    def quiet(self, epoch: float) -> bool:
        """Whether ``epoch`` is before ``stop.quiet_until``, where no point is evaluated."""
        return epoch < self.stop.quiet_until

    def interrupted(self) -> str | None:
        """A stop reason that needs no evaluation: time budget spent or stop requested."""
        if self.elapsed() >= self.stop.max_seconds:
            return MAX_SECONDS
        if self.stop.should_stop is not None and self.stop.should_stop():
            return CANCELLED
        return None

    def checkpoint(
        self,
        iteration: int,
        epoch: float,
        x: np.ndarray | None = None,
        y: np.ndarray | None = None,
        extras: dict | None = None,
        final_reason: str | None = None,
        Ax: np.ndarray | None = None,
        ATy: np.ndarray | None = None,
    ) -> str | None:
        """Pause the clock, evaluate the iterate, record a point and return a stop reason,
        or None to go on with the clock running (the first checkpoint starts it if
        :meth:`start` was not called).

        ``x`` is a primal iterate, ``y`` a dual one: give the one the method runs on, and
        with a dual one the primal point the method keeps beside it, if any. A primal method
        that has A·x at this x may give it as ``Ax`` (and Aᵀφ'(Ax) as ``ATy``): see
        :func:`faceoff.solvers.evaluation.evaluate`. ``final_reason`` forces a stop with
        that reason."""
        self.pause()
        reason = self._record(
            self.solver_time, iteration, epoch, x, y, extras, final_reason, Ax, ATy
        )
        if reason is None:
            self.resume()
        return reason

    def record_fit(
        self,
        iteration: int,
        epoch: float,
        x: np.ndarray,
        fit_seconds: float,
        extras: dict | None = None,
        time_s: float | None = None,
    ) -> str | None:
        """Record the result of one fit from scratch that took ``fit_seconds`` (timed by
        the caller; the clock does not run): the point's ``time_s`` is that fit's own time
        (or ``time_s``), and the time budget counts the sum of all fits. Returns a stop
        reason or None."""
        self.pause()
        self.solver_time += float(fit_seconds)
        point_time = float(fit_seconds if time_s is None else time_s)
        return self._record(point_time, iteration, epoch, x, None, extras, None)

    def hold(self) -> None:
        """Keep the points recorded from now on from ``on_point`` until :meth:`release`
        (a callback peer's trace, retimed by an untraced replay: ``solvers.peers.refit``)."""
        self._held = len(self.points)

    def release(self, times: Mapping[int, float]) -> None:
        """Give the held points their ``time_s`` from ``times`` (by ``seq``; the clock they
        were recorded on goes to their extras as ``traced_s``; a point without a time keeps
        it, marked ``"replayed": False``), then hand them to ``on_point``. The solver clock
        becomes the last point's time."""
        held, self._held = self._held, None
        if held is None:
            return
        for point in self.points[held:]:
            point.extras["traced_s"] = point.time_s
            if point.seq in times:
                point.time_s = float(times[point.seq])
            else:
                point.extras["replayed"] = False
            if self.on_point is not None:
                self.on_point(point)
        if len(self.points) > held:
            self.solver_time = self.points[-1].time_s

    @contextmanager
    def off_clock(self) -> Iterator[None]:
        """Run work that is neither solver time nor the run's budget (a point's evaluation,
        a replay that retimes the trace), with the clock stopped; published to a supervisor
        as time spent evaluating (:meth:`share`)."""
        self.pause()
        began = time.perf_counter()
        if self._shared is not None:
            self._shared[3] = began
        try:
            yield
        finally:
            self.evaluation_seconds += time.perf_counter() - began
            if self._shared is not None:
                total = self._evaluated_before + self.evaluation_seconds
                self._shared[2:4] = (total, math.nan)

    def end(self, reason: str) -> str:
        """Stop with ``reason`` (the method ended by itself); the clock stays stopped."""
        self.pause()
        self.stop_reason = reason
        return reason

    def _record(
        self,
        time_s: float,
        iteration: int,
        epoch: float,
        x: np.ndarray | None,
        y: np.ndarray | None,
        extras: dict | None,
        final_reason: str | None,
        Ax: np.ndarray | None = None,
        ATy: np.ndarray | None = None,
    ) -> str | None:
        with self.off_clock():
            obj = evaluate(self.problem, x, y, Ax, ATy)
            self._last_passes = passes(x, y, Ax, ATy)
            self.evaluation_passes += self._last_passes
            self.last = obj
            extras = dict(extras or {})
            if self.observe is not None:
                extras.update(self.observe(obj.x))
            point = TracePoint(
                seq=len(self.points),
                iteration=int(iteration),
                epoch=float(epoch),
                time_s=time_s,
                primal=obj.primal,
                dual=obj.dual,
                gap=obj.gap,
                nnz_x=obj.nnz_x,
                extras=extras,
            )
            self.points.append(point)
            if self.on_point is not None and self._held is None:
                self.on_point(point)
        reason = final_reason or self._reason(point)
        self.stop_reason = reason
        return reason

    def _reason(self, point: TracePoint) -> str | None:
        if not (math.isfinite(point.primal) and math.isfinite(point.dual)):
            return DIVERGED
        if relative_gap(point.gap, point.primal) <= self.stop.tol:
            return CONVERGED
        if point.epoch >= self.stop.max_epochs * (1 - 1e-12):
            return MAX_EPOCHS
        return self.interrupted()
