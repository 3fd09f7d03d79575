"""The dashboard's figures and tables: pure functions from rows (plain dicts) to ``go.Figure``.

A *job row* is a dict with ``id``, ``solver``, ``params``, ``seed``, ``dataset``, ``loss``,
``gamma``, ``l1``, ``l2``, ``normalize``, ``objective_hash``, ``status``, ``trace_mode``
(optional: None before a worker starts the job) and ``trace``, a dict of equal-length lists
``seq``, ``iteration``, ``epoch``, ``time_s``, ``primal``, ``gap``.
*References* map an ``objective_hash`` to ``{"primal": P*, "gap": certificate}``.
"""

from __future__ import annotations

import colorsys
import csv
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from faceoff.solvers.catalogue import catalogue
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
# trace modes a legend names (solvers.spec.SolverSpec.trace_mode); ours are "native"
NOTED_MODES = ("callback", "refit")
REFIT_MARKER = {"symbol": "circle", "size": 7}  # a refit trace's points: one fit each
REFIT_NOTE = "● refit: each marked point is its own fit from scratch, its time that fit's wall time"
BAND = (0.25, 0.75)  # quantiles of the band around the median over seeds
GRID_POINTS = 200  # common x grid of the median over seeds


def solver_color(solver: str) -> str:
    """One colour per solver, stable across pages (catalogue order)."""
    names = list(catalogue())
    index = names.index(solver) if solver in names else len(names) + sum(map(ord, solver))
    return PALETTE[index % len(PALETTE)]


def solver_defaults(solver: str) -> dict[str, Any]:
    """Default parameter values of a catalogue solver (empty for an unknown one)."""
    spec = catalogue().get(solver)
    return {p.name: p.default for p in spec.schema} if spec else {}


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


def objective_labels(rows: Sequence[Mapping[str, Any]], full: bool = False) -> dict[str, str]:
    """A label per objective hash: naming only what differs between the objectives, or with
    ``full`` everything (dataset · loss · normalization · weights)."""
    parts: dict[str, dict[str, str]] = {}
    for row in rows:
        parts[row["objective_hash"]] = {
            "dataset": row["dataset"],
            "loss": loss_label(row["loss"], row["gamma"]),
            "normalize": "" if row["normalize"] == "none" else f"normalize={row['normalize']}",
            "weights": weights_label(row["l2"], row["l1"]),
        }
    varying = ["dataset", "loss", "normalize", "weights"]
    if len(parts) > 1 and not full:
        varying = [k for k in varying if len({p[k] for p in parts.values()}) > 1]
    labels = {h: " · ".join(p[k] for k in varying if p[k]) for h, p in parts.items()}
    if len(set(labels.values())) < len(labels):  # differing in what a label does not show
        labels = {h: f"{label} · objective {h[:8]}".strip(" ·") for h, label in labels.items()}
    return labels


