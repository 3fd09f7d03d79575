"""Performance profiles and data profiles of time to ε: one step curve per solver setting
(what they are and how they are computed: :mod:`faceoff.core.analysis`, "Profiles")."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from faceoff.core.analysis import Problems, Profile
from faceoff.dashboard.figures.style import setting_styles

PAD = 0.03  # of the log x span, each side: the first and last steps stay in view
ENTRY_PX = 21  # height of a legend entry
PLOT_PX = 360  # least height of the plot area


def profile_figure(
    found: Problems, profile: Profile, title: str, x_label: str, symbol: str, from_zero: bool
) -> go.Figure:
    """One step curve per setting of ``profile`` on a log x axis (``symbol``: τ or κ), from
    its first breakpoint, or with ``from_zero`` from 0 just left of it (nothing is solved
    below the first breakpoint of a data profile). The legend is right of the plot, which
    narrows for it, and the figure is tall enough for every entry: it never covers the
    axes."""
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
    order = [s for s in styles if s in found.settings]  # the looks' order: ours, then peers
    for setting in order:
        j = found.settings.index(setting)
        look = styles[setting]
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y[:, j],
                name=setting,
                mode="lines",
                line={"shape": "hv", "color": look.color, "dash": look.dash, "width": 2},
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
        legend={
            "title": {"text": "solver[settings]"},
            "orientation": "v",
            "x": 1.02,
            "xanchor": "left",
            "y": 1.0,
            "yanchor": "top",
        },
        hovermode="closest",
        height=max(PLOT_PX, ENTRY_PX * (len(order) + 1)) + 130,
        margin={"l": 70, "r": 20, "t": 60, "b": 60},
    )
    return fig
