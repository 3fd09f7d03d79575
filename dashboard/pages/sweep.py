"""Sweep: time to ε across solver settings × weights, and which solver wins where.

URL: ``/sweep/ID?eps=1e-6&criterion=subopt_rel|gap_rel&x=time|epoch&chart=dots|heatmap
&scale=auto|linear|log&settle=test_loss|test_score&delta=1e-2``.

Below, for a sweep with held-out metrics (a test split), the ranking by the time each
setting's test metric takes to settle within δ of its final value (finished runs only).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import dash
from dash import Input, Output, State, callback, dcc, html

from faceoff.core import analysis
from faceoff.core.jobs import JobFilter
from faceoff.core.models import SUCCEEDED
from faceoff.dashboard import fairness, rows
from faceoff.dashboard.components import (
    choice,
    control,
    database_url,
    eps_choice,
    eps_dropdown,
    export_bar,
    href,
    optional_id,
    parse_int,
    radio,
    share_link,
    url_sync,
    viewer_team,
)
from faceoff.dashboard.figures.export import export_name, records_csv
from faceoff.dashboard.figures.heldout import SETTLE_MEASURES, settle_results, settle_rule
from faceoff.dashboard.figures.ranking import ranking_figure
from faceoff.dashboard.figures.style import empty_figure, setting_styles
from faceoff.dashboard.figures.time_to_eps import time_to_eps, time_to_eps_figure

if TYPE_CHECKING:
    import plotly.graph_objects as go

dash.register_page(__name__, path_template="/sweep/<sweep_id>", title="Faceoff · sweep", order=2)

CHARTS = {"dots": "dots", "heatmap": "heatmap"}
SCALES = {"auto": "auto", "linear": "from 0", "log": "log"}
X_CHOICES = {"time": "seconds", "epoch": "epochs"}
DELTAS = {"1e-1": "0.1", "1e-2": "0.01", "1e-3": "0.001"}  # δ of the time to settle
REFRESH_MS = 3000
HEIGHT = {"height": "480px"}  # of a figure that does not size itself
CSV_COLUMNS = (
    "objective",
    "dataset",
    "setting",
    "solver",
    "value",
    "q25",
    "q75",
    "reached",
    "seeds",
    "job_ids",
    "objective_name",
    "objective_hash",
)


def layout(
    sweep_id: str | None = None,
    eps: str | None = None,
    criterion: str | None = None,
    x: str | None = None,
    chart: str | None = None,
    scale: str | None = None,
    settle: str | None = None,
    delta: str | None = None,
    **_: str,
) -> html.Div:
    return html.Div(
        [
            html.H2(id="sweep-title"),
            dcc.Store(id="sweep-id", data=parse_int(sweep_id) or None),
            html.Div(
                [
                    control(
                        "ε",
                        eps_dropdown("sweep-eps", eps),
                    ),
                    control(
                        "criterion",
                        radio("sweep-criterion", analysis.CRITERIA, criterion, "subopt_rel"),
                    ),
                    control("measured in", radio("sweep-x", X_CHOICES, x, "time")),
                    control("chart", radio("sweep-chart", CHARTS, chart, "dots")),
                    control("dots' axis", radio("sweep-scale", SCALES, scale, "auto")),
                ],
                className="controls",
            ),
            html.Div(
                [
                    html.Span(id="sweep-status", className="status"),
                    " · ",
                    html.A("compare its curves", id="sweep-compare", href="/compare"),
                    " · ",
                    html.A("its runs", id="sweep-runs", href="/"),
                    " · ",
                    share_link("sweep"),
                ]
            ),
            html.Div(id="sweep-fairness"),
            dcc.Graph(id="sweep-tte", config={"displaylogo": False}),
            dcc.Graph(id="sweep-ranking", config={"displaylogo": False}),
            html.H3("Winners"),
            html.Div(id="sweep-winners"),
            html.H3("Held-out metrics: time to settle"),
            html.Div(
                [
                    control(
                        "test metric", radio("sweep-settle", SETTLE_MEASURES, settle, "test_loss")
                    ),
                    control("δ", radio("sweep-delta", DELTAS, delta, "1e-2")),
                ],
                className="controls",
            ),
            html.Div(id="sweep-settle-status", className="status"),
            dcc.Graph(id="sweep-settle-ranking", config={"displaylogo": False}),
            html.Div(id="sweep-settle-table"),
            export_bar(
                "sweep",
                ["sweep-tte", "sweep-ranking", "sweep-settle-ranking"],
                csv_label="CSV (time to ε)",
            ),
            dcc.Interval(id="sweep-interval", interval=REFRESH_MS, disabled=True),
        ]
    )


url_sync("sweep")
fairness.watch(
    "sweep",
    [Input("sweep-id", "data"), Input("sweep-interval", "n_intervals")],
    lambda sweep_id, _n: fairness.sweep_jobs(sweep_id),
)


def _choices(
    eps: Any, criterion: Any, x: Any, chart: Any = None, scale: Any = None
) -> tuple[str, str, str, str, str]:
    """The view's choices, each one of its accepted values."""
    return (
        eps_choice(eps),
        choice(criterion, analysis.CRITERIA, "subopt_rel"),
        choice(x, X_CHOICES, "time"),
        choice(chart, CHARTS, "dots"),
        choice(scale, SCALES, "auto"),
    )


