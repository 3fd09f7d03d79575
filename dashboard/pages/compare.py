"""Compare: the convergence curves of the selected jobs, growing live while they run.

URL: ``/compare?jobs=1,2,3`` or ``/compare?sweep=ID`` with ``x`` (time, epoch, iteration),
``y`` (subopt, subopt_rel, gap, primal, and the held-out test_loss and test_score of jobs
with a test split), ``logx`` (auto: log when the curves end more than a
decade apart, log, linear) and ``logy`` (log, linear), ``seeds`` (median: the median over
seeds with its band; all: each seed's curve too).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import dash
from dash import Input, Output, State, callback, dcc, html

from faceoff.core.analysis import HELD_OUT, measure
from faceoff.core.jobs import JobFilter
from faceoff.dashboard import fairness, rows
from faceoff.dashboard.components import (
    InputError,
    choice,
    control,
    database_url,
    export_bar,
    href,
    optional_id,
    parse_ids,
    radio,
    share_link,
    url_sync,
    viewer_team,
)
from faceoff.dashboard.figures.compare import (
    compare_figure,
    compare_series,
    held_out_note,
    spans_decades,
)
from faceoff.dashboard.figures.export import export_name, series_csv
from faceoff.dashboard.figures.labels import X_AXES, Y_MEASURES

if TYPE_CHECKING:
    import plotly.graph_objects as go

dash.register_page(__name__, path="/compare", title="Faceoff · compare", order=1)

SCALES = {"linear": "linear", "log": "log"}
X_SCALES = {"auto": "auto", **SCALES}
SEEDS = {"median": "median + band", "all": "median + each seed"}
REFRESH_MS = 1500


def layout(
    jobs: str | None = None,
    sweep: str | None = None,
    x: str | None = None,
    y: str | None = None,
    logx: str | None = None,
    logy: str | None = None,
    seeds: str | None = None,
    **_: str,
) -> html.Div:
    axis_names = {"time": "time", "epoch": "epochs", "iteration": "iterations"}
    y_names = {
        "subopt_rel": "(P − P*)/|P*|",
        "subopt": "P − P*",
        "gap": "duality gap",
        "primal": "primal P",
        "test_loss": "test loss",
        "test_score": "test accuracy / R²",
    }
    return html.Div(
        [
            html.H2("Compare convergence"),
            html.Div(
                [
                    control(
                        "jobs",
                        dcc.Input(
                            id="compare-jobs", value=jobs or "", placeholder="1,2,3", debounce=True
                        ),
                    ),
                    control(
                        "or sweep",
                        dcc.Input(
                            id="compare-sweep",
                            value=sweep or "",
                            placeholder="sweep id",
                            debounce=True,
                        ),
                    ),
                    control("x", radio("compare-x", axis_names, x, "time")),
                    control("x scale", radio("compare-logx", X_SCALES, logx, "auto")),
                    control("y", radio("compare-y", y_names, y, "subopt_rel")),
                    control("y scale", radio("compare-logy", SCALES, logy, "log")),
                    control("seeds", radio("compare-seeds", SEEDS, seeds, "median")),
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
            dcc.Graph(id="compare-graph", config=_config("faceoff-compare")),
            export_bar("compare", ["compare-graph"]),
            dcc.Interval(id="compare-interval", interval=REFRESH_MS, disabled=True),
        ]
    )


def _config(filename: str) -> dict[str, Any]:
    """The graph's options: its PNG named ``filename`` (the figure names the objective)."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": filename},
    }


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
        choice(x, X_AXES, "time"),
        choice(y, Y_MEASURES, "subopt_rel"),
        choice(logx, X_SCALES, "auto"),
        choice(logy, SCALES, "log"),
    )


def _graph(figure: go.Figure) -> tuple[go.Figure, dict[str, Any], dict[str, str]]:
    """The figure, the graph's options and size for it (its height grows with its panels)."""
    name = figure.layout.meta["export"] if figure.layout.meta else "faceoff-compare"
    return figure, _config(name), {"height": f"{figure.layout.height or 640}px"}


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
    Output("compare-graph", "config"),
    Output("compare-graph", "style"),
    Output("compare-interval", "disabled"),
    Output("compare-status", "children"),
    Output("compare-share", "href"),
    Input("compare-jobs", "value"),
    Input("compare-sweep", "value"),
    Input("compare-x", "value"),
    Input("compare-y", "value"),
    Input("compare-logx", "value"),
    Input("compare-logy", "value"),
    Input("compare-seeds", "value"),
    Input("compare-interval", "n_intervals"),
)
def update(
    jobs: Any, sweep: Any, x: Any, y: Any, logx: Any, logy: Any, seeds: Any, _n: int | None
) -> tuple[go.Figure, dict[str, Any], dict[str, str], bool, str, str | dash.NoUpdate]:
    """Redraw from the database; keep refreshing while a selected job is queued or running."""
    x, y, logx, logy = _axes(x, y, logx, logy)
    seeds = choice(seeds, SEEDS, "median")

    def blank() -> tuple[go.Figure, dict[str, Any], dict[str, str]]:
        return _graph(compare_figure([], x, y, False, False, {}))

    try:
        where, params = _selection(jobs, sweep)
    except InputError as err:
        return *blank(), True, str(err), dash.no_update
    view = {"x": x, "y": y, "logx": logx, "logy": logy}
    link = href("/compare", {**params, **view, "seeds": None if seeds == "median" else seeds})
    if where is None:
        message = "choose jobs (ids) or a sweep, or select runs on the Runs page"
        return *blank(), True, message, link
    found, refs = rows.job_traces(database_url(), where, team_id=viewer_team())
    log_x = logx == "log" or (logx == "auto" and spans_decades(found, x))
    figure = compare_figure(found, x, y, log_x, logy == "log", refs, seeds=seeds == "all")
    live = rows.active(found)
    counts: dict[str, int] = {}
    for row in found:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    status = f"{len(found)} jobs: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    if not found:
        status = "no such jobs"
    if logx == "auto" and log_x:
        status += " · log x axis: the curves end more than a decade apart"
    if y in HELD_OUT:
        missing = [r for r in found if measure(r["trace"], y, None) is None]
        status += f" · {note}" if (note := held_out_note(missing)) else ""
    if live:
        status += f" · live, updated {time.strftime('%H:%M:%S')}"
    return *_graph(figure), not live, status, link


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
def download_csv(
    _clicks: int | None, jobs: Any, sweep: Any, x: Any, y: Any, logx: Any, logy: Any
) -> dict[str, Any] | dash.NoUpdate:
    """The plotted curves as CSV."""
    x, y, logx, logy = _axes(x, y, logx, logy)
    try:
        where, _ = _selection(jobs, sweep)
    except InputError:  # the status says why
        return dash.no_update
    found, refs = (
        rows.job_traces(database_url(), where, team_id=viewer_team()) if where else ([], {})
    )
    log_x = logx == "log" or (logx == "auto" and spans_decades(found, x))
    series, _ = compare_series(found, x, y, log_x, logy == "log", refs)
    name = export_name("faceoff-compare", sorted({s.objective for s in series}))
    return dcc.send_string(series_csv(series, x, y), f"{name}.csv")
