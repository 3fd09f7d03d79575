"""Pieces shared by the pages: the request's database and viewer, URL state, export
buttons."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import flask
from dash import MATCH, ClientsideFunction, Input, State, clientside_callback, dcc, html

DATABASE_URL_KEY = "FACEOFF_DATABASE_URL"
UPLOAD_DIR_KEY = "FACEOFF_UPLOAD_DIR"


def database_url() -> str:
    """The database URL of the app serving the current request."""
    return flask.current_app.config[DATABASE_URL_KEY]


def viewer_team() -> int | None:
    """The team of the logged-in viewer, None with authentication off (dashboard.auth)."""
    return flask.g.team_id


def upload_dir() -> Path:
    """The upload folder of the app serving the current request."""
    return Path(flask.current_app.config[UPLOAD_DIR_KEY])


def parse_ids(text: str | None) -> list[int] | None:
    """``"3,1,2"`` → [1, 2, 3]; None for an empty value; ValueError naming a bad id."""
    if not text:
        return None
    ids = set()
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit():
            raise ValueError(f"job id {part!r} is not a positive integer; use jobs=1,2,3")
        ids.add(int(part))
    return sorted(ids) or None


def parse_int(text: Any) -> int | None:
    """An id from the URL, or None when absent or not a non-negative integer."""
    return int(text) if text is not None and str(text).isdigit() else None


def choice(value: Any, accepted: Sequence[str] | Mapping[str, Any], default: str) -> str:
    """``value`` if it is one of ``accepted``, else ``default`` (URLs are typed by people)."""
    return value if value in accepted else default


def href(path: str, params: Mapping[str, Any]) -> str:
    """``path?query`` with the parameters that are set (None and "" are left out)."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return f"{path}?{query}" if query else path


def share_link(page: str) -> html.A:
    """A link to the current view; the browser's address follows it (see ``url_sync``)."""
    return html.A("link to this view", id=f"{page}-share", href="", className="share")


def url_sync(page: str) -> None:
    """Keep the address bar equal to the page's share link, without reloading the page."""
    clientside_callback(
        ClientsideFunction("faceoff", "replaceUrl"),
        Input(f"{page}-share", "href"),
    )


def options(values: Sequence[Any]) -> list[dict[str, Any]]:
    """Dropdown options from values, or from (value, label) pairs."""
    return [
        {"label": v[1], "value": v[0]} if isinstance(v, tuple) else {"label": str(v), "value": v}
        for v in values
    ]


def export_bar(page: str, graphs: Sequence[str], csv_label: str = "CSV") -> html.Div:
    """PNG and SVG buttons for each graph (drawn by the browser) and a CSV download of the
    data shown (the page's ``{page}-csv`` callback fills ``{page}-download``)."""
    buttons: list[Any] = []
    for graph in graphs:
        label = "" if len(graphs) == 1 else f" ({graph.removeprefix(page + '-')})"
        for fmt in ("png", "svg"):
            buttons.append(
                html.Button(
                    f"{fmt.upper()}{label}",
                    id={"type": "export-image", "graph": graph, "format": fmt},
                    className="export",
                )
            )
    buttons.append(html.Button(csv_label, id=f"{page}-csv", className="export"))
    buttons.append(dcc.Download(id=f"{page}-download"))
    return html.Div(buttons, className="exports")


clientside_callback(
    ClientsideFunction("faceoff", "downloadImage"),
    Input({"type": "export-image", "graph": MATCH, "format": MATCH}, "n_clicks"),
    State({"type": "export-image", "graph": MATCH, "format": MATCH}, "id"),
    prevent_initial_call=True,
)
