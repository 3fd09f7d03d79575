"""The Dash application: multi-page, one module per page in ``dashboard/pages``."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import dash
import flask
from dash import Dash, Input, Output, dcc, html
from dash.exceptions import DependencyException
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException, InternalServerError

from faceoff.core.datasets import Caps
from faceoff.core.settings import Settings, get_settings
from faceoff.dashboard import auth
from faceoff.dashboard.components import (
    CAPS_KEY,
    DATABASE_URL_KEY,
    ERROR_BANNER,
    UPLOAD_DIR_KEY,
    callback_error,
    error_banner,
)

HERE = Path(__file__).resolve().parent
log = logging.getLogger("dashboard")


def create_app(settings: Settings | None = None) -> Dash:
    """The dashboard for the database of ``settings`` (default: the environment's).

    Dash keeps page callbacks in process-wide registries, so make one app per process. With
    ``AUTH_ENABLED``, viewers log in with an API token and see their team's runs
    (dashboard.auth). A callback that fails says so in the page's error banner
    (:func:`faceoff.dashboard.components.callback_error`); a malformed callback request gets 400,
    an unknown component file 404.
    """
    settings = settings or get_settings()
    server = flask.Flask(__name__)
    server.config[DATABASE_URL_KEY] = settings.database_url
    server.config[UPLOAD_DIR_KEY] = str(settings.upload_dir)
    server.config[CAPS_KEY] = Caps.in_process(settings)  # it loads data itself
    # the body limit under any WSGI server too (dashboard.serve refuses earlier, by the
    # declared length): 413 when a form or JSON body is read past it
    server.config["MAX_CONTENT_LENGTH"] = settings.DASHBOARD_MAX_BODY_BYTES
    auth.install(server, settings)
    app = Dash(
        __name__,
        server=server,
        use_pages=True,
        pages_folder=str(HERE / "pages"),
        assets_folder=str(HERE / "assets"),
        title="Faceoff",
        suppress_callback_exceptions=True,
        on_error=callback_error,
    )
    callback_path = app.config.requests_pathname_prefix + "_dash-update-component"
    server.register_error_handler(DependencyException, _unknown_component_file)
    server.register_error_handler(Exception, lambda err: _request_error(err, callback_path))
    app.layout = html.Div(
        [
            html.Header(
                [
                    dcc.Link("Faceoff", href="/", className="brand"),
                    dcc.Link("Runs", href="/"),
                    dcc.Link("Compare", href="/compare"),
                    dcc.Link("Paths", href="/path"),
                    dcc.Link("Sweeps", href="/sweeps"),
                    dcc.Link("Datasets", href="/datasets"),
                    dcc.Link("Profiles", href="/profiles"),
                    *([html.A("Log out", href=auth.LOGOUT_PATH)] if settings.AUTH_ENABLED else []),
                ],
                className="topbar",
            ),
            error_banner(),
            html.Main(dash.page_container),
        ]
    )

    @app.callback(Output(ERROR_BANNER, "children"), Input("_pages_location", "pathname"))
    def clear_errors(_path: str | None) -> str:
        """A new page starts without the errors of the last one."""
        return ""

    _set_up_now(app)
    return app


def _set_up_now(app: Dash) -> None:
    """Do Dash's first-request set-up now, once, before any request. Dash does it on a
    process's first request (registering the script files it serves and the page
    callbacks) and flags it done before doing it, so requests arriving meanwhile in other
    threads found no React to serve (404: the browser stayed at "Loading...") and no
    callbacks. gunicorn forks its workers after this (dashboard.serve preloads the app)."""
    with app.server.test_request_context("/"):
        app._setup_server()


def _unknown_component_file(_err: DependencyException) -> ResponseReturnValue:
    return flask.Response("no such component file\n", 404, mimetype="text/plain")


def _request_error(err: Exception, callback_path: str) -> ResponseReturnValue:
    """A callback request Dash cannot parse is the client's error (the callbacks' own
    errors never get here: see callback_error); anything else is logged, 500."""
    if isinstance(err, HTTPException):
        return err
    if flask.request.path == callback_path:
        log.warning("malformed callback request: %s: %.200r", type(err).__name__, str(err))
        detail = f"malformed callback request ({type(err).__name__}); send what Dash's page sends"
        return flask.jsonify(detail=detail), 400
    log.error("unhandled error on %s %s", flask.request.method, flask.request.path, exc_info=err)
    return InternalServerError()


def main() -> None:
    """Serve the dashboard on FACEOFF_DASHBOARD_HOST:FACEOFF_DASHBOARD_PORT with gunicorn
    (dashboard.serve), sized and limited by the FACEOFF_DASHBOARD_* settings."""
    from faceoff.dashboard.serve import serve

    settings = get_settings()
    try:
        app = create_app(settings)
    except auth.InsecureSecretKey as err:
        raise SystemExit(f"faceoff dashboard: {err}") from None
    serve(
        app.server,
        os.environ.get("FACEOFF_DASHBOARD_HOST", "127.0.0.1"),
        int(os.environ.get("FACEOFF_DASHBOARD_PORT", "8050")),
        settings,
    )
