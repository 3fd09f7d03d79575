"""Time to ε per solver setting and objective: the results (median and quartiles over
seeds, :func:`faceoff.core.analysis.seed_summary`) and their figure: labelled dots on an
axis from 0 or a log axis that says so, or a heatmap."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.io as pio
from plotly.colors import get_colorscale

from faceoff.core import analysis
from faceoff.core.analysis import CRITERIA, NOT_REACHED, unreached_reason
from faceoff.dashboard.figures.labels import objective_labels, setting_name
from faceoff.dashboard.figures.style import GREY, grey_layer, setting_styles

NOT_RUN = "not run"
COLUMNS = 4  # panels a row of the dots chart
H_GAP = 0.03  # between two panels of a row, a fraction of the figure's width


def time_to_eps(
    rows: Sequence[Mapping[str, Any]],
    eps: float,
    criterion: str,
    references: Mapping[str, Mapping[str, float]],
    x: str = "time",
) -> list[dict[str, Any]]:
    """Time (or epochs, iterations) to ε per solver setting and objective: the median and
    the interquartile range over seeds, counting a seed that never reached ε as infinitely
    slow. A row's own time is its ``to_eps[x]`` (dashboard.rows.job_times: read from the
    trace summaries) or else :func:`faceoff.core.analysis.time_to_eps` of its ``trace``.

    Each result: ``setting``, ``solver``, ``objective`` (label naming what differs),
    ``objective_name`` (full label), ``objective_hash``, ``dataset``, ``value`` (None if the
    median seed did not reach ε, NaN if undecidable), ``q25`` and ``q75`` (alike),
    ``reached`` and ``seeds`` (counts), ``job_ids``.
    """
    labels = objective_labels(rows)
    names = objective_labels(rows, full=True)
    groups: dict[tuple[str, str], list[tuple[Mapping[str, Any], float | None]]] = {}
    for row in rows:
        value = (
            row["to_eps"][x]
            if "to_eps" in row
            else analysis.time_to_eps(
                row["trace"], criterion, eps, references.get(row["objective_hash"]), x
            )
        )
        groups.setdefault((setting_name(row), row["objective_hash"]), []).append((row, value))
    results = []
    for (setting, digest), members in sorted(groups.items()):
        first = members[0][0]
        results.append(
            {
                "setting": setting,
                "solver": first["solver"],
                "objective": labels[digest] or first["dataset"],
                "objective_name": names[digest],
                "objective_hash": digest,
                "dataset": first["dataset"],
                **analysis.seed_summary([v for _, v in members]),
                "job_ids": [r["id"] for r, _ in members],
            }
        )
    return results


def _spread(r: Mapping[str, Any]) -> str:
    """``0.012`` or, over several seeds, ``0.012 [0.010–0.015]`` (median [q25–q75])."""
    state = unreached_reason(r["value"])
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


SCALES = ("auto", "linear", "log")
DECADE = 10.0  # "auto" draws on a log axis when the times span more than this ratio
ROW_PX = 26  # height of a setting's row of dots
LABEL_GAP = "\u2007\u2007"  # two figure spaces: a value's label clears its dot


def time_scale(values: Sequence[float], scale: str = "auto") -> str:
    """``linear`` or ``log``: ``scale`` unless it is ``auto``, which is log when the positive
    finite ``values`` span more than a decade (the slow would squash the fast against 0 on
    a linear axis), linear otherwise."""
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; accepted: {', '.join(SCALES)}")
    if scale != "auto":
        return scale
    shown = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    return "log" if shown and max(shown) > DECADE * min(shown) else "linear"


def time_to_eps_figure(
    results: Sequence[Mapping[str, Any]],
    chart: str,
    eps: float,
    criterion: str,
    x: str = "time",
    scale: str = "auto",
) -> dict[str, Any]:
    """Time to ε across solver settings × objectives: ``dots``, one panel per objective with
    a row per setting, its median a dot labelled with its value and a bar over the
    interquartile range over seeds, on an axis from 0 or a log axis that says so
    (:func:`time_scale`); or a ``heatmap``. A setting that never reached ε is shown as
    such, grey and labelled, never as a time.

    The figure is returned as Plotly's JSON (``data`` and ``layout``: what Dash sends), not
    as a ``go.Figure``: the dots take two traces a setting and objective (480 for 30
    objectives × 8 settings), and validating each property of each took seconds."""
    unit = {"time": "seconds", "epoch": "epochs", "iteration": "iterations"}[x]
    title = f"{unit} to {CRITERIA[criterion].replace('ε', f'ε = {eps:g}')}"
    settings, objectives, cells = _matrix(results)
    states = {k: s for k, r in cells.items() if (s := unreached_reason(r["value"]))}
    if chart == "heatmap":
        z = np.full((len(settings), len(objectives)), np.nan)
        text = [[NOT_RUN] * len(objectives) for _ in settings]
        for (i, j), r in cells.items():
            text[i][j] = _spread(r)
            if (i, j) not in states and r["value"] > 0:
                z[i, j] = math.log10(r["value"])
        heat = {
            "type": "heatmap",
            "z": z,
            "x": objectives,
            "y": settings,
            "text": text,
            "texttemplate": "%{text}",
            "colorscale": get_colorscale("Viridis_r"),  # Plotly.js knows no "_r" names
            "colorbar": {"title": {"text": f"log10 {unit}"}},
            "hovertemplate": "%{y}<br>%{x}<br>%{text}<extra></extra>",
        }
        figure: dict[str, Any] = {
            "data": [heat, grey_layer(settings, objectives, states)] if states else [heat],
            "layout": {"yaxis": {"autorange": "reversed"}},
        }
        margin = {"l": 70, "r": 20, "t": 60, "b": 60}
    elif chart == "dots":
        figure, kind = _dots(results, settings, objectives, cells, states, unit, scale)
        title += " · log scale: equal steps are equal ratios" if kind == "log" else " · from 0"
        margin = {"l": 70, "r": 30, "t": 90, "b": 50}
    else:
        raise ValueError(f"unknown chart {chart!r}; accepted: dots, heatmap")
    figure["layout"].update(
        template=pio.templates["plotly_white"], title={"text": title, "x": 0.01}, margin=margin
    )
    return figure


def _dots(
    results: Sequence[Mapping[str, Any]],
    settings: Sequence[str],
    objectives: Sequence[str],
    cells: Mapping[tuple[int, int], Mapping[str, Any]],
    states: Mapping[tuple[int, int], str],
    unit: str,
    scale: str,
) -> tuple[dict[str, Any], str]:
    """One panel per objective (at most COLUMNS a row), a row per setting (its name on the
    axis): the median a dot in the setting's colour and symbol with its value written
    beside it, the interquartile range over seeds a bar; a setting without a time a grey
    cross at the right end of the axis, labelled with why. Returns the figure's ``data``
    and ``layout`` (:func:`_panels`: the grid of ``make_subplots``) and its scale
    (:func:`time_scale`)."""
    styles = setting_styles((r["solver"], r["setting"]) for r in results)
    order = [s for s in styles if s in settings]
    times = [r[k] for r in cells.values() for k in ("value", "q25", "q75") if r.get(k)]
    times = [t for t in times if t > 0 and math.isfinite(t)]
    kind = time_scale(times, scale)
    high = max(times) if times else 1.0
    low = min(times) if times else 0.1
    if kind == "log":
        span = [math.log10(low) - 0.15, math.log10(high) + 0.45]  # room for the labels
        edge = 10 ** (span[1] - 0.12)
    else:
        span = [0.0, high * 1.3]
        edge = high * 1.22
    n_cols = min(COLUMNS, max(1, len(objectives)))
    n_rows = max(1, math.ceil(len(objectives) / n_cols))
    height = 110 + n_rows * (40 + ROW_PX * max(1, len(order)))
    axis_title = f"{unit} to ε, {'log scale' if kind == 'log' else 'from 0'}"
    layout = _panels(objectives, n_rows, n_cols, min(0.2, 60 / height))
    for key in [k for k in layout if k.startswith("xaxis")]:
        layout[key].update(
            title={"text": axis_title}, type=kind, range=span, zeroline=kind == "linear"
        )
    for key in [k for k in layout if k.startswith("yaxis")]:
        layout[key].update(
            type="category",
            categoryorder="array",
            categoryarray=list(reversed(order)),
            range=[-0.6, len(order) - 0.4],
            automargin=True,
        )
    layout.update(height=height, showlegend=False, hovermode="closest")
    index = {s: i for i, s in enumerate(settings)}
    data: list[dict[str, Any]] = []
    for j, objective in enumerate(objectives):
        axes = {"xaxis": f"x{j + 1 if j else ''}", "yaxis": f"y{j + 1 if j else ''}"}
        for setting in order:
            r = cells.get((index[setting], j))
            if r is None:
                continue
            look = styles[setting]
            state = states.get((index[setting], j))
            if state:
                data.append(
                    {
                        "type": "scatter",
                        "x": [edge],
                        "y": [setting],
                        "mode": "markers+text",
                        "marker": {"symbol": "x-thin-open", "size": 10, "color": GREY},
                        "text": [state],
                        "textposition": "middle left",
                        "textfont": {"color": "#555", "size": 11},
                        "name": setting,
                        "showlegend": False,
                        "hovertemplate": f"<b>{setting}</b><br>{objective}<br>{state}"
                        f" ({r.get('reached', 0)} of {r.get('seeds', 1)} seeds reached ε)"
                        "<extra></extra>",
                        "cliponaxis": False,
                        **axes,
                    }
                )
                continue
            several = r.get("seeds", 1) > 1
            upper = edge if r.get("q75") is None else r["q75"]
            data.append(
                {
                    "type": "scatter",
                    "x": [r["value"]],
                    "y": [setting],
                    "mode": "markers",
                    "marker": {"symbol": look.symbol, "size": 10, "color": look.color},
                    "error_x": {
                        "type": "data",
                        "symmetric": False,
                        "array": [upper - r["value"] if several else 0],
                        "arrayminus": [r["value"] - r["q25"] if several else 0],
                        "color": look.color,
                        "thickness": 1.5,
                        "width": 3,
                    },
                    "text": [f"{r['value']:.3g}"],
                    "name": setting,
                    "showlegend": False,
                    "customdata": [[_spread(r), r.get("reached", 1), r.get("seeds", 1)]],
                    "hovertemplate": f"<b>{setting}</b><br>{objective}<br>%{{customdata[0]}} "
                    f"{unit}<br>%{{customdata[1]}} of %{{customdata[2]}} seeds reached ε"
                    "<extra></extra>",
                    "cliponaxis": False,
                    **axes,
                }
            )
            data.append(  # its value, written past the end of its bar and its dot
                {
                    "type": "scatter",
                    "x": [upper if several else r["value"]],
                    "y": [setting],
                    "mode": "text",
                    "text": [f"{LABEL_GAP}{r['value']:.3g}"],
                    "textposition": "middle right",
                    "textfont": {"size": 11, "color": "#222"},
                    "name": f"{setting} (value)",
                    "showlegend": False,
                    "hoverinfo": "skip",
                    "cliponaxis": False,
                    **axes,
                }
            )
    return {"data": data, "layout": layout}, kind


def _panels(titles: Sequence[str], n_rows: int, n_cols: int, v_gap: float) -> dict[str, Any]:
    """The layout of ``make_subplots(n_rows, n_cols, shared_yaxes=True,
    subplot_titles=titles, horizontal_spacing=H_GAP, vertical_spacing=v_gap)``, written
    out: panel k (row-major from the top left) has the axes ``xaxis{k}`` and ``yaxis{k}``
    (k = 1 unnumbered), each anchored on the other; the y axes of a row match its first,
    which alone shows its tick labels; a panel's title is centred above it."""
    width = (1.0 - H_GAP * (n_cols - 1)) / n_cols
    height = (1.0 - v_gap * (n_rows - 1)) / n_rows
    layout: dict[str, Any] = {}
    annotations = []
    for k in range(n_rows * n_cols):
        row, col = divmod(k, n_cols)
        left = col * width + col * H_GAP
        bottom = (n_rows - 1 - row) * height + (n_rows - 1 - row) * v_gap
        x_domain = [left, left + width]
        y_domain = [max(0.0, bottom), min(1.0, bottom + height)]
        suffix = str(k + 1) if k else ""
        layout[f"xaxis{suffix}"] = {"anchor": f"y{suffix}", "domain": x_domain}
        layout[f"yaxis{suffix}"] = {"anchor": f"x{suffix}", "domain": y_domain}
        if col:
            first = str(row * n_cols + 1) if row else ""
            layout[f"yaxis{suffix}"].update(matches=f"y{first}", showticklabels=False)
        if k < len(titles) and titles[k]:
            annotations.append(
                {
                    "font": {"size": 16},
                    "showarrow": False,
                    "text": titles[k],
                    "x": sum(x_domain) / 2.0,
                    "xanchor": "center",
                    "xref": "paper",
                    "y": y_domain[1],
                    "yanchor": "bottom",
                    "yref": "paper",
                }
            )
    if annotations:
        layout["annotations"] = annotations
    return layout
