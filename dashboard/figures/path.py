"""The path figure: regularization-path jobs side by side, along l1 / λ_max.

Top panel: the path's solver time at each λ's end (the race: the lower curve got further
down the path sooner); bottom panel: the support size of each λ's solution. λ decreases to
the right, as the path runs. A λ whose certified relative gap is above the job's tol (still
running, or stopped by its epochs) is drawn with an open marker and said so in its hover.
The rows are core.paths' (dashboard.rows.job_paths), never recomputed here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from faceoff.dashboard.figures.export import export_name
from faceoff.dashboard.figures.labels import objective_labels, setting_name
from faceoff.dashboard.figures.style import empty_figure, setting_styles

HEIGHT = 640


def path_label(row: Mapping[str, Any]) -> str:
    """A path job's legend entry: its setting, job id and progress, ``ws_cd · job 7 (50/50
    λ, 0.26 s)``, and how many of its λs are above tol (``, 3 λ above tol``)."""
    steps = row["steps"]
    seconds = steps[-1]["time_s"] if steps else 0.0
    above = sum(1 for step in steps if not step["gap_rel"] <= row["tol"])
    return (
        f"{setting_name(row)} · job {row['id']} "
        f"({len(steps)}/{row['n_lambdas']} λ, {seconds:.3g} s"
        + (f", {above} λ above tol" if above else "")
        + ")"
    )


def path_figure(rows: Sequence[Mapping[str, Any]]) -> go.Figure:
    """The figure of path job rows (with ``steps``, ``n_lambdas``, ``tol``, ``lambda_max``
    and the job row's fields)."""
    drawn = [row for row in rows if row["steps"]]
    if not drawn:
        message = "no path job with a λ solved yet" if rows else "choose path jobs (ids)"
        return empty_figure(message)
    figure = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=("path solver time at each λ's end (s)", "support size (nonzeros of x)"),
    )
    looks = setting_styles((row["solver"], setting_name(row)) for row in drawn)
    for row in drawn:
        look = looks[setting_name(row)]
        steps, tol = row["steps"], row["tol"]
        x = [step["ratio"] for step in steps]
        at_tol = [step["gap_rel"] <= tol for step in steps]
        symbols = ["circle" if ok else "circle-open" for ok in at_tol]
        hover = [
            f"λ {step['index']}: l1 = {step['l1']:.4g} (λ_max·{step['ratio']:.3g})<br>"
            f"this λ {step['seconds']:.3g} s, {step['epochs']:.4g} epochs<br>"
            f"gap/max(1,|P|) = {step['gap_rel']:.2e}"
            + ("" if ok else f" <b>above tol {tol:g}</b>")
            + f"<br>{step['nnz']} nonzeros"
            for step, ok in zip(steps, at_tol, strict=True)
        ]
        name = path_label(row)
        line = {"color": look.color, "dash": look.dash}
        marker = {"color": look.color, "symbol": symbols, "size": 7}
        common = {"x": x, "name": name, "legendgroup": name, "hovertext": hover}
        figure.add_trace(
            go.Scatter(
                y=[step["time_s"] for step in steps],
                mode="lines+markers",
                line=line,
                marker=marker,
                hoverinfo="text+name",
                **common,
            ),
            row=1,
            col=1,
        )
        figure.add_trace(
            go.Scatter(
                y=[step["nnz"] for step in steps],
                mode="lines+markers",
                line={**line, "shape": "hv"},
                marker=marker,
                hoverinfo="text+name",
                showlegend=False,
                **common,
            ),
            row=2,
            col=1,
        )
    labels = objective_labels(drawn, full=True)
    objectives = sorted({labels[row["objective_hash"]] for row in drawn})
    tops = sorted({f"{row['lambda_max']:.4g}" for row in drawn if row["lambda_max"]})
    title = " | ".join(objectives) + (f" · λ_max = {', '.join(tops)}" if tops else "")
    figure.update_xaxes(type="log", autorange="reversed")
    figure.update_xaxes(title_text="l1 / λ_max (the path runs to the right)", row=2, col=1)
    figure.update_yaxes(rangemode="tozero")
    figure.update_layout(
        template="plotly_white",
        title={"text": title, "font": {"size": 14}},
        height=HEIGHT,
        legend={"orientation": "h", "y": -0.15},
        margin={"t": 80},
        meta={"export": export_name("faceoff-path", objectives)},
    )
    return figure
