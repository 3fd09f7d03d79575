"""Regularization paths: one solver over a grid of l1 weights, each warm-started.

The grid is λ_max·geomspace(1, ratio, n) by default (glmnet's, scikit-learn's and celer's),
λ_max = ‖Aᵀφ'(Ax₀)‖∞/n the smallest l1 at which the model with no feature is optimal (x₀
its intercept alone, or 0); l2 is fixed along the path (the Lasso and l1-logistic paths
have l2 = 0). Each λ is solved to the same stop rules from the previous λ's solution
(``solvers.run.solve``'s ``warm_start``), on one problem whose penalty changes: the data
are held once. The path's trace is the λs' traces end to end: seq and solver time run on
across the λs, and each point's extras say which λ it belongs to (``{"path": {"index": k,
"l1": λ}}``), so the total time is the last point's.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from faceoff.solvers.catalogue import warm_start_error
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.problem import Problem
from faceoff.solvers.run import Result, solve
from faceoff.solvers.trace import CANCELLED, DIVERGED, MAX_SECONDS, StopRules, TracePoint
from faceoff.solvers.vocabulary import PATH_LAMBDAS as DEFAULT_LAMBDAS
from faceoff.solvers.vocabulary import PATH_MAX_LAMBDAS as MAX_LAMBDAS
from faceoff.solvers.vocabulary import PATH_RATIO as DEFAULT_RATIO

_ENDS_PATH = (MAX_SECONDS, CANCELLED, DIVERGED)  # a λ that stopped so ends the path
_INTERCEPT_TOL = 1e-14  # |1/n Σ φ'(c)| at which the intercept alone is optimal
_INTERCEPT_STEPS = 10_000


def intercept_only(problem: Problem) -> float:
    """The optimal intercept of the model with no feature, argmin_c 1/n Σ φ(c, bᵢ), by
    gradient steps 1/β on that β-smooth mean (one step for the squared loss: the mean of
    b), until its derivative is ≤ 1e-14."""
    margins = np.zeros(problem.n_samples)
    for _ in range(_INTERCEPT_STEPS):
        g = float(problem.loss_derivs(margins).mean())
        if abs(g) <= _INTERCEPT_TOL:
            break
        margins -= g / problem.smoothness
    return float(margins[0]) if margins.size else 0.0


def lambda_max(problem: Problem) -> float:
    """‖Aᵀφ'(Ax₀)‖∞/n with x₀ = 0 (its intercept alone with one): from this l1 on (l2 = 0),
    the model with no feature is optimal."""
    n = problem.n_samples
    margins = np.full(n, intercept_only(problem) if problem.intercept else 0.0)
    if problem.multiclass is not None:
        margins = np.zeros(problem.dual_shape)
    derivs = problem.loss_derivs(margins)
    return float(np.abs(problem.data.rmatvec(derivs)).max()) / n


def default_grid(
    problem: Problem, n_lambdas: int = DEFAULT_LAMBDAS, ratio: float = DEFAULT_RATIO
) -> np.ndarray:
    """λ_max·geomspace(1, ratio, n_lambdas), decreasing."""
    if not (2 <= n_lambdas <= MAX_LAMBDAS):
        raise ValueError(f"n_lambdas must be in [2, {MAX_LAMBDAS}], got {n_lambdas!r}")
    if not (0 < ratio < 1):
        raise ValueError(f"ratio must be in (0, 1), got {ratio!r}")
    top = lambda_max(problem)
    if not (math.isfinite(top) and top > 0):
        raise ValueError(f"λ_max is {top!r}: the labels leave nothing to fit (A or b all zero?)")
    return top * np.geomspace(1.0, ratio, n_lambdas)


def check_grid(grid: Sequence[float] | np.ndarray) -> np.ndarray:
    """The grid as a float array: finite, > 0, at most MAX_LAMBDAS values (ValueError
    naming the first bad one)."""
    values = np.asarray(grid, dtype=np.float64).reshape(-1)
    if not (1 <= values.size <= MAX_LAMBDAS):
        raise ValueError(f"a grid holds 1 to {MAX_LAMBDAS} l1 weights, got {values.size}")
    bad = np.flatnonzero(~(np.isfinite(values) & (values > 0)))
    if bad.size:
        raise ValueError(f"l1 weights must be finite and > 0; value {bad[0]} is {values[bad[0]]!r}")
    return values


@dataclass
class PathStep:
    """One λ of a path: its weight, how its run ended and what it cost."""

    index: int
    l1: float
    stop_reason: str
    seconds: float  # this λ's solver time
    epochs: float
    primal: float
    gap: float
    nnz: int  # the support size of its solution


@dataclass
class PathResult:
    """A path: λ_max, one :class:`PathStep` per λ solved, the trace end to end, the last
    solution (``x``) and how the last λ's run ended."""

    solver: str
    lambda_max: float
    steps: list[PathStep]
    trace: list[TracePoint]
    x: np.ndarray
    stop_reason: str  # the last λ's
    n_lambdas: int  # in the grid (more than len(steps) when the path ended early)

    @property
    def seconds(self) -> float:
        """The path's solver time: every λ's."""
        return float(sum(step.seconds for step in self.steps))


