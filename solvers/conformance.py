"""The plug-in conformance checker: ``faceoff plugin check NAME`` (docs/plugins.md).

Runs a solver of the catalogue (a plug-in, or any other) on small generated problems and
checks, with numbers, what the service relies on:

- **certification**: on dense and sparse data, for each loss and penalty it declares,
  binary and each K-class form it declares, the final P is within ``tol`` (relative) of
  a reference P* from scipy's L-BFGS-B (the l1 part by splitting x = u − v, u, v ≥ 0) and
  the final duality gap is within ``tol`` of |P| (the service's certificate);
- **monotone time**: in every trace, time, epochs and iterations never decrease;
- **honest clock**: the solver time an epoch costs with its trace points and without them
  (``StopRules.quiet_until``) agree within a factor of 2 (the evaluation of a point is not
  the solver's), and the run's wall time outside both the solver clock and the
  evaluations stays small (no work hidden while the clock is stopped);
- **cancel**: a cancel request (``StopRules.should_stop``) ends the run within 2 s, with
  stop reason ``cancelled``;
- **time limit**: ``max_seconds`` ends the run within max(2 s, 10 %) of the limit, with
  stop reason ``max_seconds``;
- **memory**: the peak resident memory a run adds (Linux: VmHWM, reset before the run)
  stays within the spec's estimate (``SolverSpec.working_bytes``).

Every run happens in a child process that the checker kills when it outlives its time (a
hang, an ignored limit) or that may die (a crash): the checker always ends, in bounded
time, and says why. Nothing here runs in the service.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from importlib.metadata import entry_points
from typing import Any

from faceoff.solvers import PLUGIN_API
from faceoff.solvers.catalogue import GROUP, broken_plugins, catalogue
from faceoff.solvers.spec import SolverSpec
from faceoff.solvers.vocabulary import get_loss

CHECKS = ("certification", "monotone_time", "honest_clock", "cancel", "time_limit", "memory")
STOP_REASONS = ("converged", "max_epochs", "max_seconds", "cancelled", "diverged", "finished")
TOL = 1e-8  # relative distance to P* and relative final gap a certified run reaches
CANCEL_AFTER = 0.5  # seconds of wall time into a run when cancel is requested
CANCEL_WITHIN = 2.0  # seconds the run may take to end after the request
TIME_LIMIT = 1.0  # max_seconds of the time-limit run
CLOCK_RATIO = 2.0  # the traced and quiet seconds per epoch agree within this factor
HIDDEN_SHARE = 0.2  # of wall time a run may spend outside the clock and the evaluations
MEMORY_SLACK = 8 << 20  # bytes beyond the estimate: allocator, evaluation temporaries
GRACE = 3.0  # seconds a run may outlive its own budget before it is killed
WARMUP_SECONDS = 600.0  # compiling every kernel of a plug-in on a slow machine


@dataclass(frozen=True)
class Case:
    """A generated problem: ``layout`` "dense" or "sparse", n × d, one loss and penalty,
    binary (regression targets for a loss that takes any label) or K = 3 classes."""

    loss: str
    penalty: str
    layout: str = "sparse"
    multiclass: str | None = None
    n: int = 200
    d: int = 30
    density: float = 0.2
    l2: float = 1e-2
    seed: int = 0

    @property
    def l1(self) -> float:
        return 0.0 if self.penalty == "l2" else 1e-2

    @property
    def l2_weight(self) -> float:
        """``l2``, or 0 for the penalty l1 (the Lasso, l1-logistic)."""
        return 0.0 if self.penalty == "l1" else self.l2

    def label(self) -> str:
        kind = f"K = 3 {self.multiclass}" if self.multiclass else "binary"
        if self.multiclass is None and not get_loss(self.loss).needs_binary_labels:
            kind = "regression"
        return f"{self.loss}, {self.penalty}, {self.layout} {self.n}×{self.d}, {kind}"


@dataclass(frozen=True)
class Run:
    """One run of the solver in the child: its stop rules and what to measure."""

    case: Case
    max_epochs: float = 10_000.0
    max_seconds: float = 20.0
    tol: float = 1e-10
    quiet: bool = False  # no trace point but the first before max_epochs
    cancel_after: float | None = None  # cancel requested this many seconds into the run
    reference: bool = False  # also compute P* by scipy's L-BFGS-B

    def deadline(self) -> float:
        """Seconds after which the child is killed."""
        budget = self.max_seconds if self.cancel_after is None else self.cancel_after
        return budget + CANCEL_WITHIN + GRACE + (30.0 if self.reference else 0.0)


@dataclass
class Finding:
    """The outcome of one check: ``ok`` True, False, or None when it could not be
    exercised (the reason in ``summary``)."""

    check: str
    ok: bool | None
    summary: str
    details: list[str] = field(default_factory=list)


@dataclass
class Report:
    """Every finding of a check of solver ``name``."""

    name: str
    origin: str
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return bool(self.findings) and all(f.ok is not False for f in self.findings)

    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.ok is False]

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "origin": self.origin,
            "passed": self.passed,
            "seconds": round(self.seconds, 3),
            "findings": [asdict(f) for f in self.findings],
        }


class CheckError(ValueError):
    """A solver the checker cannot check: unknown, or a broken plug-in (the reason)."""


# --- the child process: builds problems, runs the solver, measures -----------------------


def build(case: Case) -> Any:
    """The :class:`~faceoff.solvers.problem.Problem` of ``case`` (deterministic)."""
    import numpy as np
    import scipy.sparse as sp

    from faceoff.solvers.problem import build_problem

    rng = np.random.default_rng(case.seed)
    if case.layout == "dense":
        A = rng.standard_normal((case.n, case.d)) / math.sqrt(case.d)
    else:
        A = sp.random(case.n, case.d, density=case.density, random_state=rng, format="csr")
        A.data = rng.standard_normal(A.nnz)
    truth = rng.standard_normal((case.d, 3 if case.multiclass else 1))
    margins = np.asarray(A @ truth) + 0.5 * rng.standard_normal((case.n, truth.shape[1]))
    if case.multiclass is not None:
        b = np.argmax(margins, axis=1)
        b[:3] = np.arange(3)  # every class occurs
    elif get_loss(case.loss).needs_binary_labels:
        b = np.where(margins[:, 0] > 0, 1.0, -1.0)
    else:
        b = margins[:, 0]
    return build_problem(A, b, case.loss, l1=case.l1, l2=case.l2_weight, multiclass=case.multiclass)


def reference_optimum(problem: Any) -> tuple[float, Any]:
    """(min P, its x) by scipy's L-BFGS-B at tight tolerances: x = u − v with u, v ≥ 0, so
    that the l1 part is linear (exact), and an intercept c free; the loss's gradient is
    Aᵀφ'(Ax + c)/n (and 1/n Σ φ' for c)."""
    import numpy as np
    import scipy.optimize

    shape, n = problem.coef_shape, problem.n_samples
    c = int(getattr(problem, "intercept", False))
    size = int(np.prod(shape)) - c  # the penalized coefficients
    l1, l2 = problem.penalty.l1, problem.penalty.l2

    def coef(z: np.ndarray) -> np.ndarray:
        x = z[:size] - z[size : 2 * size]
        return np.append(x, z[2 * size :]).reshape(shape)

    def split(z: np.ndarray) -> tuple[float, np.ndarray]:
        x = coef(z)
        w = x.reshape(-1)[:size].reshape(shape if not c else (size,))
        Ax = problem.data.matvec(w) + (x[-1] if c else 0.0)
        derivs = problem.loss_derivs(Ax)
        value = problem.loss_sum(Ax) / n + 0.5 * l2 * float(w.reshape(-1) @ w.reshape(-1))
        grad = (problem.data.rmatvec(derivs) / n + l2 * w).reshape(-1)
        parts = [grad + l1, l1 - grad] + ([np.array([derivs.sum() / n])] if c else [])
        return value + l1 * float(z[: 2 * size].sum()), np.concatenate(parts)

    found = scipy.optimize.minimize(
        split,
        np.zeros(2 * size + c),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * (2 * size) + [(None, None)] * c,
        options={"maxiter": 50_000, "maxfun": 100_000, "ftol": 1e-16, "gtol": 1e-13},
    )
    return float(found.fun), coef(found.x)


def _status_bytes(key: str) -> int | None:
    """A ``kB`` field of /proc/self/status (VmRSS, VmHWM) in bytes; None where unknown."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _fixed_malloc() -> Any:
    """glibc's allocator set to give large blocks back to the system when freed (a fixed
    mmap threshold, 128 KiB: by default it grows after each free, and freed arrays then stay
    resident, hiding the next run's peak); returns its ``malloc_trim``, or None elsewhere."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 128 * 1024)  # M_MMAP_THRESHOLD
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


def _reset_peak() -> bool:
    """Reset this process's peak resident memory (VmHWM) to its current one (Linux)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def execute(name: str, run: Run) -> dict:
    """Run solver ``name`` once as the service does (its method, the clock started at the
    call, BLAS on one thread) and measure: the trace, the stop reason, wall, solver and
    evaluation seconds, the delay after a cancel request, the peak memory added."""
    import gc
    import importlib

    from threadpoolctl import threadpool_limits

    from faceoff.solvers.run import typed_params
    from faceoff.solvers.trace import Recorder, StopRules

    spec = catalogue()[name]
    problem = build(run.case)
    out: dict[str, Any] = {}
    if run.reference:
        out["reference"] = reference_optimum(problem)[0]
    params = typed_params(spec, None)
    entry = getattr(importlib.import_module(str(spec.module)), spec.entry)
    requested: list[float] = []

    def should_stop() -> bool:
        if run.cancel_after is None or time.perf_counter() < began + run.cancel_after:
            return False
        if not requested:
            requested.append(time.perf_counter())
        return True

    stop = StopRules(
        max_epochs=run.max_epochs,
        max_seconds=run.max_seconds,
        tol=run.tol,
        should_stop=should_stop,
        quiet_until=run.max_epochs if run.quiet else 0.0,
    )
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)  # what earlier runs freed leaves the resident set
    baseline = _status_bytes("VmRSS")
    exact_peak = _reset_peak()
    with threadpool_limits(limits=1):
        recorder = Recorder(problem, stop)  # its wall time: the run's alone
        began = time.perf_counter()
        if spec.trace_mode != "refit":
            recorder.start()
        reason = entry(problem, params, recorder, 0)
        returned = time.perf_counter()
    peak = _status_bytes("VmHWM")
    cancel_at = began + run.cancel_after if run.cancel_after is not None else None
    classes = problem.n_classes if problem.multiclass else 1
    out.update(
        reason=reason,
        points=[(p.time_s, p.epoch, p.iteration, p.primal, p.gap) for p in recorder.points],
        returned_s=returned - began,
        wall_s=recorder.wall_seconds(),
        solver_s=recorder.elapsed(),
        evaluation_s=recorder.evaluation_seconds,
        cancel_delay=None if cancel_at is None or returned < cancel_at else returned - cancel_at,
        peak_bytes=None if peak is None or baseline is None else max(peak - baseline, 0),
        exact_peak=exact_peak,
        estimate_bytes=spec.working_bytes(
            problem.n_samples, problem.n_features, problem.data.nnz, params,
            problem.penalty.name, classes,
        ),
    )  # fmt: skip
    return out


