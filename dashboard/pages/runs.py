"""Runs: the jobs table, filtered by sweep, dataset, solver, loss and status.

URL: ``/?sweep=ID&dataset=ID&solver=NAME&loss=NAME&status=NAME``.
"""

from __future__ import annotations

from typing import Any

import dash
from dash import Input, Output, State, callback, dcc, html
from dash.dash_table.Format import Format, Scheme

from faceoff.core.jobs import JobFilter
from faceoff.core.models import STATUSES
from faceoff.core.paths import grid_size
from faceoff.dashboard import fairness, rows
from faceoff.dashboard.components import (
    InputError,
    control,
    database_url,
    exact_number,
    export_bar,
    href,
    name_filter,
    optional_id,
    options,
    parse_int,
    share_link,
    table,
    to_id,
    url_sync,
    viewer_team,
)
from faceoff.dashboard.figures.export import records_csv
from faceoff.dashboard.figures.labels import setting_name

dash.register_page(__name__, path="/", title="Faceoff · runs", order=0)

FILTERS = ("sweep", "dataset", "solver", "loss", "status")
REFRESH_MS = 2000
NUMBER = Format(precision=4, scheme=Scheme.decimal_or_exponent)
COLUMNS = [
    ("job", "job", "markdown"),
    ("sweep", "sweep", "markdown"),
    ("dataset", "dataset", "markdown"),
    ("setting", "solver[settings]", "text"),
    ("loss", "loss", "text"),
    ("l2", "l2", "text"),  # parameters: exact_number, e.g. 1e-4
    ("l1", "l1", "text"),
    ("seed", "seed", "text"),
    ("status", "status", "text"),
    ("progress", "progress", "text"),
    ("epoch", "epochs", "numeric"),
    ("time_s", "time (s)", "numeric"),
    ("primal", "P", "numeric"),
    ("gap", "gap", "numeric"),
    ("stop_reason", "stop", "text"),
    ("trace_mode", "trace", "text"),
    ("wall_s", "wall (s)", "numeric"),
]
CSV_COLUMNS = (
    "id",
    "sweep_id",
    "dataset",
    "solver",
    "setting",
    "loss",
    "gamma",
    "l2",
    "l1",
    "normalize",
    "seed",
    "repeat",
    "status",
    "progress",
    "n_points",
    "epoch",
    "time_s",
    "primal",
    "gap",
    "stop_reason",
    "trace_mode",
    "wall_s",
)


def layout(**query: str) -> html.Div:
    def dropdown(name: str) -> html.Div:
        return control(name, dcc.Dropdown(id=f"runs-{name}", placeholder="any"))

    chosen: dict[str, str | int | None] = {name: query.get(name) or None for name in FILTERS}
    chosen["sweep"], chosen["dataset"] = parse_int(chosen["sweep"]), parse_int(chosen["dataset"])
    return html.Div(
        [
            html.H2("Runs"),
            dcc.Store(id="runs-chosen", data=chosen),
            html.Div([dropdown(name) for name in FILTERS], className="controls"),
            html.Div(
                [
                    html.Span(id="runs-summary", className="status"),
                    " · ",
                    html.A("compare the selected runs", id="runs-compare", href="/compare"),
                    " · ",
                    share_link("runs"),
                ]
            ),
            html.Div(id="runs-fairness"),
            table("runs-table", COLUMNS, NUMBER, row_selectable="multi"),
            export_bar("runs", [], csv_label="CSV of the table"),
            dcc.Interval(id="runs-interval", interval=REFRESH_MS, disabled=True),
        ]
    )


url_sync("runs")
fairness.watch(
    "runs",
    [*(Input(f"runs-{name}", "value") for name in FILTERS), Input("runs-interval", "n_intervals")],
    lambda sweep, dataset, solver, loss, status, _n: _where(sweep, dataset, solver, loss, status),
)


def _where(sweep: Any, dataset: Any, solver: Any, loss: Any, status: Any) -> JobFilter:
    """The filters, checked (InputError for a value no dropdown offers)."""
    return JobFilter(
        sweep_id=optional_id(sweep, "sweep"),
        dataset_id=optional_id(dataset, "dataset"),
        solver=name_filter(solver, "solver"),
        loss=name_filter(loss, "loss"),
        status=name_filter(status, "status"),
    )


def _chosen(
    where: JobFilter,
) -> tuple[int | None, int | None, str | None, str | None, str | None]:
    """The filter values of ``where``, in the order of FILTERS."""
    return where.sweep_id, where.dataset_id, where.solver, where.loss, where.status


def _progress(row: dict) -> str:
    if row.get("waiting"):  # a queued job pinned to a host no worker serves
        return row["waiting"]
    if row["status"] == "running":
        return f"{100 * row['progress']:.0f}% ({row['n_points']} points)"
    return "100%" if row["status"] == "succeeded" else ""


