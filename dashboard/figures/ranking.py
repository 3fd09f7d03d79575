"""Who wins where: the rank of each solver setting on each objective by time to ε
(:func:`faceoff.core.analysis.ranking`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from faceoff.dashboard.figures.style import grey_layer

ROW_PX = 22  # height of a setting's row


TITLE = "ranking: who wins where (1 = fastest to ε; grey: no rank)"


def ranking_figure(
    ranked: Sequence[Mapping[str, Any]], order: Sequence[str] = (), title: str = TITLE
) -> go.Figure:
    """Rank of each solver setting on each objective (1 = fastest to ε, or to what
    ``title`` says): who wins where. Settings without a rank (never reached ε, no P*, ...)
    are grey cells saying why. Rows in ``order`` (the other figures' order of the
    settings), the others after it by name."""
    present = {s for r in ranked for s in (*r["ranks"], *r.get("unranked", {}))}
    settings = [s for s in order if s in present] + sorted(present - set(order))
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
        fig.add_trace(grey_layer(settings, objectives, states))
    fig.update_layout(
        template="plotly_white",
        title={"text": title, "x": 0.01},
        yaxis={"autorange": "reversed"},
        margin={"l": 70, "r": 20, "t": 60, "b": 60},
        height=max(320, 130 + ROW_PX * len(settings)),
    )
    return fig
