"""Who may call the API at all: with authentication off, only this machine.

The rule covers every route (jobs, health, metrics, the OpenAPI schema and docs), so an
ASGI middleware applies it before routing. The client's address follows the one rule for
proxy headers, :func:`faceoff.core.auth.client_address` (the dashboard uses it too).
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from faceoff.core.auth import IPNetwork, client_address, is_loopback

AUTH_OFF = (
    "authentication is disabled on this server (FACEOFF_AUTH_ENABLED=false), so it only "
    "answers requests from the same machine (127.0.0.1 or ::1); to serve other machines, "
    "set FACEOFF_AUTH_ENABLED=true and give each client a token made with "
    "`faceoff tokens create --team NAME`"
)


def forwarded_for(scope: Scope) -> str | None:
    """The request's X-Forwarded-For addresses (several headers joined), None without."""
    values = [v.decode("latin-1") for k, v in scope["headers"] if k == b"x-forwarded-for"]
    return ", ".join(values) if values else None


class LocalOnly:
    """Answer 403 (JSON, naming the setting to change) to clients not on this machine."""

    def __init__(self, app: ASGIApp, trusted_proxies: tuple[IPNetwork, ...]) -> None:
        self.app = app
        self.trusted_proxies = trusted_proxies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            peer = scope["client"][0] if scope.get("client") else None
            client = client_address(peer, forwarded_for(scope), self.trusted_proxies)
            if not is_loopback(client):
                await JSONResponse({"detail": AUTH_OFF}, 403)(scope, receive, send)
                return
        await self.app(scope, receive, send)
