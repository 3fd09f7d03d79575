"""Performance profiles and data profiles of time to ε: how solver settings compare over
many problems. Pure functions from :func:`faceoff.dashboard.figures.time_to_eps` results.

A *problem* p is an objective (its ``objective_hash``: data, loss, weights); a *solver* s is
a solver setting (:func:`faceoff.dashboard.figures.setting_name`); t_{p,s} is the median over
the setting's seeds of the time (or epochs) to reach ε on p, ∞ when the median seed never
reaches it and when s was not run on p (a missing run solves nothing). A problem whose
criterion cannot be decided (no certified P*) is left out of P and listed.

- **Performance profile** (Dolan & Moré 2002, "Benchmarking optimization software with
  performance profiles", Math. Program. 91, eqs. (1)–(2)):
  r_{p,s} = t_{p,s} / min_s t_{p,s} and ρ_s(τ) = |{p ∈ P : r_{p,s} ≤ τ}| / |P|, a step
  function of τ ≥ 1 drawn from 1 to the largest finite ratio. ρ_s(1) is the fraction of
  problems s is fastest on; ρ_s(τ) for large τ, the fraction it solves at all. A problem no
  setting solves keeps r = ∞ for all and still counts in |P|.
- **Data profile** (Moré & Wild 2009, "Benchmarking derivative-free optimization
  algorithms", SIAM J. Optim. 20, eq. (2.7)): d_s(κ) = |{p ∈ P : t_{p,s} / c_p ≤ κ}| / |P|,
  with c_p the cost of one pass over p's data. Our epochs are that unit already (an epoch
  is nnz(A) non-zeros visited, the same for every solver), so with t in epochs, c_p = 1 and
  κ counts passes. No solver-independent seconds per pass is recorded for a problem (a
  setting's own seconds per epoch would turn its time profile into its epoch profile, and
  a pooled one would change with the settings selected), so data profiles are in epochs.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from faceoff.dashboard.figures import DASHES, solver_color

UNITS = {"time": "seconds", "epoch": "epochs"}


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
    """The problem × setting matrix of ``time_to_eps`` results (``value`` None: not reached,
    NaN: undecidable, which leaves the problem out)."""
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


def performance_ratios(t: np.ndarray) -> np.ndarray:
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


def fraction_within(values: np.ndarray, bound: float) -> np.ndarray:
    """Per column s: |{p : values[p, s] ≤ bound}| / |P| (∞ never counts); ρ_s(τ) of the
    ratios, d_s(κ) of the passes."""
    values = np.asarray(values, dtype=float)
    if values.shape[0] == 0:
        return np.zeros(values.shape[1])
    return (values <= bound).sum(axis=0) / values.shape[0]


def step_profile(values: np.ndarray, start: float | None = None) -> Profile:
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


def performance_profile(t: np.ndarray) -> Profile:
    """ρ_s(τ) (Dolan & Moré 2002, eq. (2)) on τ from 1 to the largest finite ratio."""
    return step_profile(performance_ratios(t), start=1.0)


def data_profile(t_epochs: np.ndarray) -> Profile:
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


def _dashes(found: Problems) -> dict[str, str]:
    """A line style per setting, cycling within each solver (its colour)."""
    index: dict[str, int] = {}
    dashes = {}
    for setting in found.settings:
        solver = found.solvers[setting]
        dashes[setting] = DASHES[index.setdefault(solver, 0) % len(DASHES)]
        index[solver] += 1
    return dashes


PAD = 0.03  # of the log x span, each side: the first and last steps stay in view


def profile_figure(
    found: Problems, profile: Profile, title: str, x_label: str, symbol: str, from_zero: bool
) -> go.Figure:
    """One step curve per setting of ``profile`` on a log x axis (``symbol``: τ or κ), from
    its first breakpoint, or with ``from_zero`` from 0 just left of it (nothing is solved
    below the first breakpoint of a data profile)."""
    fig = go.Figure()
    dashes = _dashes(found)
    n = profile.n_problems
    x, y, counts = profile.x, profile.y, profile.counts
    low, high = (math.log10(x[0]), math.log10(x[-1])) if x.size else (0.0, 1.0)
    pad = PAD * (high - low) if high > low else 0.1
    if from_zero and x.size:
        x = np.append(10 ** (low - pad), x)
        y = np.vstack([np.zeros(y.shape[1]), y])
        counts = np.vstack([np.zeros(counts.shape[1], dtype=int), counts])
    for j, setting in enumerate(found.settings):
        solver = found.solvers[setting]
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y[:, j],
                name=setting,
                mode="lines",
                line={"shape": "hv", "color": solver_color(solver), "dash": dashes[setting]},
                customdata=counts[:, j],
                hovertemplate=(
                    f"<b>{setting}</b><br>{symbol} = %{{x:.4g}}<br>"
                    f"%{{customdata}} of {n} problems (%{{y:.0%}})<extra></extra>"
                ),
            )
        )
    fig.update_layout(
        template="plotly_white",
        title={"text": title, "x": 0.01},
        xaxis={"title": x_label, "type": "log", "range": [low - pad, high + pad]},
        yaxis={"title": f"fraction of the {n} problems", "range": [0, 1.04]},
        legend={"title": {"text": "solver[settings]"}, "orientation": "h", "y": -0.22},
        hovermode="closest",
        margin={"l": 70, "r": 20, "t": 60, "b": 40},
    )
    return fig


CSV_COLUMNS = ("profile", "measure", "setting", "solver", "x", "fraction", "within", "problems")


def profiles_csv(found: Problems, curves: Mapping[str, tuple[str, Profile]]) -> str:
    """The profile curves as CSV: per profile (name → (measure, profile)) and setting, one
    line per breakpoint: x (τ or κ), the fraction of problems within it and their count."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for name, (measure, profile) in curves.items():
        for j, setting in enumerate(found.settings):
            for k, x in enumerate(profile.x):
                writer.writerow(
                    [
                        name,
                        measure,
                        setting,
                        found.solvers[setting],
                        repr(float(x)),
                        repr(float(profile.y[k, j])),
                        int(profile.counts[k, j]),
                        profile.n_problems,
                    ]
                )
    return out.getvalue()
