"""Colours and line styles, the same in every figure of the dashboard and of the benchmarks
(``bench/figures.py`` draws with :func:`solver_color`); the grey layer of cells without a
time; the blank figure."""

from __future__ import annotations

import colorsys
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from faceoff.core.analysis import NOT_REACHED
from faceoff.solvers.catalogue import catalogue

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
GREY = "#9e9e9e"  # cells and bars of settings without a time: never reached, no P*
GREY_SCALE = [[0.0, "#d9d9d9"], [1.0, GREY]]


def solver_color(solver: str) -> str:
    """One colour per solver, stable across pages and figures (catalogue order); a legend
    name's is its solver's (``spdc[batch_size=8]`` is drawn in ``spdc``'s)."""
    solver = solver.split("[", 1)[0]
    names = list(catalogue())
    index = names.index(solver) if solver in names else len(names) + sum(map(ord, solver))
    return PALETTE[index % len(PALETTE)]


def shade(hex_color: str, k: int) -> str:
    """The ``k``-th shade of a colour: itself, then alternately darker and lighter."""
    r, g, b = (int(hex_color[i : i + 2], 16) / 255 for i in (1, 3, 5))
    hue, light, sat = colorsys.rgb_to_hls(r, g, b)
    step = (0.0, -0.17, 0.17, -0.29, 0.27, -0.36, 0.34)[k % 7]
    r, g, b = colorsys.hls_to_rgb(hue, min(0.88, max(0.12, light + step)), sat)
    return "#" + "".join(f"{round(c * 255):02x}" for c in (r, g, b))


def rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def setting_styles(settings: Iterable[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """(colour, dash) per solver setting, from (solver, setting) pairs: the solver's colour
    (:func:`solver_color`) in a shade of its own and a line style of its own for each of
    its settings, so that settings of one solver stay apart; the same in every panel."""
    by_solver: dict[str, list[str]] = {}
    for solver, setting in sorted(set(settings)):
        by_solver.setdefault(solver, []).append(setting)
    return {
        setting: (shade(solver_color(solver), k), DASHES[k % len(DASHES)])
        for solver, names in by_solver.items()
        for k, setting in enumerate(names)
    }


def grey_layer(
    settings: Sequence[str], objectives: Sequence[str], states: Mapping[tuple[int, int], str]
) -> go.Heatmap:
    """The cells with no time or rank, grey and labelled with why (``states``: (setting,
    objective) index → :func:`faceoff.core.analysis.unreached_reason`)."""
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


def empty_figure(message: str) -> go.Figure:
    """A blank figure that says why it is blank."""
    fig = go.Figure()
    fig.add_annotation(text=message, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)
    fig.update_layout(template="plotly_white", xaxis={"visible": False}, yaxis={"visible": False})
    return fig
