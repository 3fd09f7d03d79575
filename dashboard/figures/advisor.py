"""The advisor: primal vs dual coordinate descent, predicted beside measured, and the
verdict a person reads (:func:`verdict`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import plotly.graph_objects as go

from faceoff.dashboard.figures.export import export_name

# a time ratio within this factor of 1 is no clear winner: timings on a shared machine move
# by ±25 % between runs (README, "Benchmarks")
TIME_NOISE = 1.25
# an epoch ratio within this factor of 1 is even: epochs do not depend on the machine, but a
# few per cent is the spacing of the trace points that time to ε is read from
EPOCH_EVEN = 1.1
SIDES = ("primal_cd", "dual_cd")


def _side(ratio: float, band: float) -> str | None:
    """``primal_cd`` (ratio P/D below 1/band), ``dual_cd`` (above band), None (within)."""
    if ratio < 1 / band:
        return "primal_cd"
    if ratio > band:
        return "dual_cd"
    return None


def verdict(
    predicted: str | None,
    predicted_ratio: float | None,
    seconds: Mapping[str, float | None],
    epochs: Mapping[str, float | None],
) -> str:
    """What the measured race says about the advisor's prediction, in words.

    ``predicted`` is the advisor's winner (``primal_cd`` or ``dual_cd``, None without the
    data) and ``predicted_ratio`` its T_P/T_D; ``seconds`` and ``epochs`` to ε of the best
    setting of each side (None: not reached). The advisor predicts work, so the epoch ratio
    decides whether it is right (within ±10 %: even); the time ratio says who won on this
    machine, and within its ±25 % noise that there is no clear winner. A plain "it agrees"
    needs both on the predicted side (:data:`CONCLUSIONS` says the rest)."""
    head = (
        f"The advisor predicts {predicted} (T_P/T_D = {predicted_ratio:.3g})"
        if predicted and predicted_ratio
        else "No prediction (the advisor needs the data)"
    )
    reached = [s for s in SIDES if seconds.get(s) is not None]
    if not reached:
        return f"{head}; no finished primal_cd/dual_cd run reached ε yet."
    if len(reached) == 1:
        (only,) = reached
        tail = f"; measured: only {only} reached ε"
        if predicted:
            tail += " — it agrees." if only == predicted else " — it disagrees."
        return head + tail
    primal_s, dual_s = seconds["primal_cd"], seconds["dual_cd"]
    assert primal_s is not None and dual_s is not None  # both reached
    time_ratio = primal_s / dual_s
    time_side = _side(time_ratio, TIME_NOISE)
    epoch_ratio = None
    if (primal_e := epochs.get("primal_cd")) and (dual_e := epochs.get("dual_cd")):
        epoch_ratio = primal_e / dual_e
    epoch_side = None if epoch_ratio is None else _side(epoch_ratio, EPOCH_EVEN)
    parts = []
    if epoch_ratio is not None:
        parts.append(
            f"epochs P/D = {epoch_ratio:.3g} ("
            + (f"{epoch_side} needs fewer" if epoch_side else "even, within ±10 %")
            + ")"
        )
    parts.append(
        f"time P/D = {time_ratio:.3g} ("
        + (
            f"{time_side} is faster"
            if time_side
            else "no clear winner: within this machine's ±25 % timing noise"
        )
        + ")"
    )
    text = f"{head}; measured: {'; '.join(parts)}"
    if not predicted:
        return text + "."
    work = "agrees" if epoch_side == predicted else ("disagrees" if epoch_side else "even")
    time = "agrees" if time_side == predicted else ("disagrees" if time_side else "even")
    return text + " — " + CONCLUSIONS[work, time] + "."


# (what the epochs say, what the time says) → the conclusion
CONCLUSIONS = {
    ("agrees", "agrees"): "it agrees",
    ("agrees", "even"): "it agrees on the work (epochs); the time shows no clear winner",
    ("agrees", "disagrees"): "it agrees on the work (epochs), not on the time",
    ("even", "agrees"): "it agrees on the time only; the work (epochs) is even",
    ("even", "even"): "too close to tell",
    ("even", "disagrees"): "it disagrees on the time; the work (epochs) is even",
    ("disagrees", "agrees"): "it disagrees on the work (epochs), agrees on the time",
    ("disagrees", "even"): "it disagrees on the work (epochs); the time shows no clear winner",
    ("disagrees", "disagrees"): "it disagrees",
}


def log_ticks(values: Iterable[float | None]) -> tuple[list[float], list[str]]:
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
    bars: dict[str, float | None] = {
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
    fig.add_shape(  # the measured seconds' noise: no clear winner inside it
        type="rect",
        xref="x",
        yref="y",
        x0=len(names) - 1.45,
        x1=len(names) - 0.55,
        y0=1 / TIME_NOISE,
        y1=TIME_NOISE,
        fillcolor="rgba(60,60,60,0.25)",
        line={"width": 1, "dash": "dot", "color": "#333"},
        layer="above",
    )
    fig.add_annotation(
        x=len(names) - 0.55,
        xanchor="left",
        y=0,
        yref="y",
        text="±25 %<br>timing<br>noise",
        showarrow=False,
        align="left",
        font={"color": "#333", "size": 10},
    )
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
        margin={"l": 70, "r": 70, "t": 80, "b": 60},  # right: the noise band's label
        meta={"export": export_name("faceoff-advisor", [objective] if objective else [])},
    )
    return fig