def seed_label(row: dict) -> str:
    """The seed, ``none`` for a solver setting that uses no seed, and a timing repeat's
    number (``none · repeat 2``)."""
    label = "none" if row["seed"] is None else exact_number(row["seed"])
    return f"{label} · repeat {row['repeat']}" if row["repeat"] else label


def _l1_label(row: dict) -> str:
    """The l1 weight, or a path job's grid: ``path of 50 λ`` (its λs: the path page)."""
    size = grid_size(row["path"])
    return exact_number(row["l1"]) if size is None else f"path of {size} λ"


def _table_row(row: dict) -> dict:
    sweep = row["sweep_id"]
    page = "path" if row["path"] is not None else "compare"
    return {
        "id": row["id"],
        "job": f"[{row['id']}](/{page}?jobs={row['id']})",
        "sweep": f"[#{sweep}](/sweep/{sweep})" if sweep is not None else "",
        "dataset": f"[{row['dataset']}](/dataset/{row['dataset_id']})",
        "setting": setting_name(row),
        "loss": row["loss"],
        "l2": exact_number(row["l2"]),
        "l1": _l1_label(row),
        "seed": seed_label(row),
        "status": row["status"],
        "progress": _progress(row),
        "epoch": row["epoch"],
        "time_s": row["time_s"],
        "primal": row["primal"],
        "gap": row["gap"],
        "stop_reason": row["stop_reason"] or "",
        "trace_mode": row["trace_mode"] or "",
        "wall_s": row["wall_s"],
    }


@callback(
    *(Output(f"runs-{name}", "options") for name in FILTERS),
    *(Output(f"runs-{name}", "value") for name in FILTERS),
    Input("runs-chosen", "data"),
)
def fill_filters(chosen: Any) -> tuple[list[dict[str, Any]] | int | str | None, ...]:
    """What there is to filter by, with the filters of the URL selected."""
    if not isinstance(chosen, dict):
        raise InputError(f"the filters {chosen!r:.40} are not a mapping of filter to value")
    selected = _chosen(_where(*(chosen.get(name) for name in FILTERS)))
    available = rows.filter_options(database_url(), team_id=viewer_team())
    available["status"] = [s for s in STATUSES if s in available["status"]]
    return *(options(available[name]) for name in FILTERS), *selected


@callback(
    Output("runs-table", "data"),
    Output("runs-interval", "disabled"),
    Output("runs-summary", "children"),
    Output("runs-share", "href"),
    *(Input(f"runs-{name}", "value") for name in FILTERS),
    Input("runs-interval", "n_intervals"),
)
def update(
    sweep: Any, dataset: Any, solver: Any, loss: Any, status: Any, _n: int | None
) -> tuple[list[dict[str, Any]], bool, str, str]:
    """The jobs matching the filters; refreshes while any of them is queued or running."""
    where = _where(sweep, dataset, solver, loss, status)
    found, total = rows.list_jobs(database_url(), where, team_id=viewer_team())
    shown = f"{len(found)} of {total} jobs" if total > len(found) else f"{total} jobs"
    running = sum(r["status"] == "running" for r in found)
    if running:
        shown += f", {running} running"
    link = href("/", dict(zip(FILTERS, _chosen(where), strict=True)))
    return [_table_row(r) for r in found], not rows.active(found), shown, link


@callback(
    Output("runs-compare", "href"),
    Output("runs-compare", "children"),
    Input("runs-table", "selected_row_ids"),
    Input("runs-sweep", "value"),
)
def compare_link(selected: Any, sweep: Any) -> tuple[str, str]:
    """Compare the selected jobs, or else the filtered sweep."""
    sweep = optional_id(sweep, "sweep")
    if selected:
        if not isinstance(selected, list):
            raise InputError(f"the selected runs {selected!r:.40} are not a list of job ids")
        ids = sorted({to_id(job_id, "selected job") for job_id in selected})
        return f"/compare?jobs={','.join(map(str, ids))}", f"compare the {len(ids)} selected runs"
    if sweep is not None:
        return f"/compare?sweep={sweep}", f"compare sweep #{sweep} (or select runs)"
    return "/compare", "select runs to compare them"


@callback(
    Output("runs-download", "data"),
    Input("runs-csv", "n_clicks"),
    *(State(f"runs-{name}", "value") for name in FILTERS),
    prevent_initial_call=True,
)
def download_csv(
    _clicks: int | None, sweep: Any, dataset: Any, solver: Any, loss: Any, status: Any
) -> dict[str, Any]:
    """The filtered jobs as CSV."""
    found, _ = rows.list_jobs(
        database_url(), _where(sweep, dataset, solver, loss, status), team_id=viewer_team()
    )
    for row in found:
        row["setting"] = setting_name(row)
    return dcc.send_string(records_csv(found, CSV_COLUMNS), "faceoff-runs.csv")