_TRIM: Any = None  # the child's malloc_trim (_fixed_malloc)


def _serve(connection: Any, name: str) -> None:
    """The child's loop: warm-up or run requests in, results (or the error) out."""
    from faceoff.solvers.numba_cache import configure_numba_cache

    global _TRIM
    configure_numba_cache()
    _TRIM = _fixed_malloc()
    while True:
        try:
            task = connection.recv()
        except EOFError:
            return
        try:
            if task == "warmup":
                from faceoff.solvers.run import warmup

                warmup(name)
                result: dict = {}
            else:
                result = execute(name, task)
        except BaseException as err:  # the plug-in's failure is a finding, not ours
            lines = traceback.format_exception_only(type(err), err)
            result = {"error": "".join(lines).strip(), "traceback": traceback.format_exc()}
        connection.send(result)


class Child:
    """A child process running solver ``name``'s requests, killed and restarted when one
    outlives its deadline or the process dies."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.context: Any = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        self.process: Any = None
        self.connection: Any = None
        self.warmed = False

    def _start(self) -> None:
        parent, child = self.context.Pipe()
        self.process = self.context.Process(
            target=_serve, args=(child, self.name), name=f"check {self.name}", daemon=True
        )
        self.process.start()
        child.close()
        self.connection = parent

    def call(self, task: Any, deadline: float) -> dict:
        """The result of ``task``; ``{"killed": seconds}`` if it outlived ``deadline``
        seconds, ``{"died": exit code}`` if the process died on it. A process started
        after the first warm-up is warmed up again first: no run pays for compilation."""
        if self.process is None or not self.process.is_alive():
            self._start()
            if self.warmed and task != "warmup":
                again = self.call("warmup", WARMUP_SECONDS)
                if again:
                    return again
        began = time.monotonic()
        self.connection.send(task)
        try:
            if self.connection.poll(deadline):
                result = self.connection.recv()
                self.warmed |= task == "warmup" and not result
                return result
        except (EOFError, OSError):
            self.process.join(5)
            died = self.process.exitcode
            self.process = None
            return {"died": died, "seconds": time.monotonic() - began}
        self.close()
        return {"killed": time.monotonic() - began}

    def close(self) -> None:
        if self.process is not None:
            if self.process.is_alive():
                self.process.kill()
            self.process.join(10)
            self.process = None
        if self.connection is not None:
            self.connection.close()
            self.connection = None


# --- the parent: plans the runs, judges them -----------------------------------------------


def origin_of(name: str) -> str:
    """Where solver ``name`` comes from: "plug-in of DIST VERSION" or "built-in"."""
    for entry in entry_points(group=GROUP):
        if entry.name == name:
            dist = getattr(entry, "dist", None)
            who = f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"
            return f"plug-in of {who}"
    return "built-in"


def certification_cases(spec: SolverSpec) -> list[Case]:
    """Dense and sparse problems for each (loss, penalty) ``spec`` declares, binary and
    each of its K-class forms."""
    cases = []
    for form in (None, *spec.multiclass):
        for loss in spec.losses:
            info = get_loss(loss)
            if form is not None and form not in info.multiclass:
                continue
            for penalty in (p for p in spec.penalties if p in info.penalties):
                for layout in ("dense", "sparse"):
                    cases.append(Case(loss, penalty, layout, form))
    return cases


def big_case(spec: SolverSpec) -> Case:
    """An ill-conditioned sparse problem no solver finishes within a few seconds: the
    cancel, time-limit and memory runs (20,000 × 2,000, 200,000 non-zeros)."""
    loss = spec.losses[0]
    penalty = next(p for p in spec.penalties if p in get_loss(loss).penalties)
    return Case(loss, penalty, "sparse", None, n=20_000, d=2_000, density=0.005, l2=1e-7)


def _failed_run(result: dict, what: str) -> str | None:
    """Why a run gave no trace: killed, died, raised, recorded nothing, or returned
    something that is not a stop reason; None if it is usable."""
    if "killed" in result:
        return f"{what}: still running after {result['killed']:.1f} s: killed"
    if "died" in result:
        return f"{what}: the process died (exit code {result['died']}) during the run"
    if "error" in result:
        return f"{what}: the solver raised {result['error']}"
    if not result["points"]:
        return f"{what}: returned without recording a trace point (call recorder.checkpoint)"
    if result["reason"] not in STOP_REASONS:
        return (
            f"{what}: returned {result['reason']!r}, not a stop reason "
            f"({', '.join(STOP_REASONS)}): return what the recorder's checkpoint returned"
        )
    return None


def _scale(value: float) -> float:
    return max(1.0, abs(value))


def judge_certification(case: Case, result: dict, tol: float) -> tuple[bool, str, float]:
    """(ok, one line with the numbers, the larger of the relative P − P* and gap) for one
    certification run."""
    failed = _failed_run(result, case.label())
    if failed is not None:
        return False, failed, math.inf
    time_s, epoch, _, primal, gap = result["points"][-1]
    reference = result["reference"]
    sub = (primal - reference) / _scale(reference)
    rel_gap = gap / _scale(primal)
    line = (
        f"{case.label()}: P − P* = {sub:.1e} (relative), gap {rel_gap:.1e}, "
        f"{epoch:.4g} epochs, {time_s:.3g} s, {result['reason']}"
    )
    if not math.isfinite(primal) or sub > tol or rel_gap > tol or not rel_gap >= -tol:
        return False, f"{line}: not within {tol:g} of the reference optimum and certified", sub
    return True, line, max(sub, rel_gap)


def judge_monotone(traces: Iterable[tuple[str, list]]) -> Finding:
    traces = list(traces)
    count = 0
    for label, points in traces:
        for index, (now, before) in enumerate(zip(points[1:], points[:-1], strict=True), start=1):
            for axis, name in ((0, "time"), (1, "epoch"), (2, "iteration")):
                if not (now[axis] >= before[axis]) or not math.isfinite(now[axis]):
                    return Finding(
                        "monotone_time",
                        False,
                        f"{label}: {name} went from {before[axis]:.6g} to {now[axis]:.6g} at "
                        f"trace point {index}",
                    )
        count += len(points)
    if not traces:
        return Finding("monotone_time", None, "no trace was recorded")
    return Finding(
        "monotone_time",
        True,
        f"{len(traces)} traces, {count} points: time, epochs and iterations never decrease",
    )


def _per_epoch(result: dict) -> float | None:
    time_s, epoch = result["points"][-1][:2]
    return time_s / epoch if epoch > 0 else None


def judge_clock(traced: list[dict], quiet: list[dict], label: str) -> Finding:
    """The traced and quiet runs' solver seconds per epoch (the best of each), and the
    share of the traced runs' wall time spent outside the clock and the evaluations."""
    for result in (*traced, *quiet):
        failed = _failed_run(result, label)
        if failed is not None:
            return Finding("honest_clock", False, failed)
    with_points = [r for r in traced if _per_epoch(r)]
    without = [r for r in quiet if _per_epoch(r)]
    if not with_points or not without:
        return Finding("honest_clock", None, f"{label}: no run went past epoch 0")
    a = min(_per_epoch(r) or math.inf for r in with_points)
    b = min(_per_epoch(r) or math.inf for r in without)
    points = max(len(r["points"]) for r in with_points)
    hidden = max(r["wall_s"] - r["solver_s"] - r["evaluation_s"] for r in with_points)
    wall = max(r["wall_s"] for r in with_points)
    ratio = a / b if b > 0 else math.inf
    line = (
        f"{label}: {a * 1e3:.3g} ms of solver time an epoch with {points} trace points, "
        f"{b * 1e3:.3g} ms without (×{ratio:.2f}); {hidden:.3f} s of {wall:.3f} s wall time "
        "outside the clock and the evaluations"
    )
    if not 1 / CLOCK_RATIO <= ratio <= CLOCK_RATIO:
        return Finding(
            "honest_clock",
            False,
            f"{line}: the time an epoch takes depends on the trace points (allowed "
            f"×{1 / CLOCK_RATIO:g} to ×{CLOCK_RATIO:g}): is work done while the clock is "
            "stopped, or evaluation while it runs?",
        )
    if hidden > max(0.05, HIDDEN_SHARE * wall):
        return Finding(
            "honest_clock",
            False,
            f"{line}: more than {HIDDEN_SHARE:.0%} of the run is not counted: work done "
            "while the clock is stopped",
        )
    return Finding("honest_clock", True, line)


