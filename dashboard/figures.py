"""The dashboard's figures and tables: pure functions from rows (plain dicts) to ``go.Figure``.

A *job row* is a dict with ``id``, ``solver``, ``params``, ``seed``, ``dataset``, ``loss``,
``gamma``, ``l1``, ``l2``, ``normalize``, ``objective_hash``, ``status``, ``trace_mode``
(optional: None before a worker starts the job) and ``trace``, a dict of equal-length lists
``seq``, ``iteration``, ``epoch``, ``time_s``, ``primal``, ``gap``.
*References* map an ``objective_hash`` to ``{"primal": P*, "gap": certificate}``.
"""

from __future__ import annotations

import csv
import io
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from faceoff.solvers.catalogue import CATALOGUE
from faceoff.solvers.vocabulary import loss_label

X_AXES = {
    "time": ("time_s", "solver time (s)"),
    "epoch": ("epoch", "epochs (passes over A)"),
    "iteration": ("iteration", "iterations"),
}
Y_MEASURES = {
    "subopt": "suboptimality P − P*",
    "subopt_rel": "relative suboptimality (P − P*)/|P*|",
    "gap": "duality gap P − D",
    "primal": "primal value P",
}
NEEDS_REFERENCE = ("subopt", "subopt_rel")
CRITERIA = {
    "subopt_rel": "(P − P*)/|P*| ≤ ε",
    "gap_rel": "gap/max(1, |P|) ≤ ε",
}
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
PATTERNS = ("", "/", ".", "x", "-", "+")
PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#ff7f0e",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#7f7f7f",
    "#bcbd22",
)
# trace modes a legend names (solvers.catalogue.SolverSpec.trace_mode); ours are "native"
NOTED_MODES = ("callback", "refit")
REFIT_MARKER = {"symbol": "circle", "size": 7}  # a refit trace's points: one fit each
REFIT_NOTE = "● refit: each marked point is its own fit from scratch, its time that fit's wall time"
BAND = (0.25, 0.75)  # quantiles of the band around the median over seeds
GRID_POINTS = 200  # common x grid of the median over seeds


def solver_color(solver: str) -> str:
    """One colour per solver, stable across pages (catalogue order)."""
    names = list(CATALOGUE)
    index = names.index(solver) if solver in names else len(names) + sum(map(ord, solver))
    return PALETTE[index % len(PALETTE)]


def solver_defaults(solver: str) -> dict[str, Any]:
    """Default parameter values of a catalogue solver (empty for an unknown one)."""
    spec = CATALOGUE.get(solver)
    return {p.name: p.default for p in spec.params} if spec else {}


