"""The analysis of convergence traces, written once: pure functions (numpy only) that the
dashboard's figures, the CLI and the benchmarks call.

A *trace* maps ``seq``, ``iteration``, ``epoch``, ``time_s``, ``primal`` and ``gap`` to
equal-length sequences (a job row's ``trace``); a *reference* is ``{"primal": P*, "gap":
its certificate}``, or None when the objective has no certified optimum.

**Measures of a trace** (:func:`measure`, by name):

- ``primal``: the primal value P; ``gap``: the duality gap P − D, which bounds P − P*;
- ``gap_rel``: the relative gap gap/max(1, |P|) (:func:`relative_gap`), the very quantity
  the solvers' ``tol`` stop rule compares, so a run that stopped ``converged`` at ``tol``
  has ``gap_rel`` ≤ ``tol`` at its last point;
- ``subopt``: the suboptimality P − P* (:func:`suboptimality`);
- ``subopt_rel``: the relative suboptimality (P − P*)/|P*| (:func:`relative_suboptimality`).

**P* = 0.** The relative suboptimality is undefined when P* = 0: there is no scale to be
relative to. It is NaN there, and a trace's ``subopt_rel`` measure is None, as without a
certified P*: the compare figure leaves the curve out and says so, the time to ε under
``subopt_rel`` is NaN (undecidable: no rank, "no P*", left out of the profiles' problems),
and a benchmark's relative values are NaN, which never reach a target. (Every loss here is
≥ 0, so P* ≥ 0; P* = 0 only on degenerate problems, e.g. the squared loss with b = 0.)

**Time to ε** (:func:`time_to_eps`): the time, epoch or iteration of the first trace point
whose criterion (``subopt_rel`` or ``gap_rel``) is ≤ ε (:func:`first_index`: its index);
None when no point gets there, NaN when the criterion cannot be decided. A NaN value never
reaches ε. Over the seeds of a setting (:func:`seed_summary`, :func:`reached_quantile`), a
seed that never reached ε counts as infinitely slow.

**Held-out measures** (:func:`held_out`): a job with a test split has, at each point, the
metrics of its iterate on the test rows (solvers.heldout, the point's extras ``"test"``: a
trace's ``test`` column). ``test_loss`` is the test loss; ``test_score`` the accuracy of a
loss on ±1 labels, R² of a regression loss. A trace without them has neither measure
(None), as a suboptimality without P*.

**Time to settle** (:func:`time_to_settle`): the time (epoch, iteration) of the first point
after which a held-out measure stays within δ of its final value — relative, δ·|final|, for
the test loss; absolute for accuracy and R², which are fractions already. A point without
the metric (a diverged iterate) is not within δ. It is a finished run's: the final value of
a running job is not final, so a setting is ranked by it only once all its runs succeeded
(:func:`settled_value`).

**Profiles** (Dolan & Moré 2002; Moré & Wild 2009): a *problem* p is an objective (its
``objective_hash``: data, loss, weights); a *solver* s is a solver setting (its legend
name); t_{p,s} is the median over the setting's seeds of the time (or epochs) to reach ε
on p, ∞ when the median seed never reaches it and when s was not run on p (a missing run
solves nothing). A problem whose criterion cannot be decided (no certified P*) is left out
of P and listed (:class:`Problems`).

- **Performance profile** ("Benchmarking optimization software with performance
  profiles", Math. Program. 91, eqs. (1)–(2)): r_{p,s} = t_{p,s} / min_s t_{p,s} and
  ρ_s(τ) = |{p ∈ P : r_{p,s} ≤ τ}| / |P|, a step function of τ ≥ 1 drawn from 1 to the
  largest finite ratio. ρ_s(1) is the fraction of problems s is fastest on; ρ_s(τ) for
  large τ, the fraction it solves at all. A problem no setting solves keeps r = ∞ for all
  and still counts in |P|.
- **Data profile** ("Benchmarking derivative-free optimization algorithms", SIAM J. Optim.
  20, eq. (2.7)): d_s(κ) = |{p ∈ P : t_{p,s} / c_p ≤ κ}| / |P|, with c_p the cost of one
  pass over p's data. Our epochs are that unit already (an epoch is nnz(A) non-zeros
  visited, the same for every solver), so with t in epochs, c_p = 1 and κ counts passes.
  No solver-independent seconds per pass is recorded for a problem (a setting's own
  seconds per epoch would turn its time profile into its epoch profile, and a pooled one
  would change with the settings selected), so data profiles are in epochs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from faceoff.solvers.gap import relative_gap

# the trace field read by each x axis of a time to ε
X_FIELDS = {"time": "time_s", "epoch": "epoch", "iteration": "iteration"}
# held-out measures: the keys of a point's test metrics each reads (solvers.heldout), the
# first present; whether δ of its time to settle is relative to the final value
HELD_OUT = {"test_loss": ("loss",), "test_score": ("accuracy", "r2")}
SETTLE_RELATIVE = {"test_loss": True, "test_score": False}
MEASURES = ("primal", "gap", "gap_rel", "subopt", "subopt_rel", *HELD_OUT)
NEEDS_REFERENCE = ("subopt", "subopt_rel")
# the criteria of a time to ε, written out (the dashboard shows these)
CRITERIA = {
    "subopt_rel": "(P − P*)/|P*| ≤ ε",
    "gap_rel": "gap/max(1, |P|) ≤ ε",
}
BAND = (0.25, 0.75)  # quantiles of the band around the median over seeds
GRID_POINTS = 200  # common x grid of the median over seeds
# why a setting has no time to ε (and so no rank)
NOT_REACHED = "not reached"
NO_REFERENCE = "no P*"
# why a setting has no time to settle (and so no rank)
NO_HELD_OUT = "no held-out metrics"
UNSETTLED = "no final value"  # the last point's metric is not a number (a diverged run)


# ---------------------------------------------------------------- measures of a trace


def suboptimality(primal: ArrayLike, p_star: float) -> np.ndarray | float:
    """P − P*: how far the primal value is above the optimum (≥ 0 up to P*'s certificate)."""
    return (np.asarray(primal, dtype=float) - p_star)[()]


def relative_suboptimality(primal: ArrayLike, p_star: float) -> np.ndarray | float:
    """(P − P*)/|P*|, elementwise; NaN when P* = 0, where it is undefined (see the module's
    "P* = 0")."""
    primal = np.asarray(primal, dtype=float)
    if p_star == 0:
        return np.full(primal.shape, math.nan)[()]
    return ((primal - p_star) / abs(p_star))[()]


def measure(
    trace: Mapping[str, Sequence[float]], name: str, reference: Mapping[str, float] | None
) -> np.ndarray | None:
    """The values of measure ``name`` (one of :data:`MEASURES`) at the points of ``trace``;
    None when it is undefined: a suboptimality without a reference P*, a relative one with
    P* = 0, a held-out measure of a trace without held-out metrics."""
    if name in HELD_OUT:
        return held_out(trace.get("test") or [], name)
    primal = np.asarray(trace["primal"], dtype=float)
    if name == "primal":
        return primal
    if name == "gap":
        return np.asarray(trace["gap"], dtype=float)
    if name == "gap_rel":
        return np.asarray(relative_gap(np.asarray(trace["gap"], dtype=float), primal))
    if name not in NEEDS_REFERENCE:
        raise ValueError(f"unknown measure {name!r}; accepted: {', '.join(MEASURES)}")
    if reference is None:
        return None
    p_star = reference["primal"]
    if name == "subopt":
        return np.asarray(suboptimality(primal, p_star))
    if p_star == 0:  # undefined, as without a P*
        return None
    return np.asarray(relative_suboptimality(primal, p_star))


def held_out(tests: Sequence[Any], name: str) -> np.ndarray | None:
    """The values of held-out measure ``name`` (:data:`HELD_OUT`) of the points whose test
    metrics are ``tests`` (a trace's ``test`` column: a dict or None each); NaN where a
    point lacks it, None when no point has it."""
    keys = HELD_OUT[name]
    values = []
    for metrics in tests:
        value = next((metrics[k] for k in keys if metrics and k in metrics), None)
        values.append(math.nan if value is None else float(value))
    out = np.array(values, dtype=float)
    return out if np.isfinite(out).any() else None


# ---------------------------------------------------------------- first point reaching ε


def first_index(values: ArrayLike, eps: float) -> int | None:
    """The index of the first value ≤ ``eps``; None if none is (NaN never is, nor is any
    value of an empty trace)."""
    hit = np.flatnonzero(np.asarray(values, dtype=float) <= eps)
    return int(hit[0]) if hit.size else None


def first_reaching(xs: Sequence[float], values: ArrayLike, eps: float) -> float | None:
    """``xs`` (times, passes, ...) at the first value ≤ ``eps`` (:func:`first_index`);
    None if never."""
    values = np.asarray(values, dtype=float)
    if len(xs) != len(values):
        raise ValueError(f"{len(xs)} x values for {len(values)} values: one each expected")
    k = first_index(values, eps)
    return None if k is None else float(xs[k])


def time_to_eps(
    trace: Mapping[str, Sequence[float]],
    criterion: str,
    eps: float,
    reference: Mapping[str, float] | None,
    x: str = "time",
) -> float | None:
    """The time, epoch or iteration (``x``, :data:`X_FIELDS`) of the first point of
    ``trace`` that meets ``criterion`` (:data:`CRITERIA`) at ``eps``; None if no point
    does, NaN if it cannot be decided (``subopt_rel`` without a certified P*, or P* = 0)."""
    if criterion not in CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r}; accepted: {', '.join(CRITERIA)}")
    if x not in X_FIELDS:
        raise ValueError(f"unknown x {x!r}; accepted: {', '.join(X_FIELDS)}")
    values = measure(trace, criterion, reference)
    if values is None:
        return math.nan
    k = first_index(values, eps)
    return None if k is None else float(trace[X_FIELDS[x]][k])


