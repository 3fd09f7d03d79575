"""Dependencies: the app's settings and a database session per request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Path, Query, Request
from sqlalchemy.orm import Session

from core.db import session_factory
from core.settings import Settings


def get_app_settings(request: Request) -> Settings:
    return request.app.state.settings


SettingsDep = Annotated[Settings, Depends(get_app_settings)]


def get_session(settings: SettingsDep) -> Iterator[Session]:
    with session_factory(settings.database_url)() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]

JobId = Annotated[int, Path(ge=1, le=2**31 - 1, description="job id")]
Limit = Annotated[int, Query(ge=1, le=1000, description="page size")]
Offset = Annotated[int, Query(ge=0, le=2**31 - 1, description="rows to skip")]