def _results(
    sweep_id: int, eps: str, criterion: str, x: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The sweep's job rows with their times to ε (read from the trace summaries), and time
    to ε per setting and objective."""
    where = JobFilter(sweep_id=sweep_id)
    found, refs = rows.job_times(
        database_url(), where, float(eps), criterion, [x], team_id=viewer_team()
    )
    return found, time_to_eps(found, float(eps), criterion, refs, x)


def _height(height: int | None) -> dict[str, str]:
    """A graph's style: its figure's ``height`` in pixels, else HEIGHT."""
    return {"height": f"{height}px"} if height else HEIGHT


def _pairs(results: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(r["solver"], r["setting"]) for r in results]


def _winners_table(ranked: list[dict], unit: str) -> html.Table:
    def cell(value: str | None) -> str:
        return "" if value is None or (isinstance(value, float) and math.isnan(value)) else value

    body = [
        html.Tr(
            [
                html.Td(r["objective"]),
                html.Td(cell(r["winner"]) or "nobody reached ε"),
                html.Td(
                    f"{r['value']:.3g} {unit}" if r["value"] is not None else "", className="num"
                ),
                html.Td(cell(r["runner_up"])),
                html.Td(f"{r['speedup']:.2f}×" if r["speedup"] else "", className="num"),
            ]
        )
        for r in ranked
    ]
    head = html.Tr([html.Th(h) for h in ("objective", "winner", "to ε", "runner-up", "ahead by")])
    return html.Table([html.Thead(head), html.Tbody(body)], className="facts")


def _export(sweep_id: int, what: str, objectives: list[str]) -> str:
    """An export's file name: the sweep, what it shows and its objective (or how many)."""
    return export_name(f"faceoff-sweep-{sweep_id}-{what}", objectives)


@callback(
    Output("sweep-title", "children"),
    Output("sweep-tte", "figure"),
    Output("sweep-tte", "style"),
    Output("sweep-ranking", "figure"),
    Output("sweep-ranking", "style"),
    Output("sweep-winners", "children"),
    Output("sweep-status", "children"),
    Output("sweep-interval", "disabled"),
    Output("sweep-share", "href"),
    Output("sweep-compare", "href"),
    Output("sweep-runs", "href"),
    Input("sweep-id", "data"),
    Input("sweep-eps", "value"),
    Input("sweep-criterion", "value"),
    Input("sweep-x", "value"),
    Input("sweep-chart", "value"),
    Input("sweep-scale", "value"),
    Input("sweep-interval", "n_intervals"),
    Input("sweep-settle", "value"),
    Input("sweep-delta", "value"),
)
def update(
    sweep_id: Any,
    eps: Any,
    criterion: Any,
    x: Any,
    chart: Any,
    scale: Any,
    _n: int | None,
    settle: Any = None,
    delta: Any = None,
) -> tuple[
    str,
    go.Figure,
    dict[str, str],
    go.Figure,
    dict[str, str],
    html.Table | str,
    str,
    bool,
    str,
    str,
    str,
]:
    """Time to ε per setting and objective, the ranking; refreshes while jobs run."""
    sweep_id = optional_id(sweep_id, "sweep")
    eps, criterion, x, chart, scale = _choices(eps, criterion, x, chart, scale)
    view = {"eps": eps, "criterion": criterion, "x": x, "chart": chart, "scale": scale}
    settle, delta = choice(settle, SETTLE_MEASURES, "test_loss"), choice(delta, DELTAS, "1e-2")
    # the held-out choices only when not the defaults (earlier links stay as they were)
    view |= {"settle": None if settle == "test_loss" else settle}
    view |= {"delta": None if delta == "1e-2" else delta}
    link = href(f"/sweep/{sweep_id}", view)
    summary = (
        rows.sweep_summary(database_url(), sweep_id, team_id=viewer_team())
        if sweep_id is not None
        else None
    )
    if summary is None:
        blank = empty_figure("no such sweep")
        return "No such sweep", blank, HEIGHT, blank, HEIGHT, "", "", True, link, "/compare", "/"
    found, results = _results(sweep_id, eps, criterion, x)
    ranked = analysis.ranking(results)
    counts = summary["counts"]
    status = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no jobs"
    if criterion == "subopt_rel" and any(
        r["value"] is not None and math.isnan(r["value"]) for r in results
    ):
        status += " · some objectives have no certified P*: choose the gap criterion for them"
    title = f"Sweep #{summary['id']}" + (f" · {summary['name']}" if summary["name"] else "")
    objectives = sorted({r["objective_name"] for r in results})
    tte = time_to_eps_figure(results, chart, float(eps), criterion, x, scale)
    tte["layout"]["meta"] = {"export": _export(sweep_id, f"time-to-{eps}", objectives)}
    ranking = ranking_figure(ranked, order=list(setting_styles(_pairs(results))))
    ranking.update_layout(meta={"export": _export(sweep_id, f"ranking-{eps}", objectives)})
    return (
        title,
        tte,
        _height(tte["layout"].get("height")),
        ranking,
        _height(ranking.layout.height),
        _winners_table(ranked, X_CHOICES[x]),
        status,
        not rows.active(found),
        link,
        f"/compare?sweep={sweep_id}",
        f"/?sweep={sweep_id}",
    )


def _settle_table(results: list[dict[str, Any]], ranked: list[dict], unit: str) -> html.Table:
    """A row per setting and objective: its time to settle, and its rank or why it has
    none."""
    ranks = {(r["objective"], s): rank for r in ranked for s, rank in r["ranks"].items()}
    body = [
        html.Tr(
            [
                html.Td(r["objective"]),
                html.Td(r["setting"]),
                html.Td(
                    f"{r['value']:.3g} {unit}" if r["value"] is not None else "", className="num"
                ),
                html.Td(
                    str(ranks[key]) if (key := (r["objective"], r["setting"])) in ranks else "",
                    className="num",
                ),
                html.Td(r["reason"] or ""),
            ]
        )
        for r in sorted(
            results, key=lambda r: (r["objective"], r["value"] is None, r["value"] or 0)
        )
    ]
    head = html.Tr(
        [html.Th(h) for h in ("objective", "setting", "time to settle", "rank", "no rank: why")]
    )
    return html.Table([html.Thead(head), html.Tbody(body)], className="facts")


@callback(
    Output("sweep-settle-ranking", "figure"),
    Output("sweep-settle-ranking", "style"),
    Output("sweep-settle-status", "children"),
    Output("sweep-settle-table", "children"),
    Input("sweep-id", "data"),
    Input("sweep-settle", "value"),
    Input("sweep-delta", "value"),
    Input("sweep-x", "value"),
    Input("sweep-interval", "n_intervals"),
)
def update_settle(
    sweep_id: Any, settle: Any, delta: Any, x: Any, _n: int | None
) -> tuple[go.Figure, dict[str, str], str, html.Table | str]:
    """The ranking by the time the held-out metric settles (finished runs only)."""
    sweep_id = optional_id(sweep_id, "sweep")
    settle = choice(settle, SETTLE_MEASURES, "test_loss")
    delta, x = choice(delta, DELTAS, "1e-2"), choice(x, X_CHOICES, "time")
    if sweep_id is None:
        return empty_figure("no such sweep"), HEIGHT, "", ""
    where = JobFilter(sweep_id=sweep_id)
    found = rows.job_settle_times(
        database_url(), where, settle, float(delta), [x], team_id=viewer_team()
    )
    results = settle_results(found, x)
    ranked = analysis.ranking(results)
    rule = settle_rule(settle, float(delta))
    unfinished = sum(r["status"] in rows.ACTIVE for r in found)
    succeeded = [r for r in found if r["status"] == SUCCEEDED]
    missing = sum(not r["settle"]["held_out"] for r in succeeded)
    if succeeded and missing == len(succeeded):
        message = (
            "no finished job of this sweep has held-out metrics: submit it with a test split "
            '(test: {"split": "registry"} or {"split": "random", "fraction": 0.2})'
        )
        return empty_figure(message), HEIGHT, message, ""
    status = f"time for the {SETTLE_MEASURES[settle]} to stay {rule}, in {X_CHOICES[x]}"
    status += "; only settings whose runs all succeeded are ranked"
    if missing:
        status += f" · {missing} job(s) without held-out metrics: not ranked"
    if unfinished:
        status += f" · {unfinished} job(s) not finished: their settings not ranked yet"
    title = f"ranking: who settles first ({SETTLE_MEASURES[settle]} {rule}; grey: no rank)"
    order = list(setting_styles(_pairs(results)))
    figure = ranking_figure(ranked, order=order, title=title)
    objectives = sorted({r["objective"] for r in results})
    figure.update_layout(meta={"export": _export(sweep_id, f"settle-{settle}-{delta}", objectives)})
    table = _settle_table(results, ranked, X_CHOICES[x])
    return figure, _height(figure.layout.height), status, table


@callback(
    Output("sweep-download", "data"),
    Input("sweep-csv", "n_clicks"),
    State("sweep-id", "data"),
    State("sweep-eps", "value"),
    State("sweep-criterion", "value"),
    State("sweep-x", "value"),
    prevent_initial_call=True,
)
def download_csv(
    _clicks: int | None, sweep_id: Any, eps: Any, criterion: Any, x: Any
) -> dict[str, Any] | dash.NoUpdate:
    """Time to ε per setting and objective as CSV."""
    sweep_id = optional_id(sweep_id, "sweep")
    eps, criterion, x, _, _ = _choices(eps, criterion, x)
    if sweep_id is None:
        return dash.no_update
    _, results = _results(sweep_id, eps, criterion, x)
    name = _export(sweep_id, f"time-to-{eps}", sorted({r["objective_name"] for r in results}))
    return dcc.send_string(records_csv(results, CSV_COLUMNS), f"{name}.csv")
