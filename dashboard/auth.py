"""Dashboard login with the API's tokens (core.auth).

With authentication on, a person logs in once at ``/login`` with a token; the dashboard
keeps the token's id in Flask's signed session cookie (keyed by FACEOFF_SECRET_KEY) and
checks on every request that the token is still valid, so revoking it logs out at once.
Without a login, pages redirect to ``/login`` and Dash's JSON endpoints answer 401. The
viewer's team (:func:`faceoff.dashboard.components.viewer_team`) scopes every query. With
authentication off, only this machine is served (loopback clients, by the API's rule for
proxy headers: core.auth.client_address) and the team is None.
"""

from __future__ import annotations

from urllib.parse import urlencode

import flask
from flask.typing import ResponseReturnValue
from markupsafe import escape

from faceoff.core.auth import client_address, is_loopback, parse_networks, token_team, verify_token
from faceoff.core.db import read_session
from faceoff.core.secret_key import InsecureSecretKey as InsecureSecretKey  # for app.py
from faceoff.core.secret_key import check_secret_key
from faceoff.core.settings import Settings
from faceoff.dashboard.components import database_url

AUTH_ENABLED_KEY = "FACEOFF_AUTH_ENABLED"
TRUSTED_PROXIES_KEY = "FACEOFF_TRUSTED_PROXIES"
LOGIN_PATH = "/login"
LOGOUT_PATH = "/logout"
STATIC_PREFIXES = ("/assets/", "/_dash-component-suites/", "/_favicon.ico")
DASH_JSON_PREFIX = "/_dash-"  # layout, dependencies, callbacks
SESSION_TOKEN = "token_id"
AUTH_OFF = (
    "authentication is disabled on this dashboard (FACEOFF_AUTH_ENABLED=false), so it only "
    "serves this machine (127.0.0.1 or ::1); to serve other machines, set "
    "FACEOFF_AUTH_ENABLED=true and FACEOFF_SECRET_KEY, and log in with a token made by "
    "`faceoff tokens create --team NAME`\n"
)
LOGIN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Faceoff · log in</title>
<link rel="stylesheet" href="/assets/style.css"></head>
<body><main class="login"><h2>Faceoff</h2>
<form method="post" action="{action}">
<label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="off" autofocus required>
<input type="hidden" name="next" value="{next}">
<button type="submit" id="login-submit">Log in</button>
</form><p class="error" id="login-error">{error}</p>
<p>Ask an administrator for a token: <code>faceoff tokens create --team NAME</code>.</p>
</main></body></html>
"""


def install(server: flask.Flask, settings: Settings) -> None:
    """Check every request of ``server`` and serve ``/login`` and ``/logout``.

    InsecureSecretKey when authentication is on without a strong secret key to sign sessions.
    """
    server.config[AUTH_ENABLED_KEY] = settings.AUTH_ENABLED
    server.config[TRUSTED_PROXIES_KEY] = parse_networks(settings.TRUSTED_PROXIES)
    if settings.AUTH_ENABLED:
        check_secret_key(settings.SECRET_KEY)
        server.secret_key = settings.SECRET_KEY
    server.config.update(SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax")
    server.before_request(_check_viewer)
    server.add_url_rule(LOGIN_PATH, "login", _login, methods=["GET", "POST"])
    server.add_url_rule(LOGOUT_PATH, "logout", _logout)


def _session_team() -> int | None:
    """The team of the session's token, None (and the session cleared) if it is gone."""
    token_id = flask.session.get(SESSION_TOKEN)
    if token_id is None:
        return None
    with read_session(database_url()) as session:
        team_id = token_team(session, token_id)
    if team_id is None:
        flask.session.clear()
    return team_id


def _check_viewer() -> ResponseReturnValue | None:
    request = flask.request
    if not flask.current_app.config[AUTH_ENABLED_KEY]:
        forwarded_for = ", ".join(request.headers.getlist("X-Forwarded-For")) or None
        trusted = flask.current_app.config[TRUSTED_PROXIES_KEY]
        if not is_loopback(client_address(request.remote_addr, forwarded_for, trusted)):
            return flask.Response(AUTH_OFF, 403, mimetype="text/plain")
        flask.g.team_id = None
        return None
    if request.path == LOGIN_PATH or request.path.startswith(STATIC_PREFIXES):
        return None
    team_id = _session_team()
    if team_id is not None:
        flask.g.team_id = team_id
        return None
    if request.path.startswith(DASH_JSON_PREFIX):
        return flask.jsonify(detail=f"not logged in: log in at {LOGIN_PATH}"), 401
    return flask.redirect(f"{LOGIN_PATH}?{urlencode({'next': request.full_path})}")


def is_local_path(target: str) -> bool:
    """Whether a browser sent to ``target`` stays on this site: a path with one leading '/',
    no backslash (read as '/') and no whitespace or control character anywhere (browsers
    drop tabs and newlines, so ``/\t/host`` would become ``//host``)."""
    return (
        target.startswith("/")
        and not target.startswith("//")
        and "\\" not in target
        and target.isprintable()
        and not any(c.isspace() for c in target)
    )


def _next_path() -> str:
    """Where to go after logging in: a path of this site, else the home page."""
    target = flask.request.values.get("next", "/")
    return target if is_local_path(target) else "/"


def _login() -> ResponseReturnValue:
    if not flask.current_app.config[AUTH_ENABLED_KEY]:
        return flask.redirect("/")
    error, status = "", 200
    if flask.request.method == "POST":
        secret = flask.request.form.get("token", "").strip()
        with read_session(database_url()) as session:
            token = verify_token(session, secret)
            token_id = token.id if token is not None else None
        if token_id is not None:
            flask.session.clear()
            flask.session[SESSION_TOKEN] = token_id
            return flask.redirect(_next_path())
        error, status = "This token is not valid or has been revoked.", 401
    page = LOGIN_PAGE.format(action=LOGIN_PATH, next=escape(_next_path()), error=error)
    return page, status


def _logout() -> ResponseReturnValue:
    flask.session.clear()
    return flask.redirect(LOGIN_PATH)
