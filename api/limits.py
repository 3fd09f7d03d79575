"""Request-body size limits enforced while the body streams in, before anything is buffered.

Starlette spools a multipart upload to disk before a route sees it, and FastAPI parses a JSON
body whole before validating it, so a limit checked in the route comes too late for a huge
or chunked body: this ASGI middleware answers 413 as soon as the declared ``Content-Length``
or the bytes received exceed the limit of the request's path (a small one for JSON bodies,
the upload limit for the upload route).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(Exception):
    """Raised inside ``receive`` once the body has passed the limit."""


@dataclass(frozen=True)
class Limit:
    """At most ``max_bytes`` of body, a limit set by the setting named ``setting``."""

    max_bytes: int
    setting: str

    def message(self) -> bytes:
        detail = (
            f"request body larger than {self.max_bytes} bytes; the limit is set by {self.setting}"
        )
        return json.dumps({"detail": detail}).encode()


class BodySizeLimit:
    """Refuse request bodies larger than their path's limit with 413 and a JSON message:
    ``paths`` maps exact paths to their own limit, every other path has ``default``."""

    def __init__(
        self, app: ASGIApp, default: Limit, paths: Mapping[str, Limit] | None = None
    ) -> None:
        self.app = app
        self.default = default
        self.paths = {path.rstrip("/"): limit for path, limit in (paths or {}).items()}

    def limit_for(self, path: str) -> Limit:
        return self.paths.get(path.rstrip("/"), self.default)

    @staticmethod
    async def _refuse(send: Send, limit: Limit) -> None:
        body = limit.message()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit.max_bytes:
            await self._refuse(send, limit)
            return
        received = 0
        exceeded = False
        started = False

        async def limited_receive() -> Message:
            nonlocal received, exceeded
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit.max_bytes:
                    exceeded = True
                    raise BodyTooLarge
            return message

        async def guarded_send(message: Message) -> None:
            # the app may turn BodyTooLarge into its own error response (FastAPI answers 400
            # for any failure while parsing a form): send the 413 instead
            nonlocal started
            if exceeded:
                if message["type"] == "http.response.start" and not started:
                    started = True
                    await self._refuse(send, limit)
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except BodyTooLarge:
            if started:
                return
            await self._refuse(send, limit)