# ---------------------------------------------------------------- held-out metrics settling


def settle_index(values: ArrayLike, delta: float, relative: bool) -> int | None:
    """The index of the first value after which every value is within ``delta`` of the
    last (``delta``·|last| when ``relative``); None when the last is not finite or there
    is none. A NaN is never within."""
    values = np.asarray(values, dtype=float)
    if values.size == 0 or not math.isfinite(values[-1]):
        return None
    final = values[-1]
    bound = delta * abs(final) if relative else delta
    outside = np.flatnonzero(~(np.abs(values - final) <= bound))
    return int(outside[-1]) + 1 if outside.size else 0


def time_to_settle(
    trace: Mapping[str, Sequence[Any]], name: str, delta: float, x: str = "time"
) -> float | None:
    """The time, epoch or iteration (``x``) of the first point of ``trace`` after which
    held-out measure ``name`` (:data:`HELD_OUT`) stays within ``delta`` of its final value
    (:func:`settle_index`, relative for :data:`SETTLE_RELATIVE`); None when the trace has
    no such metric or no finite final one."""
    if name not in HELD_OUT:
        raise ValueError(f"unknown held-out measure {name!r}; accepted: {', '.join(HELD_OUT)}")
    if x not in X_FIELDS:
        raise ValueError(f"unknown x {x!r}; accepted: {', '.join(X_FIELDS)}")
    values = held_out(trace.get("test") or [], name)
    k = None if values is None else settle_index(values, delta, SETTLE_RELATIVE[name])
    return None if k is None else float(trace[X_FIELDS[x]][k])