def solve_path(
    problem: Problem,
    solver: str,
    grid: Sequence[float] | np.ndarray | None = None,
    params: Any = None,
    stop: StopRules | None = None,
    seed: int = 0,
    on_point: Callable[[TracePoint], None] | None = None,
    on_step: Callable[[PathStep], None] | None = None,
    shared: np.ndarray | None = None,
    observe: Callable[[np.ndarray], Mapping[str, Any]] | None = None,
    n_lambdas: int | None = None,
    ratio: float | None = None,
) -> PathResult:
    """Solve ``problem`` (its l2 and loss; its l1 is replaced) at each l1 of ``grid``
    (default :func:`default_grid` of ``n_lambdas`` and ``ratio``), in order, each from the
    previous solution.

    ``stop``'s tol and max_epochs apply to each λ, its max_seconds to the whole path (each
    λ gets what the λs before left); a λ stopped by the time budget, a cancel or a
    divergence ends the path there. ``on_point`` receives the path's points (seq and time
    running on), ``on_step`` each λ once done; ``shared`` and ``observe`` are
    ``solvers.run.solve``'s (one budget for the whole path: :meth:`Recorder.share`)."""
    error = warm_start_error(solver)
    if error is not None:
        raise ValueError(error)
    top = lambda_max(problem)
    if grid is None:
        weights = default_grid(problem, n_lambdas or DEFAULT_LAMBDAS, ratio or DEFAULT_RATIO)
    else:
        weights = check_grid(grid)
    stop = stop or StopRules()
    trace: list[TracePoint] = []
    steps: list[PathStep] = []
    start: np.ndarray | None = None
    offset = 0.0  # the solver time of the λs before
    result: Result | None = None
    for index, weight in enumerate(weights):
        left = stop.max_seconds - offset
        if left <= 0:
            break
        penalty = ElasticNet(float(weight), problem.penalty.l2)
        at = dataclasses.replace(problem, penalty=penalty)

        def relay(
            point: TracePoint, index: int = index, weight: float = float(weight), base=offset
        ) -> None:
            moved = dataclasses.replace(
                point,
                seq=len(trace),
                time_s=base + point.time_s,
                extras={
                    **point.extras,
                    "path": {"index": index, "l1": weight, "lambda_max": top},
                },
            )
            trace.append(moved)
            if on_point is not None:
                on_point(moved)

        rules = dataclasses.replace(stop, max_seconds=left)
        result = solve(
            at,
            solver,
            params,
            rules,
            seed,
            on_point=relay,
            shared=shared,
            warm_start=start,
            observe=observe,
        )
        final = result.final
        step = PathStep(
            index,
            float(weight),
            result.stop_reason,
            final.time_s,
            final.epoch,
            final.primal,
            final.gap,
            final.nnz_x,
        )
        steps.append(step)
        if on_step is not None:
            on_step(step)
        offset += final.time_s
        start = result.x
        if result.stop_reason in _ENDS_PATH:
            break
    assert result is not None  # the grid holds at least one λ, and the budget is > 0
    return PathResult(solver, top, steps, trace, result.x, result.stop_reason, len(weights))
