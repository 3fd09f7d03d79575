"""The dashboard on a production server: gunicorn, as ``python -m faceoff.dashboard`` runs it.

gunicorn's master keeps ``FACEOFF_DASHBOARD_WORKERS`` processes, restarting one that dies or
stays silent for ``FACEOFF_DASHBOARD_TIMEOUT_SECONDS``. Each runs gunicorn's asyncio (ASGI)
worker: connections are read by the event loop, so idle or slow clients hold no thread (the
threaded gthread worker gives each new connection a thread for 5 s, and one that sends its
headers slowly keeps it: 300 idle sockets stalled it for minutes). A request whose headers
have arrived passes the API's body limit (api.limits.BodySizeLimit, ``413`` as soon as the
declared or received body exceeds ``FACEOFF_DASHBOARD_MAX_BODY_BYTES``, before anything is
buffered or spooled) and then runs the Dash (Flask) app in one of
``FACEOFF_DASHBOARD_THREADS`` threads of its process. Kept-alive connections close after
``FACEOFF_DASHBOARD_KEEPALIVE_SECONDS`` of silence.
"""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication
from uvicorn.middleware.wsgi import WSGIMiddleware

from faceoff.api.limits import BodySizeLimit, Limit
from faceoff.core.settings import Settings

GRACEFUL_SECONDS = 3  # a stopping worker finishes its requests within this


def asgi_app(wsgi: Any, settings: Settings) -> BodySizeLimit:
    """The WSGI ``wsgi`` (the Dash app's Flask server) as an ASGI app: bodies over
    DASHBOARD_MAX_BODY_BYTES refused with 413, the rest run in DASHBOARD_THREADS threads."""
    threads = WSGIMiddleware(wsgi, workers=settings.DASHBOARD_THREADS)
    limit = Limit(settings.DASHBOARD_MAX_BODY_BYTES, "FACEOFF_DASHBOARD_MAX_BODY_BYTES")
    return BodySizeLimit(threads, default=limit)


def gunicorn_options(host: str, port: int, settings: Settings) -> dict[str, Any]:
    """gunicorn's settings for the dashboard on ``host``:``port``."""
    return {
        "bind": [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"],
        "worker_class": "asgi",
        "workers": settings.DASHBOARD_WORKERS,
        "timeout": settings.DASHBOARD_TIMEOUT_SECONDS,
        "graceful_timeout": GRACEFUL_SECONDS,
        "keepalive": settings.DASHBOARD_KEEPALIVE_SECONDS,
        "preload_app": True,  # one app built (and its secret key checked) before forking
        "accesslog": "-",
        "errorlog": "-",
        # the dashboard believes X-Forwarded-For from FACEOFF_TRUSTED_PROXIES only
        # (core.auth.client_address), as the API does; gunicorn rewrites nothing
        "forwarded_allow_ips": "",
        "proxy_allow_ips": "",
        # no control socket: its default path is one per user, shared by every dashboard
        "control_socket_disable": True,
    }


class DashboardServer(BaseApplication):
    """gunicorn serving one already-built ASGI app with the given options."""

    def __init__(self, app: Any, options: dict[str, Any]) -> None:
        self.application = app
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return self.application


def serve(wsgi: Any, host: str, port: int, settings: Settings) -> None:
    """Serve the WSGI app ``wsgi`` with gunicorn until a signal stops it (SIGTERM: its
    workers finish their requests first; SIGINT: at once)."""
    DashboardServer(asgi_app(wsgi, settings), gunicorn_options(host, port, settings)).run()
