"""Sweeps: the index of the viewer's team's sweeps, newest first, with their progress.

URL: ``/sweeps``. Each links to its page, ``/sweep/ID``.
"""

from __future__ import annotations

from typing import Any

import dash
from dash import Input, Output, callback, dcc, html

from faceoff.dashboard import rows
from faceoff.dashboard.components import database_url, table, viewer_team

dash.register_page(__name__, path="/sweeps", title="Faceoff · sweeps", order=4)

REFRESH_MS = 5000
COLUMNS = [
    ("sweep", "sweep", "markdown"),
    ("name", "name", "text"),
    ("created", "created (UTC)", "text"),
    ("jobs", "jobs done/total", "text"),
    ("status", "status", "text"),
    ("objectives", "objectives", "text"),
    ("solvers", "solvers", "text"),
]


def layout(**_: str) -> html.Div:
    return html.Div(
        [
            html.H2("Sweeps"),
            html.Div(id="sweeps-summary", className="status"),
            table("sweeps-table", COLUMNS),
            dcc.Interval(id="sweeps-interval", interval=REFRESH_MS, disabled=True),
        ]
    )


def _objectives(row: dict[str, Any]) -> str:
    """``4: a9a, w8a · logistic`` — how many objectives, on which data and losses."""
    return f"{row['n_objectives']}: {', '.join(row['datasets'])} · {', '.join(row['losses'])}"


def table_row(row: dict[str, Any]) -> dict[str, Any]:
    counts = row["counts"]
    return {
        "id": row["id"],
        "sweep": f"[#{row['id']}](/sweep/{row['id']})",
        "name": row["name"] or "",
        "created": row["created_at"].strftime("%Y-%m-%d %H:%M"),
        "jobs": f"{row['done']}/{row['n_jobs']}",
        "status": ", ".join(f"{n} {status}" for status, n in counts.items()),
        "objectives": _objectives(row),
        "solvers": ", ".join(row["solvers"]),
    }


@callback(
    Output("sweeps-table", "data"),
    Output("sweeps-summary", "children"),
    Output("sweeps-interval", "disabled"),
    Input("sweeps-interval", "n_intervals"),
)
def update(_n: int | None) -> tuple[list[dict[str, Any]], str, bool]:
    """The team's newest sweeps; refreshes while any of them has queued or running jobs."""
    found, total = rows.sweep_index(database_url(), team_id=viewer_team())
    shown = (
        f"the newest {len(found)} of {total} sweeps" if total > len(found) else f"{total} sweeps"
    )
    active = any(status in rows.ACTIVE for row in found for status in row["counts"])
    return [table_row(r) for r in found], shown, not active