def judge_stop(check: str, result: dict, label: str) -> Finding:
    """The cancel or time-limit run: stopped in time, with the right reason."""
    if check == "cancel":
        expected, asked = "cancelled", f"cancel requested {CANCEL_AFTER:g} s into the run"
        allowed = CANCEL_WITHIN
    else:
        expected, asked = "max_seconds", f"max_seconds = {TIME_LIMIT:g}"
        allowed = max(CANCEL_WITHIN, 0.1 * TIME_LIMIT)
    if "killed" in result:
        return Finding(
            check,
            False,
            f"{label}: {asked}, but the run went on: killed {result['killed']:.1f} s after "
            f"it started (the stop rules are checked by recorder.checkpoint and "
            "recorder.interrupted)",
        )
    failed = _failed_run(result, label)
    if failed is not None:
        return Finding(check, False, failed)
    reason, returned = result["reason"], result["returned_s"]
    if check == "cancel":
        delay = result["cancel_delay"]
        if delay is None:
            return Finding(
                check, None, f"{label}: ended by itself ({reason}) after {returned:.2f} s, "
                f"before the cancel request at {CANCEL_AFTER:g} s: not exercised",
            )  # fmt: skip
    else:
        if reason != expected and returned < TIME_LIMIT:
            return Finding(
                check, None, f"{label}: ended by itself ({reason}) after {returned:.2f} s, "
                f"before the limit of {TIME_LIMIT:g} s: not exercised",
            )  # fmt: skip
        delay = returned - TIME_LIMIT
    solver_s = result["points"][-1][0]
    line = (
        f"{label}: {asked}; stopped {max(delay, 0.0):.2f} s after it ({reason}), "
        f"{solver_s:.2f} s of solver time, {returned:.2f} s after the call"
    )
    if reason != expected:
        return Finding(check, False, f"{line}: the stop reason should be {expected!r}")
    if delay > allowed:
        return Finding(check, False, f"{line}: more than {allowed:g} s late")
    return Finding(check, True, line)


