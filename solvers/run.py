"""``solve()``: validate a request against the catalogue, warm up, run, return the trace."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.evaluation import compile_kernels
from faceoff.solvers.problem import Problem, build_problem
from faceoff.solvers.trace import Recorder, StopRules, TracePoint
from faceoff.solvers.vocabulary import get_loss


@dataclass
class Result:
    """The outcome of one run: final iterates, the trace and why it stopped."""

    solver: str
    params: dict[str, Any]
    seed: int
    stop_reason: str
    trace: list[TracePoint]
    x: np.ndarray
    y: np.ndarray
    trace_mode: str = "native"  # how the trace was made (catalogue.SolverSpec.trace_mode)
    wall_s: float = 0.0  # wall time the whole run cost: evaluation and refits included

    @property
    def final(self) -> TracePoint:
        return self.trace[-1]

    def summary(self) -> dict:
        last = self.final
        return {
            "solver": self.solver,
            "params": self.params,
            "seed": self.seed,
            "stop_reason": self.stop_reason,
            "iterations": last.iteration,
            "epochs": last.epoch,
            "time_s": last.time_s,
            "primal": last.primal,
            "dual": last.dual,
            "gap": last.gap,
            "nnz_x": last.nnz_x,
            "points": len(self.trace),
            "trace_mode": self.trace_mode,
            "wall_s": self.wall_s,
        }


class MissingPeer(RuntimeError):
    """A peer solver whose distribution is not installed here."""


def _entry(spec) -> Callable[..., str]:
    """The ``solve(problem, params, recorder, seed)`` function of ``spec``; MissingPeer,
    saying what to install, for a peer whose distribution is missing."""
    reason = spec.unavailable_reason()
    if reason is not None:
        raise MissingPeer(reason)
    return getattr(importlib.import_module(spec.module), spec.entry)


_warm: set[str] = set()


def _tiny_problem(loss: str, penalty: str) -> Problem:
    rng = np.random.default_rng(0)
    A = sp.random(8, 5, density=0.5, random_state=rng, format="csr")
    b = np.where(rng.random(8) < 0.5, -1.0, 1.0)  # binary labels suit every loss
    return build_problem(A, b, loss, l1=0.01 if penalty == "elastic_net" else 0.0, l2=0.1)


def warmup(solver: str) -> None:
    """Compile what a run of ``solver`` executes (kernels and evaluation) by running it on a
    tiny problem, so that no measured run pays for compilation. Once per process; Numba's
    on-disk cache makes later processes cheap."""
    if solver in _warm:
        return
    spec = get_spec(solver)
    entry = _entry(spec)
    for values in _param_variants(spec):
        for loss in spec.losses:
            for penalty in (p for p in spec.penalties if p in get_loss(loss).penalties):
                problem = _tiny_problem(loss, penalty)
                recorder = Recorder(problem, StopRules(max_epochs=1.0, max_seconds=60))
                entry(problem, values, recorder, 0)
                compile_kernels(problem)  # trace points on dense data too
    _warm.add(solver)


def _param_variants(spec) -> list[dict[str, Any]]:
    """Defaults, plus each choice of each choice parameter (they may select other kernels),
    with what the rules between parameters need beside it."""
    return [spec.parse_params(change) for change in spec.choice_variants()]


def solve(
    problem: Problem,
    solver: str,
    params: dict[str, Any] | None = None,
    stop: StopRules | None = None,
    seed: int = 0,
    on_point: Callable[[TracePoint], None] | None = None,
) -> Result:
    """Run ``solver`` on ``problem`` and return its :class:`Result`.

    Parameters
    ----------
    problem : Problem
    solver : str
        A name from :data:`faceoff.solvers.catalogue.CATALOGUE`.
    params : dict, optional
        Solver parameters; defaults from the catalogue, every value checked.
    stop : StopRules, optional
    seed : int
        Runs are deterministic for a given seed.
    on_point : callable, optional
        Receives each trace point as it is recorded (outside the solver clock).
    """
    spec = get_spec(solver)
    spec.check(problem.loss.name, problem.penalty.name, problem.loss.gamma)
    values = spec.parse_params(params)
    warmup(solver)
    entry = _entry(spec)
    recorder = Recorder(problem, stop or StopRules(), on_point)
    # one thread for BLAS too: every method is timed serially, and a threaded level-1 call
    # competing for the cores with other work stalls (measured 1000× on a 62k-element dot)
    with threadpool_limits(limits=1):
        if spec.trace_mode != "refit":  # a refit times each of its fits itself
            recorder.start()  # the method's set-up (step sizes, sampling tables) is solver time
        reason = entry(problem, values, recorder, int(seed))
    last = recorder.last
    return Result(
        solver,
        values,
        int(seed),
        reason,
        recorder.points,
        last.x,
        last.y,
        spec.trace_mode,
        recorder.wall_seconds(),
    )