def settled_value(
    runs: Sequence[tuple[str, bool, float | None]],
) -> tuple[float | None, str | None]:
    """(the time to settle of a setting on an objective, None; why it has none): the median
    over its ``runs`` — (status, whether it has held-out metrics, its time to settle) each —
    when every run succeeded with a time. Otherwise no time, and why: a run that has not
    succeeded (its status: a running job's last value is not final), one without held-out
    metrics (:data:`NO_HELD_OUT`), one without a finite final value (:data:`UNSETTLED`)."""
    for status, _, _ in runs:
        if status != "succeeded":
            return None, status
    if not runs or not all(has_metrics for _, has_metrics, _ in runs):
        return None, NO_HELD_OUT
    times = [value for _, _, value in runs]
    if any(value is None for value in times):
        return None, UNSETTLED
    return float(np.median(np.array(times, dtype=float))), None


# ---------------------------------------------------------------- over seeds


def reached_quantile(values: Sequence[float | None], q: float) -> float | None:
    """The ``q``-quantile (linear interpolation) of times to ε over seeds, a seed that never
    reached ε (None) counting as +∞: None when the quantile touches such a seed, and for no
    seeds. The times must not be NaN (an undecidable time: see :func:`seed_summary`)."""
    if not values:
        return None
    ordered = np.sort(np.array([math.inf if v is None else v for v in values], dtype=float))
    h = (len(ordered) - 1) * q
    lo, hi = math.floor(h), math.ceil(h)
    a, b = ordered[lo], ordered[hi]
    if math.isinf(b) and (hi > lo or math.isinf(a)):
        return None
    return float(a + (b - a) * (h - lo))


