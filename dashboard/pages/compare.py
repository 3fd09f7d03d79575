"""Compare: the convergence curves of the selected jobs, growing live while they run.

URL: ``/compare?jobs=1,2,3`` or ``/compare?sweep=ID`` with ``x`` (time, epoch, iteration),
``y`` (subopt, subopt_rel, gap, primal), ``logx`` and ``logy`` (log, linear).
"""

from __future__ import annotations

import time
from typing import Any

import dash
from dash import Input, Output, State, callback, dcc, html

from faceoff.core.jobs import JobFilter
from faceoff.dashboard import fairness, figures, rows
from faceoff.dashboard.components import (
    InputError,
    choice,
    database_url,
    export_bar,
    href,
    optional_id,
    parse_ids,
    share_link,
    url_sync,
    viewer_team,
)

dash.register_page(__name__, path="/compare", title="Faceoff · compare", order=1)

SCALES = ("linear", "log")
REFRESH_MS = 1500


def _radio(page_id: str, values, value: str) -> dcc.RadioItems:
    items = values.items() if isinstance(values, dict) else ((v, v) for v in values)
    return dcc.RadioItems(
        id=page_id,
        options=[{"label": label, "value": v} for v, label in items],
        value=value,
        inline=True,
    )


def layout(
    jobs: str | None = None,
    sweep: str | None = None,
    x: str | None = None,
    y: str | None = None,
    logx: str | None = None,
    logy: str | None = None,
    **_: str,
) -> html.Div:
    axis_names = {"time": "time", "epoch": "epochs", "iteration": "iterations"}
    y_names = {
        "subopt_rel": "(P − P*)/|P*|",
        "subopt": "P − P*",
        "gap": "duality gap",
        "primal": "primal P",
    }
    return html.Div(
        [
            html.H2("Compare convergence"),
            html.Div(
                [
                    html.Div(
                        [
                            html.Label("jobs"),
                            dcc.Input(
                                id="compare-jobs",
                                value=jobs or "",
                                placeholder="1,2,3",
                                debounce=True,
                            ),
                        ],
                        className="control",
                    ),
                    html.Div(
                        [
                            html.Label("or sweep"),
                            dcc.Input(
                                id="compare-sweep",
                                value=sweep or "",
                                placeholder="sweep id",
                                debounce=True,
                            ),
                        ],
                        className="control",
                    ),
                    html.Div(
                        [
                            html.Label("x"),
                            _radio("compare-x", axis_names, choice(x, figures.X_AXES, "time")),
                        ],
                        className="control",
                    ),
                    html.Div(
                        [
                            html.Label("x scale"),
                            _radio("compare-logx", SCALES, choice(logx, SCALES, "linear")),
                        ],
                        className="control",
                    ),
                    html.Div(
                        [
                            html.Label("y"),
                            _radio(
                                "compare-y", y_names, choice(y, figures.Y_MEASURES, "subopt_rel")
                            ),
                        ],
                        className="control",
                    ),
                    html.Div(
                        [
                            html.Label("y scale"),
                            _radio("compare-logy", SCALES, choice(logy, SCALES, "log")),
                        ],
                        className="control",
                    ),
                ],
                className="controls",
            ),
            html.Div(
                [
                    html.Span(id="compare-status", className="status"),
                    " · ",
                    share_link("compare"),
                    html.Div(id="compare-fairness"),
                ]
            ),
            dcc.Graph(
                id="compare-graph",
                style={"height": "640px"},
                config={
                    "displaylogo": False,
                    "toImageButtonOptions": {"format": "png", "filename": "faceoff-compare"},
                },
            ),
            export_bar("compare", ["compare-graph"]),
            dcc.Interval(id="compare-interval", interval=REFRESH_MS, disabled=True),
        ]
    )


def _selection(jobs: Any, sweep: Any) -> tuple[JobFilter | None, dict[str, Any]]:
    """(the jobs to show, None for none; the URL parameters choosing them). InputError
    for a value that is not an id."""
    ids, sweep_id = parse_ids(jobs), optional_id(sweep, "sweep")
    params = {"jobs": ",".join(map(str, ids)) if ids else None, "sweep": sweep_id}
    if ids is not None:
        return JobFilter(job_ids=tuple(ids)), params
    return (JobFilter(sweep_id=sweep_id) if sweep_id is not None else None), params


def _axes(x: Any, y: Any, logx: Any, logy: Any) -> tuple[str, str, str, str]:
    """The axis choices, each one of its accepted values."""
    return (
        choice(x, figures.X_AXES, "time"),
        choice(y, figures.Y_MEASURES, "subopt_rel"),
        choice(logx, SCALES, "linear"),
        choice(logy, SCALES, "log"),
    )


url_sync("compare")
fairness.watch(
    "compare",
    [
        Input("compare-jobs", "value"),
        Input("compare-sweep", "value"),
        Input("compare-interval", "n_intervals"),
    ],
    lambda jobs, sweep, _n: _selection(jobs, sweep)[0],
)


@callback(
    Output("compare-graph", "figure"),
    Output("compare-interval", "disabled"),
    Output("compare-status", "children"),
    Output("compare-share", "href"),
    Input("compare-jobs", "value"),
    Input("compare-sweep", "value"),
    Input("compare-x", "value"),
    Input("compare-y", "value"),
    Input("compare-logx", "value"),
    Input("compare-logy", "value"),
    Input("compare-interval", "n_intervals"),
)
def update(jobs, sweep, x, y, logx, logy, _n):
    """Redraw from the database; keep refreshing while a selected job is queued or running."""
    x, y, logx, logy = _axes(x, y, logx, logy)
    try:
        where, params = _selection(jobs, sweep)
    except InputError as err:
        return figures.compare_figure([], x, y, False, False, {}), True, str(err), dash.no_update
    link = href("/compare", {**params, "x": x, "y": y, "logx": logx, "logy": logy})
    if where is None:
        message = "choose jobs (ids) or a sweep, or select runs on the Runs page"
        return figures.compare_figure([], x, y, False, False, {}), True, message, link
    found, refs = rows.job_traces(database_url(), where, team_id=viewer_team())
    figure = figures.compare_figure(found, x, y, logx == "log", logy == "log", refs)
    live = rows.active(found)
    counts: dict[str, int] = {}
    for row in found:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    status = f"{len(found)} jobs: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    if not found:
        status = "no such jobs"
    if live:
        status += f" · live, updated {time.strftime('%H:%M:%S')}"
    return figure, not live, status, link


@callback(
    Output("compare-download", "data"),
    Input("compare-csv", "n_clicks"),
    State("compare-jobs", "value"),
    State("compare-sweep", "value"),
    State("compare-x", "value"),
    State("compare-y", "value"),
    State("compare-logx", "value"),
    State("compare-logy", "value"),
    prevent_initial_call=True,
)
def download_csv(_clicks, jobs, sweep, x, y, logx, logy):
    """The plotted curves as CSV."""
    x, y, logx, logy = _axes(x, y, logx, logy)
    try:
        where, _ = _selection(jobs, sweep)
    except InputError:  # the status says why
        return dash.no_update
    found, refs = (
        rows.job_traces(database_url(), where, team_id=viewer_team()) if where else ([], {})
    )
    series, _ = figures.compare_series(found, x, y, logx == "log", logy == "log", refs)
    return dcc.send_string(figures.series_csv(series, x, y), "faceoff-compare.csv")
