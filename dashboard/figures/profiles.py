"""Performance profiles and data profiles of time to ε: one step curve per solver setting
(what they are and how they are computed: :mod:`faceoff.core.analysis`, "Profiles")."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from faceoff.core.analysis import Problems, Profile
from faceoff.dashboard.figures.style import setting_styles, solver_color

PAD = 0.03  # of the log x span, each side: the first and last steps stay in view


def profile_figure(
    found: Problems, profile: Profile, title: str, x_label: str, symbol: str, from_zero: bool
) -> go.Figure:
    """One step curve per setting of ``profile`` on a log x axis (``symbol``: τ or κ), from
    its first breakpoint, or with ``from_zero`` from 0 just left of it (nothing is solved
    below the first breakpoint of a data profile)."""
    fig = go.Figure()
    styles = setting_styles((found.solvers[s], s) for s in found.settings)
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
                line={"shape": "hv", "color": solver_color(solver), "dash": styles[setting][1]},
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