def judge_memory(results: list[dict], label: str) -> Finding:
    measured = [r for r in results if r.get("peak_bytes") is not None and "points" in r]
    if not measured:
        return Finding("memory", None, f"{label}: no run to measure ended normally")
    worst = max(measured, key=lambda r: r["peak_bytes"])
    peak, estimate = worst["peak_bytes"], worst["estimate_bytes"]
    how = "" if worst["exact_peak"] else " (process peak: VmHWM could not be reset)"
    line = (
        f"{label}: the run added {peak / 2**20:.1f} MiB at its peak{how}; the spec's "
        f"estimate (SolverSpec.working_bytes) is {estimate / 2**20:.1f} MiB"
    )
    if worst["exact_peak"] and peak > estimate + MEMORY_SLACK:
        return Finding(
            "memory",
            False,
            f"{line}: more than the estimate + {MEMORY_SLACK >> 20} MiB: declare "
            "extra_memory(n, d, params, penalty) in the spec, or keep less",
        )
    return Finding("memory", True, line)


def check_solver(
    name: str,
    checks: Iterable[str] = CHECKS,
    tol: float = TOL,
    progress: Callable[[str], None] = lambda line: None,
) -> Report:
    """Check solver ``name`` (docstring of this module); ``progress`` receives a line as
    each run or check ends. CheckError for a solver the catalogue does not hold."""
    began = time.monotonic()
    specs = catalogue()
    if name not in specs:
        for broken in broken_plugins():
            if broken.name == name:
                raise CheckError(
                    f"broken plug-in {name!r} of {broken.distribution}: {broken.error}"
                )
        listed = {entry.name for entry in entry_points(group=GROUP)}
        plugins = [n for n in specs if n in listed] or ["none installed"]
        raise CheckError(f"unknown solver {name!r}; plug-ins: {', '.join(plugins)}")
    wanted = [c for c in CHECKS if c in set(checks)]
    spec = specs[name]
    report = Report(name, origin_of(name))
    progress(
        f"checking {name} ({report.origin}; written for plug-in API "
        f"{spec.plugin_api or PLUGIN_API}, this Faceoff provides {PLUGIN_API})"
    )
    if "." not in name and report.origin != "built-in":
        progress(f"note: {name!r} has no namespace; name a plug-in's solvers 'lab.method'")
    child = Child(name)

    def found(finding: Finding) -> None:
        report.findings.append(finding)
        _said(progress, finding)

    try:
        warm = child.call("warmup", WARMUP_SECONDS)
        if warm:  # killed, died or raised: nothing else can run
            found(Finding("warmup", False, str(_failed_run(warm, WARMUP_WHAT))))
            return report
        progress(f"warm-up: {time.monotonic() - began:.1f} s")
        traces: list[tuple[str, list]] = []
        if "certification" in wanted or "monotone_time" in wanted:
            certified = _certify(child, spec, tol, traces, progress)
            if "certification" in wanted:
                found(certified)
        if "honest_clock" in wanted:
            found(_clock(child, big_case(spec), traces))
        if "monotone_time" in wanted:
            found(judge_monotone(traces))
        stopped: list[dict] = []
        for check in ("cancel", "time_limit"):
            if check in wanted or ("memory" in wanted and not stopped):
                result = _stop_run(child, check, big_case(spec))
                stopped.append(result)
                if check in wanted:
                    found(judge_stop(check, result, big_case(spec).label()))
        if "memory" in wanted:
            found(judge_memory(stopped, big_case(spec).label()))
    finally:
        child.close()
        report.seconds = time.monotonic() - began
    return report


