"""Shared helpers of the paper benchmarks: solver labels, table cells, figures.

Pure functions: nothing here runs a solver or reads a dataset, so all of it is tested
without a browser (``tests/bench``). Figures are plotly ``go.Figure`` objects; only
:func:`save_png` touches the disk (PNG export through kaleido and a headless Chromium).
What is read off a trace (relative suboptimality, the first point reaching a target, the
median over seeds) is :mod:`faceoff.core.analysis`, as on the dashboard.

Legend names follow ``solver[key=value,...]`` (e.g. ``spdc[batch_size=22]``); each is drawn
with the dashboard's look of it in the figure
(:func:`faceoff.dashboard.figures.style.setting_styles`: a hue family per solver, its
variants in shades of it, ours solid or dotted, the peers dashed).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from faceoff.dashboard.figures.style import setting_styles

_LABEL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(.*)\])?$")


@dataclass(frozen=True)
class SolverChoice:
    """A solver of the catalogue with explicit parameters, e.g. ``spdc[batch_size=22]``."""

    name: str
    params: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """``name`` or ``name[key=value,...]``: the legend and table name."""
        if not self.params:
            return self.name
        return f"{self.name}[{','.join(f'{k}={v}' for k, v in self.params)}]"

    @property
    def param_dict(self) -> dict[str, str]:
        """Parameters for ``faceoff.solvers.run.solve`` (strings: the catalogue converts them)."""
        return dict(self.params)


def parse_solver(text: str) -> SolverChoice:
    """``"spdc[batch_size=22]"`` → SolverChoice("spdc", (("batch_size", "22"),)).

    Raises ValueError naming the text and the accepted form.
    """
    match = _LABEL.match(text.strip())
    if not match:
        raise ValueError(f"solver {text!r}: expected NAME or NAME[key=value,...]")
    name, inner = match.groups()
    params = []
    for item in (inner or "").split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ValueError(f"solver {text!r}: parameter {item!r} is not key=value")
        params.append((key.strip(), value.strip()))
    return SolverChoice(name, tuple(params))


# ----------------------------------------------------------------------------- tables


def fmt_num(value: float | None, missing: str = "—") -> str:
    """3 significant digits, or ``missing`` for None."""
    return missing if value is None else f"{value:.3g}"


def speedup_cell(reference: float | None, other: float | None, other_spent: float) -> str:
    """Speedup of the reference method over another: time_other / time_reference.

    ``"—"`` when the reference did not reach the target; ``"> s×"`` when only the
    reference did (s from the time the other ran without reaching it).
    """
    if reference is None:
        return "—"
    if reference <= 0:
        return "n/a (reference at t = 0)"
    if other is None:
        return f"> {other_spent / reference:.3g}×"
    return f"{other / reference:.3g}×"


def fmt_duration(seconds: float) -> str:
    """``12 min 05 s`` or ``48.2 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest:02d} s"


# ----------------------------------------------------------------------------- figures


@dataclass
class Curve:
    """One solver's trace in one panel: x (passes or seconds) and a positive y."""

    label: str
    x: list[float]
    y: list[float]


@dataclass
class Panel:
    """One subplot: a title and its curves."""

    title: str
    curves: list[Curve] = field(default_factory=list)


def convergence_figure(
    panels: Sequence[Panel],
    x_title: str,
    y_title: str,
    title: str,
    columns: int = 2,
    floor: float = 1e-16,
) -> go.Figure:
    """Subplots of convergence curves, log y axis, one legend entry per solver.

    Values ≤ ``floor`` (the target reached exactly, or rounding) are drawn at ``floor`` so
    that the log axis keeps them.
    """
    if not panels:
        raise ValueError("convergence_figure needs at least one panel")
    columns = max(1, min(columns, len(panels)))
    rows = math.ceil(len(panels) / columns)
    fig = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=[p.title for p in panels],
        horizontal_spacing=0.08,
        vertical_spacing=0.12 if rows > 1 else 0.1,
    )
    labels = [curve.label for panel in panels for curve in panel.curves]
    styles = setting_styles((label.split("[", 1)[0], label) for label in labels)
    shown: set[str] = set()
    for k, panel in enumerate(panels):
        row, col = divmod(k, columns)
        for curve in panel.curves:
            fig.add_trace(
                go.Scatter(
                    x=curve.x,
                    y=[max(v, floor) for v in curve.y],
                    mode="lines",
                    name=curve.label,
                    legendgroup=curve.label,
                    showlegend=curve.label not in shown,
                    line={
                        "color": styles[curve.label].color,
                        "dash": styles[curve.label].dash,
                        "width": 2,
                    },
                ),
                row=row + 1,
                col=col + 1,
            )
            shown.add(curve.label)
        fig.update_yaxes(
            type="log", exponentformat="power", title_text=y_title, row=row + 1, col=col + 1
        )
        fig.update_xaxes(title_text=x_title, row=row + 1, col=col + 1)
    fig.update_layout(
        title=title,
        template="plotly_white",
        width=520 * columns,
        height=360 * rows + 110,
        legend={"orientation": "h", "y": -0.08 if rows > 1 else -0.18},
        margin={"t": 90, "b": 80},
    )
    return fig


def save_png(fig: go.Figure, path: Path) -> None:
    """Write the figure as PNG (kaleido drives a headless Chromium)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.write_image(str(path), scale=1.5)
