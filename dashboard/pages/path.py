"""Path: regularization-path jobs raced along their λ grid, growing live while they run.

URL: ``/path?jobs=1,2,3`` (path jobs; the Runs page links each one here). The figure
(dashboard.figures.path) draws each job's path time and support size at each λ; the table
gives each job's totals: λs solved of its grid, λ_max, the path's solver time and whether
every λ reached its tol, the largest certified relative gap among its λs.
"""

from __future__ import annotations

import time
from typing import Any

import dash
from dash import Input, Output, State, callback, dcc, html
from dash.dash_table.Format import Format, Scheme

from faceoff.core.jobs import JobFilter
from faceoff.dashboard import rows
from faceoff.dashboard.components import (
    InputError,
    control,
    database_url,
    export_bar,
    href,
    parse_ids,
    share_link,
    table,
    url_sync,
    viewer_team,
)
from faceoff.dashboard.figures.labels import setting_name
from faceoff.dashboard.figures.path import HEIGHT, path_figure

dash.register_page(__name__, path="/path", title="Faceoff · path", order=2)

REFRESH_MS = 1500
NUMBER = Format(precision=4, scheme=Scheme.decimal_or_exponent)
COLUMNS = [
    ("job", "job", "markdown"),
    ("setting", "solver setting", "text"),
    ("status", "status", "text"),
    ("lambdas", "λs solved", "text"),
    ("lambda_max", "λ_max", "numeric"),
    ("seconds", "path time (s)", "numeric"),
    ("at_tol", "every λ at tol", "text"),
    ("worst_gap", "largest gap/max(1,|P|)", "numeric"),
    ("nnz", "nonzeros at the last λ", "text"),
]


def layout(jobs: str | None = None, **_: str) -> html.Div:
    return html.Div(
        [
            html.H2("Regularization paths"),
            html.Div(
                [
                    control(
                        "path jobs",
                        dcc.Input(
                            id="path-jobs", value=jobs or "", placeholder="1,2,3", debounce=True
                        ),
                    ),
                ],
                className="controls",
            ),
            html.Div([html.Span(id="path-status", className="status"), " · ", share_link("path")]),
            dcc.Graph(
                id="path-graph",
                config={"displaylogo": False, "toImageButtonOptions": {"format": "png"}},
                style={"height": f"{HEIGHT}px"},
            ),
            export_bar("path", ["path-graph"]),
            table("path-table", COLUMNS, NUMBER),
            dcc.Interval(id="path-interval", interval=REFRESH_MS, disabled=True),
        ]
    )


def summary_row(row: dict[str, Any]) -> dict[str, Any]:
    """A path job's totals, as the table shows them."""
    steps = row["steps"]
    at_tol = len(steps) == row["n_lambdas"] and all(s["gap_rel"] <= row["tol"] for s in steps)
    return {
        "job": f"[{row['id']}](/compare?jobs={row['id']})",
        "setting": setting_name(row),
        "status": row["status"],
        "lambdas": f"{len(steps)} of {row['n_lambdas']}",
        "lambda_max": row["lambda_max"],
        "seconds": steps[-1]["time_s"] if steps else None,
        "at_tol": f"yes (tol {row['tol']:g})" if at_tol else "no",
        "worst_gap": max((s["gap_rel"] for s in steps), default=None),
        "nnz": str(steps[-1]["nnz"]) if steps else "",
    }


url_sync("path")


@callback(
    Output("path-graph", "figure"),
    Output("path-table", "data"),
    Output("path-interval", "disabled"),
    Output("path-status", "children"),
    Output("path-share", "href"),
    Input("path-jobs", "value"),
    Input("path-interval", "n_intervals"),
)
def update(jobs: Any, _n: int | None) -> tuple[Any, list[dict[str, Any]], bool, str, str]:
    """Redraw from the database; keep refreshing while a chosen job is queued or running."""
    try:
        ids = parse_ids(jobs)
    except InputError as err:
        return path_figure([]), [], True, str(err), href("/path", {})
    link = href("/path", {"jobs": ",".join(map(str, ids)) if ids else None})
    if not ids:
        message = "choose path jobs (ids), or follow a path job's link on the Runs page"
        return path_figure([]), [], True, message, link
    found, others = rows.job_paths(
        database_url(), JobFilter(job_ids=tuple(ids)), team_id=viewer_team()
    )
    live = rows.active(found)
    status = f"{len(found)} path jobs" if found else "no such path jobs"
    if others:
        status += f" · {others} chosen jobs solve one l1 (see Compare)"
    if live:
        status += f" · live, updated {time.strftime('%H:%M:%S')}"
    return path_figure(found), [summary_row(r) for r in found], not live, status, link


CSV_FIELDS = ("index", "l1", "ratio", "seconds", "time_s", "epochs", "gap_rel", "nnz")


@callback(
    Output("path-download", "data"),
    Input("path-csv", "n_clicks"),
    State("path-jobs", "value"),
    prevent_initial_call=True,
)
def download_csv(_clicks: int | None, jobs: Any) -> dict[str, Any] | dash.NoUpdate:
    """One line per job and λ: the figure's values."""
    try:
        ids = parse_ids(jobs)
    except InputError:  # the status says why
        return dash.no_update
    if not ids:
        return dash.no_update
    found, _ = rows.job_paths(database_url(), JobFilter(job_ids=tuple(ids)), team_id=viewer_team())
    lines = [",".join(("job", "solver", *CSV_FIELDS))]
    for row in found:
        for step in row["steps"]:
            values = (row["id"], row["solver"], *(step[k] for k in CSV_FIELDS))
            lines.append(",".join(map(str, values)))
    return dcc.send_string("\n".join(lines) + "\n", "faceoff-path.csv")