def _fmt(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def legend_name(solver: str, params: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
    """``spdc[batch_size=8,sampling=weighted]``: the solver and its non-default parameters."""
    changed = [
        f"{k}={_fmt(v)}" for k, v in sorted(params.items()) if k not in defaults or defaults[k] != v
    ]
    return f"{solver}[{','.join(changed)}]" if changed else solver


def setting_name(row: Mapping[str, Any]) -> str:
    """The legend name of a job row's solver setting."""
    return legend_name(row["solver"], row["params"], solver_defaults(row["solver"]))


def weights_label(l2: float, l1: float) -> str:
    return f"l2={l2:g}" + (f", l1={l1:g}" if l1 else "")


def objective_labels(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """A short label per objective hash, naming only what differs between the objectives."""
    parts: dict[str, dict[str, str]] = {}
    for row in rows:
        parts[row["objective_hash"]] = {
            "dataset": row["dataset"],
            "loss": loss_label(row["loss"], row["gamma"]),
            "normalize": "" if row["normalize"] == "none" else f"normalize={row['normalize']}",
            "weights": weights_label(row["l2"], row["l1"]),
        }
    varying = ["dataset", "loss", "normalize", "weights"]
    if len(parts) > 1:
        varying = [k for k in varying if len({p[k] for p in parts.values()}) > 1]
    labels = {h: " · ".join(p[k] for k in varying if p[k]) for h, p in parts.items()}
    if len(set(labels.values())) < len(labels):  # differing in what a label does not show
        labels = {h: f"{label} · objective {h[:8]}".strip(" ·") for h, label in labels.items()}
    return labels


def y_values(
    trace: Mapping[str, Sequence[float]], measure: str, reference: Mapping[str, float] | None
) -> np.ndarray | None:
    """The y measure of a trace; None when it needs a reference P* and there is none."""
    primal = np.asarray(trace["primal"], dtype=float)
    if measure == "primal":
        return primal
    if measure == "gap":
        return np.asarray(trace["gap"], dtype=float)
    if measure not in NEEDS_REFERENCE:
        raise ValueError(f"unknown y measure {measure!r}; accepted: {', '.join(Y_MEASURES)}")
    if reference is None:
        return None
    p_star = reference["primal"]
    if measure == "subopt":
        return primal - p_star
    if p_star == 0:
        return None
    return (primal - p_star) / abs(p_star)


@dataclass
class Series:
    """One curve of the compare figure: a job, or the median over the seeds of a setting."""

    name: str
    solver: str
    setting: str
    objective: str
    job_ids: list[int]
    x: np.ndarray
    y: np.ndarray
    lo: np.ndarray | None = None  # quantile band over seeds
    hi: np.ndarray | None = None
    points: np.ndarray | None = None  # exact trace points of a single job, for hover
    dash: str = "solid"
    trace_mode: str | None = None  # how its jobs' traces were made (None: not known yet)

    def legend(self, *notes: str) -> str:
        """Its legend entry: the name, then the trace mode unless native, and ``notes``:
        ``sklearn.liblinear (refit)``, ``lightning.sdca (callback, median of 3)``."""
        shown = [self.trace_mode] if self.trace_mode in NOTED_MODES else []
        shown += notes
        return f"{self.name} ({', '.join(shown)})" if shown else self.name


def _valid(x: np.ndarray, y: np.ndarray, log_x: bool, log_y: bool) -> np.ndarray:
    keep = np.isfinite(x) & np.isfinite(y)
    if log_x:
        keep &= x > 0
    if log_y:
        keep &= y > 0
    return keep


def median_band(
    curves: Sequence[tuple[np.ndarray, np.ndarray]],
    log_x: bool,
    log_y: bool,
    quantiles: tuple[float, float] = BAND,
    n_grid: int = GRID_POINTS,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Median and quantile band of several curves (x, y) on a common x grid.

    Each curve is interpolated (in the plotted scale: log10 of a log axis) onto a grid
    spanning all curves; outside its own range a curve does not count. Returns
    ``(x, median, low, high)``.
    """
    tx, ty = [], []
    for x, y in curves:
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        keep = _valid(x, y, log_x, log_y)
        if keep.sum() == 0:
            continue
        x, y = x[keep], y[keep]
        tx.append(np.log10(x) if log_x else x)
        ty.append(np.log10(y) if log_y else y)
    if not tx:
        empty = np.array([])
        return empty, empty, empty, empty
    start, stop = min(t[0] for t in tx), max(t[-1] for t in tx)
    grid = np.linspace(start, stop, n_grid) if stop > start else np.array([start])
    values = np.vstack(
        [np.interp(grid, t, v, left=np.nan, right=np.nan) for t, v in zip(tx, ty, strict=True)]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # grid points no curve covers
        mid = np.nanmedian(values, axis=0)
        low, high = np.nanquantile(values, quantiles, axis=0)
    back_x = (lambda v: 10.0**v) if log_x else (lambda v: v)
    back_y = (lambda v: 10.0**v) if log_y else (lambda v: v)
    return back_x(grid), back_y(mid), back_y(low), back_y(high)


POINT_FIELDS = ("seq", "iteration", "epoch", "time_s", "primal", "gap")


def compare_series(
    rows: Sequence[Mapping[str, Any]],
    x: str,
    y: str,
    log_x: bool,
    log_y: bool,
    references: Mapping[str, Mapping[str, float]],
) -> tuple[list[Series], list[Mapping[str, Any]]]:
    """The curves of the compare figure, and the rows left out for want of a reference P*.

    Jobs that share a solver setting and an objective are seeds of one curve: their median
    with a quantile band.
    """
    if x not in X_AXES:
        raise ValueError(f"unknown x axis {x!r}; accepted: {', '.join(X_AXES)}")
    x_field = X_AXES[x][0]
    labels = objective_labels(rows)
    groups: dict[tuple[str, str, str], list[tuple[Mapping[str, Any], np.ndarray]]] = {}
    missing = []
    for row in rows:
        values = y_values(row["trace"], y, references.get(row["objective_hash"]))
        if values is None:
            missing.append(row)
            continue
        key = (row["solver"], setting_name(row), row["objective_hash"])
        groups.setdefault(key, []).append((row, values))
    several_objectives = len(labels) > 1
    dash_index: dict[str, int] = {}
    series = []
    for (solver, setting, digest), members in sorted(groups.items()):
        objective = labels[digest]
        name = f"{setting} · {objective}" if several_objectives else setting
        dash = DASHES[dash_index.setdefault(solver, 0) % len(DASHES)]
        dash_index[solver] += 1
        ids = [r["id"] for r, _ in members]
        modes = sorted({r["trace_mode"] for r, _ in members if r.get("trace_mode")})
        trace_mode = "/".join(modes) or None
        if len(members) == 1:
            row, values = members[0]
            xs = np.asarray(row["trace"][x_field], dtype=float)
            keep = _valid(xs, values, log_x, log_y)
            points = np.column_stack(
                [[row["id"]] * len(xs)] + [np.asarray(row["trace"][f], float) for f in POINT_FIELDS]
            )[keep]
            series.append(
                Series(
                    name,
                    solver,
                    setting,
                    objective,
                    ids,
                    xs[keep],
                    values[keep],
                    points=points,
                    dash=dash,
                    trace_mode=trace_mode,
                )
            )
            continue
        curves = [(np.asarray(r["trace"][x_field], dtype=float), v) for r, v in members]
        gx, mid, low, high = median_band(curves, log_x, log_y)
        band = (gx, mid, low, high)
        series.append(
            Series(name, solver, setting, objective, ids, *band, dash=dash, trace_mode=trace_mode)
        )
    return series, missing


def _reference_note(
    rows: Sequence[Mapping[str, Any]],
    missing: Sequence[Mapping[str, Any]],
    references: Mapping[str, Mapping[str, float]],
    y: str,
) -> str | None:
    if y not in NEEDS_REFERENCE:
        return None
    if missing:
        labels = objective_labels(rows)
        names = sorted({labels[r["objective_hash"]] or r["dataset"] for r in missing})
        return (
            f"No certified reference P* for {len(missing)} job(s) ({'; '.join(names)}): "
            "their suboptimality cannot be plotted. The duality gap bounds P − P* without one."
        )
    used = [references[r["objective_hash"]] for r in rows]
    if not used:
        return None
    worst = max(ref["gap"] for ref in used)
    return f"P* certified to a duality gap ≤ {worst:.1e}"


def compare_figure(
    rows: Sequence[Mapping[str, Any]],
    x: str,
    y: str,
    log_x: bool,
    log_y: bool,
    references: Mapping[str, Mapping[str, float]],
) -> go.Figure:
    """Convergence curves of the jobs in ``rows``: one colour per solver, one line style per
    parameter setting, median over seeds with a quantile band; the exact point on hover.
    A peer's trace mode other than native is named in its legend entry, and a single
    refit-traced job's points are marked: each is a fit of its own."""
    series, missing = compare_series(rows, x, y, log_x, log_y, references)
    x_label, y_label = X_AXES[x][1], Y_MEASURES[y]
    fig = go.Figure()
    for s in series:
        color = solver_color(s.solver)
        line = {"color": color, "dash": s.dash, "width": 2}
        if s.points is not None:
            refit = s.trace_mode == "refit"
            fig.add_trace(
                go.Scatter(
                    x=s.x,
                    y=s.y,
                    name=s.legend(),
                    legendgroup=s.name,
                    mode="lines+markers" if refit else "lines",
                    line=line,
                    marker={**REFIT_MARKER, "color": color} if refit else None,
                    customdata=s.points,
                    hovertemplate=(
                        "<b>%{fullData.name}</b><br>job %{customdata[0]:d} · point "
                        "%{customdata[1]:d}<br>iteration %{customdata[2]:d} · epoch "
                        f"%{{customdata[3]:.4g}} · {'this fit' if refit else 'time'} "
                        "%{customdata[4]:.4g} s<br>P = "
                        "%{customdata[5]:.12g}<br>gap = %{customdata[6]:.3e}<br>"
                        f"{y_label} = %{{y:.4e}}<extra></extra>"
                    ),
                )
            )
            continue
        n = len(s.job_ids)
        fig.add_trace(
            go.Scatter(
                x=s.x,
                y=s.hi,
                mode="lines",
                line={"width": 0, "color": color},
                legendgroup=s.name,
                showlegend=False,
                hoverinfo="skip",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=s.x,
                y=s.lo,
                mode="lines",
                line={"width": 0, "color": color},
                fill="tonexty",
                fillcolor=_rgba(color, 0.18),
                legendgroup=s.name,
                showlegend=False,
                hoverinfo="skip",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=s.x,
                y=s.y,
                name=s.legend(f"median of {n}"),
                legendgroup=s.name,
                mode="lines",
                line=line,
                customdata=np.column_stack([s.lo, s.hi]),
                hovertemplate=(
                    f"<b>%{{fullData.name}}</b><br>{x_label} %{{x:.4g}}<br>median "
                    f"%{{y:.4e}}<br>{int(BAND[0] * 100)}–{int(BAND[1] * 100)}% of {n} seeds: "
                    "[%{customdata[0]:.3e}, %{customdata[1]:.3e}]<extra></extra>"
                ),
            )
        )
    note = _reference_note(rows, missing, references, y)
    fig.update_layout(
        template="plotly_white",
        title={"text": f"{y_label} vs {x_label}", "x": 0.01},
        xaxis={"title": x_label, "type": "log" if log_x else "linear"},
        yaxis={
            "title": y_label,
            "type": "log" if log_y else "linear",
            "exponentformat": "power",
        },
        legend={"title": {"text": "solver[settings]"}},
        hovermode="closest",
        margin={"l": 70, "r": 20, "t": 60, "b": 90},
        uirevision=f"{x}-{y}-{log_x}-{log_y}",
    )
    if note:
        fig.add_annotation(
            text=note,
            xref="paper",
            yref="paper",
            x=0,
            y=-0.16 if series else 0.5,
            xanchor="left",
            showarrow=False,
            font={"color": "#b00020" if missing else "#555", "size": 12 if series else 15},
        )
    if any(s.trace_mode == "refit" and s.points is not None for s in series):
        fig.add_annotation(
            text=REFIT_NOTE,
            xref="paper",
            yref="paper",
            x=0,
            y=-0.16,
            yshift=-20 if note else 0,  # a line below the reference note
            xanchor="left",
            showarrow=False,
            font={"color": "#555", "size": 12},
        )
        if note:
            fig.update_layout(margin={"b": 110})
    return fig


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def series_csv(series: Iterable[Series], x: str, y: str) -> str:
    """The plotted curves as CSV, one line per point."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "curve",
            "solver",
            "setting",
            "objective",
            "trace_mode",
            "jobs",
            x,
            y,
            "band_low",
            "band_high",
        ]
    )
    for s in series:
        jobs = " ".join(map(str, s.job_ids))
        lo = s.lo if s.lo is not None else [None] * len(s.x)
        hi = s.hi if s.hi is not None else [None] * len(s.x)
        for xv, yv, lv, hv in zip(s.x, s.y, lo, hi, strict=True):
            writer.writerow(
                [
                    s.name,
                    s.solver,
                    s.setting,
                    s.objective,
                    s.trace_mode or "",
                    jobs,
                    repr(float(xv)),
                    repr(float(yv)),
                    "" if lv is None else repr(float(lv)),
                    "" if hv is None else repr(float(hv)),
                ]
            )
    return out.getvalue()


# ---------------------------------------------------------------- time to ε


def first_reached(
    trace: Mapping[str, Sequence[float]],
    criterion: str,
    eps: float,
    reference: Mapping[str, float] | None,
    x: str,
) -> float | None:
    """The x (time, epoch or iteration) of the first trace point meeting the criterion;
    None if never reached, NaN if it cannot be decided (no reference P*)."""
    primal = np.asarray(trace["primal"], dtype=float)
    if criterion == "subopt_rel":
        if reference is None or reference["primal"] == 0:
            return math.nan
        measure = (primal - reference["primal"]) / abs(reference["primal"])
    elif criterion == "gap_rel":
        measure = np.asarray(trace["gap"], dtype=float) / np.maximum(1.0, np.abs(primal))
    else:
        raise ValueError(f"unknown criterion {criterion!r}; accepted: {', '.join(CRITERIA)}")
    hit = np.flatnonzero(measure <= eps)
    return float(trace[X_AXES[x][0]][hit[0]]) if hit.size else None


def time_to_eps(
    rows: Sequence[Mapping[str, Any]],
    eps: float,
    criterion: str,
    references: Mapping[str, Mapping[str, float]],
    x: str = "time",
) -> list[dict[str, Any]]:
    """Time (or epochs, iterations) to ε per solver setting and objective: the median over
    seeds, counting a seed that never reached ε as infinitely slow.

    Each result: ``setting``, ``solver``, ``objective`` (label), ``objective_hash``,
    ``dataset``, ``value`` (None if the median seed did not reach ε, NaN if undecidable),
    ``reached`` and ``seeds`` (counts), ``job_ids``.
    """
    labels = objective_labels(rows)
    groups: dict[tuple[str, str], list[tuple[Mapping[str, Any], float | None]]] = {}
    for row in rows:
        value = first_reached(
            row["trace"], criterion, eps, references.get(row["objective_hash"]), x
        )
        groups.setdefault((setting_name(row), row["objective_hash"]), []).append((row, value))
    results = []
    for (setting, digest), members in sorted(groups.items()):
        values = [v for _, v in members]
        if any(v is not None and math.isnan(v) for v in values):
            value: float | None = math.nan
        else:
            finite = np.array([math.inf if v is None else v for v in values])
            median = float(np.median(finite))
            value = None if math.isinf(median) else median
        first = members[0][0]
        results.append(
            {
                "setting": setting,
                "solver": first["solver"],
                "objective": labels[digest] or first["dataset"],
                "objective_hash": digest,
                "dataset": first["dataset"],
                "value": value,
                "reached": sum(v is not None and not math.isnan(v) for v in values),
                "seeds": len(values),
                "job_ids": [r["id"] for r, _ in members],
            }
        )
    return results


def _matrix(
    results: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[str], np.ndarray, list[list[str]]]:
    """Settings × objectives: the values (inf: not reached, NaN: no value) and their text."""
    settings = sorted({r["setting"] for r in results})
    objectives = list(dict.fromkeys(r["objective"] for r in results))
    z = np.full((len(settings), len(objectives)), np.nan)
    text = [["not run"] * len(objectives) for _ in settings]
    for r in results:
        i, j = settings.index(r["setting"]), objectives.index(r["objective"])
        v = r["value"]
        z[i, j] = math.inf if v is None else v
        text[i][j] = "no P*" if math.isnan(z[i, j]) else _value_text(z[i, j])
    return settings, objectives, z, text


def _value_text(v: float) -> str:
    return "not reached" if math.isinf(v) else f"{v:.3g}"


def time_to_eps_figure(
    results: Sequence[Mapping[str, Any]], chart: str, eps: float, criterion: str, x: str = "time"
) -> go.Figure:
    """Time to ε across solver settings × objectives, as grouped bars or a heatmap."""
    unit = {"time": "seconds", "epoch": "epochs", "iteration": "iterations"}[x]
    title = f"{unit} to {CRITERIA[criterion].replace('ε', f'ε = {eps:g}')}"
    settings, objectives, z, text = _matrix(results)
    solvers = {r["setting"]: r["solver"] for r in results}
    fig = go.Figure()
    if chart == "heatmap":
        shown = np.where(np.isfinite(z) & (z > 0), z, np.nan)
        fig.add_trace(
            go.Heatmap(
                z=np.log10(shown),
                x=objectives,
                y=settings,
                text=text,
                texttemplate="%{text}",
                colorscale="Viridis_r",
                colorbar={"title": f"log10 {unit}"},
                hovertemplate="%{y}<br>%{x}<br>%{text}<extra></extra>",
            )
        )
        fig.update_layout(yaxis={"autorange": "reversed"})
    elif chart == "bars":
        pattern_index: dict[str, int] = {}
        for i, setting in enumerate(settings):
            solver = solvers[setting]
            pattern = PATTERNS[pattern_index.setdefault(solver, 0) % len(PATTERNS)]
            pattern_index[solver] += 1
            fig.add_trace(
                go.Bar(
                    x=objectives,
                    y=[v if np.isfinite(v) else None for v in z[i]],
                    name=setting,
                    marker={"color": solver_color(solver), "pattern": {"shape": pattern}},
                    text=text[i],
                    textposition="outside",
                    hovertemplate=f"{setting}<br>%{{x}}<br>%{{text}} {unit}<extra></extra>",
                )
            )
        fig.update_layout(barmode="group", yaxis={"type": "log", "title": unit})
    else:
        raise ValueError(f"unknown chart {chart!r}; accepted: bars, heatmap")
    fig.update_layout(
        template="plotly_white",
        title={"text": title, "x": 0.01},
        legend={"title": {"text": "solver[settings]"}},
        margin={"l": 70, "r": 20, "t": 60, "b": 60},
    )
    return fig


def ranking(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per objective: the settings ranked by time to ε (1 = fastest; settings that did not
    reach ε share the last rank). Each item: ``objective``, ``winner``, ``value``,
    ``runner_up``, ``speedup`` (runner-up / winner), ``ranks`` {setting: rank or None}."""
    by_objective: dict[str, list[Mapping[str, Any]]] = {}
    for r in results:
        by_objective.setdefault(r["objective"], []).append(r)
    out = []
    for objective, members in by_objective.items():
        timed = sorted(
            (r for r in members if r["value"] is not None and not math.isnan(r["value"])),
            key=lambda r: r["value"],
        )
        ranks: dict[str, int | None] = {r["setting"]: i + 1 for i, r in enumerate(timed)}
        for r in members:
            if r["setting"] not in ranks:
                ranks[r["setting"]] = None if r["value"] is not None else len(timed) + 1
        winner = timed[0] if timed else None
        runner = timed[1] if len(timed) > 1 else None
        out.append(
            {
                "objective": objective,
                "winner": winner["setting"] if winner else None,
                "value": winner["value"] if winner else None,
                "runner_up": runner["setting"] if runner else None,
                "speedup": runner["value"] / winner["value"]
                if runner and winner["value"] > 0
                else None,
                "ranks": ranks,
            }
        )
    return out


def ranking_figure(ranked: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Rank of each solver setting on each objective (1 = fastest to ε): who wins where."""
    settings = sorted({s for r in ranked for s in r["ranks"]})
    objectives = [r["objective"] for r in ranked]
    z = np.full((len(settings), len(objectives)), np.nan)
    for j, r in enumerate(ranked):
        for setting, rank in r["ranks"].items():
            if rank is not None:
                z[settings.index(setting), j] = rank
    text = [["" if np.isnan(v) else f"{int(v)}" for v in row] for row in z]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=objectives,
            y=settings,
            text=text,
            texttemplate="%{text}",
            colorscale="RdYlGn_r",
            colorbar={"title": "rank"},
            hovertemplate="%{y}<br>%{x}<br>rank %{text}<extra></extra>",
        )
    )
    fig.update_layout(
        template="plotly_white",
        title={"text": "ranking: who wins where (1 = fastest to ε)", "x": 0.01},
        yaxis={"autorange": "reversed"},
        margin={"l": 70, "r": 20, "t": 60, "b": 60},
    )
    return fig


def records_csv(records: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Records as CSV with the given columns (lists joined by spaces)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    for record in records:
        writer.writerow(
            [" ".join(map(str, v)) if isinstance(v, list) else v for v in map(record.get, columns)]
        )
    return out.getvalue()


# ---------------------------------------------------------------- the advisor


def empty_figure(message: str) -> go.Figure:
    """A blank figure that says why it is blank."""
    fig = go.Figure()
    fig.add_annotation(text=message, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)
    fig.update_layout(template="plotly_white", xaxis={"visible": False}, yaxis={"visible": False})
    return fig


def advisor_figure(advice: Mapping[str, float], measured: Mapping[str, float | None]) -> go.Figure:
    """Predicted passes T/nnz(A) of primal and dual CD (uniform and importance sampling,
    Faceoff eqs. (12)–(15), up to the log factor) next to the measured epochs to ε."""
    nnz = advice["nnz"]
    sides = ["primal_cd", "dual_cd"]
    fig = go.Figure()
    for name, keys, pattern in (
        ("predicted, uniform", ("T_P_uniform", "T_D_uniform"), "/"),
        ("predicted, importance", ("T_P", "T_D"), ""),
    ):
        fig.add_trace(
            go.Bar(
                x=sides,
                y=[advice[k] / nnz for k in keys],
                name=name,
                marker={"color": [solver_color(s) for s in sides], "pattern": {"shape": pattern}},
                opacity=0.55,
                hovertemplate="%{x}: %{y:.3g} passes<extra>" + name + "</extra>",
            )
        )
    fig.add_trace(
        go.Bar(
            x=sides,
            y=[measured.get(s) for s in sides],
            name="measured epochs to ε (best setting)",
            marker={"color": [solver_color(s) for s in sides], "pattern": {"shape": "x"}},
            hovertemplate="%{x}: %{y:.3g} epochs<extra>measured</extra>",
        )
    )
    fig.update_layout(
        template="plotly_white",
        barmode="group",
        title={"text": "Faceoff advisor: predicted passes vs measured epochs", "x": 0.01},
        yaxis={"type": "log", "title": "passes over A"},
        margin={"l": 70, "r": 20, "t": 60, "b": 40},
    )
    return fig