WARMUP_WHAT = "warm-up (solvers.run.warmup: every declared case on tiny problems)"


def _certify(
    child: Child,
    spec: SolverSpec,
    tol: float,
    traces: list[tuple[str, list]],
    progress: Callable[[str], None],
) -> Finding:
    """The certification runs (their traces appended to ``traces``) and their finding."""
    lines, failures, worst = [], [], 0.0
    for case in certification_cases(spec):
        run = Run(case, reference=True)
        result = child.call(run, run.deadline())
        good, line, distance = judge_certification(case, result, tol)
        lines.append(line)
        worst = max(worst, distance)
        if not good:
            failures.append(line)
        progress(f"  {'ok  ' if good else 'FAIL'} {line}")
        if "points" in result:
            traces.append((case.label(), result["points"]))
    if failures:
        summary = f"{len(failures)} of {len(lines)} problems: {failures[0]}"
    else:
        summary = (
            f"{len(lines)} problems (dense and sparse, each declared loss, penalty and K-class "
            f"form): final P and gap within {worst:.1e} of P* (allowed {tol:g})"
        )
    return Finding("certification", not failures, summary, lines)


def _clock(child: Child, big: Case, traces: list[tuple[str, list]]) -> Finding:
    """A calibration run of about 0.3 s of solver time, then twice to its epoch count with
    trace points and twice without (their traces appended to ``traces``)."""
    case = Case(big.loss, big.penalty, "sparse", n=5000, d=500, density=0.02)
    calibration = child.call(Run(case, 1e9, 0.3, 0.0), 0.3 + CANCEL_WITHIN + GRACE)
    failed = _failed_run(calibration, case.label())
    if failed is not None:
        return Finding("honest_clock", False, failed)
    epochs = max(calibration["points"][-1][1], 1e-2)
    traced: list[dict] = []
    quiet: list[dict] = []
    for _ in range(2):
        for results, is_quiet in ((traced, False), (quiet, True)):
            run = Run(case, epochs, 30.0, 0.0, quiet=is_quiet)
            results.append(child.call(run, run.deadline()))
    traces += [(case.label(), r["points"]) for r in traced if "points" in r]
    return judge_clock(traced, quiet, case.label())


def _stop_run(child: Child, check: str, big: Case) -> dict:
    """The cancel run (cancel asked CANCEL_AFTER seconds in) or the time-limit run."""
    if check == "cancel":
        run = Run(big, 1e9, 600.0, 0.0, cancel_after=CANCEL_AFTER)
    else:
        run = Run(big, 1e9, TIME_LIMIT, 0.0)
    return child.call(run, run.deadline())


def _said(progress: Callable[[str], None], finding: Finding) -> None:
    mark = {True: "ok", False: "FAIL", None: "n/a"}[finding.ok]
    progress(f"{finding.check.replace('_', ' ')}: {mark}: {finding.summary}")