def seed_summary(values: Sequence[float | None]) -> dict[str, Any]:
    """The time to ε of a setting on one objective over its seeds (each a time, None: never
    reached, NaN: undecidable): ``value`` the median, ``q25`` and ``q75`` the quartiles
    (:data:`BAND`; None where they touch a seed that never reached, all three NaN when a
    seed is undecidable), ``reached`` how many seeds reached ε, ``seeds`` how many ran."""
    if any(v is not None and math.isnan(v) for v in values):
        stats: list[float | None] = [math.nan] * 3
    else:
        stats = [reached_quantile(values, q) for q in (0.5, *BAND)]
    return {
        "value": stats[0],
        "q25": stats[1],
        "q75": stats[2],
        "reached": sum(v is not None and not math.isnan(v) for v in values),
        "seeds": len(values),
    }


def finite_points(x: ArrayLike, y: ArrayLike, log_x: bool, log_y: bool) -> np.ndarray:
    """Which points (x, y) can be drawn: both finite, and positive on a log axis."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    if log_x:
        keep &= x > 0
    if log_y:
        keep &= y > 0
    return keep


def median_band(
    curves: Sequence[tuple[ArrayLike, ArrayLike]],
    log_x: bool,
    log_y: bool,
    quantiles: tuple[float, float] = BAND,
    n_grid: int = GRID_POINTS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Median and quantile band of several curves (x, y) on a common x grid.

    The grid spans all curves, from the earliest first x to the latest last x. Each curve is
    interpolated onto it in the plotted scale (log10 of a log axis); beyond its last point a
    curve keeps its final value (that run has finished and stays where it ended; a running
    one counts where it is now), before its first point it counts with its first value. So
    every grid point has the same members, and curves that never rise give a median and
    band that never rise. Points a log axis cannot show are left out first
    (:func:`finite_points`), and a curve with none left does not count. Returns ``(x,
    median, low, high)``, all empty without a curve.
    """
    tx, ty = [], []
    for x, y in curves:
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        keep = finite_points(x, y, log_x, log_y)
        if keep.sum() == 0:
            continue
        x, y = x[keep], y[keep]
        order = np.argsort(x, kind="stable")
        x, y = x[order], y[order]
        tx.append(np.log10(x) if log_x else x)
        ty.append(np.log10(y) if log_y else y)
    if not tx:
        empty = np.array([])
        return empty, empty, empty, empty
    start, stop = min(t[0] for t in tx), max(t[-1] for t in tx)
    grid = np.linspace(start, stop, n_grid) if stop > start else np.array([start])
    # np.interp holds the first and the last value outside a curve's own range
    values = np.vstack([np.interp(grid, t, v) for t, v in zip(tx, ty, strict=True)])
    mid = np.median(values, axis=0)
    low, high = np.quantile(values, quantiles, axis=0)
    back_x = (lambda v: 10.0**v) if log_x else (lambda v: v)
    back_y = (lambda v: 10.0**v) if log_y else (lambda v: v)
    return back_x(grid), back_y(mid), back_y(low), back_y(high)


