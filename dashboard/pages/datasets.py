"""Datasets: the index of the datasets the viewer's team may use — the shared ones
(registry names, synthetic generators, scikit-learn's) and its own uploads — with their
sizes. URL: ``/datasets``. Each links to its page, ``/dataset/ID``.
"""

from __future__ import annotations

import re
from typing import Any

import dash
from dash import Input, Output, callback, dcc, html

from faceoff.dashboard import rows
from faceoff.dashboard.components import database_url, table, viewer_team

dash.register_page(__name__, path="/datasets", title="Faceoff · datasets", order=5)

NUMBER = {"specifier": ","}  # 1,234,567: sizes are exact integers
COLUMNS = [
    ("dataset", "dataset", "markdown"),
    ("kind", "source", "text"),
    ("availability", "data", "text"),
    ("owner", "shared with", "text"),
    ("n_samples", "samples", "numeric"),
    ("n_features", "features", "numeric"),
    ("nnz", "non-zeros", "numeric"),
    ("classes", "classes K", "numeric"),
    ("created", "registered (UTC)", "text"),
]
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!<>|])")


def layout(**_: str) -> html.Div:
    return html.Div(
        [
            html.H2("Datasets"),
            html.Div(id="datasets-summary", className="status"),
            table("datasets-table", COLUMNS, NUMBER),
            html.P(id="datasets-public"),
            dcc.Location(id="datasets-location"),
        ]
    )


def markdown_text(text: str) -> str:
    """``text`` with Markdown's punctuation escaped, to show as it is in a link."""
    return _MARKDOWN.sub(r"\\\1", text)


def table_row(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "dataset": f"[{markdown_text(row['name'])}](/dataset/{row['id']})",
        "kind": row["kind"],
        "availability": row["availability"],
        "owner": "every team" if row["shared"] else "your team (upload)",
        "n_samples": row["n_samples"],
        "n_features": row["n_features"],
        "nnz": row["nnz"],
        "classes": row["n_classes"],
        "created": row["created_at"].strftime("%Y-%m-%d %H:%M"),
    }


@callback(
    Output("datasets-table", "data"),
    Output("datasets-summary", "children"),
    Output("datasets-public", "children"),
    Input("datasets-location", "pathname"),
)
def update(_path: str | None) -> tuple[list[dict[str, Any]], str, str]:
    """The datasets the team may use, and the public names not registered yet."""
    found, total, unregistered = rows.dataset_index(database_url(), team_id=viewer_team())
    shown = (
        f"the first {len(found)} of {total} datasets" if total > len(found) else f"{total} datasets"
    )
    public = (
        "Public datasets registered on their first use by a job or a sweep: "
        + ", ".join(unregistered)
        if unregistered
        else ""
    )
    return [table_row(r) for r in found], shown, public