def objective_order(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The full labels of the objectives of ``rows`` in a reading order: by dataset, loss,
    normalization, then by the weights as numbers (l2 = 1e-5 before 1e-4)."""
    labels = objective_labels(rows, full=True)
    keys = {
        row["objective_hash"]: (
            row["dataset"],
            row["loss"],
            row["gamma"] or 0.0,
            row["normalize"],
            row["l2"],
            row["l1"],
        )
        for row in rows
    }
    return [labels[h] for h in sorted(keys, key=lambda h: (keys[h], h))]


def export_name(prefix: str, objectives: Sequence[str]) -> str:
    """A file name (without extension) naming the objective shown (full labels), or what
    several share and how many: ``faceoff-compare-a9a-logistic-l2-0.0001``,
    ``faceoff-compare-a9a-logistic-3-objectives``."""
    if not objectives:
        return prefix
    parts = [o.split(" · ") for o in objectives]
    shared = []  # the leading parts all share
    for i, part in enumerate(parts[0]):
        if not all(len(q) > i and q[i] == part for q in parts):
            break
        shared.append(part)
    if len(objectives) > 1:
        shared.append(f"{len(objectives)} objectives")
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", " ".join(shared)).strip("-")
    return f"{prefix}-{slug[:150]}" if slug else prefix


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
    """One curve of the compare figure: a job, or the median over the seeds of a setting
    (then ``members`` are its seeds' own curves)."""

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
    trace_mode: str | None = None  # how its jobs' traces were made (None: not known yet)
    members: list[Series] = field(default_factory=list)
    # what the members are: seeds, or timing repeats of a setting that uses no seed
    unit: str = "seeds"

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

    The grid spans all curves, from the earliest first x to the latest last x. Each curve is
    interpolated onto it in the plotted scale (log10 of a log axis); beyond its last point a
    curve keeps its final value (that run has finished and stays where it ended; a running
    one counts where it is now), before its first point it counts with its first value. So
    every grid point has the same members, and curves that never rise give a median and
    band that never rise. Returns ``(x, median, low, high)``.
    """
    tx, ty = [], []
    for x, y in curves:
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        keep = _valid(x, y, log_x, log_y)
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


POINT_FIELDS = ("seq", "iteration", "epoch", "time_s", "primal", "gap")


def _job_series(
    row: Mapping[str, Any],
    values: np.ndarray,
    x_field: str,
    log_x: bool,
    log_y: bool,
    objective: str,
) -> Series:
    """The curve of one job, with its exact trace points for hover."""
    xs = np.asarray(row["trace"][x_field], dtype=float)
    keep = _valid(xs, values, log_x, log_y)
    points = np.column_stack(
        [[row["id"]] * len(xs)] + [np.asarray(row["trace"][f], float) for f in POINT_FIELDS]
    )[keep]
    setting = setting_name(row)
    return Series(
        setting,
        row["solver"],
        setting,
        objective,
        [row["id"]],
        xs[keep],
        values[keep],
        points=points,
        trace_mode=row.get("trace_mode"),
    )


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
    with a quantile band (:func:`median_band`). A curve's ``objective`` is the objective's
    full label (:func:`objective_labels`).
    """
    if x not in X_AXES:
        raise ValueError(f"unknown x axis {x!r}; accepted: {', '.join(X_AXES)}")
    x_field = X_AXES[x][0]
    labels = objective_labels(rows, full=True)
    groups: dict[tuple[str, str, str], list[tuple[Mapping[str, Any], np.ndarray]]] = {}
    missing = []
    for row in rows:
        values = y_values(row["trace"], y, references.get(row["objective_hash"]))
        if values is None:
            missing.append(row)
            continue
        key = (row["solver"], setting_name(row), row["objective_hash"])
        groups.setdefault(key, []).append((row, values))
    series = []
    for (solver, setting, digest), members in sorted(groups.items()):
        objective = labels[digest]
        seeds = [_job_series(r, v, x_field, log_x, log_y, objective) for r, v in members]
        modes = sorted({r["trace_mode"] for r, _ in members if r.get("trace_mode")})
        trace_mode = "/".join(modes) or None
        if len(seeds) == 1:
            seeds[0].trace_mode = trace_mode
            series.append(seeds[0])
            continue
        band = median_band([(s.x, s.y) for s in seeds], log_x, log_y)
        ids = [r["id"] for r, _ in members]
        series.append(
            Series(
                setting,
                solver,
                setting,
                objective,
                ids,
                *band,
                trace_mode=trace_mode,
                members=seeds,
                unit="seeds" if any(r.get("seed") is not None for r, _ in members) else "repeats",
            )
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


def _shade(hex_color: str, k: int) -> str:
    """The ``k``-th shade of a colour: itself, then alternately darker and lighter."""
    r, g, b = (int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    hue, light, sat = colorsys.rgb_to_hls(r, g, b)
    step = (0.0, -0.17, 0.17, -0.29, 0.27, -0.36, 0.34)[k % 7]
    r, g, b = colorsys.hls_to_rgb(hue, min(0.88, max(0.12, light + step)), sat)
    return "#" + "".join(f"{round(c * 255):02x}" for c in (r, g, b))


def setting_styles(settings: Iterable[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """(colour, dash) per solver setting, from (solver, setting) pairs: the solver's colour
    (:func:`solver_color`) in a shade of its own and a line style of its own for each of
    its settings, so that settings of one solver stay apart; the same in every panel."""
    by_solver: dict[str, list[str]] = {}
    for solver, setting in sorted(set(settings)):
        by_solver.setdefault(solver, []).append(setting)
    return {
        setting: (_shade(solver_color(solver), k), DASHES[k % len(DASHES)])
        for solver, names in by_solver.items()
        for k, setting in enumerate(names)
    }


def _seed_note(series: Sequence[Series]) -> dict[str, str]:
    """The legend note of each setting: ``median of 3`` (``of 2–3`` when panels differ);
    ``median of 3 timing repeats`` for a setting that uses no seed, run again only to
    measure timing noise."""
    counts: dict[str, set[int]] = {}
    units: dict[str, set[str]] = {}
    for s in series:
        counts.setdefault(s.setting, set()).add(len(s.job_ids))
        units.setdefault(s.setting, set()).add(s.unit if len(s.job_ids) > 1 else "")
    notes = {}
    for setting, n in counts.items():
        low, high = min(n), max(n)
        if high > 1:
            note = f"median of {low}" if low == high else f"median of {low}–{high}"
            if units[setting] - {""} == {"repeats"}:
                note += " timing repeats"
            notes[setting] = note
    return notes


def _point_trace(s: Series, y_label: str, line: dict[str, Any], **kwargs: Any) -> go.Scatter:
    """The curve of one job, with its exact trace point on hover; a refit trace's points
    are marked (each is a fit of its own)."""
    refit = s.trace_mode == "refit"
    return go.Scatter(
        x=s.x,
        y=s.y,
        mode="lines+markers" if refit else "lines",
        line=line,
        marker={**REFIT_MARKER, "color": line["color"]} if refit else None,
        customdata=s.points,
        hovertemplate=(
            f"<b>{s.setting}</b> · {s.objective}<br>job %{{customdata[0]:d}} · point "
            "%{customdata[1]:d}<br>iteration %{customdata[2]:d} · epoch "
            f"%{{customdata[3]:.4g}} · {'this fit' if refit else 'time'} "
            "%{customdata[4]:.4g} s<br>P = "
            "%{customdata[5]:.12g}<br>gap = %{customdata[6]:.3e}<br>"
            f"{y_label} = %{{y:.4e}}<extra></extra>"
        ),
        **kwargs,
    )


def _grid(n: int) -> tuple[int, int]:
    """(rows, columns) of ``n`` panels: one column for one panel, else two."""
    cols = 1 if n <= 1 else 2
    return max(1, math.ceil(n / cols)), cols


def compare_height(n_panels: int) -> int:
    """The compare figure's height in pixels for ``n_panels`` objectives."""
    rows, _ = _grid(n_panels)
    return 640 if n_panels <= 1 else 150 + 380 * rows


def compare_figure(
    rows: Sequence[Mapping[str, Any]],
    x: str,
    y: str,
    log_x: bool,
    log_y: bool,
    references: Mapping[str, Mapping[str, float]],
    seeds: bool = False,
) -> go.Figure:
    """Convergence curves of the jobs in ``rows``, one panel per objective titled with it:
    a colour and line style per solver setting, the same in every panel, with one legend
    entry (clicking it toggles the setting in all panels); median over seeds with a quantile
    band, and with ``seeds`` each seed's own curve too; the exact point on hover.
    A peer's trace mode other than native is named in its legend entry, and a single
    refit-traced job's points are marked: each is a fit of its own."""
    series, missing = compare_series(rows, x, y, log_x, log_y, references)
    x_label, y_label = X_AXES[x][1], Y_MEASURES[y]
    plotted = {s.objective for s in series}
    objectives = [o for o in objective_order(rows) if o in plotted]
    n_rows, n_cols = _grid(len(objectives))
    height = compare_height(len(objectives))
    fig = make_subplots(
        rows=n_rows,
        cols=n_cols,
        subplot_titles=objectives if len(objectives) > 1 else None,
        horizontal_spacing=0.08,
        vertical_spacing=min(0.3, 110 / height),
    )
    styles = setting_styles((s.solver, s.setting) for s in series)
    notes = _seed_note(series)
    shown: set[str] = set()
    for s in series:
        index = objectives.index(s.objective)
        cell = {"row": index // n_cols + 1, "col": index % n_cols + 1}
        color, dash = styles[s.setting]
        line = {"color": color, "dash": dash, "width": 2}
        legend = {
            "name": s.legend(*filter(None, [notes.get(s.setting)])),
            "legendgroup": s.setting,
            "showlegend": s.setting not in shown,
        }
        shown.add(s.setting)
        if s.points is not None:
            fig.add_trace(_point_trace(s, y_label, line, **legend), **cell)
            continue
        n = len(s.job_ids)
        for bound, fill in ((s.hi, None), (s.lo, "tonexty")):
            fig.add_trace(
                go.Scatter(
                    x=s.x,
                    y=bound,
                    mode="lines",
                    line={"width": 0, "color": color},
                    fill=fill,
                    fillcolor=_rgba(color, 0.18) if fill else None,
                    legendgroup=s.setting,
                    showlegend=False,
                    hoverinfo="skip",
                ),
                **cell,
            )
        if seeds:
            seed_line = {"color": color, "dash": dash, "width": 1}
            for member in s.members:
                fig.add_trace(
                    _point_trace(
                        member,
                        y_label,
                        seed_line,
                        name=f"{s.setting} · job {member.job_ids[0]}",
                        legendgroup=s.setting,
                        showlegend=False,
                        opacity=0.55,
                    ),
                    **cell,
                )
        fig.add_trace(
            go.Scatter(
                x=s.x,
                y=s.y,
                mode="lines",
                line=line,
                customdata=np.column_stack([s.lo, s.hi]),
                hovertemplate=(
                    f"<b>{s.setting}</b> · {s.objective}<br>{x_label} %{{x:.4g}}<br>median "
                    f"%{{y:.4e}}<br>{int(BAND[0] * 100)}–{int(BAND[1] * 100)}% of {n} "
                    f"{'seeds' if s.unit == 'seeds' else 'timing repeats'}: "
                    "[%{customdata[0]:.3e}, %{customdata[1]:.3e}]<extra></extra>"
                ),
                **legend,
            ),
            **cell,
        )
    title = f"{y_label} vs {x_label}"
    if len(objectives) == 1:
        title += f" · {objectives[0]}"
    fig.update_xaxes(type="log" if log_x else "linear")
    fig.update_yaxes(type="log" if log_y else "linear", exponentformat="power")
    for index in range(max(1, len(objectives))):
        row, col = index // n_cols + 1, index % n_cols + 1
        if index + n_cols >= len(objectives):  # no panel below it
            fig.update_xaxes(title_text=x_label, row=row, col=col)
        if col == 1:
            fig.update_yaxes(title_text=y_label, row=row, col=col)
    fig.update_layout(
        template="plotly_white",
        title={"text": title, "x": 0.01},
        legend={"title": {"text": "solver[settings]"}},
        showlegend=bool(series),
        hovermode="closest",
        height=height,
        margin={"l": 70, "r": 20, "t": 70, "b": 90},
        uirevision=f"{x}-{y}-{log_x}-{log_y}",
        meta={"export": export_name("faceoff-compare", objectives)},
    )
    below = [t for t in (_reference_note(rows, missing, references, y),) if t]
    if any(s.trace_mode == "refit" and (s.points is not None or seeds) for s in series):
        below.append(REFIT_NOTE)
    for i, text in enumerate(below):
        fig.add_annotation(
            text=text,
            xref="paper",
            yref="paper",
            x=0,
            y=0 if series else 0.5,
            yanchor="top",
            yshift=-45 - 20 * i if series else 0,
            xanchor="left",
            showarrow=False,
            font={"color": "#b00020" if missing and i == 0 else "#555", "size": 12},
        )
    if len(below) > 1:
        fig.update_layout(margin={"b": 110})
    return fig


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def series_csv(series: Iterable[Series], x: str, y: str) -> str:
    """The plotted curves as CSV, one line per point, each naming its objective."""
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


def _quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile (linear interpolation) of values that may be inf (never reached):
    inf as soon as the interpolation touches an inf."""
    ordered = np.sort(np.asarray(values, dtype=float))
    h = (len(ordered) - 1) * q
    lo, hi = math.floor(h), math.ceil(h)
    a, b = ordered[lo], ordered[hi]
    if math.isinf(b) and (hi > lo or math.isinf(a)):
        return math.inf
    return float(a + (b - a) * (h - lo))


def time_to_eps(
    rows: Sequence[Mapping[str, Any]],
    eps: float,
    criterion: str,
    references: Mapping[str, Mapping[str, float]],
    x: str = "time",
) -> list[dict[str, Any]]:
    """Time (or epochs, iterations) to ε per solver setting and objective: the median and
    the interquartile range over seeds, counting a seed that never reached ε as infinitely
    slow.

    Each result: ``setting``, ``solver``, ``objective`` (label naming what differs),
    ``objective_name`` (full label), ``objective_hash``, ``dataset``, ``value`` (None if the
    median seed did not reach ε, NaN if undecidable), ``q25`` and ``q75`` (alike),
    ``reached`` and ``seeds`` (counts), ``job_ids``.
    """
    labels = objective_labels(rows)
    names = objective_labels(rows, full=True)
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
            stats: list[float | None] = [math.nan] * 3
        else:
            finite = [math.inf if v is None else v for v in values]
            stats = [_quantile(finite, q) for q in (0.5, *BAND)]
            stats = [None if math.isinf(v) else v for v in stats]
        first = members[0][0]
        results.append(
            {
                "setting": setting,
                "solver": first["solver"],
                "objective": labels[digest] or first["dataset"],
                "objective_name": names[digest],
                "objective_hash": digest,
                "dataset": first["dataset"],
                "value": stats[0],
                "q25": stats[1],
                "q75": stats[2],
                "reached": sum(v is not None and not math.isnan(v) for v in values),
                "seeds": len(values),
                "job_ids": [r["id"] for r, _ in members],
            }
        )
    return results


NOT_REACHED = "not reached"
NO_REFERENCE = "no P*"
NOT_RUN = "not run"
GREY = "#9e9e9e"  # cells and bars of settings without a time: never reached, no P*
GREY_SCALE = [[0.0, "#d9d9d9"], [1.0, GREY]]


def _state(value: float | None) -> str | None:
    """Why a result has no time: never reached, no reference; None when it has one."""
    if value is None:
        return NOT_REACHED
    return NO_REFERENCE if math.isnan(value) else None


def _spread(r: Mapping[str, Any]) -> str:
    """``0.012`` or, over several seeds, ``0.012 [0.010–0.015]`` (median [q25–q75])."""
    state = _state(r["value"])
    if state:
        return state
    text = f"{r['value']:.3g}"
    if r.get("seeds", 1) > 1 and "q25" in r:
        q75 = NOT_REACHED if r["q75"] is None else f"{r['q75']:.3g}"
        text += f" [{r['q25']:.3g}–{q75}]"
    return text


def _matrix(
    results: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[str], dict[tuple[int, int], Mapping[str, Any]]]:
    """Settings × objectives and the result of each cell that was run."""
    settings = sorted({r["setting"] for r in results})
    objectives = list(dict.fromkeys(r["objective"] for r in results))
    cells = {(settings.index(r["setting"]), objectives.index(r["objective"])): r for r in results}
    return settings, objectives, cells


def _grey_layer(
    settings: Sequence[str], objectives: Sequence[str], states: Mapping[tuple[int, int], str]
) -> go.Heatmap:
    """The cells with no time or rank, grey and labelled with why."""
    z = np.full((len(settings), len(objectives)), np.nan)
    text = [[""] * len(objectives) for _ in settings]
    for (i, j), state in states.items():
        z[i, j] = 1.0 if state == NOT_REACHED else 0.0
        text[i][j] = state
    return go.Heatmap(
        z=z,
        x=list(objectives),
        y=list(settings),
        text=text,
        texttemplate="%{text}",
        textfont={"color": "#222"},
        colorscale=GREY_SCALE,
        zmin=0,
        zmax=1,
        showscale=False,
        name="no time",
        hovertemplate="%{y}<br>%{x}<br>%{text}<extra></extra>",
    )


def time_to_eps_figure(
    results: Sequence[Mapping[str, Any]], chart: str, eps: float, criterion: str, x: str = "time"
) -> go.Figure:
    """Time to ε across solver settings × objectives, as grouped bars (median with the
    interquartile range over seeds as error bars) or a heatmap. A setting that never
    reached ε is shown as such, grey and labelled, never as a time."""
    unit = {"time": "seconds", "epoch": "epochs", "iteration": "iterations"}[x]
    title = f"{unit} to {CRITERIA[criterion].replace('ε', f'ε = {eps:g}')}"
    settings, objectives, cells = _matrix(results)
    states = {k: s for k, r in cells.items() if (s := _state(r["value"]))}
    fig = go.Figure()
    if chart == "heatmap":
        z = np.full((len(settings), len(objectives)), np.nan)
        text = [[NOT_RUN] * len(objectives) for _ in settings]
        for (i, j), r in cells.items():
            text[i][j] = _spread(r)
            if (i, j) not in states and r["value"] > 0:
                z[i, j] = math.log10(r["value"])
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=objectives,
                y=settings,
                text=text,
                texttemplate="%{text}",
                colorscale="Viridis_r",
                colorbar={"title": f"log10 {unit}"},
                hovertemplate="%{y}<br>%{x}<br>%{text}<extra></extra>",
            )
        )
        if states:
            fig.add_trace(_grey_layer(settings, objectives, states))
        fig.update_layout(yaxis={"autorange": "reversed"})
    elif chart == "bars":
        _time_bars(fig, results, settings, objectives, cells, states, unit)
    else:
        raise ValueError(f"unknown chart {chart!r}; accepted: bars, heatmap")
    fig.update_layout(
        template="plotly_white",
        title={"text": title, "x": 0.01},
        legend={"title": {"text": "solver[settings]"}},
        margin={"l": 70, "r": 20, "t": 60, "b": 60},
    )
    return fig


def _time_bars(
    fig: go.Figure,
    results: Sequence[Mapping[str, Any]],
    settings: Sequence[str],
    objectives: Sequence[str],
    cells: Mapping[tuple[int, int], Mapping[str, Any]],
    states: Mapping[tuple[int, int], str],
    unit: str,
) -> None:
    """Grouped bars: the median, error bars to the quartiles; a setting without a time gets
    a grey bar up to the top of the chart in its slot, labelled with why."""
    styles = setting_styles((r["solver"], r["setting"]) for r in results)
    times = [r[k] for r in cells.values() for k in ("value", "q75") if r.get(k)]
    times = [t for t in times if t > 0 and math.isfinite(t)]
    ceiling = max(times) * 3 if times else 1.0
    grey_legend = True
    for i, setting in enumerate(settings):
        row = [cells.get((i, j)) for j in range(len(objectives))]
        timed = [r if r is not None and (i, j) not in states else None for j, r in enumerate(row)]
        median = [r["value"] if r else None for r in timed]
        high = [
            (ceiling if r.get("q75") is None else r["q75"]) - r["value"]
            if r and r.get("seeds", 1) > 1
            else 0
            for r in timed
        ]
        low = [r["value"] - r["q25"] if r and r.get("seeds", 1) > 1 else 0 for r in timed]
        fig.add_trace(
            go.Bar(
                x=list(objectives),
                y=median,
                name=setting,
                offsetgroup=setting,
                legendgroup=setting,
                marker={
                    "color": styles[setting][0],
                    "pattern": {"shape": PATTERNS[DASHES.index(styles[setting][1])]},
                },
                error_y={"type": "data", "array": high, "arrayminus": low, "thickness": 1.2},
                text=[_spread(r) if r else "" for r in timed],
                textposition="outside",
                hovertemplate=f"{setting}<br>%{{x}}<br>%{{text}} {unit}<extra></extra>",
            )
        )
        missing = {j: states[(i, j)] for j in range(len(objectives)) if (i, j) in states}
        if missing:
            fig.add_trace(
                go.Bar(
                    x=list(objectives),
                    y=[ceiling if j in missing else None for j in range(len(objectives))],
                    name=f"{NOT_REACHED} / {NO_REFERENCE} (grey)",
                    offsetgroup=setting,
                    legendgroup="no time",
                    showlegend=grey_legend,
                    marker={"color": GREY, "opacity": 0.45, "line": {"color": GREY}},
                    text=[missing.get(j, "") for j in range(len(objectives))],
                    textposition="inside",
                    insidetextanchor="end",
                    textangle=-90,
                    hovertemplate=f"{setting}<br>%{{x}}<br>%{{text}}<extra></extra>",
                )
            )
            grey_legend = False
    fig.update_layout(barmode="group", yaxis={"type": "log", "title": unit})


def ranking(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per objective: the settings that reached ε ranked by time to ε (1 = fastest). A
    setting that never reached ε, or cannot be decided (no P*), gets no rank: it is in
    ``unranked`` with why. Each item: ``objective``, ``winner``, ``value``, ``runner_up``,
    ``speedup`` (runner-up / winner), ``ranks`` {setting: rank}, ``unranked``
    {setting: "not reached" or "no P*"}."""
    by_objective: dict[str, list[Mapping[str, Any]]] = {}
    for r in results:
        by_objective.setdefault(r["objective"], []).append(r)
    out = []
    for objective, members in by_objective.items():
        timed = sorted((r for r in members if not _state(r["value"])), key=lambda r: r["value"])
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
                "ranks": {r["setting"]: i + 1 for i, r in enumerate(timed)},
                "unranked": {r["setting"]: s for r in members if (s := _state(r["value"]))},
            }
        )
    return out


def ranking_figure(ranked: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Rank of each solver setting on each objective (1 = fastest to ε): who wins where.
    Settings that never reached ε (or have no P*) are grey cells saying so, with no rank."""
    settings = sorted({s for r in ranked for s in (*r["ranks"], *r.get("unranked", {}))})
    objectives = [r["objective"] for r in ranked]
    z = np.full((len(settings), len(objectives)), np.nan)
    states = {}
    for j, r in enumerate(ranked):
        for setting, rank in r["ranks"].items():
            z[settings.index(setting), j] = rank
        for setting, state in r.get("unranked", {}).items():
            states[(settings.index(setting), j)] = state
    text = [["" if np.isnan(v) else f"{int(v)}" for v in row] for row in z]
    worst = max(2, int(np.nanmax(z)) if np.isfinite(z).any() else 2)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=objectives,
            y=settings,
            text=text,
            texttemplate="%{text}",
            colorscale="RdYlGn_r",
            zmin=1,
            zmax=worst,
            colorbar={"title": "rank"},
            hovertemplate="%{y}<br>%{x}<br>rank %{text}<extra></extra>",
        )
    )
    if states:
        fig.add_trace(_grey_layer(settings, objectives, states))
    fig.update_layout(
        template="plotly_white",
        title={"text": "ranking: who wins where (1 = fastest to ε; grey: no rank)", "x": 0.01},
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


def log_ticks(values: Iterable[float]) -> tuple[list[float], list[str]]:
    """Tick values and their labels for a log axis spanning ``values`` (positive ones):
    1, 2, 5 × 10^k written out in full (20, 50, not Plotly's bare 2, 5), only the powers
    of ten over more than four decades."""
    shown = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    if not shown:
        return [1.0], ["1"]
    lo = math.floor(math.log10(min(shown)))
    hi = math.ceil(math.log10(max(shown)))
    steps = (1,) if hi - lo > 4 else (1, 2, 5)
    ticks = [m * 10.0**k for k in range(lo, hi + 1) for m in steps]
    ticks = [t for t in ticks if min(shown) / 2.5 <= t <= max(shown) * 2.5] or [10.0**lo]
    return ticks, [f"{t:g}" for t in ticks]


def advisor_figure(
    advice: Mapping[str, float],
    epochs: Mapping[str, float | None],
    seconds: Mapping[str, float | None] | None = None,
    objective: str = "",
) -> go.Figure:
    """Primal vs dual coordinate descent, like with like: the advisor's predicted work
    ratio T_P/T_D (Faceoff eqs. (12)–(15), uniform and importance sampling; the log(1/ε)
    factor cancels in the ratio) beside the measured ratios of epochs and of seconds to ε
    of the best primal_cd and dual_cd settings (``epochs``, ``seconds`` by solver, None
    when it did not reach ε). Above 1 dual CD does less work, below 1 primal CD."""
    seconds = seconds or {}
    bars = {
        "predicted<br>uniform sampling": advice["T_P_uniform"] / advice["T_D_uniform"],
        "predicted<br>importance sampling": advice["T_P"] / advice["T_D"],
    }
    for label, measured in (("epochs", epochs), ("seconds", seconds)):
        p, d = measured.get("primal_cd"), measured.get("dual_cd")
        bars[f"measured<br>{label} to ε"] = p / d if p and d else None
    names = list(bars)
    fig = go.Figure(
        go.Bar(
            x=names,
            y=list(bars.values()),
            marker={
                "color": ["#9ecae1", "#3182bd", "#fdae6b", "#e6550d"],
                "pattern": {"shape": ["/", "", "x", "x"]},
            },
            text=[f"{v:.3g}" if v else "" for v in bars.values()],
            textposition="outside",
            hovertemplate="%{x}: T_P/T_D = %{y:.3g}<extra></extra>",
        )
    )
    for name, value in bars.items():
        if value is None:
            fig.add_annotation(
                x=name,
                y=0,
                yref="y",
                text="not measured:<br>primal_cd and dual_cd<br>must both reach ε",
                showarrow=False,
                font={"color": "#555", "size": 11},
            )
    ticks, labels = log_ticks([*bars.values(), 1.0])
    fig.add_hline(y=1, line={"dash": "dot", "color": "#555"})
    title = "primal ÷ dual CD work: predicted T_P/T_D beside measured (> 1: dual CD wins)"
    fig.update_layout(
        template="plotly_white",
        title={"text": f"{title}<br><sub>{objective}</sub>" if objective else title, "x": 0.01},
        yaxis={
            "type": "log",
            "title": "ratio primal ÷ dual (T_P/T_D)",
            "tickvals": ticks,
            "ticktext": labels,
            "range": [math.log10(ticks[0] / 1.5), math.log10(ticks[-1] * 1.5)],
        },
        showlegend=False,
        margin={"l": 70, "r": 20, "t": 80, "b": 60},
        meta={"export": export_name("faceoff-advisor", [objective] if objective else [])},
    )
    return fig
