"""``solve()``: find a solver's method, warm it up, run it, return the trace.

The one place that goes from a solver's name to its method (``SolverSpec.module`` and
``entry``). Parameters arrive typed (a ``Params`` the boundary parsed: the API's job
spec, ``faceoff solve``) or raw, parsed here once.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.evaluation import compile_kernels
from faceoff.solvers.problem import Problem, build_problem
from faceoff.solvers.spec import SolverSpec, SupportError
from faceoff.solvers.trace import Recorder, StopRules, TracePoint
from faceoff.solvers.vocabulary import get_loss


@dataclass
class Result:
    """The outcome of one run: final iterates, the trace and why it stopped."""

    solver: str
    params: Any  # the solver's Params
    seed: int
    stop_reason: str
    trace: list[TracePoint]
    x: np.ndarray
    y: np.ndarray
    trace_mode: str = "native"  # how the trace was made (spec.SolverSpec.trace_mode)
    wall_s: float = 0.0  # wall time the whole run cost: evaluation and refits included

    @property
    def final(self) -> TracePoint:
        return self.trace[-1]

    def summary(self) -> dict:
        last = self.final
        return {
            "solver": self.solver,
            "params": asdict(self.params),
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


class NoTracePoint(RuntimeError):
    """A method that returned without recording a trace point."""


class MissingPeer(RuntimeError):
    """A peer solver whose distribution is not installed here."""


def _entry(spec: SolverSpec) -> Any:
    """The ``solve(problem, params, recorder, seed)`` function of ``spec``; MissingPeer,
    saying what to install, for a peer whose distribution is missing."""
    reason = spec.unavailable_reason()
    if reason is not None:
        raise MissingPeer(reason)
    if spec.module is None:
        raise ValueError(f"solver {spec.name!r} has no method module: it is not catalogued")
    return getattr(importlib.import_module(spec.module), spec.entry)


def typed_params(spec: SolverSpec, params: Any) -> Any:
    """``params`` as ``spec``'s Params: a Params of this solver as it is (checked where it
    was parsed), a mapping of raw values (or None: the defaults) parsed once."""
    if isinstance(params, spec.params):
        return params
    if params is None or isinstance(params, Mapping):
        return spec.parse_params(params)
    raise TypeError(f"parameters of solver {spec.name!r} must be its Params, got {params!r}")


_warm: set[str] = set()


def _tiny_problem(
    loss: str, penalty: str, multiclass: str | None = None, intercept: bool = False
) -> Problem:
    rng = np.random.default_rng(0)
    A = sp.random(8, 5, density=0.5, random_state=rng, format="csr")
    if multiclass is None:
        b = np.where(rng.random(8) < 0.5, -1.0, 1.0)  # binary labels suit every loss
    else:
        b = np.arange(8) % 3  # three classes
    l1 = 0.0 if penalty == "l2" else 0.01
    l2 = 0.0 if penalty == "l1" else 0.1
    return build_problem(A, b, loss, l1=l1, l2=l2, multiclass=multiclass, fit_intercept=intercept)


def _warm_problems(spec: SolverSpec) -> Iterator[Problem]:
    """A tiny problem for each (loss, penalty, K-class form) ``spec`` runs, and one with an
    intercept for each loss if it fits one."""
    for form in (None, *spec.multiclass):
        for loss in spec.losses:
            if form is not None and form not in get_loss(loss).multiclass:
                continue
            for penalty in (p for p in spec.penalties if p in get_loss(loss).penalties):
                yield _tiny_problem(loss, penalty, form)
            if spec.intercept and form is None:
                yield _tiny_problem(loss, spec.penalties[0], None, intercept=True)


def warmup(solver: str, every_choice: bool = True) -> None:
    """Compile what a run of ``solver`` executes (kernels and evaluation) by running it on a
    tiny problem, so that no measured run pays for compilation. Once per process; Numba's
    on-disk cache makes later processes cheap.

    A peer's library is compiled ahead: ``every_choice=False`` runs it with its defaults
    only (its imports and first calls), where a process has already seen every choice
    pass (worker.warmup)."""
    if solver in _warm:
        return
    spec = get_spec(solver)
    entry = _entry(spec)
    # defaults, then each choice of each choice parameter (they may select other kernels),
    # with what the rules between parameters need beside it
    variants = spec.choice_variants() if every_choice or spec.requires is None else [{}]
    for change in variants:
        values = spec.load_params(change)
        for problem in _warm_problems(spec):
            recorder = Recorder(problem, StopRules(max_epochs=1.0, max_seconds=60))
            try:
                entry(problem, values, recorder, 0)
            except SupportError:  # a peer's refusal of this problem (cyanure: svrg, sparse K)
                continue
            compile_kernels(problem)  # trace points on dense data too
    _warm.add(solver)


def solve(
    problem: Problem,
    solver: str,
    params: Any = None,
    stop: StopRules | None = None,
    seed: int = 0,
    on_point: Callable[[TracePoint], None] | None = None,
    shared: np.ndarray | None = None,
    warm_start: np.ndarray | None = None,
    observe: Callable[[np.ndarray], Mapping[str, Any]] | None = None,
) -> Result:
    """Run ``solver`` on ``problem`` and return its :class:`Result`.

    Parameters
    ----------
    problem : Problem
    solver : str
        A name of :func:`faceoff.solvers.catalogue.catalogue`.
    params : Params, mapping or None
        The solver's parameters: its ``Params`` (parsed at the boundary), or raw values
        parsed here (defaults from the spec, every value checked); None: the defaults.
    stop : StopRules, optional
    seed : int
        Runs are deterministic for a given seed.
    on_point : callable, optional
        Receives each trace point as it is recorded (outside the solver clock).
    shared : ndarray, optional
        Where the recorder publishes its clock to a supervisor (:meth:`Recorder.share`).
    warm_start : ndarray, optional
        The point to start from (shape ``problem.coef_shape``), for a solver whose spec has
        ``warm_start`` (ValueError otherwise): a regularization path's previous solution.
    observe : callable, optional
        ``observe(x) -> dict`` of each point's primal iterate, added to its extras off the
        clock (the :class:`Recorder`'s hook; held-out metrics: ``solvers.heldout``).

    A method that returns without recording a trace point raises
    :class:`NoTracePoint`.
    """
    spec = get_spec(solver)
    spec.check(
        problem.loss.name,
        problem.penalty.name,
        problem.loss.gamma,
        problem.multiclass,
        problem.intercept,
    )
    values = typed_params(spec, params)
    warmup(solver)
    entry = _entry(spec)
    recorder = Recorder(problem, stop or StopRules(), on_point, observe)
    if warm_start is not None:
        if not spec.warm_start:
            raise ValueError(f"solver {solver!r} does not start from a given point (warm_start)")
        start = np.asarray(warm_start, dtype=np.float64)
        if start.shape != problem.coef_shape or not np.all(np.isfinite(start)):
            raise ValueError(
                f"warm_start must be finite, of shape {problem.coef_shape}, got {start.shape}"
            )
        recorder.warm_start = start
    if shared is not None:
        recorder.share(shared)
    # one thread for BLAS too: every method is timed serially, and a threaded level-1 call
    # competing for the cores with other work stalls (measured 1000× on a 62k-element dot)
    with threadpool_limits(limits=1):
        if spec.trace_mode != "refit":  # a refit times each of its fits itself
            recorder.start()  # the method's set-up (step sizes, sampling tables) is solver time
        reason = entry(problem, values, recorder, int(seed))
    if recorder.last is None:
        raise NoTracePoint(
            f"solver {solver!r} returned without recording a trace point: its solve() must "
            "call recorder.checkpoint(...) (or record_fit) at least once, at its last "
            "iterate if nowhere else"
        )
    last = recorder.last
    if last is None:  # every method records its first point before it runs
        raise RuntimeError(f"{solver} stopped ({reason}) before its first trace point")
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


def budget_fitter(solver: str, problem: Problem, params: Any = None, seed: int = 0) -> Any:
    """``fit(budget) -> Fit`` of the peer ``solver`` on ``problem``, untraced: a refitted
    peer's fit (:class:`~faceoff.solvers.peers.refit.RefitPeer`), or a callback peer's fit
    with no callback (its module's ``untraced_fitter``); the benchmarks time one budget."""
    spec = get_spec(solver)
    spec.check(
        problem.loss.name,
        problem.penalty.name,
        problem.loss.gamma,
        problem.multiclass,
        problem.intercept,
    )
    values = typed_params(spec, params)
    entry = _entry(spec)
    if spec.trace_mode == "refit":
        return entry.fitter(problem, values, seed)
    untraced = getattr(importlib.import_module(entry.__module__), "untraced_fitter", None)
    if spec.trace_mode != "callback" or untraced is None:
        raise ValueError(f"solver {solver!r} has no untraced fit ({spec.trace_mode} trace)")
    return untraced(spec.entry, problem, values, seed)
