"""The compare figure: convergence curves of jobs, one panel per objective, the median
over seeds with a quantile band (:func:`faceoff.core.analysis.median_band`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from faceoff.core.analysis import (
    BAND,
    HELD_OUT,
    NEEDS_REFERENCE,
    X_FIELDS,
    finite_points,
    measure,
    median_band,
)
from faceoff.dashboard.figures.export import export_name
from faceoff.dashboard.figures.labels import (
    X_AXES,
    Y_MEASURES,
    objective_labels,
    objective_order,
    setting_name,
)
from faceoff.dashboard.figures.style import rgba, setting_styles

# trace modes a legend names (solvers.catalogue.SolverSpec.trace_mode); ours are "native"
NOTED_MODES = ("callback", "refit")
DECADE = 10.0  # curves ending further apart than this ratio are drawn on a log x axis
LEGEND_ENTRY_PX = 23  # a legend entry, with its gap to the next
REFIT_MARKER = {"symbol": "circle", "size": 7}  # a refit trace's points: one fit each
REFIT_NOTE = "● refit: each marked point is its own fit from scratch, its time that fit's wall time"


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
    keep = finite_points(xs, values, log_x, log_y)
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
    """The curves of the compare figure, and the rows left out for want of a reference P*
    (or, for a held-out measure, of held-out metrics).

    Jobs that share a solver setting and an objective are seeds of one curve: their median
    with a quantile band (:func:`median_band`). A curve's ``objective`` is the objective's
    full label (:func:`objective_labels`).
    """
    if x not in X_AXES:
        raise ValueError(f"unknown x axis {x!r}; accepted: {', '.join(X_AXES)}")
    if y not in Y_MEASURES:
        raise ValueError(f"unknown y measure {y!r}; accepted: {', '.join(Y_MEASURES)}")
    x_field = X_FIELDS[x]
    labels = objective_labels(rows, full=True)
    groups: dict[tuple[str, str, str], list[tuple[Mapping[str, Any], np.ndarray]]] = {}
    missing = []
    for row in rows:
        values = measure(row["trace"], y, references.get(row["objective_hash"]))
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
    if y in HELD_OUT:
        return held_out_note(missing)
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


def held_out_note(missing: Sequence[Mapping[str, Any]]) -> str | None:
    """What the figure and the status line say of the jobs without held-out metrics (no
    test split, or no point yet): that they are not drawn."""
    if not missing:
        return None
    ids = ", ".join(str(r["id"]) for r in missing[:10]) + (", …" if len(missing) > 10 else "")
    return (
        f"{len(missing)} job(s) without held-out metrics not drawn (job {ids}): they have no "
        "test split, or no point yet"
    )


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


def spans_decades(rows: Sequence[Mapping[str, Any]], x: str) -> bool:
    """Whether the curves of ``rows`` end more than a decade apart on the ``x`` axis (the
    last positive value of each trace): on a linear axis the fast ones would be squashed
    against 0, so the compare page draws them on a log axis unless told otherwise."""
    ends = []
    for row in rows:
        values = np.asarray(row["trace"][X_FIELDS[x]], dtype=float)
        values = values[np.isfinite(values) & (values > 0)]
        if values.size:
            ends.append(values.max())
    return bool(ends) and max(ends) > DECADE * min(ends)


TITLE_CHARS = 40  # a panel title's line (~320 px): two panels' titles stay apart at 900 px
TITLE_LINE_PX = 16  # the height a further title line takes


def wrap_title(objective: str, width: int = TITLE_CHARS) -> str:
    """An objective's name as a panel title: its " · " parts on lines of at most ``width``
    characters (a longer part on a line of its own), joined by ``<br>``; short names stay
    one line. A K-class name such as "news20 · logistic · K = 20, one-vs-rest · l2=1e-06"
    ran into its neighbour's in a two-column grid."""
    lines: list[str] = []
    for part in objective.split(" · "):
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return "<br>".join(lines)


def _grid(n: int) -> tuple[int, int]:
    """(rows, columns) of ``n`` panels: one column for one panel, else two."""
    cols = 1 if n <= 1 else 2
    return max(1, math.ceil(n / cols)), cols


def compare_height(n_panels: int, n_settings: int = 0) -> int:
    """The compare figure's height in pixels for ``n_panels`` objectives and a legend of
    ``n_settings`` entries (tall enough for all of them: the legend never scrolls)."""
    rows, _ = _grid(n_panels)
    panels = 640 if n_panels <= 1 else 150 + 380 * rows
    return max(panels, 190 + LEGEND_ENTRY_PX * n_settings)


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
    x_label, y_label = X_AXES[x], Y_MEASURES[y]
    plotted = {s.objective for s in series}
    objectives = [o for o in objective_order(rows) if o in plotted]
    n_rows, n_cols = _grid(len(objectives))
    titles = [wrap_title(o) for o in objectives]
    extra = TITLE_LINE_PX * max((t.count("<br>") for t in titles), default=0)
    height = compare_height(len(objectives), len({s.setting for s in series})) + n_rows * extra
    fig = make_subplots(
        rows=n_rows,
        cols=n_cols,
        subplot_titles=titles if len(objectives) > 1 else None,
        horizontal_spacing=0.08,
        vertical_spacing=min(0.3, (110 + extra) / height),
    )
    # every setting of the rows, plotted or not, so the sweep's other pages draw it alike
    styles = setting_styles((r["solver"], setting_name(r)) for r in rows)
    rank = {setting: 1000 + k for k, setting in enumerate(styles)}
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
            "legendrank": rank[s.setting],  # ours, then peers, as the looks go
            "showlegend": s.setting not in shown,
        }
        shown.add(s.setting)
        if s.points is not None:
            fig.add_trace(_point_trace(s, y_label, line, **legend), **cell)
            continue
        assert s.lo is not None and s.hi is not None  # a median series carries its band
        n = len(s.job_ids)
        for bound, fill in ((s.hi, None), (s.lo, "tonexty")):
            fig.add_trace(
                go.Scatter(
                    x=s.x,
                    y=bound,
                    mode="lines",
                    line={"width": 0, "color": color},
                    fill=fill,
                    fillcolor=rgba(color, 0.18) if fill else None,
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
    if log_x:
        x_label += " · log scale"
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
        legend={"title": {"text": "solver[settings]"}, "tracegroupgap": 3},
        showlegend=bool(series),
        hovermode="closest",
        height=height,
        # a wrapped title's lines grow upwards, towards the figure's title
        margin={"l": 70, "r": 20, "t": 70 + (extra + 10 if extra else 0), "b": 90},
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
