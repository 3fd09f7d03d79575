"""Dependencies: the app's settings, a database session per request and the caller's team
(checked before the request body is read, by :class:`AuthenticatedRoute`)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterator
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Path, Query, Request, Response
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from faceoff.core import auth
from faceoff.core.db import session_factory
from faceoff.core.settings import Settings
from faceoff.core.specs import TextInt


def get_app_settings(request: Request) -> Settings:
    return request.app.state.settings


SettingsDep = Annotated[Settings, Depends(get_app_settings)]


def get_session(settings: SettingsDep) -> Iterator[Session]:
    with session_factory(settings.database_url)() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]

bearer = HTTPBearer(
    auto_error=False,
    description="An API token of your team (`faceoff tokens create --team NAME` on the server).",
)


def _unauthorized(message: str) -> HTTPException:
    return HTTPException(401, message, headers={"WWW-Authenticate": "Bearer"})


def get_team(
    request: Request,
    settings: SettingsDep,
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> int | None:
    """The caller's team id, from its ``Authorization: Bearer`` token (401 without a valid
    one). With authentication off: None (api.access.LocalOnly served this machine only)."""
    if hasattr(request.state, TEAM_STATE):  # checked already, before the body was read
        return getattr(request.state, TEAM_STATE)
    if not settings.AUTH_ENABLED:
        return None
    if credentials is None:
        raise _unauthorized(
            "this request needs an API token: send the header 'Authorization: Bearer <token>' "
            "(an administrator creates one with `faceoff tokens create --team NAME`)"
        )
    token = auth.verify_token(session, credentials.credentials)
    if token is None:
        raise _unauthorized("the API token is not valid or has been revoked; ask for a new one")
    auth.record_use(session, token)
    return token.team_id


TeamDep = Annotated[int | None, Depends(get_team)]
TEAM_STATE = "team"  # request.state attribute of the team found by AuthenticatedRoute


class AuthenticatedRoute(APIRoute):
    """A route that runs :func:`get_team` before FastAPI reads and parses the request body:
    a request without a valid token (or, with authentication off, from another machine) is
    refused without costing a parse, and the route's own get_team reuses the answer."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def authenticate_first(request: Request) -> Response:
            settings = get_app_settings(request)
            if not settings.AUTH_ENABLED:  # api.access.LocalOnly served this machine only
                setattr(request.state, TEAM_STATE, None)
                return await handler(request)
            credentials = await bearer(request)

            def team() -> int | None:
                with session_factory(settings.database_url)() as session:
                    return get_team(request, settings, session, credentials)

            setattr(request.state, TEAM_STATE, await run_in_threadpool(team))
            return await handler(request)

        return authenticate_first


JobId = Annotated[TextInt, Path(ge=1, le=2**31 - 1, description="job id")]
Limit = Annotated[TextInt, Query(ge=1, le=1000, description="page size")]
Offset = Annotated[TextInt, Query(ge=0, le=2**31 - 1, description="rows to skip")]
