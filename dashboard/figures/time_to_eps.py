"""Time to ε per solver setting and objective: the results (median and quartiles over
seeds, :func:`faceoff.core.analysis.seed_summary`) and their figure, grouped bars or a
heatmap."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from faceoff.core import analysis
from faceoff.core.analysis import CRITERIA, NO_REFERENCE, NOT_REACHED, unreached_reason
from faceoff.dashboard.figures.labels import objective_labels, setting_name
from faceoff.dashboard.figures.style import DASHES, GREY, PATTERNS, grey_layer, setting_styles

NOT_RUN = "not run"


def time_to_eps(
    rows: Sequence[Mapping[str, Any]],
    eps: float,
    criterion: str,
    references: Mapping[str, Mapping[str, float]],
    x: str = "time",
) -> list[dict[str, Any]]:
    """Time (or epochs, iterations) to ε per solver setting and objective: the median and
    the interquartile range over seeds, counting a seed that never reached ε as infinitely
    slow (:func:`faceoff.core.analysis.time_to_eps` of each job's trace).

    Each result: ``setting``, ``solver``, ``objective`` (label naming what differs),
    ``objective_name`` (full label), ``objective_hash``, ``dataset``, ``value`` (None if the
    median seed did not reach ε, NaN if undecidable), ``q25`` and ``q75`` (alike),
    ``reached`` and ``seeds`` (counts), ``job_ids``.
    """
    labels = objective_labels(rows)
    names = objective_labels(rows, full=True)
    groups: dict[tuple[str, str], list[tuple[Mapping[str, Any], float | None]]] = {}
    for row in rows:
        value = analysis.time_to_eps(
            row["trace"], criterion, eps, references.get(row["objective_hash"]), x
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


def time_to_eps_figure(
    results: Sequence[Mapping[str, Any]], chart: str, eps: float, criterion: str, x: str = "time"
) -> go.Figure:
    """Time to ε across solver settings × objectives, as grouped bars (median with the
    interquartile range over seeds as error bars) or a heatmap. A setting that never
    reached ε is shown as such, grey and labelled, never as a time."""
    unit = {"time": "seconds", "epoch": "epochs", "iteration": "iterations"}[x]
    title = f"{unit} to {CRITERIA[criterion].replace('ε', f'ε = {eps:g}')}"
    settings, objectives, cells = _matrix(results)
    states = {k: s for k, r in cells.items() if (s := unreached_reason(r["value"]))}
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
            fig.add_trace(grey_layer(settings, objectives, states))
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
