"""The Dash application: multi-page, one module per page in ``dashboard/pages``."""

from __future__ import annotations

import os
from pathlib import Path

import dash
import flask
from dash import Dash, dcc, html

from core.settings import Settings, get_settings
from dashboard import auth
from dashboard.components import DATABASE_URL_KEY, UPLOAD_DIR_KEY

HERE = Path(__file__).resolve().parent


def create_app(settings: Settings | None = None) -> Dash:
    """The dashboard for the database of ``settings`` (default: the environment's).

    Dash keeps page callbacks in process-wide registries, so make one app per process. With
    ``AUTH_ENABLED``, viewers log in with an API token and see their team's runs
    (dashboard.auth).
    """
    settings = settings or get_settings()
    server = flask.Flask(__name__)
    server.config[DATABASE_URL_KEY] = settings.database_url
    server.config[UPLOAD_DIR_KEY] = str(settings.upload_dir)
    auth.install(server, settings)
    app = Dash(
        __name__,
        server=server,
        use_pages=True,
        pages_folder=str(HERE / "pages"),
        assets_folder=str(HERE / "assets"),
        title="Faceoff",
        suppress_callback_exceptions=True,
    )
    app.layout = html.Div(
        [
            html.Header(
                [
                    dcc.Link("Faceoff", href="/", className="brand"),
                    dcc.Link("Runs", href="/"),
                    dcc.Link("Compare", href="/compare"),
                    *([html.A("Log out", href=auth.LOGOUT_PATH)] if settings.AUTH_ENABLED else []),
                ],
                className="topbar",
            ),
            html.Main(dash.page_container),
        ]
    )
    return app


def main() -> None:
    """Serve the dashboard on FACEOFF_DASHBOARD_HOST:FACEOFF_DASHBOARD_PORT."""
    try:
        app = create_app()
    except auth.InsecureSecretKey as err:
        raise SystemExit(f"faceoff dashboard: {err}") from None
    app.run(
        host=os.environ.get("FACEOFF_DASHBOARD_HOST", "127.0.0.1"),
        port=int(os.environ.get("FACEOFF_DASHBOARD_PORT", "8050")),
        debug=False,
    )