# ---------------------------------------------------------------- ranking


def unreached_reason(value: float | None) -> str | None:
    """Why a time to ε is no time: :data:`NOT_REACHED` (None), :data:`NO_REFERENCE` (NaN:
    undecidable); None when it is a time."""
    if value is None:
        return NOT_REACHED
    return NO_REFERENCE if math.isnan(value) else None


def _no_rank(result: Mapping[str, Any]) -> str | None:
    """Why a result of :func:`ranking` has no rank (its ``reason``, or its value's)."""
    return result.get("reason") or unreached_reason(result["value"])


def ranking(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per objective: the settings that reached ε ranked by time to ε (1 = fastest; ties
    keep the order of ``results``). A setting that never reached ε, or cannot be decided
    (no P*), gets no rank: it is in ``unranked`` with why.

    ``results`` are dicts with ``setting``, ``objective`` and ``value`` (a time, None or
    NaN), and may say why a setting has no rank (``reason``: then it has none). Each
    item: ``objective``, ``winner``, ``value``, ``runner_up``, ``speedup``
    (runner-up / winner, None without a runner-up or when the winner's time is 0),
    ``ranks`` {setting: rank}, ``unranked`` {setting: why, e.g. "not reached", "no P*"}."""
    by_objective: dict[str, list[Mapping[str, Any]]] = {}
    for r in results:
        by_objective.setdefault(r["objective"], []).append(r)
    out = []
    for objective, members in by_objective.items():
        timed = sorted((r for r in members if not _no_rank(r)), key=lambda r: r["value"])
        winner = timed[0] if timed else None
        runner = timed[1] if len(timed) > 1 else None
        out.append(
            {
                "objective": objective,
                "winner": winner["setting"] if winner else None,
                "value": winner["value"] if winner else None,
                "runner_up": runner["setting"] if runner else None,
                "speedup": runner["value"] / winner["value"]
                if runner and winner and winner["value"] > 0
                else None,
                "ranks": {r["setting"]: i + 1 for i, r in enumerate(timed)},
                "unranked": {r["setting"]: s for r in members if (s := _no_rank(r))},
            }
        )
    return out


# ---------------------------------------------------------------- profiles


@dataclass
class Problems:
    """t_{p,s} of the decided problems (rows) × settings (columns)."""

    settings: list[str]
    solvers: dict[str, str]  # setting → solver
    hashes: list[str]  # objective hashes of the problems in P, in order
    labels: dict[str, str]  # objective hash → label, for every problem seen
    t: np.ndarray  # shape (len(hashes), len(settings)); inf: not reached or not run
    ran: np.ndarray  # bool, same shape: whether the setting was run on the problem
    undecided: list[str]  # objective hashes left out of P: no certified P*

    @property
    def not_run(self) -> int:
        """The number of (problem, setting) pairs of P that were never run."""
        return int((~self.ran).sum())

    @property
    def unsolved(self) -> list[str]:
        """Objective hashes of the problems in P that no setting solved."""
        return [h for h, row in zip(self.hashes, self.t, strict=True) if not np.isfinite(row).any()]


def problems(results: Sequence[Mapping[str, Any]]) -> Problems:
    """The problem × setting matrix of times to ε: ``results`` are dicts with ``setting``,
    ``solver``, ``objective`` (a label), ``objective_hash`` and ``value`` (the median over
    seeds; None: not reached, NaN: undecidable, which leaves the problem out)."""
    settings = sorted({r["setting"] for r in results})
    labels = {r["objective_hash"]: r["objective"] for r in results}
    undecided = sorted(
        {r["objective_hash"] for r in results if r["value"] is not None and math.isnan(r["value"])},
        key=lambda h: labels[h],
    )
    hashes = sorted(set(labels) - set(undecided), key=lambda h: (labels[h], h))
    row = {h: i for i, h in enumerate(hashes)}
    column = {s: j for j, s in enumerate(settings)}
    t = np.full((len(hashes), len(settings)), math.inf)
    ran = np.zeros(t.shape, dtype=bool)
    for r in results:
        if r["objective_hash"] in row:
            i, j = row[r["objective_hash"]], column[r["setting"]]
            ran[i, j] = True
            t[i, j] = math.inf if r["value"] is None else r["value"]
    solvers = {r["setting"]: r["solver"] for r in results}
    return Problems(settings, solvers, hashes, labels, t, ran, undecided)


def performance_ratios(t: ArrayLike) -> np.ndarray:
    """r_{p,s} = t_{p,s} / min_s t_{p,s} (Dolan & Moré 2002, eq. (1)); ∞ where t is, and
    for every setting of a problem nobody solved. A best time of 0 (ε met at the start)
    gives 0/0 = 1 to the settings at 0 and ∞ to the others."""
    t = np.asarray(t, dtype=float)
    if t.size == 0:
        return t.copy()
    best = t.min(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = t / best
    r[np.isinf(t) | np.isinf(np.broadcast_to(best, t.shape))] = math.inf
    r[(t == 0) & (best == 0)] = 1.0
    return r


@dataclass
class Profile:
    """Fractions of problems within x, a right-continuous step function per setting:
    ``y[k, s]`` = |{p : values[p, s] ≤ x[k]}| / n_problems for the breakpoints ``x``."""

    x: np.ndarray
    y: np.ndarray  # shape (len(x), n_settings)
    counts: np.ndarray  # the problems counted, same shape
    n_problems: int


def fraction_within(values: ArrayLike, bound: float) -> np.ndarray:
    """Per column s: |{p : values[p, s] ≤ bound}| / |P| (∞ never counts); ρ_s(τ) of the
    ratios, d_s(κ) of the passes."""
    values = np.asarray(values, dtype=float)
    if values.shape[0] == 0:
        return np.zeros(values.shape[1])
    return (values <= bound).sum(axis=0) / values.shape[0]


def step_profile(values: ArrayLike, start: float | None = None) -> Profile:
    """The profile of ``values`` (problems × settings; ∞: never): its breakpoints are the
    distinct finite values (and ``start``, where the drawing begins), in order."""
    values = np.asarray(values, dtype=float)
    finite = values[np.isfinite(values)]
    points = np.unique(finite)
    if start is not None:
        points = np.unique(np.append(points[points >= start], start))
    counts = (
        np.array([(values <= x).sum(axis=0) for x in points])
        if points.size
        else np.zeros((0, values.shape[1]), dtype=int)
    )
    n = values.shape[0]
    return Profile(points, counts / n if n else counts.astype(float), counts, n)


def performance_profile(t: ArrayLike) -> Profile:
    """ρ_s(τ) (Dolan & Moré 2002, eq. (2)) on τ from 1 to the largest finite ratio."""
    return step_profile(performance_ratios(t), start=1.0)


def data_profile(t_epochs: ArrayLike) -> Profile:
    """d_s(κ) (Moré & Wild 2009, eq. (2.7)) with t in epochs and c_p = one pass: κ from the
    fewest passes any setting needed to the most."""
    return step_profile(t_epochs)


def solved_summary(found: Problems) -> list[dict[str, Any]]:
    """Per setting: problems run, solved (reached ε), fastest on (ties count for each), and
    the fractions solved and fastest of |P|."""
    n = len(found.hashes)
    ratios = performance_ratios(found.t)
    out = []
    for j, setting in enumerate(found.settings):
        solved = int(np.isfinite(found.t[:, j]).sum())
        best = int((ratios[:, j] == 1.0).sum())
        out.append(
            {
                "setting": setting,
                "solver": found.solvers[setting],
                "run": int(found.ran[:, j].sum()),
                "solved": solved,
                "fastest": best,
                "problems": n,
                "fraction_solved": solved / n if n else 0.0,
                "fraction_fastest": best / n if n else 0.0,
            }
        )
    return out
