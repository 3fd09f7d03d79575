"""The advisor: primal vs dual coordinate descent, predicted beside measured."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import plotly.graph_objects as go

from faceoff.dashboard.figures.export import export_name


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
